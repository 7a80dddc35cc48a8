import { MigrationInterface, QueryRunner } from 'typeorm';

/** Days ahead of today the migration creates partitions for; the partition upkeep keeps the window from then on. */
const DAYS_AHEAD = 3;

/**
 * The outbox keeps one row per transaction, topic and lane (`outbox_batches`) instead of one
 * per message: a set-wise HRIS batch wrote about two messages per event, each a heap row and
 * three index entries, with a queue row and its entry in `outbox_pending` beside it, about a
 * third of PostgreSQL's work per event. A batch row holds its messages in order: ids, keys and
 * types as arrays, payloads as one JSON array holding each payload's text as serialised (with
 * where each ends, so the relay cuts them out without parsing), and each message's own headers
 * as a JSON array. The relay publishes each as a Kafka message of its own, as before.
 * `outbox_pending` queues batches and knows how many messages each holds, so a relay round stays
 * within its message limit. (Arrays of text cost the service a slow parse per character, and
 * PostgreSQL an escape of every quote: the payloads are never stored as one.)
 *
 * `outbox_messages` becomes a view with its old columns, one row per message, for the readers
 * of single messages (ops, tests, fault counts): its `id` is the batch's × 65,536 + the
 * message's place, so ordering by it is the publishing order. Sandbox HRIS events are looked up
 * by message id through a GIN index of their batches' ids.
 *
 * Rows already there become batches of one, keeping their ids (and so their pending rows).
 */
