import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SagaCounts1798800000000 } from '../../../src/infrastructure/database/migrations/1798800000000-saga-counts';
import { KeptCounts } from '../../../src/infrastructure/database/kept-counts';
import { SagaCounts } from '../../../src/modules/saga-state/saga-counts';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

/**
 * Sagas counted by type and state from `saga_counts` and the changes the statement triggers
 * append (migration 1798800000000), against a GROUP BY over the table itself after every kind of
 * write: inserts, state changes and other updates, deletes, TRUNCATE, rolled-back transactions,
 * folds (two at once, KeptCounts), and the migration's first count of the sagas already there.
 */
describeWithPostgres('SagaCounts (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let counts: SagaCounts;
  let folding: KeptCounts;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(4));
    counts = new SagaCounts(dataSource);
    folding = new KeptCounts(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(() => dataSource.query(`TRUNCATE sagas CASCADE`));

  const insert = (rows: { type: string; state: string }[], db: { query: DataSource['query'] } = dataSource) =>
    db.query(
      `INSERT INTO sagas (id, type, state, connection_id, created_at, updated_at)
       SELECT gen_random_uuid(), u.type, u.state, $3, now(), now() FROM unnest($1::text[], $2::text[]) AS u(type, state)`,
      [rows.map((r) => r.type), rows.map((r) => r.state), randomUUID()],
    );
  const many = (n: number, type: string, state: string) => Array.from({ length: n }, () => ({ type, state }));
  /** The truth: the table counted. */
  const counted = async () =>
    (await dataSource.query(`SELECT type, state, count(*)::int AS n FROM sagas GROUP BY type, state ORDER BY type, state`)) as { type: string; state: string; n: number }[];
  const kept = async () => (await counts.all()).sort((a, b) => a.type.localeCompare(b.type) || a.state.localeCompare(b.state));
  const changeRows = async () => (await dataSource.query(`SELECT count(*)::int AS n FROM saga_count_changes`))[0].n as number;

  it('counts inserts, state changes and deletes as the table does, before and after a fold', async () => {
    await insert([...many(5, 'new_hire', 'waiting'), ...many(3, 'termination', 'completed'), ...many(2, 'enrollment', 'started')]);
    await insert(many(4, 'new_hire', 'completed'));
    expect(await kept()).toEqual(await counted());

    // Three of the waiting new hires complete, one fails; the steps of another change, not its state.
    await dataSource.query(`UPDATE sagas SET state = 'completed' WHERE id IN (SELECT id FROM sagas WHERE type = 'new_hire' AND state = 'waiting' ORDER BY id LIMIT 3)`);
    await dataSource.query(`UPDATE sagas SET state = 'failed' WHERE id IN (SELECT id FROM sagas WHERE type = 'new_hire' AND state = 'waiting' ORDER BY id LIMIT 1)`);
    const before = await changeRows();
    await dataSource.query(`UPDATE sagas SET steps = steps || '[{"name":"x"}]'::jsonb WHERE type = 'new_hire' AND state = 'waiting'`);
    expect(await changeRows()).toBe(before);
    await dataSource.query(`DELETE FROM sagas WHERE type = 'enrollment'`);
    expect(await kept()).toEqual(await counted());
    expect(await counted()).toEqual([
      { type: 'new_hire', state: 'completed', n: 7 },
      { type: 'new_hire', state: 'failed', n: 1 },
      { type: 'new_hire', state: 'waiting', n: 1 },
      { type: 'termination', state: 'completed', n: 3 },
    ]);

    expect(await folding.fold()).toBeGreaterThan(0);
    expect(await changeRows()).toBe(0);
    expect(await kept()).toEqual(await counted());
    expect(await counts.count({ type: 'new_hire' })).toBe(9);
    expect(await counts.count({ state: 'completed' })).toBe(10);
    expect(await counts.count({ type: 'termination', state: 'failed' })).toBe(0);
    expect(await counts.count()).toBe(12);
    // A fold with nothing to fold changes nothing.
    expect(await folding.fold()).toBe(0);
    expect(await kept()).toEqual(await counted());
  });

  it('counts nothing of a transaction rolled back', async () => {
    await insert(many(2, 'termination', 'waiting'));
    const runner = dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      await insert(many(6, 'termination', 'waiting'), runner);
      await runner.query(`UPDATE sagas SET state = 'completed' WHERE type = 'termination'`);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    expect(await kept()).toEqual([{ type: 'termination', state: 'waiting', n: 2 }]);
  });

  it('folds each change once when two instances fold at once, while sagas are written', async () => {
    for (let round = 0; round < 20; round++) {
      await Promise.all([
        insert(many(3, 'contribution_change', round % 2 === 0 ? 'completed' : 'waiting')),
        folding.fold(),
        folding.fold(),
        dataSource.query(`UPDATE sagas SET state = 'completed' WHERE state = 'waiting' AND id IN (SELECT id FROM sagas WHERE state = 'waiting' ORDER BY id LIMIT 1)`),
      ]);
    }
    await Promise.all([folding.fold(), folding.fold()]);
    expect(await kept()).toEqual(await counted());
    expect(await counts.count()).toBe(60);
  });

  it('starts from zero after a TRUNCATE', async () => {
    await insert(many(3, 'new_hire', 'completed'));
    await folding.fold();
    await insert(many(1, 'new_hire', 'completed'));
    await dataSource.query(`TRUNCATE sagas CASCADE`);
    expect(await kept()).toEqual([]);
    await insert(many(2, 'new_hire', 'failed'));
    expect(await kept()).toEqual([{ type: 'new_hire', state: 'failed', n: 2 }]);
  });

  it('counts the sagas already there when the migration runs', async () => {
    const runner = dataSource.createQueryRunner();
    try {
      await new SagaCounts1798800000000().down(runner);
      await insert([...many(4, 'termination', 'completed'), ...many(1, 'enrollment', 'failed')]);
      await new SagaCounts1798800000000().up(runner);
    } finally {
      await runner.release();
    }
    expect(await changeRows()).toBe(0);
    expect(await kept()).toEqual(await counted());
    expect(await counts.count()).toBe(5);
  });
});
