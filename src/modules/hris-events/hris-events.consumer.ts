import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { HrisEvent } from '../../domain/hris-events/hris-event';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { InboundMessage, MessageHandler, PoisonMessageError } from '../../infrastructure/messaging/message';
import { defaultMessageId } from '../../infrastructure/messaging/inbox/message-processor';
import { TOPICS } from '../../infrastructure/messaging/topics';
import { BenefitsRepository } from '../benefits/benefits.repository';
import { ContributionChangeSaga } from '../../sagas/contribution-change.saga';
import { HrisScope } from '../../sagas/hris-saga';
import { NewHireSaga } from '../../sagas/new-hire.saga';
import { TerminationSaga } from '../../sagas/termination.saga';
import { validateHrisEvent } from './hris-event-validation';

/** The inbox consumer name of HRIS events: their ids are deduplicated under it. */
export const HRIS_CONSUMER = 'hris-sagas';

/**
 * Applies `hris.events` through their sagas, each event in ONE transaction with its inbox row
 * (MessageProcessor): the saga state, the enrollment jobs its commands write and their outbox
 * events commit together, or the event is retried (transient) or dead-lettered (poison) whole.
 * Everything here reads through the event's transaction: the embedded database has one
 * connection, and a read beside the open transaction would wait for it for ever.
 */
@Injectable()
export class HrisEventsConsumer implements MessageHandler {
  readonly consumer = HRIS_CONSUMER;
  readonly topic = TOPICS.hrisEvents;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly connections: ConnectionsRepository,
    private readonly benefits: BenefitsRepository,
    private readonly newHire: NewHireSaga,
    private readonly contributionChange: ContributionChangeSaga,
    private readonly termination: TerminationSaga,
  ) {}

  /** The envelope's `id` is the idempotency key, whatever transport headers came with it. */
  messageIdOf(message: InboundMessage): string | undefined {
    try {
      const id = (JSON.parse(message.value) as { id?: unknown })?.id;
      if (typeof id === 'string' && id.length > 0 && id.length <= 200) return id.toLowerCase();
    } catch {
      // not JSON: the processor dead-letters it under the default id
    }
    return defaultMessageId(message);
  }

  async handle(message: InboundMessage, manager: EntityManager): Promise<void> {
    const checked = validateHrisEvent(JSON.parse(message.value));
    if (!checked.ok) throw new PoisonMessageError(checked.reason);
    const event = checked.event;
    const scope = await this.scopeOf(event, manager);
    await this.uow.join(manager, () => this.route(event, scope, manager));
  }

  private async route(event: HrisEvent, scope: HrisScope, manager: EntityManager): Promise<void> {
    switch (event.type) {
      case 'EmployeeHired':
        await this.newHire.run(manager, event, scope);
        return;
      case 'ContributionChanged':
        // Known to the service, read in this transaction (see the class comment).
        if (!(await this.benefits.findOfEntity(scope.entity.id, event.data.benefit_id, manager))) {
          throw new PoisonMessageError(`Unknown benefit ${event.data.benefit_id} in entity ${scope.entity.id}`);
        }
        await this.contributionChange.run(manager, event, scope);
        return;
      case 'EmployeeTerminated':
        await this.termination.run(manager, event, scope);
        return;
    }
  }

  /** The event's connection and entity; unknown, disconnected or not matching → poison. */
  private async scopeOf(event: HrisEvent, manager: EntityManager): Promise<HrisScope> {
    const connection = await this.connections.find(event.connection_id, manager);
    if (!connection) throw new PoisonMessageError(`Unknown connection ${event.connection_id}`);
    if (connection.status === 'disconnected') throw new PoisonMessageError(`Connection ${event.connection_id} is disconnected`);
    const entity = connection.entities.find((e) => e.id === event.entity_id.toLowerCase());
    if (!entity) throw new PoisonMessageError(`Entity ${event.entity_id} is not an entity of connection ${event.connection_id}`);
    if (entity.status !== 'active') throw new PoisonMessageError(`Entity ${event.entity_id} is disconnected`);
    return { connection, entity };
  }
}

