import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createConnection } from '../sync/sync-test-kit';

const NOW = new Date('2026-07-01T12:00:00Z');

/**
 * A job's run changes its status and lease, and PostgreSQL updates a row in place (HOT: no
 * index entry written) only when no indexed column changes, partial indexes' predicates included
 * (JobQueue1798300000000). Counted by PostgreSQL itself: the pool is one connection, whose table
 * counters are flushed on demand (pg_stat_force_next_flush) before they are read.
 */
describeWithPostgres('job updates in place (HOT)', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let jobs: JobsRepository;
  let connectionId: string;
  const type = 'hot_probe';

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(1));
    jobs = new JobsRepository(dataSource);
    connectionId = (await createConnection(dataSource)).id;
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** Updates and HOT updates of `jobs` and `job_queue` so far, this connection's flushed first. */
  const counters = async (): Promise<Record<string, { updated: number; hot: number }>> => {
    await dataSource.query(`SELECT pg_stat_force_next_flush()`);
    const rows: { relname: string; updated: string; hot: string }[] = await dataSource.query(
      `SELECT relname, n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname IN ('jobs', 'job_queue')`,
    );
    return Object.fromEntries(rows.map((r) => [r.relname, { updated: Number(r.updated), hot: Number(r.hot) }]));
  };
  const delta = (before: Awaited<ReturnType<typeof counters>>, after: Awaited<ReturnType<typeof counters>>, table: string) => ({
    updated: after[table].updated - before[table].updated,
    hot: after[table].hot - before[table].hot,
  });

  it('leases, renews, gives back, leases again and finishes a job without writing an index entry', async () => {
    const job = await jobs.insert({ id: randomUUID(), connectionId, kind: 'internal', type, params: { probe: true }, createdAt: NOW });
    const before = await counters();

    expect((await jobs.lease('w1', [type], NOW, 30_000, 1)).map((j) => j.id)).toEqual([job.id]);
    expect(await jobs.renewLease(job.id, 'w1', 30_000)).toBe(true);
    expect(await jobs.release(job.id, 'w1')).toBe(true);
    expect((await jobs.lease('w2', [type], NOW, 30_000, 1)).map((j) => j.id)).toEqual([job.id]);
    expect(await jobs.finish(job.id, 'w2', { status: 'complete', result: { done: true }, completedAt: NOW })).toBe(true);

    const after = await counters();
    // The job's row: leased, given back, leased, finished; its queue row: leased, renewed, given back, leased.
    expect(delta(before, after, 'jobs')).toEqual({ updated: 4, hot: 4 });
    expect(delta(before, after, 'job_queue')).toEqual({ updated: 4, hot: 4 });
    expect((await jobs.find(job.id))?.status).toBe('complete');
  });

  it('finishes a batch of jobs in place', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    await jobs.insertMany(
      ids.map((id) => ({ id, connectionId, kind: 'internal' as const, type, createdAt: NOW })),
      dataSource.manager,
    );
    expect((await jobs.lease('w1', [type], NOW, 30_000, 3)).map((j) => j.id).sort()).toEqual([...ids].sort());
    const before = await counters();
    const finished = await dataSource.transaction((manager) =>
      jobs.finishMany(
        'w1',
        ids.map((id) => ({ id, status: 'complete' as const, result: null })),
        NOW,
        manager,
      ),
    );
    expect(finished.sort()).toEqual([...ids].sort());
    expect(delta(before, await counters(), 'jobs')).toEqual({ updated: 3, hot: 3 });
  });
});
