import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { arrayLiteral } from '../../../src/infrastructure/database/array-literal';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { OutboundMessage } from '../../../src/infrastructure/messaging/message';
import { RelayedMessage } from '../../../src/infrastructure/messaging/message-transport';
import { laneOf } from '../../../src/infrastructure/messaging/outbox/outbox-lane';
import { OutboxRelay, OutboxRelaySettings } from '../../../src/infrastructure/messaging/outbox/outbox-relay';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OUTBOX_MESSAGES_PER_ROW, OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { describeWithPostgres } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { duplicates, keysOutOfOrder, RecordingTransport, relaySettings } from './messaging-test-kit';

const TOPIC = 'relay.test';

interface OutboxState {
  message_id: string;
  published: boolean;
  /** Delivery attempts and the last error, kept while the message is pending. */
  attempts: number | null;
  last_error: string | null;
}

describeWithPostgres('outbox relay (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  const writer = new OutboxWriter(new OutboxSignal());
  const relays: OutboxRelay[] = [];

  const newRelay = (transport: RecordingTransport, settings: Partial<OutboxRelaySettings> = {}) => {
    const relay = new OutboxRelay(dataSource, transport, new OutboxSignal(), new Metrics(), relaySettings(settings));
    relays.push(relay);
    return relay;
  };

  const message = (key: string, seq: number): OutboundMessage => ({
    topic: TOPIC,
    key,
    type: 'TestHappened',
    payload: { key, seq },
  });

  const write = (messages: OutboundMessage[]) => dataSource.transaction((manager) => writer.append(manager, messages));

  /** Outbox rows of `count` messages each (payloads `{}`, as json_agg writes them), on lanes n % 64: as written, not queued. */
  const outboxRows = (rows: number, count: number) =>
    `INSERT INTO outbox_batches (topic, lane, message_ids, message_keys, types, payloads, payload_ends, headers)
     SELECT $1, n % 64, (SELECT array_agg(gen_random_uuid()) FROM generate_series(1, ${count}) WHERE n > 0), array_fill('old-' || n, ARRAY[${count}]),
            array_fill('TestHappened'::text, ARRAY[${count}]), (SELECT json_agg('{}'::json) FROM generate_series(1, ${count})),
            (SELECT array_agg(4 * k - 1) FROM generate_series(1, ${count}) AS k), (SELECT json_agg('{}'::json) FROM generate_series(1, ${count}))
     FROM generate_series(1, ${rows}) AS n`;

  /** A week of published messages, kept for the retention window. */
  const keepPublishedMessages = () => dataSource.query(outboxRows(30000, 3), [TOPIC]);

  /** The relay's read of its leased lanes' rows and its parameters, as `publish` sent it. */
  const relayRead = async (publish: () => Promise<unknown>): Promise<[string, unknown[]]> => {
    const read = jest.spyOn(dataSource, 'query');
    try {
      await publish();
      const [sql, params] = read.mock.calls.find(([text]) => text.trimStart().startsWith('SELECT q.id'))!;
      return [sql, params as unknown[]];
    } finally {
      read.mockRestore();
    }
  };

  const outboxState = (ids: string[]): Promise<OutboxState[]> =>
    dataSource.query(
      `SELECT m.message_id, p.id IS NULL AS published, p.attempts, p.last_error
       FROM outbox_messages m LEFT JOIN outbox_pending p ON p.lane = m.lane AND p.id = m.batch_id
       WHERE m.message_id = ANY($1::uuid[]) ORDER BY m.id`,
      [ids],
    );

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ dataSource, database } = await openTestDataSource(12));
    await dataSource.query(`CREATE TABLE test_orders (id text PRIMARY KEY)`);
  });

  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    // Each test starts from an empty outbox and free lanes.
    await dataSource.query(`DELETE FROM outbox_batches`);
    await dataSource.query(`DELETE FROM outbox_pending`);
    await dataSource.query(`UPDATE outbox_lanes SET leased_by = NULL, lease_until = 'epoch'`);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('publishes a message only after its transaction commits, and never one that rolled back', async () => {
    const transport = new RecordingTransport();
    const relay = newRelay(transport);

    const tx = dataSource.createQueryRunner();
    await tx.connect();
    let committedId: string;
    try {
      await tx.startTransaction();
      await tx.query(`INSERT INTO test_orders (id) VALUES ('order-1')`);
      [committedId] = await writer.append(tx.manager, [message('order-1', 1)]);

      // The transaction is still open: relay rounds see nothing to publish.
      for (let i = 0; i < 3; i++) expect(await relay.publishRound()).toBe(0);
      expect(transport.published).toHaveLength(0);

      await tx.commitTransaction();
    } finally {
      await tx.release();
    }

    expect(await relay.publishRound()).toBe(1);
    expect(transport.published.map((m) => m.messageId)).toEqual([committedId]);
    expect(transport.published[0]).toMatchObject({ topic: TOPIC, key: 'order-1', value: JSON.stringify({ key: 'order-1', seq: 1 }) });
    expect(transport.published[0].headers).toMatchObject({ 'message-id': committedId, 'message-type': 'TestHappened' });
    expect(await dataSource.query(`SELECT id FROM test_orders`)).toEqual([{ id: 'order-1' }]);

    // Rolled back: neither the business row nor the message survives, so nothing is published.
    await expect(
      dataSource.transaction(async (manager) => {
        await manager.query(`INSERT INTO test_orders (id) VALUES ('order-2')`);
        await writer.append(manager, [message('order-2', 1)]);
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    expect(await relay.publishRound()).toBe(0);
    expect(transport.published).toHaveLength(1);
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM outbox_messages`)).toEqual([{ n: 1 }]);
  });

  it('hands the transport the payload as the very text it was written as', async () => {
    const transport = new RecordingTransport();
    // Key order, nesting, unicode and numbers as a parsed-and-rebuilt document would not keep them.
    const payload = { zeta: 1, alpha: { b: [1, 2.5, null], a: 'Zoë — “quoted”' }, id: 'x', amount: 10.1 };
    const [id] = await write([{ topic: TOPIC, key: 'exact', type: 'TestHappened', payload }]);

    expect(await newRelay(transport).publishRound()).toBe(1);
    expect(transport.published).toEqual([expect.objectContaining({ messageId: id, value: JSON.stringify(payload) })]);
  });

  it('leaves a message unpublished when the relay fails before publishing, and a new relay publishes it', async () => {
    const [id] = await write([message('crash', 1)]);

    const broken = new RecordingTransport();
    broken.failNext(1, 'process killed');
    await expect(newRelay(broken).publishRound()).rejects.toThrow('process killed #1');
    expect(broken.published).toHaveLength(0);
    expect(await outboxState([id])).toEqual([
      { message_id: id, published: false, attempts: 1, last_error: 'process killed #1' },
    ]);

    // A relay that was stopped before its first round publishes nothing either.
    const stopped = new RecordingTransport();
    const stoppedRelay = newRelay(stopped);
    await stoppedRelay.stop();
    expect(stopped.calls).toBe(0);

    const healthy = new RecordingTransport();
    const restarted = newRelay(healthy);
    restarted.start();
    await expectEventually(() => expect(healthy.published.map((m) => m.messageId)).toEqual([id]));
    expect(await outboxState([id])).toEqual([{ message_id: id, published: true, attempts: null, last_error: null }]);
  });

  it("takes over a dead relay's lane only after its lease expires", async () => {
    const [id] = await write([message('leased', 1)]);
    const lane = laneOf('leased');
    await dataSource.query(
      `UPDATE outbox_lanes SET leased_by = 'dead-relay', lease_until = now() + interval '1 hour' WHERE lane = $1`,
      [lane],
    );

    const transport = new RecordingTransport();
    const relay = newRelay(transport);
    for (let i = 0; i < 3; i++) expect(await relay.publishRound()).toBe(0);
    expect(transport.published).toHaveLength(0);

    await dataSource.query(`UPDATE outbox_lanes SET lease_until = now() - interval '1 second' WHERE lane = $1`, [lane]);
    expect(await relay.publishRound()).toBe(1);
    expect(transport.published.map((m) => m.messageId)).toEqual([id]);
    expect(await dataSource.query(`SELECT leased_by FROM outbox_lanes WHERE lane = $1`, [lane])).toEqual([{ leased_by: null }]);
  });

  it('takes over from a relay that hangs mid-publish once its real lease runs out', async () => {
    const [id] = await write([message('hung', 1)]);
    const hung = new RecordingTransport();
    hung.hang();
    const hungRelay = newRelay(hung, { leaseMs: 700 });
    const hungRound = hungRelay.publishRound();
    await expectEventually(() => expect(hung.calls).toBe(1));

    const transport = new RecordingTransport();
    const successor = newRelay(transport, { leaseMs: 700 });
    expect(await successor.publishRound()).toBe(0); // still leased by the hung relay
    await expectEventually(async () => expect(await successor.publishRound()).toBe(1), { timeoutMs: 5_000 });
    expect(transport.published.map((m) => m.messageId)).toEqual([id]);

    // The hung relay comes back: it must not release the lease it no longer owns.
    await dataSource.query(`UPDATE outbox_lanes SET leased_by = $1, lease_until = now() + interval '1 hour' WHERE lane = $2`, [
      successor.owner,
      laneOf('hung'),
    ]);
    hung.release();
    await hungRound;
    expect(await dataSource.query(`SELECT leased_by FROM outbox_lanes WHERE lane = $1`, [laneOf('hung')])).toEqual([
      { leased_by: successor.owner },
    ]);
  });

  it('publishes every message once and in commit order per key with three relays running', async () => {
    // Each relay has its own transport; all of them append to one log, in publish order.
    const published: RelayedMessage[] = [];
    const transports = [0, 1, 2].map(() => new RecordingTransport(() => new Promise((r) => setImmediate(r)), published));
    for (const transport of transports) newRelay(transport, { batchSize: 50, lanesPerRound: 4 }).start();

    const keys = Array.from({ length: 20 }, (_, i) => `employer-${i}`);
    const perKey = 100;
    // One writer per key commits its messages in sequence while the relays run.
    await Promise.all(
      keys.map(async (key) => {
        for (let seq = 0; seq < perKey; ) {
          const batch = Array.from({ length: Math.min(1 + (seq % 5), perKey - seq) }, (_, i) => message(key, seq + i));
          await write(batch);
          seq += batch.length;
        }
      }),
    );

    await expectEventually(() => expect(published.length).toBeGreaterThanOrEqual(keys.length * perKey), {
      timeoutMs: 30_000,
    });
    // A relay deletes what it published in a commit after the publish: the last rows go a moment later.
    await expectEventually(async () =>
      expect(await dataSource.query(`SELECT count(*)::int AS n FROM outbox_pending`)).toEqual([{ n: 0 }]),
    );
    expect(published).toHaveLength(keys.length * perKey);
    // The work was really shared: every relay published some of it.
    for (const transport of transports) expect(transport.published.length).toBeGreaterThan(0);
    expect(duplicates(published.map((m) => m.messageId))).toEqual([]);
    const bodies = published.map((m) => JSON.parse(m.value) as { key: string; seq: number });
    expect(keysOutOfOrder(bodies)).toEqual([]);
    for (const key of keys) {
      expect(bodies.filter((b) => b.key === key).map((b) => b.seq)).toEqual(Array.from({ length: perKey }, (_, i) => i));
    }
  });

  it('retries a transient publish failure, recording attempts and the error, and loses nothing', async () => {
    const ids = await write([message('retry-a', 1), message('retry-b', 1), message('retry-a', 2)]);
    const transport = new RecordingTransport();
    transport.failNext(3, 'leader not available');
    const relay = newRelay(transport);

    for (let attempt = 1; attempt <= 3; attempt++) {
      await expect(relay.publishRound()).rejects.toThrow(`leader not available #${attempt}`);
      const state = await outboxState(ids);
      expect(state.map((s) => [s.published, s.attempts, s.last_error])).toEqual(
        ids.map(() => [false, attempt, `leader not available #${attempt}`]),
      );
    }
    expect(transport.published).toHaveLength(0);

    expect(await relay.publishRound()).toBe(3);
    // Each key's in order (the keys' lanes differ, so their rows do: no order between them).
    expect(transport.published.map((m) => m.messageId).sort()).toEqual([...ids].sort());
    expect(transport.published.filter((m) => m.key === 'retry-a').map((m) => m.messageId)).toEqual([ids[0], ids[2]]);
    expect((await outboxState(ids)).map((s) => [s.published, s.attempts])).toEqual(ids.map(() => [true, null]));
    expect(await relay.publishRound()).toBe(0);
  });

  it("fetches only the round's messages, not every leased lane's share of a backlog", async () => {
    // A week of published messages is kept; 1,000 pending on many lanes, written 10 at a time (a
    // row each, but where two of the 10 share a lane); a round takes rows until it holds 100.
    await keepPublishedMessages();
    await dataSource.query(`ANALYZE outbox_batches`);
    for (let call = 0; call < 100; call++) await write(Array.from({ length: 10 }, (_, i) => message(`backlog-${(call * 10 + i) % 200}`, call * 10 + i)));
    const relay = newRelay(new RecordingTransport(), { batchSize: 100 });
    let published = 0;
    const [sql, params] = await relayRead(async () => (published = await relay.publishRound()));
    expect(published).toBeGreaterThanOrEqual(100);
    expect(published).toBeLessThan(110);
    await dataSource.query(`UPDATE outbox_lanes SET leased_by = NULL, lease_until = 'epoch'`);
    const runner = dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      const [{ 'QUERY PLAN': plan }] = await runner.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
      await runner.rollbackTransaction();
      // Every lookup of a message by its id, whatever node the planner makes of it.
      const lookups: number[] = [];
      const walk = (node: Record<string, unknown>) => {
        // The table's partitions (outbox_batches_p<day>, outbox_batches_default) are read, never the parent.
        if (/^outbox_batches_/.test(String(node['Relation Name']))) lookups.push(Number(node['Actual Loops']) * Number(node['Actual Rows']));
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      walk(plan[0].Plan);
      expect(lookups.length).toBeGreaterThan(0);
      expect(lookups.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(100);
    } finally {
      await runner.release();
    }
  });

  it('drops a queue row whose outbox row was deleted by hand, and publishes the rest of its lane', async () => {
    const [gone] = await write([message('orphan', 1)]);
    const [kept] = await write([message('orphan', 2)]);
    await dataSource.query(`DELETE FROM outbox_batches WHERE $1 = ANY(message_ids)`, [gone]);
    const transport = new RecordingTransport();
    expect(await newRelay(transport).publishRound()).toBe(1);
    expect(transport.published.map((m) => m.messageId)).toEqual([kept]);
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM outbox_pending`)).toEqual([{ n: 0 }]);
  });

  it('backs off and recovers by itself when the transport fails while running', async () => {
    const ids = await write([message('loop', 1), message('loop', 2)]);
    const transport = new RecordingTransport();
    transport.failNext(2);
    newRelay(transport).start();
    await expectEventually(() => expect(transport.published.map((m) => m.messageId)).toEqual(ids));
    expect(transport.calls).toBe(3);
  });

  it('reads pending rows from the pending queue, never past the published messages kept, custom plan or generic', async () => {
    await keepPublishedMessages();
    // Statistics taken during a backlog (a quarter of the messages pending), published since.
    await dataSource.query(
      `WITH backlog AS (${outboxRows(10000, 3)} RETURNING lane, id, created_at)
       INSERT INTO outbox_pending (lane, id, created_at, messages) SELECT lane, id, created_at, 3 FROM backlog`,
      [TOPIC],
    );
    await dataSource.query(`ANALYZE outbox_batches`);
    await dataSource.query(`ANALYZE outbox_pending`);
    await dataSource.query(`DELETE FROM outbox_pending`);
    const ids = await write([1, 2, 3, 4, 5].map((seq) => message(`new-${seq}`, seq)));
    const transport = new RecordingTransport();
    const relay = newRelay(transport);
    const withRows: string[] = [
      'outbox_pending',
      ...(await dataSource.query(`SELECT DISTINCT tableoid::regclass::text AS name FROM outbox_batches`)).map((r: { name: string }) => r.name),
    ];

    const [sql, params] = await relayRead(async () => expect(await relay.publishRound()).toBe(5));
    expect(transport.published.map((m) => m.messageId).sort()).toEqual([...ids].sort());
    const runner = dataSource.createQueryRunner();
    try {
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        await runner.query(`SET plan_cache_mode = ${mode}`);
        await runner.query(`PREPARE relay_read(smallint[], int) AS ${sql}`);
        const literals = params.map((p) => `'${(Array.isArray(p) ? arrayLiteral(p)! : String(p)).replace(/'/g, "''")}'`).join(', ');
        const [{ 'QUERY PLAN': plan }] = await runner.query(`EXPLAIN (FORMAT JSON) EXECUTE relay_read(${literals})`);
        await runner.query(`DEALLOCATE relay_read`);
        const text = JSON.stringify(plan);
        // The queue is read by its key, lane by lane; each message is then fetched by its id.
        expect({ mode, queue: /"Index Name":\s*"outbox_pending_pkey"/.test(text) }).toEqual({ mode, queue: true });
        // No relation with rows is scanned whole (the empty partitions of the next days may be: nothing to read).
        const scanned: string[] = [];
        const walk = (node: Record<string, unknown>) => {
          if (node['Node Type'] === 'Seq Scan') scanned.push(String(node['Relation Name']));
          for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
        };
        walk(plan[0].Plan);
        expect({ mode, scanned: scanned.filter((name) => withRows.includes(name)) }).toEqual({ mode, scanned: [] });
      }
    } finally {
      await runner.query(`RESET plan_cache_mode`);
      await runner.release();
    }
  });

  it('stores a call\'s messages a row per topic and lane, at most OUTBOX_MESSAGES_PER_ROW each, and publishes them in order', async () => {
    const many = Array.from({ length: OUTBOX_MESSAGES_PER_ROW * 2 + 10 }, (_, n) => message('one-key', n));
    const other = { ...message('one-key', 0), topic: `${TOPIC}.other` };
    const ids = await write([...many.slice(0, 5), other, ...many.slice(5)]);
    const rows: { topic: string; lane: number; n: number }[] = await dataSource.query(
      `SELECT topic, lane, cardinality(message_ids) AS n FROM outbox_batches ORDER BY id`,
    );
    expect(rows).toEqual([
      { topic: TOPIC, lane: laneOf('one-key'), n: OUTBOX_MESSAGES_PER_ROW },
      { topic: `${TOPIC}.other`, lane: laneOf('one-key'), n: 1 },
      { topic: TOPIC, lane: laneOf('one-key'), n: OUTBOX_MESSAGES_PER_ROW },
      { topic: TOPIC, lane: laneOf('one-key'), n: 10 },
    ]);
    expect(await dataSource.query(`SELECT messages FROM outbox_pending ORDER BY id`)).toEqual(rows.map((r) => ({ messages: r.n })));
    // Read one by one, through the view, in the order written per topic.
    const view: { message_id: string; seq: number }[] = await dataSource.query(
      `SELECT message_id, (payload->>'seq')::int AS seq FROM outbox_messages WHERE topic = $1 ORDER BY id`,
      [TOPIC],
    );
    expect(view.map((v) => v.seq)).toEqual(many.map((_, n) => n));

    // A round takes whole rows until it holds its limit: the first row alone here.
    const transport = new RecordingTransport();
    const relay = newRelay(transport, { batchSize: 100 });
    expect(await relay.publishRound()).toBe(OUTBOX_MESSAGES_PER_ROW);
    while ((await relay.publishRound()) > 0);
    expect(transport.published.map((m) => m.messageId).sort()).toEqual([...ids].sort());
    const seqs = transport.published.filter((m) => m.topic === TOPIC).map((m) => (JSON.parse(m.value) as { seq: number }).seq);
    expect(seqs).toEqual(many.map((_, n) => n));
    expect(transport.published.find((m) => m.topic === `${TOPIC}.other`)?.headers).toEqual({ 'message-id': ids[5], 'message-type': 'TestHappened' });
  });

  it('counts the messages published by topic, and the messages of each round that published any', async () => {
    const metrics = new Metrics();
    const relay = new OutboxRelay(dataSource, new RecordingTransport(), new OutboxSignal(), metrics, relaySettings({ batchSize: 20 }));
    relays.push(relay);
    await write([...Array.from({ length: 30 }, (_, n) => message(`key-${n}`, n)), { ...message('key-0', 30), topic: `${TOPIC}.other` }]);
    const rounds: number[] = [];
    for (let published = await relay.publishRound(); published > 0; published = await relay.publishRound()) rounds.push(published);
    expect(rounds.reduce((a, b) => a + b, 0)).toBe(31);
    const byTopic = (await metrics.outboxPublished.get()).values.map((v) => [v.labels.topic, v.value]);
    expect(Object.fromEntries(byTopic)).toEqual({ [TOPIC]: 30, [`${TOPIC}.other`]: 1 });
    const perRound = (await metrics.outboxRoundMessages.get()).values;
    expect(perRound.find((v) => v.metricName === 'outbox_messages_per_round_count')?.value).toBe(rounds.length);
    expect(perRound.find((v) => v.metricName === 'outbox_messages_per_round_sum')?.value).toBe(31);
    // An empty round observes nothing.
    expect(await relay.publishRound()).toBe(0);
    expect((await metrics.outboxRoundMessages.get()).values.find((v) => v.metricName === 'outbox_messages_per_round_count')?.value).toBe(rounds.length);
  });

  it('keeps each message\'s own headers, and its id and type over any header of the same name', async () => {
    const [id] = await write([{ ...message('headers', 1), headers: { 'trace-id': 't-1', 'message-type': 'spoofed' } }]);
    const transport = new RecordingTransport();
    expect(await newRelay(transport).publishRound()).toBe(1);
    expect(transport.published[0].headers).toEqual({ 'trace-id': 't-1', 'message-id': id, 'message-type': 'TestHappened' });
    expect(await dataSource.query(`SELECT headers FROM outbox_messages WHERE message_id = $1`, [id])).toEqual([
      { headers: { 'trace-id': 't-1', 'message-id': id, 'message-type': 'TestHappened' } },
    ]);
  });
});
