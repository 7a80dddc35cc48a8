import { Global, Module } from '@nestjs/common';
import { PROVIDER_PORT } from '../../domain/providers/provider-port';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { PROVIDER_CATALOGUE } from '../../domain/providers/provider-catalogue.data';
import { SealingKey } from '../secrets/sealing-key';
import { ProviderBenefitLinks } from './provider-benefit-links';
import { ProviderGrants } from './provider-grants';
import { SandboxEmployerStore } from './sandbox/sandbox-employer.store';
import { SandboxProviderAdapter } from './sandbox/sandbox-provider.adapter';

/**
 * The ProviderPort adapters (PROVIDER_PORT): the sandbox payroll system simulates every
 * provider of the catalogue. Real providers' OAuth grants are kept sealed (ProviderGrants). Global, so feature modules inject PROVIDER_PORT (and the sandbox
 * edits the store) without importing infrastructure modules.
 */
@Global()
@Module({
  providers: [
    // Its own instance of the (immutable) catalogue: infrastructure must not import feature modules.
    { provide: ProviderCatalogue, useFactory: () => new ProviderCatalogue(PROVIDER_CATALOGUE) },
    SandboxEmployerStore,
    SandboxProviderAdapter,
    { provide: PROVIDER_PORT, useExisting: SandboxProviderAdapter },
    SealingKey,
    ProviderGrants,
    ProviderBenefitLinks,
  ],
  exports: [PROVIDER_PORT, SandboxEmployerStore, SandboxProviderAdapter, SealingKey, ProviderGrants, ProviderBenefitLinks],
})
export class ProviderAdaptersModule {}
