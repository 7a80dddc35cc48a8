import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/infrastructure/database/data-source';
import { EmbeddedPostgres } from '../../../src/infrastructure/database/embedded-postgres';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { MessageProcessor } from '../../../src/infrastructure/messaging/inbox/message-processor';
import { InProcessTransport } from '../../../src/infrastructure/messaging/in-process-transport';
import { MessageHandlerRegistry } from '../../../src/infrastructure/messaging/message-handler-registry';
import { OutboxRelay } from '../../../src/infrastructure/messaging/outbox/outbox-relay';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { describeWithPostgres } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { openTestDataSource } from '../../utils/test-database';
import { createEffectsTable, EffectHandler, effects, relaySettings, TestBody } from './messaging-test-kit';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { EMBEDDED_START_TIMEOUT_MS } from '../../utils/embedded';

const TOPIC = 'embedded.test';

/** What the migrations produced: tables with their columns, and the migrations recorded. */
async function schemaOf(dataSource: DataSource) {
  const columns: { table_name: string; column_name: string; data_type: string }[] = await dataSource.query(
    `SELECT table_name, column_name, data_type FROM information_schema.columns
     WHERE table_schema = 'public' ORDER BY table_name, column_name`,
  );
  const migrations: { name: string }[] = await dataSource.query(`SELECT name FROM migrations ORDER BY id`);
  const lanes: { n: number }[] = await dataSource.query(`SELECT count(*)::int AS n FROM outbox_lanes`);
  // Daily partitions are named by their day, which the migration counts from today: two databases
  // migrated either side of midnight hold the same partitions a day apart. Named by their place
  // among their table's days instead (`inbox_messages_p#1`, …).
  const days = new Map<string, string[]>();
  for (const { table_name } of columns) {
    const day = /^(.*)_p(\d{8})$/.exec(table_name);
    if (day) days.set(day[1], [...new Set([...(days.get(day[1]) ?? []), day[2]])].sort());
  }
  const named = (table: string) => table.replace(/^(.*)_p(\d{8})$/, (_, parent: string, day: string) => `${parent}_p#${days.get(parent)!.indexOf(day) + 1}`);
  return {
    tables: [...new Set(columns.map((c) => named(c.table_name)))],
    columns: columns.map((c) => `${named(c.table_name)}.${c.column_name}:${c.data_type}`),
    migrations: migrations.map((m) => m.name),
    lanes: lanes[0].n,
  };
}

describe('embedded PostgreSQL (PGlite)', () => {
  let embedded: EmbeddedPostgres;
  let dataSource: DataSource;
  let relay: OutboxRelay | undefined;
  /** Taken right after the migrations, before any test adds a table. */
  let migratedSchema: Awaited<ReturnType<typeof schemaOf>>;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    embedded = await EmbeddedPostgres.start();
    dataSource = new DataSource(dataSourceOptions({ url: embedded.url, poolSize: 1 }));
    await dataSource.initialize();
    migratedSchema = await schemaOf(dataSource);
  }, EMBEDDED_START_TIMEOUT_MS);

  afterAll(async () => {
    await relay?.stop();
    await dataSource?.destroy();
    await embedded?.stop();
  });

  describeWithPostgres('against the real server', () => {
    it('runs the same migrations to the same schema as the real server', async () => {
      const { dataSource: real, database } = await openTestDataSource(1);
      try {
        const expected = await schemaOf(real);
        expect(expected.tables).toEqual(
          expect.arrayContaining(['outbox_messages', 'outbox_lanes', 'inbox_messages', 'dead_letters']),
        );
        expect(migratedSchema).toEqual(expected);
      } finally {
        await real.destroy();
        await database.drop();
      }
    });
  });

  it('round-trips outbox → relay → in-process transport → inbox → handler, once per message', async () => {
    await createEffectsTable(dataSource);
    const writer = new OutboxWriter(new OutboxSignal());
    const signal = new OutboxSignal();
    const processor = new MessageProcessor(new UnitOfWork(dataSource), writer, new Metrics());
    const registry = new MessageHandlerRegistry();
    const handler = new EffectHandler(TOPIC, 'embedded-consumer');
    registry.register(handler);
    relay = new OutboxRelay(dataSource, new InProcessTransport(registry, processor), signal, new Metrics(), relaySettings());
    relay.start();

    const send = (payload: TestBody) =>
      dataSource.transaction((m) => writer.append(m, [{ topic: TOPIC, key: payload.key, type: 'T', payload }]));
    const pending = async () =>
      (await dataSource.query(`SELECT count(*)::int AS n FROM outbox_pending`))[0].n;

    const ids: string[] = [];
    for (let seq = 1; seq <= 20; seq++) ids.push(...(await send({ key: `k${seq % 3}`, seq })));
    // A poison message goes to the dead letters; the rest still flows.
    await send({ key: 'k0', seq: 21, poison: true });

    await expectEventually(async () =>
      expect((await effects(dataSource, handler.consumer)).map((e) => e.message_id).sort()).toEqual([...ids].sort()),
    );
    await expectEventually(async () => expect(await pending()).toBe(0));
    expect(await dataSource.query(`SELECT reason FROM dead_letters`)).toEqual([{ reason: 'seq 21 is not acceptable' }]);

    // Redelivery of an already-applied message (as after a crash before the row was marked) is ignored.
    await relay.stop();
    await dataSource.query(`INSERT INTO outbox_pending (lane, id, created_at, messages) SELECT lane, id, created_at, cardinality(message_ids) FROM outbox_batches WHERE $1 = ANY(message_ids)`, [ids[0]]);
    relay.start();
    await expectEventually(async () => expect(await pending()).toBe(0));
    expect(await effects(dataSource, handler.consumer)).toHaveLength(ids.length);
    expect(handler.seen).toHaveLength(ids.length + 1);
  });
});
