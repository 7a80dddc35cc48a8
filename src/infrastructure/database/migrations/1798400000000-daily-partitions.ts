import { MigrationInterface, QueryRunner } from 'typeorm';

/** Days ahead of today the migration creates partitions for; the partition upkeep keeps the window from then on. */
const DAYS_AHEAD = 3;

interface Conversion {
  table: string;
  /** The time column partitioned on (by day, UTC). */
  column: string;
  /** The id column's sequence, recreated on the partitioned table (bigserial and identity alike). */
  idColumn?: string;
  /** Keys and indexes of the partitioned table; each key includes the partition column, as PostgreSQL requires. */
  partitioned: string[];
  /** The same table's keys and indexes as they were before (for down). */
  plain: string[];
  /** Storage parameters of each partition (a partitioned table has none of its own). */
  partitionOptions?: string;
}

/**
 * The five history tables that grow with every event (migration 1798400000000). Each key of the
 * partitioned table includes its partition column; what the plain keys guaranteed alone is kept
 * as follows (docs: "Daily partitions"):
 * - inbox (consumer, scope, message_id): `inbox_claim()` serialises the claims of a key and looks
 *   in every partition, so a message redelivered on a later day is still a duplicate;
 * - outbox `id` and `message_id`, ops audit and webhook ids: minted from a sequence or as UUIDs,
 *   unique by construction; lookups by id alone probe each partition's index (rare ops reads),
 *   the relay joins by (id, created_at) so it reads one partition;
 * - webhook (endpoint_id, event_id): `webhook_enqueue()` inserts each event with a fresh id in
 *   the statement that mints it, so a pair cannot be written twice.
 */
export const CONVERSIONS: readonly Conversion[] = [
  {
    table: 'inbox_messages',
    column: 'received_at',
    partitioned: [
      `ALTER TABLE inbox_messages ADD PRIMARY KEY (consumer, scope, message_id, received_at)`,
      `CREATE INDEX inbox_messages_received_idx ON inbox_messages (received_at)`,
    ],
    plain: [
      `ALTER TABLE inbox_messages ADD PRIMARY KEY (consumer, scope, message_id)`,
      `CREATE INDEX inbox_messages_received_idx ON inbox_messages (received_at)`,
    ],
  },
  {
    table: 'outbox_messages',
    column: 'created_at',
    idColumn: 'id',
    partitioned: [
      `ALTER TABLE outbox_messages ADD PRIMARY KEY (id, created_at)`,
      `ALTER TABLE outbox_messages ADD UNIQUE (message_id, created_at)`,
      `CREATE INDEX outbox_messages_created_idx ON outbox_messages (created_at)`,
      `ALTER TABLE outbox_messages ALTER COLUMN payload SET STATISTICS 0, ALTER COLUMN headers SET STATISTICS 0`,
    ],
    plain: [
      `ALTER TABLE outbox_messages ADD PRIMARY KEY (id)`,
      `ALTER TABLE outbox_messages ADD UNIQUE (message_id)`,
      `CREATE INDEX outbox_messages_created_idx ON outbox_messages (created_at)`,
      `ALTER TABLE outbox_messages ALTER COLUMN payload SET STATISTICS 0, ALTER COLUMN headers SET STATISTICS 0`,
    ],
  },
  // Attempts before deliveries: their old table holds the foreign key to the deliveries'.
  {
    table: 'webhook_attempts',
    column: 'attempted_at',
    idColumn: 'id',
    partitioned: [
      `ALTER TABLE webhook_attempts ADD PRIMARY KEY (id, attempted_at)`,
      `CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id)`,
    ],
    plain: [
      `ALTER TABLE webhook_attempts ADD PRIMARY KEY (id)`,
      `CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id)`,
    ],
    partitionOptions: 'autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000',
  },
  {
    table: 'webhook_deliveries',
    column: 'created_at',
    idColumn: 'id',
    partitioned: [
      `ALTER TABLE webhook_deliveries ADD PRIMARY KEY (id, created_at)`,
      `ALTER TABLE webhook_deliveries ADD UNIQUE (endpoint_id, event_id, created_at)`,
      ...webhookDeliveryKeysAndIndexes(),
    ],
    plain: [
      `ALTER TABLE webhook_deliveries ADD PRIMARY KEY (id)`,
      `ALTER TABLE webhook_deliveries ADD UNIQUE (endpoint_id, event_id)`,
      ...webhookDeliveryKeysAndIndexes(),
    ],
    partitionOptions: 'autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000',
  },
  {
    table: 'ops_audit',
    column: 'at',
    idColumn: 'id',
    partitioned: [
      `ALTER TABLE ops_audit ADD PRIMARY KEY (id, at)`,
      `CREATE INDEX ops_audit_target_idx ON ops_audit (target_type, target_id, at)`,
      `CREATE INDEX ops_audit_at_idx ON ops_audit (at DESC)`,
    ],
    plain: [
      `ALTER TABLE ops_audit ADD PRIMARY KEY (id)`,
      `CREATE INDEX ops_audit_target_idx ON ops_audit (target_type, target_id, at)`,
      `CREATE INDEX ops_audit_at_idx ON ops_audit (at DESC)`,
    ],
  },
];

