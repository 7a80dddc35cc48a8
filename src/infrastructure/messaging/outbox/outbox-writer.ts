import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { newId } from '../../../domain/shared/new-id';
import { HEADER, OutboundMessage } from '../message';
import { laneOf } from './outbox-lane';
import { OutboxSignal } from './outbox-signal';

/**
 * Writes messages to the outbox inside the caller's transaction, each with its place in the
 * relay's queue (`outbox_pending`). Nothing reaches a transport from here: the relay publishes
 * after commit, so a rollback publishes nothing.
 *
 * The whole set travels as one JSON text read by `json_to_recordset`: one statement text
 * whatever the count (prepared once, planned once), and each payload stored as the very text
 * serialised here (a `json` column keeps it), which the relay sends as it is. Rows are inserted
 * in the order given, so their ids, and the relay's order per key, follow it.
 */
@Injectable()
export class OutboxWriter {
  constructor(private readonly signal: OutboxSignal) {}

  async append(manager: EntityManager, messages: OutboundMessage[]): Promise<string[]> {
    if (messages.length === 0) return [];
    const ids: string[] = [];
    const rows = messages.map((m) => {
      const id = m.messageId ?? newId();
      ids.push(id);
      const headers = { ...m.headers, [HEADER.messageId]: id, [HEADER.messageType]: m.type };
      return { message_id: id, topic: m.topic, message_key: m.key, lane: laneOf(m.key), type: m.type, payload: m.payload, headers };
    });
    // Each message is queued for the relay in outbox_pending by the same statement, with its
    // time: the relay then reads it from its day's partition only.
    await manager.query(
      `WITH written AS (
         INSERT INTO outbox_messages (message_id, topic, message_key, lane, type, payload, headers)
         SELECT u.message_id, u.topic, u.message_key, u.lane, u.type, u.payload, u.headers
         FROM json_to_recordset($1::json) AS u(message_id uuid, topic text, message_key text, lane smallint, type text, payload json, headers json)
         RETURNING lane, id, created_at)
       INSERT INTO outbox_pending (lane, id, created_at) SELECT lane, id, created_at FROM written`,
      [JSON.stringify(rows)],
    );
    // Wakes the relay early; harmless if the transaction later rolls back.
    this.signal.nudge();
    return ids;
  }
}
