import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { MessageProcessor, ProcessOutcome } from '../../infrastructure/messaging/inbox/message-processor';
import { TOPICS } from '../../infrastructure/messaging/topics';
import { HrisEventsConsumer } from './hris-events.consumer';

export interface HrisIntakeResult {
  id: string | null;
  outcome: ProcessOutcome | 'rejected';
  reason?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Feeds HTTP-posted HRIS events to the same inbox and sagas as the Kafka consumer. An
 * application may post events of its own connections only: an event naming another one is
 * rejected without being looked at further (it is not dead-lettered: it was never accepted).
 */
@Injectable()
export class HrisIntakeService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly connections: ConnectionsRepository,
    private readonly processor: MessageProcessor,
    private readonly consumer: HrisEventsConsumer,
  ) {}

  async applyAll(applicationId: string, events: unknown[]): Promise<HrisIntakeResult[]> {
    const results: HrisIntakeResult[] = [];
    // In order: one employer's events are applied in the order they were sent, as on the topic.
    for (const event of events) results.push(await this.apply(applicationId, event));
    return results;
  }

  async apply(applicationId: string, event: unknown): Promise<HrisIntakeResult> {
    const fields = typeof event === 'object' && event !== null && !Array.isArray(event) ? (event as Record<string, unknown>) : {};
    const id = typeof fields.id === 'string' ? fields.id : null;
    const connectionId = fields.connection_id;
    if (typeof connectionId === 'string' && UUID.test(connectionId)) {
      const connection = await this.connections.find(connectionId);
      if (!connection || connection.applicationId !== applicationId) {
        return { id, outcome: 'rejected', reason: `No connection ${connectionId} for this application` };
      }
    }
    const message = {
      topic: TOPICS.hrisEvents,
      key: typeof connectionId === 'string' ? connectionId : null,
      value: JSON.stringify(event),
      headers: {},
    };
    const outcome = await this.processor.process(this.consumer, message);
    if (outcome !== 'dead_lettered') return { id, outcome };
    const messageId = this.consumer.messageIdOf(message);
    const [row] = await this.dataSource.query(
      `SELECT reason FROM dead_letters WHERE consumer = $1 AND message_id = $2 ORDER BY created_at DESC LIMIT 1`,
      [this.consumer.consumer, messageId],
    );
    return { id, outcome, reason: row?.reason };
  }
}