function webhookDeliveryKeysAndIndexes(): string[] {
  return [
    `ALTER TABLE webhook_deliveries ADD FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE`,
    `ALTER TABLE webhook_deliveries ADD FOREIGN KEY (event_id) REFERENCES webhook_events (id) ON DELETE CASCADE`,
    `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending'`,
    `CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (endpoint_id, lease_until) WHERE status = 'pending' AND leased_by IS NOT NULL`,
    `CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id DESC)`,
    `CREATE INDEX webhook_deliveries_order_idx ON webhook_deliveries (endpoint_id, connection_id, id) WHERE status = 'pending'`,
    `CREATE INDEX webhook_deliveries_failed_idx ON webhook_deliveries (completed_at DESC) WHERE status = 'failed'`,
    `CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`,
  ];
}

/**
 * `webhook_lease` as migration 1797000000000 made it, or (`byDay`) joining the leased rows by
 * (id, created_at) and answering each delivery's `created_at`, so the update and the attempt's
 * record find a delivery in its one partition rather than probing every day's index. The time is
 * answered as text to the microsecond: a JavaScript Date keeps milliseconds, and would match no row.
 */
const EXACT_TIME = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

function webhookLease(byDay: boolean): string {
  const created = (expression: string) => (byDay ? expression : '');
  return `
    CREATE FUNCTION webhook_lease(p_holder text, p_lease_ms bigint, p_limit integer)
    RETURNS TABLE (id text, endpoint_id uuid, url text, sandbox boolean, secret_sealed text, previous_secret_sealed text,
                   attempts integer, retry_from timestamptz, leased_at timestamptz, event_id uuid, event_type text,
                   connection_id uuid, company_id uuid, account_id uuid, entity_id uuid, data jsonb, event_created_at timestamptz${created(', created_at text')})
    LANGUAGE sql SET enable_seqscan = off AS $$
      WITH room AS (
        SELECT e.id, e.ordered_by_connection,
               e.max_concurrency - (SELECT count(*) FROM webhook_deliveries f
                                    WHERE f.endpoint_id = e.id AND f.status = 'pending' AND f.leased_by IS NOT NULL AND f.lease_until > now())::int AS free
        FROM webhook_endpoints e
        WHERE e.enabled AND EXISTS (
          SELECT 1 FROM webhook_deliveries d
          WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now()))
        ORDER BY random()
        LIMIT 100
        FOR UPDATE OF e SKIP LOCKED
      ), due AS (
        SELECT d.id${created(', d.created_at')}, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS n
        FROM room r
        CROSS JOIN LATERAL (
          SELECT d.id${created(', d.created_at')}, d.next_attempt_at FROM webhook_deliveries d
          WHERE d.endpoint_id = r.id AND d.status = 'pending' AND d.next_attempt_at <= now()
            AND (d.lease_until IS NULL OR d.lease_until < now())
            AND (NOT r.ordered_by_connection OR NOT EXISTS (
              SELECT 1 FROM webhook_deliveries p
              WHERE p.endpoint_id = d.endpoint_id AND p.connection_id = d.connection_id AND p.status = 'pending' AND p.id < d.id))
          ORDER BY d.next_attempt_at, d.id
          LIMIT greatest(r.free, 0)) d
      )
      UPDATE webhook_deliveries w SET leased_by = p_holder, lease_until = now() + p_lease_ms * interval '1 millisecond'
      FROM due, webhook_endpoints e, applications a, webhook_events v
      WHERE w.id = due.id${created(' AND w.created_at = due.created_at')} AND due.n <= p_limit AND e.id = w.endpoint_id AND a.id = e.application_id AND v.id = w.event_id
      RETURNING w.id::text, w.endpoint_id, e.url, a.sandbox, e.secret_sealed,
        CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_sealed END,
        w.attempts, w.retry_from, now(),
        v.id, v.event_type, v.connection_id, v.company_id, v.account_id, v.entity_id, v.data, v.created_at${created(`, ${EXACT_TIME('w.created_at')}`)}
    $$`;
}

