import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Connection } from '../../domain/connections/connection';
import { DomainEventBus } from '../../domain/events/domain-event-bus';
import { HrisEvent } from '../../domain/hris-events/hris-event';
import { HrisEventAccepted, HrisScope } from '../../domain/hris-events/hris-event-accepted';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { InboundMessage, MessageHandler, parsedBody, PoisonMessageError } from '../../infrastructure/messaging/message';
import { defaultMessageId } from '../../infrastructure/messaging/inbox/message-processor';
import { TOPICS } from '../../infrastructure/messaging/topics';
import { BenefitsRepository } from '../benefits/benefits.repository';
import { isUuid } from '../employer/dto/uuid-param';
import { isInstant } from './dto/hris-event.dto';
import { validateHrisEvent } from './hris-event-validation';

/** The inbox consumer name of HRIS events: their ids are deduplicated under it. */
export const HRIS_CONSUMER = 'hris-sagas';

/**
 * Set by `POST /hris/events` on what it hands to the inbox: the application that posted the
 * event. It scopes the id of an event that names no connection (see messageScopeOf).
 */
export const HRIS_APPLICATION_HEADER = 'application-id';

/**
 * Applies `hris.events` in their inbox transaction (MessageProcessor): each event is validated,
 * its employer resolved, and HrisEventAccepted published to the sagas subscribed to it
 * (src/sagas), which act in the same transaction: the saga state, the enrollment jobs their
 * commands write and the outbox events commit together, or the event is retried (transient) or
 * dead-lettered (poison) whole. A run of events is applied set-wise (handleBatch): read what they
 * name once, then hand them to the sagas together, so a batch costs a few statements per table.
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
    private readonly bus: DomainEventBus,
  ) {}

  /** The envelope's `id` is the idempotency key, whatever transport headers came with it. */
  messageIdOf(message: InboundMessage): string | undefined {
    // Not JSON: the processor dead-letters it under the default id.
    const id = bodyField(message, 'id');
    if (typeof id === 'string' && id.length > 0 && id.length <= 200) return id.toLowerCase();
    return defaultMessageId(message);
  }

  /**
   * An event's id is unique within the connection it names, not across the service: two
   * employers' HRIS systems, or two applications, may well number their events alike. Every
   * event names its connection, on Kafka and over HTTP alike (so one event sent both ways is
   * still one), and a connection is one application's. An event naming no connection can never
   * apply; posted over HTTP, its id is scoped by the application that posted it, so it is
   * dead-lettered once per application. On the topic nothing tells producers apart: ''.
   */
  messageScopeOf(message: InboundMessage): string {
    // Not JSON: dead-lettered, scoped as a message naming no connection.
    const connectionId = bodyField(message, 'connection_id');
    if (typeof connectionId === 'string' && isUuid(connectionId)) return connectionId.toLowerCase();
    const application = message.headers[HRIS_APPLICATION_HEADER];
    return application ? `application:${application}` : '';
  }

  /**
   * The event's `occurred_at`: a copy of it cannot have reached the inbox more than a day (the
   * clocks' slack, inbox_claim) before it happened, so only the inbox's days since then are
   * searched for one. Copies of one event carry the same `occurred_at`. Not a valid instant: every
   * day is searched.
   */
  sentAtOf(message: InboundMessage): Date | undefined {
    const occurredAt = bodyField(message, 'occurred_at');
    if (!isInstant(occurredAt)) return undefined;
    const at = new Date(occurredAt);
    return Number.isNaN(at.getTime()) ? undefined : at;
  }

  async handle(message: InboundMessage, manager: EntityManager): Promise<void> {
    const [reason] = await this.handleBatch([message], manager);
    if (reason !== null) throw new PoisonMessageError(reason);
  }

  async handleBatch(messages: readonly InboundMessage[], manager: EntityManager): Promise<(string | null)[]> {
    const reasons: (string | null)[] = messages.map(() => null);
    const events: (HrisEvent | undefined)[] = messages.map((message, i) => {
      const body = parsedBody(message);
      // The processor hands over only messages whose body parses.
      const checked = body.ok ? validateHrisEvent(body.value) : { ok: false as const, reason: body.problem };
      if (checked.ok) return checked.event;
      reasons[i] = checked.reason;
      return undefined;
    });
    return this.uow.join(manager, async () => {
      const connections = await this.connections.findMany(
        events.flatMap((e) => (e ? [e.connection_id] : [])),
        manager,
      );
      const scopes = events.map((event, i) => {
        if (!event) return undefined;
        const scope = scopeOf(event, connections.get(event.connection_id.toLowerCase()));
        if (typeof scope === 'string') reasons[i] = scope;
        return typeof scope === 'string' ? undefined : scope;
      });
      // A benefit must be known to the service (read in this transaction, see the class comment).
      const changes = events.flatMap((e, i) => (e?.type === 'ContributionChanged' && scopes[i] ? [{ i, entityId: scopes[i]!.entity.id, benefitId: e.data.benefit_id }] : []));
      const known = await this.benefits.knownOfEntities(changes, manager);
      for (const { i, entityId, benefitId } of changes) {
        if (!known.has(`${entityId}/${benefitId.toLowerCase()}`)) reasons[i] = `Unknown benefit ${benefitId} in entity ${entityId}`;
      }

      const accepted = events.map((event, i) => (event && reasons[i] === null ? new HrisEventAccepted(event, scopes[i]!) : undefined));
      for (const run of runsOf(accepted)) {
        await this.bus.publish(run.map(({ accepted: a }) => a));
        for (const { index, accepted: a } of run) if (a.refusal !== undefined) reasons[index] = a.refusal;
      }
      return reasons;
    });
  }
}

/**
 * The accepted events in runs the sagas take together, in order. A termination reads the
 * individual's enrollments as they are before its run: it starts a run of its own when an event
 * of the same individual came earlier in the current one, so a batch ends exactly what the same
 * events one by one would.
 */
function runsOf(accepted: readonly (HrisEventAccepted | undefined)[]): { index: number; accepted: HrisEventAccepted }[][] {
  const runs: { index: number; accepted: HrisEventAccepted }[][] = [];
  let current: { index: number; accepted: HrisEventAccepted }[] = [];
  let named = new Set<string>();
  accepted.forEach((a, index) => {
    if (!a) return;
    const who = `${a.scope.entity.id}/${a.event.data.individual_id.toLowerCase()}`;
    if (a.event.type === 'EmployeeTerminated' && named.has(who)) {
      runs.push(current);
      current = [];
      named = new Set();
    }
    current.push({ index, accepted: a });
    named.add(who);
  });
  if (current.length > 0) runs.push(current);
  return runs;
}

/** The event's connection and entity; unknown, disconnected or not matching: why it is poison. */
function scopeOf(event: HrisEvent, connection: Connection | undefined): HrisScope | string {
  if (!connection) return `Unknown connection ${event.connection_id}`;
  if (connection.status === 'disconnected') return `Connection ${event.connection_id} is disconnected`;
  const entity = connection.entities.find((e) => e.id === event.entity_id.toLowerCase());
  if (!entity) return `Entity ${event.entity_id} is not an entity of connection ${event.connection_id}`;
  if (entity.status !== 'active') return `Entity ${event.entity_id} is disconnected`;
  return { connection, entity };
}

/** A top-level field of the message's JSON object body; undefined when there is none or it is not JSON. */
function bodyField(message: InboundMessage, field: string): unknown {
  const body = parsedBody(message);
  return body.ok && typeof body.value === 'object' && body.value !== null ? (body.value as Record<string, unknown>)[field] : undefined;
}
