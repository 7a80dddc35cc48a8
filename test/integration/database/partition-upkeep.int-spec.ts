import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { loadConfig } from '../../../src/config/app-config';
import {
  DailyPartitionedTable,
  dayOf,
  historyTables,
  PartitionUpkeep,
  partitionName,
} from '../../../src/infrastructure/database/partition-upkeep';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { MessageProcessor } from '../../../src/infrastructure/messaging/inbox/message-processor';
import { InboundMessage } from '../../../src/infrastructure/messaging/message';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { createEffectsTable, effects, EffectHandler } from '../messaging/messaging-test-kit';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

const DAY_MS = 86_400_000;

/**
 * The daily partitions of the history tables on a real database: made ahead, rows in the
 * partition of their day (or DEFAULT, moved out by the next round), days past retention dropped
 * but for those with pending work, the inbox deduplicating across days, and two instances'
 * upkeeps at once. Time is moved by the round's `at` and by rows written with older times.
 */
describeWithPostgres('PartitionUpkeep (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let now: Date;

  const config = loadConfig({}, { DATABASE_URL: 'postgres://u@db/benefits', OPS_PASSWORD: 'correct horse battery' });
  /** The history tables, each kept `retentionDays`. */
  const tablesKept = (retentionDays: number): DailyPartitionedTable[] => historyTables(config).map((t) => ({ ...t, retentionDays }));
  const upkeep = (retentionDays = 3650, daysAhead = 3) => new PartitionUpkeep(dataSource, { daysAhead, intervalMs: 60_000, tables: tablesKept(retentionDays) });
  const daysFromNow = (days: number, hour = 12) => new Date(Date.parse(`${dayOf(new Date(now.getTime() + days * DAY_MS))}T00:00:00Z`) + hour * 3_600_000);
  const partitionsOf = async (table: string): Promise<string[]> =>
    (
      await dataSource.query(`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`, [
        table,
      ])
    ).map((r: { name: string }) => r.name);
  const partitionOfRow = async (sql: string, params: unknown[]): Promise<string> => (await dataSource.query(`SELECT tableoid::regclass::text AS p FROM ${sql}`, params))[0].p;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ dataSource, database } = await openTestDataSource(4));
    [{ now }] = await dataSource.query(`SELECT now() AS now`);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it("makes today's partition and the next days' for every table, once", async () => {
    const at = daysFromNow(20);
    const first = await upkeep().round(at);
    const expected = [20, 21, 22, 23].map((n) => dayOf(daysFromNow(n)));
    for (const t of historyTables(config)) {
      expect(await partitionsOf(t.table)).toEqual(expect.arrayContaining(expected.map((day) => partitionName(t.table, day))));
    }
    expect(first.created).toHaveLength(expected.length * 5);
    expect((await upkeep().round(at)).created).toEqual([]);
  });

  it('puts a row in the partition of its day, and one of a day without partition in DEFAULT until the next round moves it', async () => {
    await upkeep().round(daysFromNow(0));
    await dataSource.query(`INSERT INTO ops_audit (actor, action, target_type, target_id, at) VALUES ('ops', 'a', 't', 'today', $1), ('ops', 'a', 't', 'later', $2)`, [
      daysFromNow(1, 23),
      daysFromNow(40, 1),
    ]);
    expect(await partitionOfRow(`ops_audit WHERE target_id = $1`, ['today'])).toBe(partitionName('ops_audit', dayOf(daysFromNow(1))));
    expect(await partitionOfRow(`ops_audit WHERE target_id = $1`, ['later'])).toBe('ops_audit_default');

    const round = await upkeep().round(daysFromNow(0));
    expect(round.movedFromDefault).toBe(1);
    expect(await partitionOfRow(`ops_audit WHERE target_id = $1`, ['later'])).toBe(partitionName('ops_audit', dayOf(daysFromNow(40))));
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM ops_audit_default`)).toEqual([{ n: 0 }]);
  });

  it('drops the days past retention, and keeps one with an outbox message or a webhook delivery still pending until it is done', async () => {
    const [oldDay, olderDay] = [daysFromNow(-30), daysFromNow(-31)];
    const application = randomUUID();
    const connection = randomUUID();
    const endpoint = randomUUID();
    await dataSource.query(`INSERT INTO applications (id, name, secret_hash) VALUES ($1, 'app', 'x')`, [application]);
    await dataSource.query(
      `INSERT INTO connections (id, application_id, provider_id, authentication_type, account_id, company_id, products, status, sandbox)
       VALUES ($1, $2, 'sandbox_automated', 'credential', $3, $4, '{}', 'connected', true)`,
      [connection, application, randomUUID(), randomUUID()],
    );
    await dataSource.query(`INSERT INTO webhook_endpoints (id, application_id, url, event_types, secret_sealed) VALUES ($1, $2, 'https://example.com/h', '{x}', 's')`, [
      endpoint,
      application,
    ]);
    const events = [randomUUID(), randomUUID()];
    for (const event of events) {
      await dataSource.query(
        `INSERT INTO webhook_events (id, application_id, connection_id, company_id, account_id, event_type, created_at) VALUES ($1, $2, $3, $4, $4, 'x', $5)`,
        [event, application, connection, randomUUID(), olderDay],
      );
    }
    // Day -30: a message still pending, a delivery still pending with an attempt; day -31: all done.
    const outbox: { id: string; created_at: Date }[] = await dataSource.query(
      `INSERT INTO outbox_batches (topic, lane, message_ids, message_keys, types, payloads, payload_ends, headers, created_at)
       VALUES ('t', 1, ARRAY[$1::uuid], '{k}', '{x}', '[{}]', '{3}', '[{}]', $3), ('t', 1, ARRAY[$2::uuid], '{k}', '{x}', '[{}]', '{3}', '[{}]', $4) RETURNING id, created_at`,
      [randomUUID(), randomUUID(), oldDay, olderDay],
    );
    await dataSource.query(`INSERT INTO outbox_pending (lane, id, created_at) VALUES (1, $1, $2)`, [outbox[0].id, outbox[0].created_at]);
    const deliveries: { id: string }[] = await dataSource.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, connection_id, status, created_at)
       VALUES ($1, $2, $4, 'pending', $5), ($1, $3, $4, 'delivered', $6) RETURNING id::text`,
      [endpoint, events[0], events[1], connection, oldDay, olderDay],
    );
    await dataSource.query(`INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms) VALUES ($1, $2, 500, 10), ($3, $4, 200, 10)`, [
      deliveries[0].id,
      oldDay,
      deliveries[1].id,
      olderDay,
    ]);
    await dataSource.query(`INSERT INTO inbox_messages (consumer, scope, message_id, topic, received_at) VALUES ('old', '', 'm', 't', $1)`, [olderDay]);
    await dataSource.query(`INSERT INTO ops_audit (actor, action, target_type, target_id, at) VALUES ('ops', 'a', 't', 'old', $1)`, [olderDay]);

    const first = await upkeep(7).round(daysFromNow(0));
    const pendingDays = ['outbox_batches', 'webhook_deliveries', 'webhook_attempts'].map((t) => partitionName(t, dayOf(oldDay)));
    expect(first.kept.sort()).toEqual(pendingDays.sort());
    expect(first.dropped).toEqual(
      expect.arrayContaining(['inbox_messages', 'outbox_batches', 'webhook_deliveries', 'webhook_attempts', 'ops_audit'].map((t) => partitionName(t, dayOf(olderDay)))),
    );
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM outbox_messages WHERE created_at < $1`, [daysFromNow(-29, 0)])).toEqual([{ n: 1 }]);
    expect(await dataSource.query(`SELECT id::text FROM webhook_deliveries WHERE created_at < $1`, [daysFromNow(-29, 0)])).toEqual([{ id: deliveries[0].id }]);
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM inbox_messages WHERE consumer = 'old'`)).toEqual([{ n: 0 }]);

    // Published and delivered: the next round drops their day too.
    await dataSource.query(`DELETE FROM outbox_pending WHERE id = $1`, [outbox[0].id]);
    await dataSource.query(`UPDATE webhook_deliveries SET status = 'delivered', completed_at = now() WHERE id = $1`, [deliveries[0].id]);
    const second = await upkeep(7).round(daysFromNow(0));
    expect(second.kept).toEqual([]);
    expect(second.dropped.sort()).toEqual(pendingDays.sort());
    for (const t of ['outbox_batches', 'webhook_deliveries', 'webhook_attempts']) expect(await partitionsOf(t)).not.toContain(partitionName(t, dayOf(oldDay)));
  });

  it('recognises a message redelivered on a later day than its first delivery as a duplicate', async () => {
    await createEffectsTable(dataSource);
    const processor = new MessageProcessor(new UnitOfWork(dataSource), new OutboxWriter(new OutboxSignal()), new Metrics());
    const handler = new EffectHandler('hris.events', `redelivered-${randomUUID().slice(0, 8)}`);
    const message = (id: string): InboundMessage => ({ topic: handler.topic, key: 'k', value: JSON.stringify({ key: 'k', seq: 1 }), headers: { 'message-id': id } });
    const id = randomUUID();
    expect(await processor.process(handler, message(id))).toBe('applied');
    // Its first delivery two days ago: the row moves to that day's partition.
    await upkeep().round(daysFromNow(-2));
    await dataSource.query(`UPDATE inbox_messages SET received_at = received_at - interval '2 days' WHERE consumer = $1`, [handler.consumer]);
    expect(await partitionOfRow(`inbox_messages WHERE consumer = $1`, [handler.consumer])).toBe(partitionName('inbox_messages', dayOf(daysFromNow(-2))));

    expect(await processor.process(handler, message(id))).toBe('duplicate');
    expect(await processor.processBatch(handler, [message(id), message(randomUUID())])).toEqual(['duplicate', 'applied']);
    expect(await effects(dataSource, handler.consumer)).toHaveLength(2);
  });

  it('recognises such a redelivery when the handler says when the message was sent, alone and in a batch', async () => {
    await createEffectsTable(dataSource);
    const processor = new MessageProcessor(new UnitOfWork(dataSource), new OutboxWriter(new OutboxSignal()), new Metrics());
    // Set-wise, as the HRIS consumer is: a batch is claimed from its earliest send time.
    const base = new EffectHandler('hris.events', `sent-at-${randomUUID().slice(0, 8)}`);
    const handler = Object.assign(base, {
      sentAtOf: (m: InboundMessage) => new Date((JSON.parse(m.value) as { sent_at: string }).sent_at),
      handleBatch: async (batch: readonly InboundMessage[], manager: EntityManager) => {
        for (const m of batch) await base.handle(m, manager);
        return batch.map(() => null);
      },
    });
    const message = (id: string, sentAt: Date): InboundMessage => ({
      topic: handler.topic,
      key: 'k',
      value: JSON.stringify({ key: 'k', seq: 1, sent_at: sentAt.toISOString() }),
      headers: { 'message-id': id },
    });
    const twoDaysAgo = new Date(Date.now() - 2 * DAY_MS);
    const id = randomUUID();
    expect(await processor.process(handler, message(id, twoDaysAgo))).toBe('applied');
    await upkeep().round(daysFromNow(-2));
    await dataSource.query(`UPDATE inbox_messages SET received_at = received_at - interval '2 days' WHERE consumer = $1`, [handler.consumer]);

    expect(await processor.process(handler, message(id, twoDaysAgo))).toBe('duplicate');
    expect(await processor.processBatch(handler, [message(randomUUID(), new Date()), message(id, twoDaysAgo)])).toEqual(['applied', 'duplicate']);
    expect(await effects(dataSource, handler.consumer)).toHaveLength(2);
  });

  it('looks for an earlier copy from a day before the message was sent, and everywhere when that is unknown', async () => {
    const consumer = `sent-after-${randomUUID().slice(0, 8)}`;
    const claim = (id: string, sentAt: Date | null) =>
      dataSource.query(`SELECT claimed_id FROM inbox_claim($1, 't', ARRAY[''], ARRAY[$2], $3::timestamptz)`, [consumer, id, sentAt]);
    // A copy first received three days ago, in that day's partition.
    await upkeep().round(daysFromNow(-3));
    await dataSource.query(`INSERT INTO inbox_messages (consumer, scope, message_id, topic, received_at) VALUES ($1, '', 'old', 't', $2)`, [consumer, daysFromNow(-3)]);
    expect(await partitionOfRow(`inbox_messages WHERE consumer = $1`, [consumer])).toBe(partitionName('inbox_messages', dayOf(daysFromNow(-3))));
    // Sent three days ago (or up to a day after its copy was received, the clocks' slack): a duplicate.
    expect(await claim('old', daysFromNow(-3))).toEqual([]);
    expect(await claim('old', new Date(daysFromNow(-3).getTime() + 20 * 3600_000))).toEqual([]);
    // Unknown send time (NULL, or the four-argument call): every day is searched.
    expect(await claim('old', null)).toEqual([]);
    expect(await dataSource.query(`SELECT claimed_id FROM inbox_claim($1, 't', ARRAY[''], ARRAY['old'])`, [consumer])).toEqual([]);
    // A send time in the future counts as now: yesterday and today are still searched.
    await dataSource.query(`INSERT INTO inbox_messages (consumer, scope, message_id, topic, received_at) VALUES ($1, '', 'recent', 't', $2)`, [consumer, new Date(Date.now() - 6 * 3600_000)]);
    expect(await claim('recent', daysFromNow(30))).toEqual([]);
    // Said to be sent today, the copy of three days ago is not looked for: the message is new to the inbox.
    expect(await claim('old', new Date())).toEqual([{ claimed_id: 'old' }]);
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM inbox_messages WHERE consumer = $1 AND message_id = 'old'`, [consumer])).toEqual([{ n: 2 }]);
  });

  it('searches no partition of the days ahead, nor the default one when every day searched has its partition', async () => {
    await upkeep().round(daysFromNow(-1));
    await upkeep().round(daysFromNow(0));
    const consumer = `days-ahead-${randomUUID().slice(0, 8)}`;
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      // The partitions a claim read, as the session's statistics not yet reported count them
      // (they hold the session's earlier work of the last second too: hence the difference).
      const scans = async (): Promise<Map<string, number>> =>
        new Map(
          (
            await runner.query(`SELECT relname, idx_scan + seq_scan AS n FROM pg_stat_xact_user_tables WHERE relname LIKE 'inbox_messages%'`)
          ).map((r: { relname: string; n: string }) => [r.relname, Number(r.n)]),
        );
      const partitionsRead = async (sentAt: Date | null): Promise<string[]> => {
        await runner.startTransaction();
        try {
          const before = await scans();
          await runner.query(`SELECT claimed_id FROM inbox_claim($1, 't', ARRAY['', ''], ARRAY[$2, $3], $4::timestamptz)`, [consumer, randomUUID(), randomUUID(), sentAt]);
          const after = await scans();
          return [...after].filter(([name, n]) => n > (before.get(name) ?? 0)).map(([name]) => name).sort();
        } finally {
          await runner.rollbackTransaction();
        }
      };
      const day = (n: number) => partitionName('inbox_messages', dayOf(daysFromNow(n)));
      // Sent now: from yesterday (the clocks' slack) to tomorrow (the server's), no further.
      expect(await partitionsRead(new Date())).toEqual([day(-1), day(0), day(1)].sort());
      // Sent at an unknown time: every day up to tomorrow, and DEFAULT, where a day without partition goes.
      const unknown = await partitionsRead(null);
      expect(unknown).toEqual(expect.arrayContaining([day(-1), day(0), day(1), 'inbox_messages_default']));
      for (const ahead of [2, 3]) expect(unknown).not.toContain(day(ahead));
    } finally {
      await runner.release();
    }
  });

  it("probes each claimed key in today's inbox instead of reading the day, on the session's generic plan too", async () => {
    await upkeep().round(daysFromNow(-1));
    await upkeep().round(daysFromNow(0));
    const consumer = `by-key-${randomUUID().slice(0, 8)}`;
    const today = partitionName('inbox_messages', dayOf(daysFromNow(0)));
    // A day's traffic already in: 5,000 keys, before the partition's statistics know of them.
    await dataSource.query(
      `INSERT INTO inbox_messages (consumer, scope, message_id, topic) SELECT $1, 's' || (n % 6), gen_random_uuid()::text, 't' FROM generate_series(1, 5000) AS n`,
      [consumer],
    );
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      const read = async (): Promise<number> => {
        const [row] = await runner.query(`SELECT seq_tup_read + idx_tup_fetch AS n FROM pg_stat_xact_user_tables WHERE relname = $1`, [today]);
        return Number(row?.n ?? 0);
      };
      const keys = Array.from({ length: 400 }, () => randomUUID());
      // PL/pgSQL plans a statement for its values five times in a session, then may keep a generic plan.
      for (let call = 1; call <= 8; call++) {
        await runner.startTransaction();
        try {
          const before = await read();
          const claimed = await runner.query(`SELECT claimed_id FROM inbox_claim($1, 't', $2::text[], $3::text[], now())`, [
            consumer,
            keys.map((_, i) => `s${i % 6}`),
            keys.map((k) => `${k}-${call}`),
          ]);
          expect(claimed).toHaveLength(400);
          // Rows read from today's partition beyond the 400 it inserts: none of the day's 5,000.
          expect([call, (await read()) - before]).toEqual([call, 0]);
        } finally {
          await runner.rollbackTransaction();
        }
      }
    } finally {
      await runner.release();
    }
  });

  it('makes a claim of a key wait for a claim of it in flight, whichever day that one lands on', async () => {
    const consumer = `racing-${randomUUID().slice(0, 8)}`;
    const first = dataSource.createQueryRunner();
    await first.connect();
    try {
      await first.startTransaction();
      expect(await first.query(`SELECT claimed_id FROM inbox_claim($1, 't', ARRAY[''], ARRAY['m'])`, [consumer])).toEqual([{ claimed_id: 'm' }]);
      // As if claimed just before midnight: the row is in yesterday's partition, not today's.
      await first.query(`UPDATE inbox_messages SET received_at = received_at - interval '1 day' WHERE consumer = $1`, [consumer]);
      let secondDone = false;
      const second = dataSource.query(`SELECT claimed_id FROM inbox_claim($1, 't', ARRAY[''], ARRAY['m'])`, [consumer]).finally(() => (secondDone = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(secondDone).toBe(false);
      await first.commitTransaction();
      expect(await second).toEqual([]);
    } finally {
      await first.release();
    }
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM inbox_messages WHERE consumer = $1`, [consumer])).toEqual([{ n: 1 }]);
  });

  it('lets two instances run their upkeep at once', async () => {
    await dataSource.query(`INSERT INTO ops_audit (actor, action, target_type, target_id, at) VALUES ('ops', 'a', 't', 'far', $1)`, [daysFromNow(90)]);
    const at = daysFromNow(60);
    const rounds = await Promise.all([upkeep(7).round(at), upkeep(7).round(at), upkeep(7).round(at)]);
    const created = rounds.flatMap((r) => r.created);
    expect(created.filter((name) => name === partitionName('inbox_messages', dayOf(daysFromNow(61))))).toHaveLength(1);
    expect(rounds.map((r) => r.movedFromDefault).sort()).toEqual([0, 0, 1]);
    expect(await partitionOfRow(`ops_audit WHERE target_id = $1`, ['far'])).toBe(partitionName('ops_audit', dayOf(daysFromNow(90))));
  });
});
