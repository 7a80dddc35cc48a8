import { Module } from '@nestjs/common';
import { SecretHasher } from '../../infrastructure/auth/secret-hasher';
import { ApplicationsBootstrap } from './applications.bootstrap';
import { ApplicationsService } from './applications.service';

/** API clients: registration (CLI and start-up settings) and credential checks. */
@Module({
  providers: [SecretHasher, ApplicationsService, ApplicationsBootstrap],
  exports: [ApplicationsService, SecretHasher, ApplicationsBootstrap],
})
export class ApplicationsModule {}
