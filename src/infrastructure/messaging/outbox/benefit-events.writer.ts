import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { BenefitEvent, BenefitEventType } from '../../../domain/benefits/benefit-events';
import { Clock, CLOCK } from '../../../domain/shared/clock';
import { newId } from '../../../domain/shared/new-id';
import { OutboxWriter } from './outbox-writer';
import { TOPICS } from '../topics';

export interface NewBenefitEvent {
  type: BenefitEventType;
  connectionId: string;
  entityId: string;
  data: Record<string, unknown>;
}

/**
 * Records domain events in the outbox inside the caller's transaction: the event is
 * published if and only if the state change it reports commits.
 */
@Injectable()
export class BenefitEventsWriter {
  constructor(
    private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async record(manager: EntityManager, events: NewBenefitEvent[]): Promise<void> {
    const occurredAt = this.clock.now().toISOString();
    await this.outbox.append(
      manager,
      events.map((event) => {
        const payload: BenefitEvent = {
          id: newId(),
          type: event.type,
          version: 1,
          occurred_at: occurredAt,
          connection_id: event.connectionId,
          entity_id: event.entityId,
          data: event.data,
        };
        return { topic: TOPICS.benefitsEvents, key: event.connectionId, type: `${event.type}.v1`, payload, messageId: payload.id };
      }),
    );
  }
}
