import { Global, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { PROVIDER_PORT } from '../../domain/providers/provider-port';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { PROVIDER_CATALOGUE } from '../../domain/providers/provider-catalogue.data';
import { SealingKey } from '../secrets/sealing-key';
import { ProviderBenefitLinks } from './provider-benefit-links';
import { gustoProviderAdapterOf } from './gusto/gusto-connection';
import { ProviderGrants } from './provider-grants';
import { ProviderRouter } from './provider-router';
import { SandboxEmployerStore } from './sandbox/sandbox-employer.store';
import { SandboxProviderAdapter } from './sandbox/sandbox-provider.adapter';

/**
 * The ProviderPort adapters behind one router (PROVIDER_PORT): the sandbox payroll system
 * simulates every provider of the catalogue, and a connection granted through OAuth at a real
 * provider whose application is configured (Gusto) goes to that provider's adapter. Real
 * providers' OAuth grants are kept sealed (ProviderGrants). Global, so feature modules inject
 * PROVIDER_PORT (and the sandbox edits the store) without importing infrastructure modules.
 */
@Global()
@Module({
  providers: [
    // Its own instance of the (immutable) catalogue: infrastructure must not import feature modules.
    { provide: ProviderCatalogue, useFactory: () => new ProviderCatalogue(PROVIDER_CATALOGUE) },
    SandboxEmployerStore,
    SandboxProviderAdapter,
    {
      provide: PROVIDER_PORT,
      inject: [SandboxProviderAdapter, AppConfig, ProviderGrants, ProviderBenefitLinks, DataSource],
      useFactory: (sandbox: SandboxProviderAdapter, config: AppConfig, grants: ProviderGrants, links: ProviderBenefitLinks, dataSource: DataSource) => {
        const gusto = gustoProviderAdapterOf(config, grants, links, dataSource);
        return new ProviderRouter(sandbox, new Map(gusto ? [['gusto', gusto]] : []), grants);
      },
    },
    SealingKey,
    ProviderGrants,
    ProviderBenefitLinks,
  ],
  exports: [PROVIDER_PORT, SandboxEmployerStore, SandboxProviderAdapter, SealingKey, ProviderGrants, ProviderBenefitLinks],
})
export class ProviderAdaptersModule {}
