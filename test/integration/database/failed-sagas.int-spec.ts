import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { FailedSagas1798850000000 } from '../../../src/infrastructure/database/migrations/1798850000000-failed-sagas';
import { OpsSagasRepository } from '../../../src/modules/ops/ops-sagas.repository';
import { SagaCounts } from '../../../src/modules/saga-state/saga-counts';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

/**
 * `failed_sagas` (migration 1798850000000) against the sagas themselves after every kind of
 * write that moves a saga in or out of `failed`, and the ops listing that reads it.
 */
describeWithPostgres('failed_sagas (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  const connectionId = randomUUID();

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(2));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(() => dataSource.query(`TRUNCATE sagas CASCADE`));

  /** Inserts sagas of these states, one a minute apart from `minutesAgo`, and answers their ids in order. */
  const insert = async (states: string[], minutesAgo = 60, connection = connectionId): Promise<string[]> => {
    const ids = states.map(() => randomUUID());
    await dataSource.query(
      `INSERT INTO sagas (id, type, state, connection_id, created_at, updated_at)
       SELECT u.id, 'new_hire', u.state, $3, now() - (($4::int - u.n) * interval '1 minute'), now()
       FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS u(id, state, n)`,
      [ids, states, connection, minutesAgo],
    );
    return ids;
  };
  /** The truth: the failed sagas in the table, newest first. */
  const failed = async () => (await dataSource.query(`SELECT id FROM sagas WHERE state = 'failed' ORDER BY created_at DESC, id`)).map((r: { id: string }) => r.id);
  const kept = async () => (await dataSource.query(`SELECT saga_id FROM failed_sagas ORDER BY created_at DESC, saga_id`)).map((r: { saga_id: string }) => r.saga_id);

  it('holds exactly the failed sagas through inserts, failures, retries, other updates and deletes', async () => {
    const [waiting, born, other] = await insert(['waiting', 'failed', 'completed']);
    expect(await kept()).toEqual([born]);

    await dataSource.query(`UPDATE sagas SET state = 'failed' WHERE id = $1`, [waiting]);
    await dataSource.query(`UPDATE sagas SET steps = steps || '[{"name":"noted"}]'::jsonb, state = state WHERE id = ANY($1::uuid[])`, [[waiting, born, other]]);
    expect(await kept()).toEqual(await failed());
    expect(await kept()).toHaveLength(2);

    // A retry reopens one; a set-wise update moves several at once.
    await dataSource.query(`UPDATE sagas SET state = 'waiting' WHERE id = $1`, [born]);
    expect(await kept()).toEqual([waiting]);
    await dataSource.query(`UPDATE sagas SET state = CASE WHEN id = $1 THEN 'failed' ELSE 'completed' END WHERE id = ANY($2::uuid[])`, [other, [waiting, born, other]]);
    expect(await kept()).toEqual([other]);

    await dataSource.query(`DELETE FROM sagas WHERE id = $1`, [other]);
    expect(await kept()).toEqual([]);
  });

  it('counts nothing of a rolled-back failure', async () => {
    const [saga] = await insert(['waiting']);
    await dataSource
      .transaction(async (manager) => {
        await manager.query(`UPDATE sagas SET state = 'failed' WHERE id = $1`, [saga]);
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect(await kept()).toEqual([]);
  });

  it('takes in the sagas already failed when the migration runs', async () => {
    const runner = dataSource.createQueryRunner();
    try {
      await new FailedSagas1798850000000().down(runner);
      await insert(['failed', 'completed', 'failed']);
      await new FailedSagas1798850000000().up(runner);
    } finally {
      await runner.release();
    }
    expect(await kept()).toEqual(await failed());
    expect(await kept()).toHaveLength(2);
  });

  it('lists the failed sagas for ops newest first, paged, with their connection and age filters', async () => {
    const sagas = new OpsSagasRepository(dataSource, new SagaCounts(dataSource));
    const elsewhere = randomUUID();
    const mine = await insert(['failed', 'completed', 'failed', 'waiting', 'failed'], 60);
    const theirs = await insert(['failed'], 30, elsewhere);
    const listed = async (filter: Parameters<OpsSagasRepository['list']>[0], page = { limit: 10, offset: 0 }) => {
      const { count, sagas: found } = await sagas.list(filter, page);
      return { count, ids: found.map((s) => s.id) };
    };

    expect(await listed({ state: 'failed' })).toEqual({ count: 4, ids: [theirs[0], mine[4], mine[2], mine[0]] });
    expect(await listed({ state: 'failed' }, { limit: 2, offset: 1 })).toEqual({ count: 4, ids: [mine[4], mine[2]] });
    expect(await listed({ state: 'failed', connectionId })).toEqual({ count: 3, ids: [mine[4], mine[2], mine[0]] });
    expect(await listed({ state: 'failed', type: 'termination' })).toEqual({ count: 0, ids: [] });
    expect(await listed({ state: 'failed', createdAfter: new Date(Date.now() - 58.5 * 60_000) })).toEqual({ count: 3, ids: [theirs[0], mine[4], mine[2]] });
    expect((await listed({ state: 'waiting' })).ids).toEqual([mine[3]]);
  });

  it('reads no saga but the failed ones it lists, however many newer sagas did not fail', async () => {
    const failedIds = await insert(['failed', 'failed', 'failed'], 600);
    await dataSource.query(
      `INSERT INTO sagas (id, type, state, connection_id, created_at, updated_at)
       SELECT gen_random_uuid(), 'new_hire', 'completed', $1, now() - n * interval '1 second', now() FROM generate_series(1, 3000) AS n`,
      [connectionId],
    );
    await dataSource.query(`ANALYZE sagas`);
    await dataSource.query(`ANALYZE failed_sagas`);
    const queries: { sql: string; params: unknown[] }[] = [];
    const watched = new Proxy(dataSource, {
      get: (target, key) =>
        key === 'query'
          ? (sql: string, params: unknown[] = []) => {
              queries.push({ sql, params });
              return target.query(sql, params);
            }
          : Reflect.get(target, key),
    });
    const { sagas } = await new OpsSagasRepository(watched, new SagaCounts(dataSource)).list({ state: 'failed' }, { limit: 50, offset: 0 });
    expect(sagas.map((s) => s.id)).toEqual([...failedIds].reverse());

    const page = queries.find((q) => /ORDER BY/.test(q.sql))!;
    const [{ 'QUERY PLAN': [plan] }] = await dataSource.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${page.sql}`, page.params);
    /** Rows each scan of `sagas` produced or read and dropped. */
    const sagaRowsRead = (node: Record<string, unknown>): number =>
      (node['Relation Name'] === 'sagas' ? (Number(node['Actual Rows']) + Number(node['Rows Removed by Filter'] ?? 0)) * Number(node['Actual Loops']) : 0) +
      ((node.Plans as Record<string, unknown>[] | undefined) ?? []).reduce((sum, child) => sum + sagaRowsRead(child), 0);
    expect(sagaRowsRead(plan.Plan)).toBeLessThanOrEqual(failedIds.length);
  });
});