/** `YYYYMMDD` of a UTC day given as `YYYY-MM-DD`. */
const compact = (day: string) => day.replace(/-/g, '');

/**
 * The history tables `inbox_messages`, `outbox_messages`, `webhook_deliveries`,
 * `webhook_attempts` and `ops_audit` become tables partitioned by day (UTC) on their time column,
 * so retention drops a day's partition instead of deleting its rows (which left dead rows for
 * VACUUM, and on a busy stream never caught up). Rows already there are moved into a partition
 * for each day they cover; the next days get theirs, and each table a DEFAULT partition that
 * takes a row no day partition covers (the upkeep, PartitionUpkeep, moves them out again).
 *
 * Since no key of a partitioned table can leave out its partition column:
 * - the inbox is claimed through `inbox_claim()`: it takes a transaction lock per key, then
 *   inserts the keys no partition holds yet, so a redelivery on a later day is a duplicate and
 *   two claims of one key racing over midnight wait for each other;
 * - `outbox_pending` records its message's `created_at`, so the relay reads a message from its
 *   one partition;
 * - `webhook_attempts` keeps no foreign key to `webhook_deliveries`: an attempt is written after
 *   its delivery and is retained as long, and readers join attempts to deliveries;
 * - `webhook_lease()` answers each delivery's `created_at`, and the attempts are recorded by
 *   (id, created_at): one partition's index per delivery, not every day's.
 */
export class DailyPartitions1798400000000 implements MigrationInterface {
  name = 'DailyPartitions1798400000000';

