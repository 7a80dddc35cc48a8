import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { newId } from '../../../domain/shared/new-id';
import { OutboundMessage } from '../message';
import { laneOf } from './outbox-lane';
import { OutboxSignal } from './outbox-signal';

/**
 * The most messages one outbox row holds. The relay publishes a round's rows in one send, and a
 * round takes rows until it reaches its message limit (OUTBOX_BATCH_SIZE), so a send holds
 * fewer than that limit plus this many; it also keeps the view's message ids (batch × 65,536 +
 * place, migration 1798500000000) apart.
 */
export const OUTBOX_MESSAGES_PER_ROW = 250;

/** One `outbox_batches` row taking shape: messages of one topic and lane, in order. */
interface BatchRow {
  topic: string;
  lane: number;
  ids: string[];
  keys: string[];
  types: string[];
  /** Each payload's JSON text, sent as it is. */
  payloads: string[];
  /** Each message's own headers as JSON text; the relay adds its id and type. */
  headers: string[];
}

/**
 * The row as `json_to_recordset` reads it. The payloads and headers go in as JSON arrays of
 * their texts spliced in as they are (never escaped as strings: PostgreSQL would store them as
 * written, and an array of text would cost an escape per quote on the way out), and with the
 * payloads' ends (offsets in the array's text, exclusive), so the relay cuts each out without
 * parsing any.
 */
function recordOf(row: BatchRow): string {
  const ends: number[] = [];
  let at = 1;
  for (const payload of row.payloads) {
    at += payload.length;
    ends.push(at);
    at += 1;
  }
  return (
    `{"topic":${JSON.stringify(row.topic)},"lane":${row.lane},"message_ids":${JSON.stringify(row.ids)},` +
    `"message_keys":${JSON.stringify(row.keys)},"types":${JSON.stringify(row.types)},` +
    `"payloads":[${row.payloads.join(',')}],"payload_ends":${JSON.stringify(ends)},"headers":[${row.headers.join(',')}]}`
  );
}

/**
 * Writes messages to the outbox inside the caller's transaction, queued for the relay in
 * `outbox_pending`. Nothing reaches a transport from here: the relay publishes after commit, so
 * a rollback publishes nothing.
 *
 * The messages of one call are stored a row per topic and lane (at most OUTBOX_MESSAGES_PER_ROW
 * each), not a row per message: a set-wise HRIS batch writes hundreds of messages, and a row
 * with its index entries and its queue row each was a third of PostgreSQL's work per event
 * (migration 1798500000000). A key always maps to one lane and a lane's rows keep the order
 * given, so the relay's order per key follows it. The set travels as one JSON text read by
 * `json_to_recordset`: one statement text whatever the count.
 */
@Injectable()
export class OutboxWriter {
  constructor(private readonly signal: OutboxSignal) {}

  async append(manager: EntityManager, messages: OutboundMessage[]): Promise<string[]> {
    if (messages.length === 0) return [];
    const ids: string[] = [];
    const open = new Map<string, BatchRow>();
    const rows: BatchRow[] = [];
    for (const m of messages) {
      const id = m.messageId ?? newId();
      ids.push(id);
      const lane = laneOf(m.key);
      const where = `${lane}\u0000${m.topic}`;
      let row = open.get(where);
      if (!row || row.ids.length >= OUTBOX_MESSAGES_PER_ROW) {
        row = { topic: m.topic, lane, ids: [], keys: [], types: [], payloads: [], headers: [] };
        open.set(where, row);
        rows.push(row);
      }
      row.ids.push(id);
      row.keys.push(m.key);
      row.types.push(m.type);
      row.payloads.push(JSON.stringify(m.payload) ?? 'null');
      row.headers.push(m.headers ? JSON.stringify(m.headers) : '{}');
    }
    // Each row is queued for the relay in outbox_pending by the same statement, with its time
    // (the relay then reads it from its day's partition only) and its count of messages.
    await manager.query(
      `WITH written AS (
         INSERT INTO outbox_batches (topic, lane, message_ids, message_keys, types, payloads, payload_ends, headers)
         SELECT u.topic, u.lane, u.message_ids, u.message_keys, u.types, u.payloads, u.payload_ends, u.headers
         FROM json_to_recordset($1::json)
           AS u(topic text, lane smallint, message_ids uuid[], message_keys text[], types text[], payloads json, payload_ends integer[], headers json)
         RETURNING lane, id, created_at, cardinality(message_ids) AS messages)
       INSERT INTO outbox_pending (lane, id, created_at, messages) SELECT lane, id, created_at, messages FROM written`,
      [`[${rows.map(recordOf).join(',')}]`],
    );
    // Wakes the relay early; harmless if the transaction later rolls back.
    this.signal.nudge();
    return ids;
  }
}
