import { Global, Module } from '@nestjs/common';

/** The ProviderPort adapters (PROVIDER_PORT): the sandbox payroll system first. */
@Global()
@Module({})
export class ProviderAdaptersModule {}