export class OutboxBatches1798500000000 implements MigrationInterface {
  name = 'OutboxBatches1798500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbox_batches (
        id            bigint      NOT NULL,
        topic         text        NOT NULL,
        lane          smallint    NOT NULL,
        message_ids   uuid[]      NOT NULL,
        message_keys  text[]      NOT NULL,
        types         text[]      NOT NULL,
        payloads      json        NOT NULL,
        payload_ends  integer[]   NOT NULL,
        headers       json        NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now()
      ) PARTITION BY RANGE (created_at)`);
    await makePartitions(q, 'outbox_messages', 'outbox_batches');
    await q.query(
      `INSERT INTO outbox_batches (id, topic, lane, message_ids, message_keys, types, payloads, payload_ends, headers, created_at)
       SELECT id, topic, lane, ARRAY[message_id], ARRAY[message_key], ARRAY[type], ('[' || payload::text || ']')::json,
              ARRAY[length(payload::text) + 1], json_build_array(headers::jsonb - 'message-id' - 'message-type'), created_at
       FROM outbox_messages`,
    );
    const [{ last }] = await q.query(`SELECT coalesce(max(id), 0)::text AS last FROM outbox_messages`);
    await q.query(`DROP TABLE outbox_messages`);
    await sequenceFrom(q, 'outbox_batches', last);
    await q.query(`ALTER TABLE outbox_batches ADD PRIMARY KEY (id, created_at)`);
    await q.query(`CREATE INDEX outbox_batches_created_idx ON outbox_batches (created_at)`);
    await q.query(`CREATE INDEX outbox_batches_hris_ids_idx ON outbox_batches USING gin (message_ids) WHERE topic = 'hris.events'`);
    await q.query(`ALTER TABLE outbox_batches ALTER COLUMN payloads SET STATISTICS 0, ALTER COLUMN headers SET STATISTICS 0`);
    await q.query(`ALTER TABLE outbox_pending ADD COLUMN messages integer NOT NULL DEFAULT 1`);
    await q.query(`
      CREATE VIEW outbox_messages AS
      SELECT b.id * 65536 + m.n - 1 AS id, b.id AS batch_id, m.message_id, b.topic, m.message_key, b.lane, m.type,
             b.payloads -> (m.n::int - 1) AS payload,
             ((b.headers -> (m.n::int - 1))::jsonb || jsonb_build_object('message-id', m.message_id, 'message-type', m.type))::json AS headers,
             b.created_at
      FROM outbox_batches b
        CROSS JOIN LATERAL unnest(b.message_ids, b.message_keys, b.types) WITH ORDINALITY AS m(message_id, message_key, type, n)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbox_messages_partitioned (
        id            bigint      NOT NULL,
        message_id    uuid        NOT NULL,
        topic         text        NOT NULL,
        message_key   text        NOT NULL,
        lane          smallint    NOT NULL,
        type          text        NOT NULL,
        payload       json        NOT NULL,
        headers       json        NOT NULL DEFAULT '{}',
        created_at    timestamptz NOT NULL DEFAULT now()
      ) PARTITION BY RANGE (created_at)`);
    await makePartitions(q, 'outbox_batches', 'outbox_messages', 'outbox_messages_partitioned');
    await q.query(
      `INSERT INTO outbox_messages_partitioned (id, message_id, topic, message_key, lane, type, payload, headers, created_at)
       SELECT id, message_id, topic, message_key, lane, type, payload, headers, created_at FROM outbox_messages`,
    );
    // Each queued batch becomes its messages, queued in its place.
    await q.query(
      `WITH batches AS (DELETE FROM outbox_pending RETURNING lane, id, attempts, last_error, created_at)
       INSERT INTO outbox_pending (lane, id, attempts, last_error, created_at)
       SELECT b.lane, m.id, b.attempts, b.last_error, b.created_at FROM batches b JOIN outbox_messages m ON m.batch_id = b.id AND m.created_at = b.created_at`,
    );
    await q.query(`ALTER TABLE outbox_pending DROP COLUMN messages`);
    const [{ last }] = await q.query(`SELECT coalesce(max(id), 0)::text AS last FROM outbox_messages_partitioned`);
    await q.query(`DROP VIEW outbox_messages`);
    await q.query(`DROP TABLE outbox_batches`);
    await q.query(`ALTER TABLE outbox_messages_partitioned RENAME TO outbox_messages`);
    await sequenceFrom(q, 'outbox_messages', last);
    await q.query(`ALTER TABLE outbox_messages ADD PRIMARY KEY (id, created_at)`);
    await q.query(`ALTER TABLE outbox_messages ADD UNIQUE (message_id, created_at)`);
    await q.query(`CREATE INDEX outbox_messages_created_idx ON outbox_messages (created_at)`);
    await q.query(`ALTER TABLE outbox_messages ALTER COLUMN payload SET STATISTICS 0, ALTER COLUMN headers SET STATISTICS 0`);
  }
}

/**
 * Partitions of `into` (named after `named`) for each day `from` has a partition or a row of
 * (its DEFAULT partition may hold some), today and the days ahead, and a DEFAULT one.
 */
async function makePartitions(q: QueryRunner, from: string, named: string, into = named): Promise<void> {
  const pattern = `^${from}_p(\\d{4})(\\d{2})(\\d{2})$`;
  const days: { day: string }[] = await q.query(
    `SELECT DISTINCT day FROM (
       SELECT regexp_replace(c.relname, $2, '\\1-\\2-\\3') AS day
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass AND c.relname ~ $2
       UNION SELECT DISTINCT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM ${from}
       UNION SELECT to_char(date_trunc('day', now() AT TIME ZONE 'UTC') + n * interval '1 day', 'YYYY-MM-DD') FROM generate_series(0, ${DAYS_AHEAD}) AS n
     ) AS days ORDER BY 1`,
    [from, pattern],
  );
  for (const { day } of days) {
    await q.query(
      `CREATE TABLE ${named}_p${day.replace(/-/g, '')} PARTITION OF ${into}
       FOR VALUES FROM ('${day} 00:00:00+00') TO ('${nextDay(day)} 00:00:00+00')`,
    );
  }
  await q.query(`CREATE TABLE ${named}_default PARTITION OF ${into} DEFAULT`);
}

/** A sequence of the table's name for its id, going on after `last`. */
async function sequenceFrom(q: QueryRunner, table: string, last: string): Promise<void> {
  const sequence = `${table}_id_seq`;
  await q.query(`CREATE SEQUENCE ${sequence} OWNED BY ${table}.id`);
  await q.query(`SELECT setval('${sequence}', $1::bigint + 1, false)`, [last]);
  await q.query(`ALTER TABLE ${table} ALTER COLUMN id SET DEFAULT nextval('${sequence}')`);
}

/** The UTC day after `day` (`YYYY-MM-DD`). */
function nextDay(day: string): string {
  const next = new Date(`${day}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString().slice(0, 10);
}
