import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { ApplicationsModule } from '../applications/applications.module';
import { AccessTokenGuard } from './access-token.guard';
import { AuthController } from './auth.controller';
import { ConnectSessionsService } from './connect-sessions.service';
import { TokenExchangeService } from './token-exchange.service';
import { TokenLookup } from './token-lookup';
import { TokenRateLimiter } from './token-rate-limiter';

/**
 * Connect sessions, code exchange and the bearer guard. The guard is global: operations opt in
 * with @RequiresAccessToken(product), so no controller can forget to scope by token.
 */
@Module({
  imports: [ApplicationsModule],
  controllers: [AuthController],
  providers: [
    ConnectionsRepository,
    ConnectSessionsService,
    TokenExchangeService,
    TokenRateLimiter,
    TokenLookup,
    { provide: APP_GUARD, useClass: AccessTokenGuard },
  ],
  exports: [ConnectionsRepository, ConnectSessionsService, ApplicationsModule, TokenLookup, TokenRateLimiter],
})
export class AuthModule {}
