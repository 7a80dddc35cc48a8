import { MigrationInterface, QueryRunner } from 'typeorm';

/** The HRIS consumer's inbox name when this migration was written. */
const HRIS_CONSUMER = 'hris-sagas';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An HRIS event's id is unique within its connection, not across every application: the inbox
 * key becomes (consumer, scope, message_id), where the scope is the connection the event names
 * ('' for messages whose ids the service mints itself, unique everywhere). Dead letters record
 * the scope too, and an HRIS saga is unique per (connection, event id, type), so two
 * connections' events of one id both start theirs.
 *
 * Rows already there keep deduplicating: an applied event's row is scoped by the connection of
 * the saga it started, a dead-lettered one's by the `connection_id` of its stored payload. A row
 * neither tells about keeps the scope '' (a poison event without a connection; posted again, it
 * is dead-lettered once more).
 */
export class InboxScope1796400000000 implements MigrationInterface {
  name = 'InboxScope1796400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE inbox_messages ADD COLUMN scope text NOT NULL DEFAULT ''`);
    await q.query(`ALTER TABLE dead_letters ADD COLUMN scope text NOT NULL DEFAULT ''`);

    // A payload may not be JSON at all (that is why some are dead letters): parsed here, not in SQL.
    const letters: { id: string; payload: string }[] = await q.query(
      `SELECT id, payload FROM dead_letters WHERE consumer = $1 AND payload LIKE '%connection_id%'`,
      [HRIS_CONSUMER],
    );
    const scoped = letters.flatMap((l) => {
      const scope = connectionOf(l.payload);
      return scope === undefined ? [] : [{ id: l.id, scope }];
    });
    if (scoped.length > 0) {
      await q.query(`UPDATE dead_letters d SET scope = u.scope FROM unnest($1::uuid[], $2::text[]) AS u(id, scope) WHERE d.id = u.id`, [
        scoped.map((s) => s.id),
        scoped.map((s) => s.scope),
      ]);
    }
    await q.query(
      `UPDATE inbox_messages i SET scope = s.connection_id::text
       FROM sagas s WHERE i.consumer = $1 AND s.source_event_id IS NOT NULL AND lower(s.source_event_id) = i.message_id`,
      [HRIS_CONSUMER],
    );
    await q.query(
      `UPDATE inbox_messages i SET scope = d.scope
       FROM dead_letters d WHERE i.consumer = $1 AND i.scope = '' AND d.consumer = i.consumer AND d.message_id = i.message_id AND d.scope <> ''`,
      [HRIS_CONSUMER],
    );
    await q.query(`ALTER TABLE inbox_messages DROP CONSTRAINT inbox_messages_pkey, ADD PRIMARY KEY (consumer, scope, message_id)`);
    // `POST /hris/events` reads the reasons of the events it just dead-lettered by their key.
    await q.query(`CREATE INDEX dead_letters_message_idx ON dead_letters (message_id)`);

    await q.query(`DROP INDEX sagas_source_event_idx`);
    await q.query(`CREATE UNIQUE INDEX sagas_source_event_idx ON sagas (connection_id, source_event_id, type) WHERE source_event_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Fails when two connections' sagas came from events of one id: the old key cannot hold both.
    await q.query(`DROP INDEX sagas_source_event_idx`);
    await q.query(`CREATE UNIQUE INDEX sagas_source_event_idx ON sagas (source_event_id, type) WHERE source_event_id IS NOT NULL`);
    await q.query(`DROP INDEX dead_letters_message_idx`);
    // Under the old key one row per id is enough to deduplicate: the earliest is kept.
    await q.query(
      `DELETE FROM inbox_messages i USING inbox_messages o
       WHERE o.consumer = i.consumer AND o.message_id = i.message_id AND (o.received_at, o.scope) < (i.received_at, i.scope)`,
    );
    await q.query(`ALTER TABLE inbox_messages DROP CONSTRAINT inbox_messages_pkey, ADD PRIMARY KEY (consumer, message_id)`);
    await q.query(`ALTER TABLE dead_letters DROP COLUMN scope`);
    await q.query(`ALTER TABLE inbox_messages DROP COLUMN scope`);
  }
}

/** The connection an HRIS event's payload names, as its inbox scope; undefined when it names none. */
function connectionOf(payload: string): string | undefined {
  try {
    const connectionId = (JSON.parse(payload) as { connection_id?: unknown })?.connection_id;
    return typeof connectionId === 'string' && UUID.test(connectionId) ? connectionId.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}
