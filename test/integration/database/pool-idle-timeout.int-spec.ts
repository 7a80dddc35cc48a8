import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/infrastructure/database/data-source';
import { describeWithPostgres } from '../../setup/test-env';
import { createTestDatabase, TestDatabase } from '../../utils/test-database';

/** The pool's backends on the database, seen from the server (not the client's own count). */
const backendsOn = async (observer: DataSource, database: string): Promise<number> =>
  Number((await observer.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [database]))[0].n);

describeWithPostgres('the pool keeps idle connections for DATABASE_POOL_IDLE_TIMEOUT_MS', () => {
  let database: TestDatabase;
  let observer: DataSource;
  const pools: DataSource[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    observer = await new DataSource({ type: 'postgres', url: database.url, extra: { max: 1 } }).initialize();
  });
  afterAll(async () => {
    for (const pool of pools) if (pool.isInitialized) await pool.destroy();
    await observer?.destroy();
    await database?.drop();
  });

  /** A pool of three with three connections open at once, then idle. */
  const busyThenIdle = async (idleTimeoutMs: number): Promise<DataSource> => {
    const pool = await new DataSource({ ...dataSourceOptions({ url: database.url, poolSize: 3, idleTimeoutMs }), migrationsRun: false }).initialize();
    pools.push(pool);
    await Promise.all([1, 2, 3].map(() => pool.query('SELECT pg_sleep(0.05)')));
    return pool;
  };

  const databaseName = () => new URL(database.url).pathname.slice(1);

  it('closes the idle connections after the timeout, and keeps them with 0 (until the pool ends)', async () => {
    const closing = await busyThenIdle(1_500);
    expect(await backendsOn(observer, databaseName())).toBe(3);
    await new Promise((done) => setTimeout(done, 3_000));
    expect(await backendsOn(observer, databaseName())).toBe(0);
    await closing.destroy();

    const kept = await busyThenIdle(0);
    await new Promise((done) => setTimeout(done, 3_000));
    expect(await backendsOn(observer, databaseName())).toBe(3);
    await kept.destroy();
    // A backend leaves pg_stat_activity a moment after its client hangs up.
    for (let waited = 0; waited < 5_000 && (await backendsOn(observer, databaseName())) > 0; waited += 100) await new Promise((done) => setTimeout(done, 100));
    expect(await backendsOn(observer, databaseName())).toBe(0);
  });
});
