import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { FailedJobs1798860000000 } from '../../../src/infrastructure/database/migrations/1798860000000-failed-jobs';
import { FailedSagas1798850000000 } from '../../../src/infrastructure/database/migrations/1798850000000-failed-sagas';
import { OpsJobsRepository } from '../../../src/modules/ops/ops-jobs.repository';
import { OpsSagasRepository } from '../../../src/modules/ops/ops-sagas.repository';
import { SagaCounts } from '../../../src/modules/saga-state/saga-counts';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { rowsReadOf, watching } from '../../utils/watched-statements';

/**
 * `failed_sagas` and `failed_jobs` (migrations 1798850000000 and 1798860000000, kept by the
 * triggers of kept-subset-triggers.ts) against the tables themselves after every kind of write
 * that moves a row in or out of failure, and the ops listings that read them.
 */
describeWithPostgres('the failed sagas and jobs, kept apart (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(2));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** What differs between the two: the table, its state column, where a row fails, the migration and the ops listing. */
  const kinds = [
    {
      name: 'sagas',
      column: 'state',
      open: 'waiting',
      done: 'completed',
      failures: ['failed'],
      migration: () => new FailedSagas1798850000000(),
      subset: 'failed_sagas',
      reference: 'saga_id',
      insertSql: `INSERT INTO sagas (id, type, state, connection_id, created_at, updated_at)
        SELECT u.id, 'new_hire', u.state, $3, u.at, u.at FROM unnest($1::uuid[], $2::text[], $4::timestamptz[]) AS u(id, state, at)`,
      list: async (filter: { failure: string; connectionId?: string; createdAfter?: Date }, page: { limit: number; offset: number }, db: DataSource = dataSource) => {
        const { count, sagas } = await new OpsSagasRepository(db, new SagaCounts(dataSource)).list(
          { state: filter.failure as 'failed', connectionId: filter.connectionId, createdAfter: filter.createdAfter },
          page,
        );
        return { count, ids: sagas.map((s) => s.id) };
      },
    },
    {
      name: 'jobs',
      column: 'status',
      open: 'pending',
      done: 'complete',
      failures: ['error', 'reauth_error', 'permissions_error'],
      migration: () => new FailedJobs1798860000000(),
      subset: 'failed_jobs',
      reference: 'job_id',
      insertSql: `INSERT INTO jobs (id, connection_id, kind, type, status, created_at, scheduled_at)
        SELECT u.id, $3, 'automated', 'benefit_enroll', u.state, u.at, u.at FROM unnest($1::uuid[], $2::text[], $4::timestamptz[]) AS u(id, state, at)`,
      list: async (filter: { failure: string; connectionId?: string }, page: { limit: number; offset: number }, db: DataSource = dataSource) => {
        const { count, jobs } = await new OpsJobsRepository(db).list({ status: filter.failure as 'error', connectionId: filter.connectionId }, page);
        return { count, ids: jobs.map((j) => j.id) };
      },
    },
  ];

  describe.each(kinds)('$name', (kind) => {
    const connectionId = randomUUID();
    const failure = kind.failures[0];
    beforeEach(() => dataSource.query(`TRUNCATE ${kind.name} CASCADE`));

    /** Inserts rows of these states, one a minute apart, the last `minutesAgo` before now, and answers their ids in order. */
    const insert = async (states: string[], minutesAgo = 60, connection = connectionId): Promise<string[]> => {
      const ids = states.map(() => randomUUID());
      const at = states.map((_, i) => new Date(Date.now() - (minutesAgo + states.length - 1 - i) * 60_000));
      await dataSource.query(kind.insertSql, [ids, states, connection, at]);
      return ids;
    };
    const move = (ids: string[], state: string) => dataSource.query(`UPDATE ${kind.name} SET ${kind.column} = $2 WHERE id = ANY($1::uuid[])`, [ids, state]);
    /** The truth: the failed rows in the table, newest first. */
    const failed = async () =>
      (await dataSource.query(`SELECT id FROM ${kind.name} WHERE ${kind.column} = ANY($1::text[]) ORDER BY created_at DESC, id`, [kind.failures])).map((r: { id: string }) => r.id);
    const kept = async () =>
      (await dataSource.query(`SELECT ${kind.reference} AS id FROM ${kind.subset} ORDER BY created_at DESC, ${kind.reference}`)).map((r: { id: string }) => r.id);

    it('holds exactly the failed rows through inserts, failures, retries, other updates and deletes', async () => {
      const [open, born, other] = await insert([kind.open, failure, kind.done]);
      expect(await kept()).toEqual([born]);

      await move([open], failure);
      await dataSource.query(`UPDATE ${kind.name} SET ${kind.column} = ${kind.column}, created_at = created_at WHERE id = ANY($1::uuid[])`, [[open, born, other]]);
      expect(await kept()).toEqual(await failed());
      expect(await kept()).toHaveLength(2);

      // A retry reopens one; a set-wise update moves several at once.
      await move([born], kind.open);
      expect(await kept()).toEqual([open]);
      await dataSource.query(`UPDATE ${kind.name} SET ${kind.column} = CASE WHEN id = $1 THEN $3 ELSE $4 END WHERE id = ANY($2::uuid[])`, [
        other,
        [open, born, other],
        failure,
        kind.done,
      ]);
      expect(await kept()).toEqual([other]);

      await dataSource.query(`DELETE FROM ${kind.name} WHERE id = $1`, [other]);
      expect(await kept()).toEqual([]);
    });

    it('follows a failure that changes its kind, and lists each kind apart', async () => {
      const [row] = await insert([kind.open]);
      for (const each of kind.failures) {
        await move([row], each);
        expect(await kept()).toEqual([row]);
        for (const other of kind.failures) expect((await kind.list({ failure: other }, { limit: 10, offset: 0 })).ids).toEqual(other === each ? [row] : []);
      }
    });

    it('counts nothing of a rolled-back failure', async () => {
      const [row] = await insert([kind.open]);
      await dataSource
        .transaction(async (manager) => {
          await manager.query(`UPDATE ${kind.name} SET ${kind.column} = $2 WHERE id = $1`, [row, failure]);
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      expect(await kept()).toEqual([]);
    });

    it('takes in the rows already failed when the migration runs', async () => {
      const runner = dataSource.createQueryRunner();
      try {
        await kind.migration().down(runner);
        await insert([failure, kind.done, kind.failures[kind.failures.length - 1]]);
        await kind.migration().up(runner);
      } finally {
        await runner.release();
      }
      expect(await kept()).toEqual(await failed());
      expect(await kept()).toHaveLength(2);
    });

    it('lists the failed for ops newest first, paged, with the connection filter', async () => {
      const mine = await insert([failure, kind.done, failure, kind.open, failure], 60);
      const theirs = await insert([failure], 30, randomUUID());
      const page = { limit: 10, offset: 0 };

      expect(await kind.list({ failure }, page)).toEqual({ count: 4, ids: [theirs[0], mine[4], mine[2], mine[0]] });
      expect(await kind.list({ failure }, { limit: 2, offset: 1 })).toEqual({ count: 4, ids: [mine[4], mine[2]] });
      expect(await kind.list({ failure, connectionId }, page)).toEqual({ count: 3, ids: [mine[4], mine[2], mine[0]] });
    });

    it('reads no row but the failed ones it lists, however many newer rows did not fail', async () => {
      const failedIds = await insert([failure, failure, failure], 600);
      await insert(Array.from({ length: 3000 }, () => kind.done), 1);
      await dataSource.query(`ANALYZE ${kind.name}`);
      await dataSource.query(`ANALYZE ${kind.subset}`);
      const { db, queries } = watching(dataSource);
      expect((await kind.list({ failure }, { limit: 50, offset: 0 }, db)).ids).toEqual([...failedIds].reverse());

      const read = await rowsReadOf(dataSource, kind.name, queries);
      expect(read.length).toBeGreaterThan(0);
      for (const n of read) expect(n).toBeLessThanOrEqual(failedIds.length);
    });
  });

  it('pages the newest jobs of every connection reading no more jobs than the page', async () => {
    await dataSource.query(`TRUNCATE jobs CASCADE`);
    await dataSource.query(
      `INSERT INTO jobs (id, connection_id, kind, type, status, created_at, scheduled_at)
       SELECT gen_random_uuid(), $1, 'automated', 'benefit_enroll', 'complete', now() - n * interval '1 second', now() FROM generate_series(1, 3000) AS n`,
      [randomUUID()],
    );
    await dataSource.query(`ANALYZE jobs`);
    const { db, queries } = watching(dataSource);
    const { count, jobs } = await new OpsJobsRepository(db).list({}, { limit: 50, offset: 50 });
    const [newest] = await dataSource.query(`SELECT id FROM jobs ORDER BY created_at DESC, seq DESC OFFSET 50 LIMIT 1`);
    expect([count, jobs.length, jobs[0].id]).toEqual([3000, 50, newest.id]);

    const read = await rowsReadOf(dataSource, 'jobs', queries);
    expect(read).toEqual([100]);
  });
});