  async up(q: QueryRunner): Promise<void> {
    for (const c of CONVERSIONS) await this.partition(q, c);

    await q.query(`ALTER TABLE outbox_pending ADD COLUMN created_at timestamptz`);
    await q.query(`UPDATE outbox_pending p SET created_at = m.created_at FROM outbox_messages m WHERE m.id = p.id`);
    // A queue row whose message is gone (deleted by hand) is dropped by the relay; it needs some time.
    await q.query(`UPDATE outbox_pending SET created_at = now() WHERE created_at IS NULL`);
    await q.query(`ALTER TABLE outbox_pending ALTER COLUMN created_at SET NOT NULL`);

    // One claimer of a key at a time (a lock held to the end of its transaction), then a look into
    // every partition: a fresh snapshot per statement (READ COMMITTED) sees a claim that committed
    // while this one waited. Keys repeated in the call are claimed once. Answers the keys claimed.
    await q.query(`
      CREATE FUNCTION inbox_claim(p_consumer text, p_topic text, p_scopes text[], p_ids text[])
      RETURNS TABLE (claimed_scope text, claimed_id text) LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(p_consumer || '/' || k.s || '/' || k.m, 1798400000))
        FROM (SELECT DISTINCT u.s, u.m FROM unnest(p_scopes, p_ids) AS u(s, m) ORDER BY 1, 2) AS k;
        RETURN QUERY
        INSERT INTO inbox_messages AS i (consumer, scope, message_id, topic)
        SELECT DISTINCT p_consumer, k.s, k.m, p_topic FROM unnest(p_scopes, p_ids) AS k(s, m)
        WHERE NOT EXISTS (SELECT 1 FROM inbox_messages o WHERE o.consumer = p_consumer AND o.scope = k.s AND o.message_id = k.m)
        ON CONFLICT DO NOTHING
        RETURNING i.scope, i.message_id;
      END $$`);

    await q.query(`DROP FUNCTION webhook_lease(text, bigint, integer)`);
    await q.query(webhookLease(true));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION webhook_lease(text, bigint, integer)`);
    await q.query(webhookLease(false));
    await q.query(`DROP FUNCTION inbox_claim(text, text, text[], text[])`);
    await q.query(`ALTER TABLE outbox_pending DROP COLUMN created_at`);
    // Under the plain inbox key one row per key is enough: the earliest is kept.
    await q.query(
      `DELETE FROM inbox_messages i USING inbox_messages o
       WHERE o.consumer = i.consumer AND o.scope = i.scope AND o.message_id = i.message_id AND o.received_at < i.received_at`,
    );
    for (const c of [...CONVERSIONS].reverse()) await this.unpartition(q, c);
    await q.query(`ALTER TABLE webhook_attempts ADD FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE`);
  }

  private async partition(q: QueryRunner, c: Conversion): Promise<void> {
    const staging = `${c.table}_partitioned`;
    await q.query(`CREATE TABLE ${staging} (LIKE ${c.table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (${c.column})`);
    // The copied default names the old table's sequence, which goes with it.
    if (c.idColumn) await q.query(`ALTER TABLE ${staging} ALTER COLUMN ${c.idColumn} DROP DEFAULT`);
    const days: { day: string }[] = await q.query(
      `SELECT to_char(d, 'YYYY-MM-DD') AS day FROM (
         SELECT DISTINCT date_trunc('day', ${c.column} AT TIME ZONE 'UTC') AS d FROM ${c.table}
         UNION SELECT date_trunc('day', now() AT TIME ZONE 'UTC') + n * interval '1 day' FROM generate_series(0, ${DAYS_AHEAD}) AS n
       ) AS days ORDER BY 1`,
    );
    const options = c.partitionOptions ? ` WITH (${c.partitionOptions})` : '';
    for (const { day } of days) {
      await q.query(
        `CREATE TABLE ${c.table}_p${compact(day)} PARTITION OF ${staging}
         FOR VALUES FROM ('${day} 00:00:00+00') TO ('${nextDay(day)} 00:00:00+00')${options}`,
      );
    }
    await q.query(`CREATE TABLE ${c.table}_default PARTITION OF ${staging} DEFAULT${options}`);
    await q.query(`INSERT INTO ${staging} SELECT * FROM ${c.table}`);
    const [{ last }] = c.idColumn ? await q.query(`SELECT coalesce(max(${c.idColumn}), 0)::text AS last FROM ${c.table}`) : [{ last: '0' }];
    await q.query(`DROP TABLE ${c.table}`);
    await q.query(`ALTER TABLE ${staging} RENAME TO ${c.table}`);
    if (c.idColumn) await this.recreateSequence(q, c.table, c.idColumn, last);
    for (const statement of c.partitioned) await q.query(statement);
  }

  private async unpartition(q: QueryRunner, c: Conversion): Promise<void> {
    const staging = `${c.table}_plain`;
    await q.query(`CREATE TABLE ${staging} (LIKE ${c.table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    if (c.idColumn) await q.query(`ALTER TABLE ${staging} ALTER COLUMN ${c.idColumn} DROP DEFAULT`);
    await q.query(`INSERT INTO ${staging} SELECT * FROM ${c.table}`);
    const [{ last }] = c.idColumn ? await q.query(`SELECT coalesce(max(${c.idColumn}), 0)::text AS last FROM ${c.table}`) : [{ last: '0' }];
    // Its partitions go with it.
    await q.query(`DROP TABLE ${c.table}`);
    await q.query(`ALTER TABLE ${staging} RENAME TO ${c.table}`);
    if (c.idColumn) await this.recreateSequence(q, c.table, c.idColumn, last);
    for (const statement of c.plain) await q.query(statement);
  }

  /** A sequence of the table's name for its id, going on after the highest id there. */
  private async recreateSequence(q: QueryRunner, table: string, column: string, last: string): Promise<void> {
    const sequence = `${table}_${column}_seq`;
    await q.query(`CREATE SEQUENCE ${sequence} OWNED BY ${table}.${column}`);
    await q.query(`SELECT setval('${sequence}', $1::bigint + 1, false)`, [last]);
    await q.query(`ALTER TABLE ${table} ALTER COLUMN ${column} SET DEFAULT nextval('${sequence}')`);
  }
}

/** The UTC day after `day` (`YYYY-MM-DD`). */
function nextDay(day: string): string {
  const next = new Date(`${day}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString().slice(0, 10);
}
