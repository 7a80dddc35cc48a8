import { Module } from '@nestjs/common';
import { PROVIDER_BEHAVIOURS } from '../../domain/providers/provider-behaviour';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { PROVIDER_CATALOGUE } from '../../domain/providers/provider-catalogue.data';
import { AuthModule } from '../auth/auth.module';
import { JobsModule } from '../jobs/jobs.module';
import { AutomatedProvider, ProviderBehavioursRegistry } from './provider-behaviours';
import { ProviderRetryPolicies } from './provider-retry-policies';
import { ProvidersController } from './providers.controller';

/**
 * The provider catalogue, `GET /providers`, and the behaviour of each connection's provider
 * (Automated here; the Assisted one registers itself from AssistedModule).
 */
@Module({
  imports: [AuthModule, JobsModule],
  controllers: [ProvidersController],
  providers: [
    // Built (and validated) once at start: broken catalogue data fails the boot, not a request.
    { provide: ProviderCatalogue, useFactory: () => new ProviderCatalogue(PROVIDER_CATALOGUE) },
    AutomatedProvider,
    ProviderBehavioursRegistry,
    ProviderRetryPolicies,
    { provide: PROVIDER_BEHAVIOURS, useExisting: ProviderBehavioursRegistry },
  ],
  exports: [ProviderCatalogue, ProviderBehavioursRegistry, PROVIDER_BEHAVIOURS, ProviderRetryPolicies],
})
export class ProvidersModule {}
