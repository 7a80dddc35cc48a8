import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { KeptCounts } from '../../../src/infrastructure/database/kept-counts';
import { JobCounts1798810000000 } from '../../../src/infrastructure/database/migrations/1798810000000-job-counts';
import { JobCountsEveryStatus1798870000000 } from '../../../src/infrastructure/database/migrations/1798870000000-job-counts-every-status';
import { JobCountsByKindAndType1798930000000 } from '../../../src/infrastructure/database/migrations/1798930000000-job-counts-by-kind-and-type';
import { OpsJobFilter, OpsJobsRepository } from '../../../src/modules/ops/ops-jobs.repository';
import { OpsOverviewRepository } from '../../../src/modules/ops/ops-overview.repository';
import { SagaCounts } from '../../../src/modules/saga-state/saga-counts';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { watching } from '../../utils/watched-statements';

const MINUTE = 60_000;

/**
 * The ops overview's jobs (pending by age and by due time, in progress, in error) from the jobs'
 * kept counts (migration 1798810000000), against the same figures counted over the table itself
 * (the overview's query before the counts) after every kind of write: inserts, status moves,
 * a pending job rescheduled, deletes, TRUNCATE, a rolled-back transaction, folds, and the
 * migration's first count.
 */
describeWithPostgres('the jobs kept counts (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let overview: OpsOverviewRepository;
  let folding: KeptCounts;
  let now: Date;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(3));
    overview = new OpsOverviewRepository(dataSource, new SagaCounts(dataSource));
    folding = new KeptCounts(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(async () => {
    await dataSource.query(`TRUNCATE jobs CASCADE`);
    now = new Date(Math.floor(Date.now() / 1000) * 1000);
  });

  const ago = (minutes: number) => new Date(now.getTime() - minutes * MINUTE);
  const insert = (jobs: { status: string; createdAt: Date; scheduledAt?: Date; kind?: string; type?: string }[], db: { query: DataSource['query'] } = dataSource) =>
    db.query(
      `INSERT INTO jobs (id, connection_id, kind, type, status, created_at, scheduled_at)
       SELECT gen_random_uuid(), $1, u.kind, u.type, u.status, u.created_at, u.scheduled_at
       FROM unnest($2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6::text[]) AS u(status, created_at, scheduled_at, kind, type)`,
      [
        randomUUID(),
        jobs.map((j) => j.status),
        jobs.map((j) => j.createdAt),
        jobs.map((j) => j.scheduledAt ?? j.createdAt),
        jobs.map((j) => j.kind ?? 'automated'),
        jobs.map((j) => j.type ?? 'benefit_enroll'),
      ],
    );
  /** The ops list of jobs on the test database, with every statement it sends. */
  const watchedList = () => {
    const { db, queries } = watching(dataSource);
    return { statements: queries, list: new OpsJobsRepository(db) };
  };
  /** The truth: the overview's figures counted over the table. */
  const counted = async () => {
    const [row] = await dataSource.query(
      `SELECT
         count(*) FILTER (WHERE status = 'pending')::int AS pending,
         count(*) FILTER (WHERE status = 'pending' AND scheduled_at > $1)::int AS scheduled_later,
         count(*) FILTER (WHERE status = 'pending' AND created_at > $1::timestamptz - interval '1 minute')::int AS under_1m,
         count(*) FILTER (WHERE status = 'pending' AND created_at <= $1::timestamptz - interval '1 minute' AND created_at > $1::timestamptz - interval '15 minutes')::int AS "1m_to_15m",
         count(*) FILTER (WHERE status = 'pending' AND created_at <= $1::timestamptz - interval '15 minutes' AND created_at > $1::timestamptz - interval '1 hour')::int AS "15m_to_1h",
         count(*) FILTER (WHERE status = 'pending' AND created_at <= $1::timestamptz - interval '1 hour' AND created_at > $1::timestamptz - interval '24 hours')::int AS "1h_to_24h",
         count(*) FILTER (WHERE status = 'pending' AND created_at <= $1::timestamptz - interval '24 hours')::int AS over_24h,
         count(*) FILTER (WHERE status = 'in_progress')::int AS in_progress,
         count(*) FILTER (WHERE status = 'error')::int AS error
       FROM jobs`,
      [now],
    );
    return {
      pending: {
        total: row.pending,
        due: row.pending - row.scheduled_later,
        scheduled_later: row.scheduled_later,
        by_age: { under_1m: row.under_1m, '1m_to_15m': row['1m_to_15m'], '15m_to_1h': row['15m_to_1h'], '1h_to_24h': row['1h_to_24h'], over_24h: row.over_24h },
      },
      in_progress: row.in_progress,
      error: row.error,
    };
  };
  const changeRows = async () => (await dataSource.query(`SELECT count(*)::int AS n FROM job_count_changes`))[0].n as number;
  const countRows = async () => (await dataSource.query(`SELECT count(*)::int AS n FROM job_counts`))[0].n as number;

  it('counts pending jobs by age and due time, in progress and in error as the table does, through every move', async () => {
    await insert([
      { status: 'pending', createdAt: ago(0.5) },
      { status: 'pending', createdAt: ago(10) },
      { status: 'pending', createdAt: ago(10) },
      { status: 'pending', createdAt: ago(30) },
      { status: 'pending', createdAt: ago(120) },
      { status: 'pending', createdAt: ago(3 * 24 * 60) },
      { status: 'pending', createdAt: ago(2), scheduledAt: new Date(now.getTime() + 30 * 24 * 60 * MINUTE) },
      { status: 'complete', createdAt: ago(5) },
      { status: 'error', createdAt: ago(5) },
    ]);
    const first = await overview.jobs(now);
    expect(first).toEqual(await counted());
    expect(first.pending).toMatchObject({ total: 7, scheduled_later: 1, by_age: { under_1m: 1, '1m_to_15m': 3, '15m_to_1h': 1, '1h_to_24h': 1, over_24h: 1 } });

    // A worker takes two, one fails and one completes; a pending one is put off (a retry's back-off); a finished one is purged.
    await dataSource.query(`UPDATE jobs SET status = 'in_progress' WHERE id IN (SELECT id FROM jobs WHERE status = 'pending' AND created_at = $1)`, [ago(10)]);
    await dataSource.query(`UPDATE jobs SET status = 'error' WHERE id IN (SELECT id FROM jobs WHERE status = 'in_progress' ORDER BY id LIMIT 1)`);
    await dataSource.query(`UPDATE jobs SET status = 'complete' WHERE status = 'in_progress'`);
    await dataSource.query(`UPDATE jobs SET scheduled_at = $2 WHERE status = 'pending' AND created_at = $1`, [ago(30), new Date(now.getTime() + 5 * MINUTE)]);
    const before = await changeRows();
    await dataSource.query(`UPDATE jobs SET result = '{"note":1}'::jsonb WHERE status = 'pending'`);
    expect(await changeRows()).toBe(before);
    await dataSource.query(`DELETE FROM jobs WHERE status = 'complete'`);
    expect(await overview.jobs(now)).toEqual(await counted());

    expect(await folding.fold()).toBeGreaterThan(0);
    expect(await changeRows()).toBe(0);
    const after = await overview.jobs(now);
    expect(after).toEqual(await counted());
    expect(after).toMatchObject({ in_progress: 0, error: 2, pending: { total: 5, scheduled_later: 2 } });

    // Once no job is pending under a key, its row goes at the next fold: what is left is a row
    // per status of the others (every status is counted since 1798870000000).
    await dataSource.query(`UPDATE jobs SET status = 'complete' WHERE status = 'pending'`);
    await folding.fold();
    expect(await dataSource.query(`SELECT status, n::int FROM job_counts ORDER BY status`)).toEqual([
      { status: 'complete', n: 5 },
      { status: 'error', n: 2 },
    ]);
    expect(await overview.jobs(now)).toEqual(await counted());
  });

  it('gives the ops list of jobs its count by status, or of all, from the counts as the table has them', async () => {
    const statuses = ['pending', 'in_progress', 'complete', 'error', 'reauth_error', 'permissions_error'] as const;
    const byStatus = async () =>
      Object.fromEntries(
        (await dataSource.query(`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`)).map((r: { status: string; n: number }) => [r.status, r.n]),
      ) as Record<string, number>;
    const { statements, list } = watchedList();
    const check = async () => {
      const table = await byStatus();
      for (const status of statuses) expect([status, (await list.list({ status }, { limit: 1, offset: 0 })).count]).toEqual([status, table[status] ?? 0]);
      expect((await list.list({}, { limit: 1, offset: 0 })).count).toBe(Object.values(table).reduce((a, b) => a + b, 0));
    };

    await insert(statuses.flatMap((status, i) => Array.from({ length: i + 1 }, () => ({ status, createdAt: ago(i) }))));
    await check();
    await dataSource.query(`UPDATE jobs SET status = 'complete' WHERE status IN ('in_progress', 'reauth_error')`);
    await dataSource.query(`DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE status = 'complete' ORDER BY id LIMIT 2)`);
    await check();
    await folding.fold();
    await check();
    // None of it counted the table.
    expect(statements.filter((s) => /count\(\*\)[\s\S]*FROM jobs/.test(s.sql))).toEqual([]);
  });

  it('gives the ops list filtered by kind and type its count from the counts too, and only a connection filter counts the table', async () => {
    const kinds = [
      { kind: 'manual', type: 'benefit_register' },
      { kind: 'manual', type: 'benefit_enroll' },
      { kind: 'automated', type: 'benefit_unenroll' },
      { kind: 'internal', type: 'enrollment_group' },
    ];
    const statuses = ['pending', 'complete', 'error'];
    await insert(kinds.flatMap(({ kind, type }, k) => statuses.flatMap((status, s) => Array.from({ length: 1 + k + s }, (_, i) => ({ status, kind, type, createdAt: ago(i) })))));
    await dataSource.query(`UPDATE jobs SET status = 'complete' WHERE kind = 'manual' AND type = 'benefit_register' AND status = 'pending'`);
    await dataSource.query(`UPDATE jobs SET type = 'benefit_enroll' WHERE kind = 'automated' AND status = 'error'`);
    const { statements, list } = watchedList();
    const truth = async (filter: OpsJobFilter) =>
      (
        await dataSource.query(
          `SELECT count(*)::int AS n FROM jobs WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR kind = $2) AND ($3::text IS NULL OR type = $3)`,
          [filter.status ?? null, filter.kind ?? null, filter.type ?? null],
        )
      )[0].n as number;
    const filters: OpsJobFilter[] = [
      { kind: 'manual' },
      { kind: 'manual', status: 'pending' },
      { type: 'benefit_enroll' },
      { kind: 'automated', type: 'benefit_enroll' },
      { kind: 'automated', type: 'benefit_unenroll', status: 'complete' },
      { kind: 'internal', type: 'enrollment_group', status: 'error' },
      { kind: 'internal' },
    ];
    const check = async () => {
      for (const filter of filters) expect([filter, (await list.list(filter, { limit: 1, offset: 0 })).count]).toEqual([filter, await truth(filter)]);
    };
    await check();
    expect(await truth({ kind: 'manual', status: 'pending' })).toBe(2);
    await folding.fold();
    await check();
    expect(statements.filter((s) => /count\(\*\)[\s\S]*FROM jobs/.test(s.sql))).toEqual([]);

    // A connection's jobs are counted over the table (its index), as before.
    const [{ connection_id: connectionId }] = await dataSource.query(`SELECT connection_id FROM jobs LIMIT 1`);
    expect((await list.list({ connectionId }, { limit: 1, offset: 0 })).count).toBe(await dataSource.query(`SELECT count(*)::int AS n FROM jobs`).then((r) => r[0].n));
    expect(statements.filter((s) => /count\(\*\)[\s\S]*FROM jobs/.test(s.sql))).toHaveLength(1);
  });

  it('reads a page of a rare kind through its index, not every job', async () => {
    // Automated jobs of 200 connections, half of them pending: neither the status, the time nor a
    // connection narrows the page to the rare kind.
    for (let c = 0; c < 200; c++) await insert(Array.from({ length: 100 }, (_, i) => ({ status: i % 2 ? 'complete' : 'pending', createdAt: ago(i) })));
    await insert(Array.from({ length: 4 }, (_, i) => ({ status: 'pending', kind: 'manual', type: 'benefit_register', createdAt: ago(i) })));
    await dataSource.query(`ANALYZE jobs`);
    const { statements, list } = watchedList();
    const { jobs } = await list.list({ kind: 'manual', status: 'pending' }, { limit: 50, offset: 0 });
    expect(jobs.map((j) => j.kind)).toEqual(['manual', 'manual', 'manual', 'manual']);
    // The page's own statement, planned and run again: it reads the kind's entries, a few pages.
    const page = statements.find((s) => /ORDER BY/.test(s.sql))!;
    const [{ 'QUERY PLAN': [plan] }] = await dataSource.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${page.sql}`, page.params);
    expect(JSON.stringify(plan.Plan)).toContain('jobs_kind_list_idx');
    expect(plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks']).toBeLessThan(20);
  });

  it('counts nothing of a rolled-back transaction, and starts from zero after a TRUNCATE', async () => {
    await insert([{ status: 'pending', createdAt: ago(3) }]);
    const runner = dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      await insert([{ status: 'error', createdAt: ago(1) }], runner);
      await runner.query(`UPDATE jobs SET status = 'in_progress'`);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    expect(await overview.jobs(now)).toEqual(await counted());
    expect((await overview.jobs(now)).pending.total).toBe(1);
    await folding.fold();
    await dataSource.query(`TRUNCATE jobs CASCADE`);
    expect(await overview.jobs(now)).toEqual(await counted());
    expect(await countRows()).toBe(0);
  });

  it('counts the jobs already there when the migrations run, every status once the second has', async () => {
    const runner = dataSource.createQueryRunner();
    try {
      await new JobCountsByKindAndType1798930000000().down(runner);
      await new JobCountsEveryStatus1798870000000().down(runner);
      await new JobCounts1798810000000().down(runner);
      await insert([{ status: 'pending', createdAt: ago(20) }, { status: 'error', createdAt: ago(1) }, { status: 'complete', createdAt: ago(1) }]);
      await new JobCounts1798810000000().up(runner);
      await insert([{ status: 'complete', createdAt: ago(1) }, { status: 'permissions_error', createdAt: ago(1) }]);
      await new JobCountsEveryStatus1798870000000().up(runner);
      await insert([{ status: 'error', createdAt: ago(1), kind: 'manual', type: 'benefit_register' }]);
      await new JobCountsByKindAndType1798930000000().up(runner);
    } finally {
      await runner.release();
    }
    expect(await overview.jobs(now)).toEqual(await counted());
    expect((await overview.jobs(now)).pending.by_age['15m_to_1h']).toBe(1);
    await folding.fold();
    expect(await dataSource.query(`SELECT status, kind, type, n::int FROM job_counts ORDER BY status, kind, created_at`)).toEqual([
      { status: 'complete', kind: 'automated', type: 'benefit_enroll', n: 2 },
      { status: 'error', kind: 'automated', type: 'benefit_enroll', n: 1 },
      { status: 'error', kind: 'manual', type: 'benefit_register', n: 1 },
      { status: 'pending', kind: 'automated', type: 'benefit_enroll', n: 1 },
      { status: 'permissions_error', kind: 'automated', type: 'benefit_enroll', n: 1 },
    ]);
  });
});
