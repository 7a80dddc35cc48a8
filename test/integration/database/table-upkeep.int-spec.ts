import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig, loadConfig } from '../../../src/config/app-config';
import { STATISTICS_ROWS, TableUpkeep, TURN_LEASE_MS } from '../../../src/infrastructure/database/table-upkeep';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { describeWithPostgres } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

interface TableStats {
  dead: number;
  modified: number;
  vacuums: number;
  analyzes: number;
}

/**
 * The service's own upkeep of the tables, for servers whose autovacuum is off, and the first
 * statistics of new tables for any server: on a real database, rows inserted and deleted until
 * a table passes its thresholds, then a round.
 */
describeWithPostgres('TableUpkeep (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let metrics: Metrics;

  const configWith = (overrides: Partial<AppConfig>): AppConfig =>
    loadConfig({}, { DATABASE_URL: 'postgres://u@db/benefits', OPS_PASSWORD: 'correct horse battery', ...overrides });
  const statsOf = async (table: string): Promise<TableStats> => {
    const [row] = await dataSource.query(
      `SELECT n_dead_tup AS dead, n_mod_since_analyze AS modified, vacuum_count AS vacuums, analyze_count AS analyzes FROM pg_stat_user_tables WHERE relname = $1`,
      [table],
    );
    return { dead: Number(row.dead), modified: Number(row.modified), vacuums: Number(row.vacuums), analyzes: Number(row.analyzes) };
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
  // A queue table with the queue thresholds of 1796300000000 (the inbox, partitioned by day since 1798400000000, is vacuumed partition by partition).
  const addQueueRows = (consumer: string, count: number) =>
    dataSource.query(
      `INSERT INTO dead_letters (id, consumer, topic, payload, reason) SELECT gen_random_uuid(), $1, 't', '{}', 'r' FROM generate_series(1, $2) AS n`,
      [consumer, count],
    );

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
    await addQueueRows(consumer, 3_000);
    await dataSource.query(`DELETE FROM dead_letters WHERE consumer = $1`, [consumer]);
    const before = await statsOf('dead_letters');

    expect(await roundsUntil(upkeep, 'dead_letters')).toBe('vacuum');

    const after = await statsOf('dead_letters');
    expect(after.vacuums).toBe(before.vacuums + 1);
    expect(after.analyzes).toBe(before.analyzes + 1);
    expect(after.dead).toBe(0);
    expect(await upkept('dead_letters', 'vacuum')).toBe(1);
    expect((await upkeep.round()).map((d) => d.table)).not.toContain('dead_letters');
  });

  it('analyzes a table whose rows changed since its statistics, without vacuuming it', async () => {
    const upkeep = new TableUpkeep(dataSource, configWith({ DATABASE_TABLE_UPKEEP: 'on' }), metrics);
    await dataSource.query(`ANALYZE dead_letters`);
    const before = await statsOf('dead_letters');
    await addQueueRows(`upkeep-${randomUUID()}`, 400);

    expect(await roundsUntil(upkeep, 'dead_letters')).toBe('analyze');

    const after = await statsOf('dead_letters');
    expect(after).toMatchObject({ vacuums: before.vacuums, analyzes: before.analyzes + 1 });
    expect(await upkept('dead_letters', 'analyze')).toBe(1);
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

  it('spreads the vacuums due: at most the number asked a round, telling whether any is left for the next', async () => {
    const upkeep = new TableUpkeep(dataSource, configWith({ DATABASE_TABLE_UPKEEP: 'on' }), metrics);
    const tables = ['upkeep_spread_a', 'upkeep_spread_b'];
    // What the tests before left due is done first: then only these two are.
    await upkeep.round();
    for (const table of tables) {
      await dataSource.query(`CREATE TABLE ${table} (n int)`);
      await dataSource.query(`INSERT INTO ${table} SELECT generate_series(1, 2000)`);
      await dataSource.query(`DELETE FROM ${table}`);
    }
    const vacuumed = (done: { table: string; action: string }[]) => done.filter((d) => tables.includes(d.table) && d.action === 'vacuum').map((d) => d.table);
    // Both are seen as due (the statistics arrive a moment after the delete), then one round vacuums one of them.
    await expectEventually(async () => expect((await Promise.all(tables.map(statsOf))).map((t) => t.dead)).toEqual([2000, 2000]), { timeoutMs: 20_000 });
    const vacuumsOfAll = async () => (await Promise.all(tables.map(statsOf))).reduce((sum, t) => sum + t.vacuums, 0);

    const first = vacuumed(await upkeep.round('all', 1));
    expect(first).toHaveLength(1);
    expect(upkeep.vacuumsLeft).toBe(true);
    expect(await vacuumsOfAll()).toBe(1);

    await expectEventually(
      async () => {
        const next = vacuumed(await upkeep.round('all', 1));
        expect(next).toEqual(tables.filter((t) => t !== first[0]));
      },
      { timeoutMs: 20_000 },
    );
    expect(await vacuumsOfAll()).toBe(2);
    await expectEventually(async () => {
      await upkeep.round('all', 1);
      expect(upkeep.vacuumsLeft).toBe(false);
    }, { timeoutMs: 20_000 });
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

  it('takes the statistics of a table that has none, and again once it doubled in size, leaving the rest to autovacuum', async () => {
    const upkeep = new TableUpkeep(dataSource, configWith({ DATABASE_TABLE_UPKEEP: 'auto' }), metrics);
    await dataSource.query(`CREATE TABLE upkeep_fresh (n int)`);
    await dataSource.query(`CREATE TABLE upkeep_known (n int)`);
    await dataSource.query(`INSERT INTO upkeep_known SELECT generate_series(1, 10000)`);
    // Analyzed once its inserts reached the statistics: none is counted again after.
    await expectEventually(async () => expect((await statsOf('upkeep_known')).modified).toBe(10_000), { timeoutMs: 20_000 });
    await dataSource.query(`ANALYZE upkeep_known`);
    // Past autovacuum's analyze threshold (50 rows and 10 %), short of the size it was analyzed at.
    await dataSource.query(`INSERT INTO upkeep_known SELECT generate_series(1, 9000)`);
    await dataSource.query(`INSERT INTO upkeep_fresh SELECT generate_series(1, ${STATISTICS_ROWS - 1})`);
    // Both tables' changes have reached the statistics, and the fresh one is a row short.
    await expectEventually(async () => expect((await statsOf('upkeep_known')).modified).toBeGreaterThanOrEqual(9000), { timeoutMs: 20_000 });
    await expectEventually(async () => expect((await statsOf('upkeep_fresh')).modified).toBe(STATISTICS_ROWS - 1), { timeoutMs: 20_000 });
    expect((await statsOf('upkeep_known')).modified).toBeLessThan(10_000);
    expect(await upkeep.round('statistics')).toEqual([]);

    await dataSource.query(`INSERT INTO upkeep_fresh VALUES (0)`);
    await expectEventually(async () => expect(await upkeep.round('statistics')).toEqual([{ table: 'upkeep_fresh', action: 'analyze' }]), { timeoutMs: 20_000 });
    expect(await statsOf('upkeep_fresh')).toMatchObject({ analyzes: 1, vacuums: 0 });
    expect(await upkeep.round('statistics')).toEqual([]);
    // Its rows updated in place twice over: changes, not growth, so no new statistics.
    await dataSource.query(`UPDATE upkeep_fresh SET n = n + 1`);
    await dataSource.query(`UPDATE upkeep_fresh SET n = n + 1`);
    await expectEventually(async () => expect((await statsOf('upkeep_fresh')).modified).toBe(2 * STATISTICS_ROWS), { timeoutMs: 20_000 });
    expect(await upkeep.round('statistics')).toEqual([]);

    await dataSource.query(`INSERT INTO upkeep_known SELECT generate_series(1, 1000)`);
    await expectEventually(async () => expect(await upkeep.round('statistics')).toEqual([{ table: 'upkeep_known', action: 'analyze' }]), { timeoutMs: 20_000 });
    expect(await statsOf('upkeep_known')).toMatchObject({ analyzes: 2, vacuums: 0 });
    expect(await upkept('upkeep_fresh', 'analyze')).toBe(1);
    expect(await upkept('upkeep_known', 'analyze')).toBe(1);
  });

  describe('instances on one database take turns', () => {
    const turnsOf = (n: number, overrides: Partial<AppConfig> = {}) =>
      Array.from({ length: n }, () => new TableUpkeep(dataSource, configWith({ DATABASE_TABLE_UPKEEP: 'on', ...overrides }), metrics));
    /** Each instance's rounds, by the scope it ran (`round` is the real one, watched). */
    const watch = (upkeep: TableUpkeep) => {
      const scopes: string[] = [];
      const round = upkeep.round.bind(upkeep);
      jest.spyOn(upkeep, 'round').mockImplementation((scope, max) => {
        scopes.push(scope ?? 'all');
        return round(scope, max);
      });
      return scopes;
    };
    const started = async (upkeeps: TableUpkeep[]) => {
      for (const upkeep of upkeeps) await upkeep.onApplicationBootstrap();
      // The loops are stopped at once: the test takes the turns itself.
      for (const upkeep of upkeeps) await upkeep.onApplicationShutdown();
      await fresh();
    };
    /** Holds the instance's next round until the answered function is called (`round` is the real one then). */
    const holding = (upkeep: TableUpkeep) => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const round = upkeep.round.bind(upkeep);
      jest.spyOn(upkeep, 'round').mockImplementationOnce(async (scope, max) => {
        await held;
        return round(scope, max);
      });
      return release;
    };
    /** The turn as a new database has it: free, and no full round run yet. */
    const fresh = () => dataSource.query(`UPDATE table_upkeep_turn SET next_round_at = '-infinity', full_round_at = '-infinity', vacuums_left = false`);
    /** Seconds until the turn is free again; 0 when it is (also while no turn was ever taken: '-infinity'). */
    const leaseLeft = async () => Number((await dataSource.query(`SELECT extract(epoch FROM greatest(next_round_at, now()) - now()) AS wait FROM table_upkeep_turn`))[0].wait);

    it('runs one round at a time on the database, whichever instance asks, and the next a poll interval after it ended', async () => {
      const [a, b, c] = turnsOf(3);
      await started([a, b, c]);

      const first = await Promise.all([a, b, c].map((u) => u.takeTurn()));
      expect(first.filter((done) => done !== undefined)).toHaveLength(1);
      expect(await b.takeTurn()).toBeUndefined();

      await new Promise((r) => setTimeout(r, 1_000));
      expect(await b.takeTurn()).toBeDefined();
      expect(await a.takeTurn()).toBeUndefined();
    });

    it("does autovacuum's work once an upkeep interval across the instances, the statistics outgrown between", async () => {
      const [a, b] = turnsOf(2, { DATABASE_TABLE_UPKEEP_INTERVAL_MS: 3_000 });
      await started([a, b]);
      const scopesOf = [watch(a), watch(b)];
      const turn = async (upkeep: TableUpkeep) => {
        await dataSource.query(`UPDATE table_upkeep_turn SET next_round_at = '-infinity'`);
        expect(await upkeep.takeTurn()).toBeDefined();
      };

      await turn(a);
      await turn(b);
      await turn(a);
      await new Promise((r) => setTimeout(r, 3_000));
      await turn(b);
      await turn(a);

      expect(scopesOf).toEqual([
        ['all', 'statistics', 'statistics'],
        ['statistics', 'all'],
      ]);
    });

    it('hands the vacuums a round left to the next round, whichever instance runs it', async () => {
      const [a, b] = turnsOf(2);
      await started([a, b]);
      await a.round();
      const tables = ['upkeep_turn_a', 'upkeep_turn_b'];
      for (const table of tables) {
        await dataSource.query(`CREATE TABLE ${table} (n int)`);
        await dataSource.query(`INSERT INTO ${table} SELECT generate_series(1, 2000)`);
        await dataSource.query(`DELETE FROM ${table}`);
      }
      await expectEventually(async () => expect((await Promise.all(tables.map(statsOf))).map((t) => t.dead)).toEqual([2000, 2000]), { timeoutMs: 20_000 });
      // A full round was just run: only vacuums left over make the next ones full.
      await dataSource.query(`UPDATE table_upkeep_turn SET full_round_at = now(), vacuums_left = true`);
      const vacuumed = (done: { table: string; action: string }[] | undefined) => (done ?? []).filter((d) => tables.includes(d.table) && d.action === 'vacuum').map((d) => d.table);

      const first = vacuumed(await a.takeTurn());
      await dataSource.query(`UPDATE table_upkeep_turn SET next_round_at = '-infinity'`);
      await expectEventually(
        async () => {
          await dataSource.query(`UPDATE table_upkeep_turn SET next_round_at = '-infinity'`);
          expect([...first, ...vacuumed(await b.takeTurn())].sort()).toEqual(tables);
        },
        { timeoutMs: 20_000 },
      );
      // Nothing left: the next round only looks at statistics.
      await expectEventually(
        async () => {
          await dataSource.query(`UPDATE table_upkeep_turn SET next_round_at = '-infinity'`);
          await b.takeTurn();
          const [{ left }] = await dataSource.query(`SELECT vacuums_left AS left FROM table_upkeep_turn`);
          expect(left).toBe(false);
        },
        { timeoutMs: 20_000 },
      );
    });

    it('hands the turn on when its round fails, not when the lease runs out', async () => {
      const [a, b] = turnsOf(2);
      await started([a, b]);
      jest.spyOn(a, 'round').mockRejectedValueOnce(new Error('connection lost'));

      await expect(a.takeTurn()).rejects.toThrow('connection lost');
      expect(await leaseLeft()).toBeLessThan(1);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await b.takeTurn()).toBeDefined();
    });

    it('waits for a round still holding the turn (an instance killed mid-round frees it by the lease)', async () => {
      const [a, b] = turnsOf(2);
      await started([a, b]);
      const release = holding(a);

      const running = a.takeTurn();
      await expectEventually(async () => expect(await leaseLeft()).toBeGreaterThan(TURN_LEASE_MS / 1000 - 10));
      expect(await b.takeTurn()).toBeUndefined();
      release();
      expect(await running).toBeDefined();
    });

    it('leaves the turn alone when its round outlived the lease and another instance holds it now', async () => {
      const [a, b, c] = turnsOf(3);
      await started([a, b, c]);
      const releaseA = holding(a);
      const releaseB = holding(b);

      const runningA = a.takeTurn();
      await expectEventually(async () => expect(await leaseLeft()).toBeGreaterThan(TURN_LEASE_MS / 1000 - 10));
      // a's lease runs out while its round still runs: b takes the turn.
      await dataSource.query(`UPDATE table_upkeep_turn SET next_round_at = now() - interval '1 second'`);
      const runningB = b.takeTurn();
      await expectEventually(async () => expect(await leaseLeft()).toBeGreaterThan(TURN_LEASE_MS / 1000 - 10));
      releaseA();
      expect(await runningA).toBeDefined();

      expect(await leaseLeft()).toBeGreaterThan(TURN_LEASE_MS / 1000 - 10);
      expect(await c.takeTurn()).toBeUndefined();
      releaseB();
      expect(await runningB).toBeDefined();
      expect(await leaseLeft()).toBeLessThan(1);
    });
  });

  it('runs all of the upkeep in `auto` mode when the server has autovacuum off, else the statistics outgrown; never when off, embedded, or without workers', async () => {
    const [{ autovacuum }] = await dataSource.query(`SELECT current_setting('autovacuum') AS autovacuum`);
    const runs = async (config: AppConfig): Promise<string | undefined> => {
      const upkeep = new TableUpkeep(dataSource, config, metrics);
      await upkeep.onApplicationBootstrap();
      const running = upkeep.running ? upkeep.runs : undefined;
      await upkeep.onApplicationShutdown();
      return running;
    };

    expect(await runs(configWith({ DATABASE_TABLE_UPKEEP: 'auto' }))).toBe(autovacuum === 'off' ? 'all' : 'statistics');
    expect(await runs(configWith({ DATABASE_TABLE_UPKEEP: 'on' }))).toBe('all');
    expect(await runs(configWith({ DATABASE_TABLE_UPKEEP: 'off' }))).toBeUndefined();
    expect(await runs(configWith({ DATABASE_TABLE_UPKEEP: 'on', WORKERS_ENABLED: false }))).toBeUndefined();
    expect(await runs(loadConfig({}, { DATABASE_TABLE_UPKEEP: 'on' }))).toBeUndefined();
  });
});
