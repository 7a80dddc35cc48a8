import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { ProvidersModule } from '../providers/providers.module';
import { SandboxController } from './sandbox.controller';
import { SandboxConnectionsService } from './sandbox-connections.service';

/** The sandbox's own operations (connections and accounts without the connect flow). */
@Module({
  imports: [AuthModule, ProvidersModule],
  controllers: [SandboxController],
  providers: [SandboxConnectionsService],
})
export class SandboxModule {}
