import { Global, Module } from '@nestjs/common';
import { DomainEventBus } from '../../domain/events/domain-event-bus';

/** One in-transaction event bus per application: producers publish, sagas and modules subscribe at init. */
@Global()
@Module({
  providers: [{ provide: DomainEventBus, useFactory: () => new DomainEventBus() }],
  exports: [DomainEventBus],
})
export class DomainEventsModule {}
