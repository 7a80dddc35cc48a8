import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config';
import { ServiceAddress } from './service-address';

/** Provides the validated settings to every module under the AppConfig class token, and the service's address. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: ServiceAddress, useValue: new ServiceAddress(config) },
      ],
      exports: [AppConfig, ServiceAddress],
    };
  }
}
