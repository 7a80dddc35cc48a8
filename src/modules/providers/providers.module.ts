import { Module } from '@nestjs/common';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { PROVIDER_CATALOGUE } from '../../domain/providers/provider-catalogue.data';
import { ProvidersController } from './providers.controller';

/** The provider catalogue and `GET /providers`; other modules inject `ProviderCatalogue`. */
@Module({
  controllers: [ProvidersController],
  // Built (and validated) once at start: broken catalogue data fails the boot, not a request.
  providers: [{ provide: ProviderCatalogue, useFactory: () => new ProviderCatalogue(PROVIDER_CATALOGUE) }],
  exports: [ProviderCatalogue],
})
export class ProvidersModule {}
