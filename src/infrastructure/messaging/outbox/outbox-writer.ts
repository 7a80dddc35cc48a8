import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { HEADER, OutboundMessage } from '../message';
import { laneOf } from './outbox-lane';
import { OutboxSignal } from './outbox-signal';

/**
 * Writes messages to the outbox inside the caller's transaction. Nothing reaches a transport
 * from here: the relay publishes after commit, so a rollback publishes nothing.
 */
@Injectable()
export class OutboxWriter {
  constructor(private readonly signal: OutboxSignal) {}

  async append(manager: EntityManager, messages: OutboundMessage[]): Promise<string[]> {
    if (messages.length === 0) return [];
    const ids: string[] = [];
    const values: unknown[] = [];
    const rows: string[] = [];
    for (const m of messages) {
      const id = m.messageId ?? randomUUID();
      ids.push(id);
      const headers = { ...m.headers, [HEADER.messageId]: id, [HEADER.messageType]: m.type };
      const n = values.length;
      rows.push(`($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}::json, $${n + 7}::json)`);
      values.push(id, m.topic, m.key, laneOf(m.key), m.type, JSON.stringify(m.payload), JSON.stringify(headers));
    }
    await manager.query(
      `INSERT INTO outbox_messages (message_id, topic, message_key, lane, type, payload, headers)
       VALUES ${rows.join(', ')}`,
      values,
    );
    // Wakes the relay early; harmless if the transaction later rolls back.
    this.signal.nudge();
    return ids;
  }
}
