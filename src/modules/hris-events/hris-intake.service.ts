import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { MessageProcessor, ProcessOutcome } from '../../infrastructure/messaging/inbox/message-processor';
import { InboundMessage } from '../../infrastructure/messaging/message';
import { TOPICS } from '../../infrastructure/messaging/topics';
import { HRIS_APPLICATION_HEADER, HrisEventsConsumer } from './hris-events.consumer';

export interface HrisIntakeResult {
  id: string | null;
  outcome: ProcessOutcome | 'rejected';
  reason?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Feeds HTTP-posted HRIS events to the same inbox and sagas as the Kafka consumer, and as it
 * does: an array is applied set-wise in one transaction, in order (one employer's events are
 * applied in the order they were sent, as on the topic). An application may post events of its
 * own connections only: an event naming another one is rejected without being looked at further
 * (it is not dead-lettered: it was never accepted). What it hands to the inbox names the
 * application (HRIS_APPLICATION_HEADER), which scopes the id of an event naming no connection.
 */
@Injectable()
export class HrisIntakeService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly connections: ConnectionsRepository,
    private readonly processor: MessageProcessor,
    private readonly consumer: HrisEventsConsumer,
  ) {}

  async apply(applicationId: string, event: unknown): Promise<HrisIntakeResult> {
    const [result] = await this.applyAll(applicationId, [event]);
    return result;
  }

  async applyAll(applicationId: string, events: unknown[]): Promise<HrisIntakeResult[]> {
    const fields = events.map((event) => (typeof event === 'object' && event !== null && !Array.isArray(event) ? (event as Record<string, unknown>) : {}));
    const connectionIds = fields.map((f) => (typeof f.connection_id === 'string' && UUID.test(f.connection_id) ? f.connection_id : undefined));
    const owned = await this.connections.findMany(connectionIds.filter((id): id is string => id !== undefined));
    const results: HrisIntakeResult[] = fields.map((f, i) => {
      const id = typeof f.id === 'string' ? f.id : null;
      const connectionId = connectionIds[i];
      if (connectionId !== undefined && owned.get(connectionId.toLowerCase())?.applicationId !== applicationId) {
        return { id, outcome: 'rejected', reason: `No connection ${connectionId} for this application` };
      }
      return { id, outcome: 'duplicate' };
    });
    const accepted = results.flatMap((r, i) => (r.outcome === 'rejected' ? [] : [i]));
    const messages: InboundMessage[] = accepted.map((i) => ({
      topic: TOPICS.hrisEvents,
      key: typeof fields[i].connection_id === 'string' ? (fields[i].connection_id as string) : null,
      value: JSON.stringify(events[i]),
      headers: { [HRIS_APPLICATION_HEADER]: applicationId },
    }));
    const outcomes = await this.applied(messages);
    accepted.forEach((i, k) => (results[i].outcome = outcomes[k]));

    const dead = accepted.filter((i) => results[i].outcome === 'dead_lettered');
    if (dead.length > 0) {
      // By the inbox key (scope and id): another application's event of the same id has its own.
      const keys = dead.map((i) => {
        const message = messages[accepted.indexOf(i)];
        return { scope: this.consumer.messageScopeOf(message), id: this.consumer.messageIdOf(message) ?? null };
      });
      const rows: { scope: string; message_id: string; reason: string }[] = await this.dataSource.query(
        `SELECT DISTINCT ON (scope, message_id) scope, message_id, reason FROM dead_letters
         WHERE consumer = $1 AND (scope, message_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))
         ORDER BY scope, message_id, created_at DESC`,
        [this.consumer.consumer, keys.map((k) => k.scope), keys.map((k) => k.id)],
      );
      const reasons = new Map(rows.map((r) => [`${r.scope}\u0000${r.message_id}`, r.reason]));
      dead.forEach((i, k) => (results[i].reason = reasons.get(`${keys[k].scope}\u0000${keys[k].id}`)));
    }
    return results;
  }

  /** Set-wise when it can be; a batch that fails transiently is applied one by one, as the Kafka consumer does. */
  private async applied(messages: InboundMessage[]): Promise<ProcessOutcome[]> {
    if (messages.length === 0) return [];
    try {
      return await this.processor.processBatch(this.consumer, messages);
    } catch {
      const outcomes: ProcessOutcome[] = [];
      for (const message of messages) outcomes.push(await this.processor.process(this.consumer, message));
      return outcomes;
    }
  }
}
