import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/infrastructure/database/data-source';
import { MIGRATIONS } from '../../../src/infrastructure/database/migration-list';
import { DailyPartitions1798400000000 } from '../../../src/infrastructure/database/migrations/1798400000000-daily-partitions';
import { databaseUrl, withAdminClient } from '../../setup/admin-client';
import { describeWithPostgres, testEnv } from '../../setup/test-env';

const TABLES = ['inbox_messages', 'outbox_messages', 'webhook_deliveries', 'webhook_attempts', 'ops_audit'];

/**
 * The migration that partitions the history tables by day: every row already there is kept, in
 * the partition of its day; the next days have theirs; ids go on after the highest; a pending
 * outbox message keeps its place in the queue, now with its time; down gives plain tables back.
 */
describeWithPostgres('migration: history tables partitioned by day', () => {
  const name = `bo_t_${testEnv.runId}_${randomBytes(4).toString('hex')}`;
  const server = testEnv.databaseUrl!;
  const upTo = MIGRATIONS.indexOf(DailyPartitions1798400000000);
  let db: DataSource;

  const open = async (migrations: typeof MIGRATIONS) => {
    const source = new DataSource({ ...dataSourceOptions({ url: databaseUrl(server, name), poolSize: 1 }), migrations, logging: false });
    await source.initialize();
    return source;
  };

  const application = randomUUID();
  const connection = randomUUID();
  const endpoint = randomUUID();
  const event = randomUUID();
  const pendingMessage = randomUUID();
  const publishedMessage = randomUUID();
  const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000);
  const dayOf = (d: Date) => d.toISOString().slice(0, 10).replace(/-/g, '');
  let deliveryId: string;
  let highestOutboxId: number;

  beforeAll(async () => {
    expect(upTo).toBeGreaterThan(0);
    await withAdminClient(server, (c) => c.query(`CREATE DATABASE ${name}`));
    db = await open(MIGRATIONS.slice(0, upTo));
    await db.query(`INSERT INTO applications (id, name, secret_hash) VALUES ($1, 'app', 'x')`, [application]);
    await db.query(
      `INSERT INTO connections (id, application_id, provider_id, authentication_type, account_id, company_id, products, status, sandbox)
       VALUES ($1, $2, 'sandbox_automated', 'credential', $3, $4, '{}', 'connected', true)`,
      [connection, application, randomUUID(), randomUUID()],
    );
    await db.query(`INSERT INTO inbox_messages (consumer, scope, message_id, topic, received_at) VALUES ('c', '', 'old', 't', $1), ('c', '', 'new', 't', now())`, [
      tenDaysAgo,
    ]);
    const outbox: { id: string }[] = await db.query(
      `INSERT INTO outbox_messages (message_id, topic, message_key, lane, type, payload, headers, created_at)
       VALUES ($1, 't', 'k', 1, 'x', '{"a":1}', '{}', $3), ($2, 't', 'k', 1, 'x', '{"b":2}', '{}', now()) RETURNING id`,
      [publishedMessage, pendingMessage, tenDaysAgo],
    );
    highestOutboxId = Math.max(...outbox.map((o) => Number(o.id)));
    await db.query(`INSERT INTO outbox_pending (lane, id, attempts) VALUES (1, $1, 2)`, [highestOutboxId]);
    await db.query(`INSERT INTO webhook_endpoints (id, application_id, url, event_types, secret_sealed) VALUES ($1, $2, 'https://example.com/h', '{x}', 's')`, [
      endpoint,
      application,
    ]);
    await db.query(
      `INSERT INTO webhook_events (id, application_id, connection_id, company_id, account_id, event_type, created_at) VALUES ($1, $2, $3, $4, $4, 'x', $5)`,
      [event, application, connection, randomUUID(), tenDaysAgo],
    );
    [{ id: deliveryId }] = await db.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, connection_id, status, created_at, completed_at) VALUES ($1, $2, $3, 'delivered', $4, $4) RETURNING id::text`,
      [endpoint, event, connection, tenDaysAgo],
    );
    await db.query(`INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms) VALUES ($1, $2, 200, 12)`, [deliveryId, tenDaysAgo]);
    await db.query(`INSERT INTO ops_audit (actor, action, target_type, target_id, at) VALUES ('ops', 'retry', 'saga', 's1', $1)`, [tenDaysAgo]);
    await db.destroy();
    db = await open(MIGRATIONS.slice(0, upTo + 1));
  });

  afterAll(async () => {
    if (db?.isInitialized) await db.destroy();
    await withAdminClient(server, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });

  /** Each row's partition, by table: `table partition`. */
  const placement = async () =>
    (
      await db.query(`
        SELECT 'inbox_messages ' || tableoid::regclass AS p FROM inbox_messages
        UNION ALL SELECT 'outbox_messages ' || tableoid::regclass FROM outbox_messages
        UNION ALL SELECT 'webhook_deliveries ' || tableoid::regclass FROM webhook_deliveries
        UNION ALL SELECT 'webhook_attempts ' || tableoid::regclass FROM webhook_attempts
        UNION ALL SELECT 'ops_audit ' || tableoid::regclass FROM ops_audit`)
    )
      .map((r: { p: string }) => r.p)
      .sort();

  it('makes each table partitioned by day, keeping every row in the partition of its day', async () => {
    const kinds: { relname: string; relkind: string }[] = await db.query(`SELECT relname, relkind FROM pg_class WHERE relname = ANY($1::text[])`, [TABLES]);
    expect(kinds.map((k) => `${k.relname} ${k.relkind}`).sort()).toEqual(TABLES.map((t) => `${t} p`).sort());
    const old = dayOf(tenDaysAgo);
    const today = dayOf(new Date());
    expect(await placement()).toEqual(
      [
        `inbox_messages inbox_messages_p${old}`,
        `inbox_messages inbox_messages_p${today}`,
        `outbox_messages outbox_messages_p${old}`,
        `outbox_messages outbox_messages_p${today}`,
        `webhook_deliveries webhook_deliveries_p${old}`,
        `webhook_attempts webhook_attempts_p${old}`,
        `ops_audit ops_audit_p${old}`,
      ].sort(),
    );
  });

  it('creates the partitions of the next days and a default one', async () => {
    const ahead = [1, 2, 3].map((n) => `inbox_messages_p${dayOf(new Date(Date.now() + n * 86_400_000))}`);
    const names: { name: string }[] = await db.query(`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'inbox_messages'::regclass`);
    expect(names.map((n) => n.name)).toEqual(expect.arrayContaining([...ahead, 'inbox_messages_default']));
  });

  it('goes on numbering after the highest id, and keeps the pending message queued with its time', async () => {
    const [{ id }] = await db.query(
      `INSERT INTO outbox_messages (message_id, topic, message_key, lane, type, payload) VALUES ($1, 't', 'k', 1, 'x', '{}') RETURNING id`,
      [randomUUID()],
    );
    expect(Number(id)).toBeGreaterThan(highestOutboxId);
    const pending = await db.query(`SELECT p.attempts, m.message_id FROM outbox_pending p JOIN outbox_messages m ON m.id = p.id AND m.created_at = p.created_at`);
    expect(pending).toEqual([{ attempts: 2, message_id: pendingMessage }]);
    const nextEvent = randomUUID();
    await db.query(`INSERT INTO webhook_events (id, application_id, connection_id, company_id, account_id, event_type) VALUES ($1, $2, $3, $4, $4, 'x')`, [
      nextEvent,
      application,
      connection,
      randomUUID(),
    ]);
    const [{ id: next }] = await db.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, connection_id) VALUES ($1, $2, $3) RETURNING id::text`,
      [endpoint, nextEvent, connection],
    );
    expect(BigInt(next)).toBeGreaterThan(BigInt(deliveryId));
  });

  it('claims inbox keys once, whatever day the first claim was made', async () => {
    const claimed = await db.query(`SELECT claimed_id FROM inbox_claim('c', 't', ARRAY['', '', ''], ARRAY['old', 'fresh', 'fresh'])`);
    expect(claimed).toEqual([{ claimed_id: 'fresh' }]);
  });

  it('gives plain tables back on down, with every row', async () => {
    const before = (await placement()).length;
    await db.undoLastMigration();
    const kinds: { relkind: string }[] = await db.query(`SELECT DISTINCT relkind FROM pg_class WHERE relname = ANY($1::text[])`, [TABLES]);
    expect(kinds).toEqual([{ relkind: 'r' }]);
    const [{ n }] = await db.query(
      `SELECT (SELECT count(*) FROM inbox_messages) + (SELECT count(*) FROM outbox_messages) + (SELECT count(*) FROM webhook_deliveries)
              + (SELECT count(*) FROM webhook_attempts) + (SELECT count(*) FROM ops_audit) AS n`,
    );
    expect(Number(n)).toBe(before);
  });
});
