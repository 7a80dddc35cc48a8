import { Module } from '@nestjs/common';
import { SecretHasher } from '../../infrastructure/auth/secret-hasher';
import { ApplicationsBootstrap } from './applications.bootstrap';
import { ApplicationsService } from './applications.service';
import { ClientSecretCheck } from './client-secret-check';

/** API clients: registration (CLI and start-up settings) and credential checks. */
@Module({
  providers: [SecretHasher, ClientSecretCheck, ApplicationsService, ApplicationsBootstrap],
  exports: [ApplicationsService, SecretHasher, ApplicationsBootstrap],
})
export class ApplicationsModule {}
