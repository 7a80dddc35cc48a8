import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/infrastructure/database/data-source';
import { MIGRATIONS } from '../../../src/infrastructure/database/migration-list';
import { OutboxBatches1798500000000 } from '../../../src/infrastructure/database/migrations/1798500000000-outbox-batches';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { databaseUrl, withAdminClient } from '../../setup/admin-client';
import { describeWithPostgres, testEnv } from '../../setup/test-env';

/**
 * The migration that stores the outbox a row per batch of messages: every message already there
 * becomes a batch of one with its id, its day and its place in the queue; the view reads them as
 * they were; ids go on after the highest; down gives a table of messages back, a queued batch
 * becoming its messages, each queued.
 */
describeWithPostgres('migration: outbox rows hold batches of messages', () => {
  const name = `bo_t_${testEnv.runId}_${randomBytes(4).toString('hex')}`;
  const server = testEnv.databaseUrl!;
  const upTo = MIGRATIONS.indexOf(OutboxBatches1798500000000);
  let db: DataSource;

  const open = async (migrations: typeof MIGRATIONS) => {
    const source = new DataSource({ ...dataSourceOptions({ url: databaseUrl(server, name), poolSize: 1 }), migrations, logging: false });
    await source.initialize();
    return source;
  };

  const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000);
  const dayOf = (d: Date) => d.toISOString().slice(0, 10).replace(/-/g, '');
  const published = randomUUID();
  const pending = randomUUID();
  let highestId: number;

  beforeAll(async () => {
    expect(upTo).toBeGreaterThan(0);
    await withAdminClient(server, (c) => c.query(`CREATE DATABASE ${name}`));
    db = await open(MIGRATIONS.slice(0, upTo));
    const rows: { id: string }[] = await db.query(
      `INSERT INTO outbox_messages (message_id, topic, message_key, lane, type, payload, headers, created_at)
       VALUES ($1, 'benefits.events', 'k1', 3, 'A.v1', '{"a":1}', $3, $4),
              ($2, 'hris.events', 'k2', 5, 'B.v1', '{"b":[2]}', $5, now())
       RETURNING id`,
      [
        published,
        pending,
        JSON.stringify({ 'message-id': published, 'message-type': 'A.v1' }),
        tenDaysAgo,
        JSON.stringify({ 'trace-id': 't', 'message-id': pending, 'message-type': 'B.v1' }),
      ],
    );
    highestId = Math.max(...rows.map((r) => Number(r.id)));
    await db.query(`INSERT INTO outbox_pending (lane, id, attempts, created_at) SELECT lane, id, 2, created_at FROM outbox_messages WHERE message_id = $1`, [pending]);
    await db.destroy();
    db = await open(MIGRATIONS.slice(0, upTo + 1));
  });

  afterAll(async () => {
    if (db?.isInitialized) await db.destroy();
    await withAdminClient(server, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });

  it('keeps every message as a batch of one with its id, in the partition of its day, and reads it back through the view', async () => {
    const batches = await db.query(
      `SELECT id::int, topic, lane, message_ids, message_keys, types, payloads::text, payload_ends, headers, tableoid::regclass::text AS partition FROM outbox_batches ORDER BY id`,
    );
    expect(batches).toEqual([
      {
        id: highestId - 1,
        topic: 'benefits.events',
        lane: 3,
        message_ids: [published],
        message_keys: ['k1'],
        types: ['A.v1'],
        payloads: '[{"a":1}]',
        payload_ends: [8],
        headers: [{}],
        partition: `outbox_batches_p${dayOf(tenDaysAgo)}`,
      },
      {
        id: highestId,
        topic: 'hris.events',
        lane: 5,
        message_ids: [pending],
        message_keys: ['k2'],
        types: ['B.v1'],
        payloads: '[{"b":[2]}]',
        payload_ends: [10],
        headers: [{ 'trace-id': 't' }],
        partition: `outbox_batches_p${dayOf(new Date())}`,
      },
    ]);
    const view = await db.query(`SELECT message_id, topic, message_key, lane, type, payload, headers, batch_id::int FROM outbox_messages ORDER BY id`);
    expect(view).toEqual([
      { message_id: published, topic: 'benefits.events', message_key: 'k1', lane: 3, type: 'A.v1', payload: { a: 1 }, headers: { 'message-id': published, 'message-type': 'A.v1' }, batch_id: highestId - 1 },
      { message_id: pending, topic: 'hris.events', message_key: 'k2', lane: 5, type: 'B.v1', payload: { b: [2] }, headers: { 'trace-id': 't', 'message-id': pending, 'message-type': 'B.v1' }, batch_id: highestId },
    ]);
  });

  it('keeps the pending message queued, as a batch of one', async () => {
    expect(await db.query(`SELECT lane, id::int, attempts, messages FROM outbox_pending`)).toEqual([{ lane: 5, id: highestId, attempts: 2, messages: 1 }]);
  });

  it('goes on numbering after the highest id, and finds HRIS messages by id through their index', async () => {
    const ids = await db.transaction((manager) =>
      new OutboxWriter(new OutboxSignal()).append(manager, [
        { topic: 'hris.events', key: 'k3', type: 'C', payload: { c: 1 } },
        { topic: 'hris.events', key: 'k3', type: 'C', payload: { c: 2 } },
        { topic: 'hris.events', key: 'k3', type: 'C', payload: { c: 3 } },
      ]),
    );
    const [{ id }] = await db.query(`SELECT id::int FROM outbox_batches WHERE $1 = ANY(message_ids)`, [ids[0]]);
    expect(id).toBeGreaterThan(highestId);
    await db.query(`SET enable_seqscan = off`);
    try {
      const [{ 'QUERY PLAN': plan }] = await db.query(
        `EXPLAIN (FORMAT JSON) SELECT id FROM outbox_batches WHERE topic = 'hris.events' AND message_ids && $1::uuid[]`,
        [[ids[1]]],
      );
      expect(JSON.stringify(plan)).toContain('outbox_batches_p');
      expect(JSON.stringify(plan)).toMatch(/"Index Name":"outbox_batches_p\d{8}_message_ids_idx"/);
    } finally {
      await db.query(`RESET enable_seqscan`);
    }
  });

  it('gives a table of messages back on down, each message of a queued batch queued in its place', async () => {
    await db.undoLastMigration();
    const [{ relkind }] = await db.query(`SELECT relkind FROM pg_class WHERE relname = 'outbox_messages'`);
    expect(relkind).toBe('p');
    const rows: { message_id: string; type: string; payload: unknown; headers: Record<string, string>; queued: boolean; attempts: number | null }[] = await db.query(
      `SELECT m.message_id, m.type, m.payload, m.headers, p.id IS NOT NULL AS queued, p.attempts
       FROM outbox_messages m LEFT JOIN outbox_pending p ON p.lane = m.lane AND p.id = m.id ORDER BY m.id`,
    );
    expect(rows.map((r) => [r.type, r.payload, r.queued, r.attempts])).toEqual([
      ['A.v1', { a: 1 }, false, null],
      ['B.v1', { b: [2] }, true, 2],
      ['C', { c: 1 }, true, 0],
      ['C', { c: 2 }, true, 0],
      ['C', { c: 3 }, true, 0],
    ]);
    expect(rows[1].headers).toEqual({ 'trace-id': 't', 'message-id': pending, 'message-type': 'B.v1' });
    const [{ id }] = await db.query(
      `INSERT INTO outbox_messages (message_id, topic, message_key, lane, type, payload) VALUES ($1, 't', 'k', 1, 'x', '{}') RETURNING id::bigint AS id`,
      [randomUUID()],
    );
    const [{ max }] = await db.query(`SELECT max(id)::bigint AS max FROM outbox_messages WHERE type <> 'x'`);
    expect(BigInt(id)).toBeGreaterThan(BigInt(max));
    // And up again: every message is a batch of one once more, the queue with it.
    await db.runMigrations();
    expect(await db.query(`SELECT count(*)::int AS n, sum(cardinality(message_ids))::int AS messages FROM outbox_batches`)).toEqual([{ n: 6, messages: 6 }]);
    expect(await db.query(`SELECT count(*)::int AS n FROM outbox_pending`)).toEqual([{ n: 4 }]);
  });
});
