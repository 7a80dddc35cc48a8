import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { ProvidersModule } from '../providers/providers.module';
import { ConnectionsController } from './connections.controller';
import { ConnectionsService } from './connections.service';

/** Introspection and disconnection of the connection behind an access token. */
@Module({
  imports: [AuthModule, ProvidersModule],
  controllers: [ConnectionsController],
  providers: [ConnectionsService],
})
export class ConnectionsModule {}
