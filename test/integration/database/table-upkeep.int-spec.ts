import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig, loadConfig } from '../../../src/config/app-config';
import { TableUpkeep } from '../../../src/infrastructure/database/table-upkeep';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { describeWithPostgres } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

interface TableStats {
  dead: number;
  vacuums: number;
  analyzes: number;
}

/**
 * The service's own upkeep of the tables, for servers whose autovacuum is off: on a real
 * database, rows inserted and deleted until a table passes its thresholds, then a round.
 */
describeWithPostgres('TableUpkeep (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let metrics: Metrics;

  const configWith = (overrides: Partial<AppConfig>): AppConfig =>
    loadConfig({}, { DATABASE_URL: 'postgres://u@db/benefits', OPS_PASSWORD: 'correct horse battery', ...overrides });
  const statsOf = async (table: string): Promise<TableStats> => {
    const [row] = await dataSource.query(
      `SELECT n_dead_tup AS dead, vacuum_count AS vacuums, analyze_count AS analyzes FROM pg_stat_user_tables WHERE relname = $1`,
      [table],
    );
    return { dead: Number(row.dead), vacuums: Number(row.vacuums), analyzes: Number(row.analyzes) };
  };
  const upkept = async (table: string, action: string): Promise<number> =>
    (await metrics.tableUpkeep.get()).values.find((v) => v.labels.table === table && v.labels.action === action)?.value ?? 0;
  /** Rounds until one does something to `table` (activity reaches the statistics a moment after it commits). */
  const roundsUntil = async (upkeep: TableUpkeep, table: string): Promise<string> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const done = (await upkeep.round()).find((d) => d.table === table);
      if (done) return done.action;
      if (Date.now() > deadline) throw new Error(`no upkeep of ${table} within 20 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const addInboxRows = (consumer: string, count: number) =>
    dataSource.query(`INSERT INTO inbox_messages (consumer, scope, message_id, topic) SELECT $1, '', 'm' || n, 't' FROM generate_series(1, $2) AS n`, [consumer, count]);

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ dataSource, database } = await openTestDataSource(3));
  });

  beforeEach(() => {
    metrics = new Metrics();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('vacuums a queue table past its dead-row threshold, and leaves it alone once done', async () => {
    const upkeep = new TableUpkeep(dataSource, configWith({ DATABASE_TABLE_UPKEEP: 'on' }), metrics);
    const consumer = `upkeep-${randomUUID()}`;
    await addInboxRows(consumer, 3_000);
    await dataSource.query(`DELETE FROM inbox_messages WHERE consumer = $1`, [consumer]);
    const before = await statsOf('inbox_messages');

    expect(await roundsUntil(upkeep, 'inbox_messages')).toBe('vacuum');

    const after = await statsOf('inbox_messages');
    expect(after.vacuums).toBe(before.vacuums + 1);
    expect(after.analyzes).toBe(before.analyzes + 1);
    expect(after.dead).toBe(0);
    expect(await upkept('inbox_messages', 'vacuum')).toBe(1);
    expect((await upkeep.round()).map((d) => d.table)).not.toContain('inbox_messages');
  });

  it('analyzes a table whose rows changed since its statistics, without vacuuming it', async () => {
    const upkeep = new TableUpkeep(dataSource, configWith({ DATABASE_TABLE_UPKEEP: 'on' }), metrics);
    await dataSource.query(`ANALYZE inbox_messages`);
    const before = await statsOf('inbox_messages');
    await addInboxRows(`upkeep-${randomUUID()}`, 400);

    expect(await roundsUntil(upkeep, 'inbox_messages')).toBe('analyze');

    const after = await statsOf('inbox_messages');
    expect(after).toMatchObject({ vacuums: before.vacuums, analyzes: before.analyzes + 1 });
    expect(await upkept('inbox_messages', 'analyze')).toBe(1);
  });

  it("keeps every table of the schema by its own rules: the server's for a table without settings, none for one with autovacuum off", async () => {
    const upkeep = new TableUpkeep(dataSource, configWith({ DATABASE_TABLE_UPKEEP: 'on' }), metrics);
    await dataSource.query(`CREATE TABLE upkeep_plain (n int)`);
    await dataSource.query(`CREATE TABLE upkeep_off (n int) WITH (autovacuum_enabled = false)`);
    for (const table of ['upkeep_plain', 'upkeep_off']) {
      await dataSource.query(`INSERT INTO ${table} SELECT generate_series(1, 2000)`);
      await dataSource.query(`DELETE FROM ${table}`);
    }

    expect(await roundsUntil(upkeep, 'upkeep_plain')).toBe('vacuum');
    // Its dead rows are known too (the statistics arrive a moment after the delete): still left alone.
    await expectEventually(async () => expect((await statsOf('upkeep_off')).dead).toBe(2000), { timeoutMs: 20_000 });
    expect((await upkeep.round()).map((d) => d.table)).not.toContain('upkeep_off');

    expect((await statsOf('upkeep_plain')).vacuums).toBe(1);
    expect((await statsOf('upkeep_off')).vacuums).toBe(0);
  });

  it("runs each VACUUM at the table's own pace, in the session that has it, and hands the connection back as it came", async () => {
    const upkeep = new TableUpkeep(dataSource, configWith({ DATABASE_TABLE_UPKEEP: 'on' }), metrics);
    await dataSource.query(`CREATE TABLE upkeep_paced (n int) WITH (autovacuum_vacuum_cost_delay = 7, autovacuum_vacuum_cost_limit = 333)`);
    await dataSource.query(`INSERT INTO upkeep_paced SELECT generate_series(1, 2000)`);
    await dataSource.query(`DELETE FROM upkeep_paced`);
    const [{ pace: serverPace }] = await dataSource.query(
      `SELECT current_setting('vacuum_cost_delay') || ' ' || current_setting('vacuum_cost_limit') AS pace`,
    );
    expect(serverPace).not.toBe('7ms 333');
    // Each statement of the round's own connection is seen; before its VACUUM, that session is asked for its pace.
    const paceAtVacuum: string[] = [];
    const connections: { query(sql: string): Promise<{ rows: Record<string, string>[] }> }[] = [];
    const createQueryRunner = dataSource.createQueryRunner.bind(dataSource);
    const spy = jest.spyOn(dataSource, 'createQueryRunner').mockImplementation((...args) => {
      const runner = createQueryRunner(...args);
      const query = runner.query.bind(runner);
      runner.query = (async (sql: string, ...rest: unknown[]) => {
        if (sql.includes('VACUUM') && sql.includes('upkeep_paced')) {
          const [{ delay }] = await query(`SELECT current_setting('vacuum_cost_delay') AS delay`);
          const [{ limit }] = await query(`SELECT current_setting('vacuum_cost_limit') AS limit`);
          paceAtVacuum.push(`${delay} ${limit}`);
          connections.push(await runner.connect());
        }
        return query(sql, ...(rest as []));
      }) as typeof runner.query;
      return runner;
    });
    try {
      expect(await roundsUntil(upkeep, 'upkeep_paced')).toBe('vacuum');
    } finally {
      spy.mockRestore();
    }

    expect(paceAtVacuum).toEqual(['7ms 333']);
    // The pool's connection, idle again, has the server's settings, not the round's.
    const paceOf = async (connection: (typeof connections)[number]) => {
      const { rows } = await connection.query(`SELECT current_setting('vacuum_cost_delay') || ' ' || current_setting('vacuum_cost_limit') AS pace`);
      return rows[0].pace;
    };
    expect(await paceOf(connections[0])).toBe(serverPace);
  });

  it('runs in `auto` mode exactly when the server has autovacuum off; never when off, embedded, or without workers', async () => {
    const [{ autovacuum }] = await dataSource.query(`SELECT current_setting('autovacuum') AS autovacuum`);
    const runs = async (config: AppConfig): Promise<boolean> => {
      const upkeep = new TableUpkeep(dataSource, config, metrics);
      await upkeep.onApplicationBootstrap();
      const running = upkeep.running;
      await upkeep.onApplicationShutdown();
      return running;
    };

    expect(await runs(configWith({ DATABASE_TABLE_UPKEEP: 'auto' }))).toBe(autovacuum === 'off');
    expect(await runs(configWith({ DATABASE_TABLE_UPKEEP: 'on' }))).toBe(true);
    expect(await runs(configWith({ DATABASE_TABLE_UPKEEP: 'off' }))).toBe(false);
    expect(await runs(configWith({ DATABASE_TABLE_UPKEEP: 'on', WORKERS_ENABLED: false }))).toBe(false);
    expect(await runs(loadConfig({}, { DATABASE_TABLE_UPKEEP: 'on' }))).toBe(false);
  });
});
