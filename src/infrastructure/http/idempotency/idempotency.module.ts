import { DynamicModule, Module, ModuleMetadata, Type } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { APPLICATION_CREDENTIALS_VERIFIER, ApplicationCredentialsVerifier } from './idempotency-caller';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { SealingKey } from '../../secrets/sealing-key';
import { IdempotencyStore } from './idempotency.store';

export interface IdempotencyModuleOptions {
  /** The module that provides `verifier`. */
  imports: ModuleMetadata['imports'];
  /** Checks application credentials (the applications service); passed in, as this layer may not import feature modules. */
  verifier: Type<ApplicationCredentialsVerifier>;
}

/** Registers the `Idempotency-Key` interceptor for every route. */
@Module({})
export class IdempotencyModule {
  static forRoot({ imports, verifier }: IdempotencyModuleOptions): DynamicModule {
    return {
      module: IdempotencyModule,
      imports,
      providers: [
        IdempotencyStore,
        SealingKey,
        { provide: APPLICATION_CREDENTIALS_VERIFIER, useExisting: verifier },
        { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
      ],
      exports: [IdempotencyStore],
    };
  }
}
