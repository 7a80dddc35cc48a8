import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { describeWithPostgres } from '../../setup/test-env';
import { endJobs, holdJob } from '../../utils/job-queue';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createConnection } from '../sync/sync-test-kit';

const NOW = new Date('2026-07-01T12:00:00Z');
const minutes = (n: number) => new Date(NOW.getTime() + n * 60_000);

/** What a worker may lease: due pending jobs of its types, and jobs whose worker's lease ran out. */
describeWithPostgres('JobsRepository.lease', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let jobs: JobsRepository;
  let connectionId: string;
  let type: string;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource());
    jobs = new JobsRepository(dataSource);
    connectionId = (await createConnection(dataSource)).id;
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(() => {
    // Each test its own types, so no test leases another's jobs.
    type = `lease_${randomUUID().slice(0, 8)}`;
  });

  const insert = async (options: { type?: string; kind?: 'automated' | 'internal' | 'manual'; scheduledAt?: Date; createdAt?: Date; weight?: number } = {}) =>
    (
      await jobs.insert({
        id: randomUUID(),
        connectionId,
        kind: options.kind ?? 'internal',
        type: options.type ?? type,
        params: {},
        createdAt: options.createdAt ?? minutes(-60),
        scheduledAt: options.scheduledAt,
        weight: options.weight,
      })
    ).id;

  it('leases due jobs of its types oldest first, up to the limit, and marks them in progress', async () => {
    const second = await insert({ scheduledAt: minutes(-10) });
    const first = await insert({ scheduledAt: minutes(-20) });
    const third = await insert({ scheduledAt: minutes(-5) });
    const leased = await jobs.lease('w1', [type], NOW, 30_000, 2);
    // The two oldest (RETURNING gives no order).
    expect(leased.map((j) => j.id).sort()).toEqual([first, second].sort());
    expect(leased.map((j) => [j.status, j.attempts])).toEqual([
      ['in_progress', 1],
      ['in_progress', 1],
    ]);
    expect((await jobs.lease('w1', [type], NOW, 30_000, 5)).map((j) => j.id)).toEqual([third]);
    expect(await jobs.lease('w1', [type], NOW, 30_000, 5)).toEqual([]);
  });

  it('with a weight bound, leases due jobs oldest first while their weights add up to it, and a heavier first job alone', async () => {
    const heavy = await insert({ scheduledAt: minutes(-30), weight: 10_000 });
    const [a, b, c] = [await insert({ scheduledAt: minutes(-20), weight: 3_000 }), await insert({ scheduledAt: minutes(-15), weight: 3_000 }), await insert({ scheduledAt: minutes(-10), weight: 3_000 })];
    const light = await insert({ scheduledAt: minutes(-5) });
    // The oldest weighs more than the bound on its own: it goes alone, never left behind.
    expect((await jobs.lease('w1', [type], NOW, 30_000, 50, { max: 5_000, takeFirst: true })).map((j) => j.id)).toEqual([heavy]);
    // 3,000 + 3,000 would pass 5,000: one at a time, in order.
    expect((await jobs.lease('w1', [type], NOW, 30_000, 50, { max: 5_000, takeFirst: true })).map((j) => j.id)).toEqual([a]);
    // Exactly the bound: both, and not the light one after them.
    expect((await jobs.lease('w1', [type], NOW, 30_000, 50, { max: 6_000, takeFirst: true })).map((j) => j.id).sort()).toEqual([b, c].sort());
    // Without a bound, by count alone.
    expect((await jobs.lease('w1', [type], NOW, 30_000, 50)).map((j) => j.id)).toEqual([light]);
  });

  it('without takeFirst (a batch of the type already running), leaves a job heavier than the room left', async () => {
    const heavy = await insert({ scheduledAt: minutes(-30), weight: 10_000 });
    expect(await jobs.lease('w1', [type], NOW, 30_000, 50, { max: 4_000, takeFirst: false })).toEqual([]);
    expect((await jobs.lease('w1', [type], NOW, 30_000, 50, { max: 4_000, takeFirst: true })).map((j) => j.id)).toEqual([heavy]);
  });

  it('weighs a batch by the candidates another worker holds too, so a batch never passes the bound', async () => {
    const first = await insert({ scheduledAt: minutes(-20), weight: 4_000 });
    const second = await insert({ scheduledAt: minutes(-10), weight: 4_000 });
    const third = await insert({ scheduledAt: minutes(-5), weight: 4_000 });
    // Another transaction holds the first's queue row (a worker leasing it right now): it is
    // skipped, but its weight still counts, so the batch is the second alone, not the second and the third.
    const runner = dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(`SELECT job_id FROM job_queue WHERE job_id = $1 FOR UPDATE`, [first]);
      const leased = await jobs.lease('w1', [type], NOW, 30_000, 50, { max: 8_000, takeFirst: true });
      expect(leased.map((j) => j.id)).toEqual([second]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    expect((await jobs.lease('w1', [type], NOW, 30_000, 50, { max: 8_000, takeFirst: true })).map((j) => j.id).sort()).toEqual([first, third].sort());
  });

  it('stores a weight as given, and 1 when none is given', async () => {
    const weighed = await insert({ weight: 250 });
    const plain = await insert();
    const rows: { id: string; weight: number }[] = await dataSource.query(`SELECT id, weight FROM jobs WHERE id = ANY($1::uuid[])`, [[weighed, plain]]);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.weight]))).toEqual({ [weighed]: 250, [plain]: 1 });
  });

  it('leaves jobs not yet due, manual jobs, jobs of other types and finished jobs', async () => {
    await insert({ scheduledAt: minutes(1) });
    await insert({ kind: 'manual' });
    await insert({ type: `${type}_other` });
    const done = await insert();
    await endJobs(dataSource, 'id = $1', [done], 'complete');
    expect(await jobs.lease('w1', [type], NOW, 30_000, 10)).toEqual([]);
    expect(await jobs.lease('w1', [type], minutes(2), 30_000, 10)).toHaveLength(1);
  });

  it('finds a due job behind thousands of waiting jobs of types no worker runs, and of future jobs of its own type', async () => {
    const waiting = `${type}_waiting`;
    await dataSource.query(
      `WITH inserted AS (
         INSERT INTO jobs (id, connection_id, kind, type, status, params, created_at, scheduled_at)
         SELECT gen_random_uuid(), $1, 'automated', CASE WHEN g % 2 = 0 THEN $2 ELSE $3 END, 'pending', '{}', $4::timestamptz,
                CASE WHEN g % 2 = 0 THEN $4::timestamptz ELSE $5::timestamptz END
         FROM generate_series(1, 4000) g
         RETURNING id, type, connection_id, scheduled_at, seq, weight)
       INSERT INTO job_queue (job_id, type, connection_id, scheduled_at, seq, weight) SELECT id, type, connection_id, scheduled_at, seq, weight FROM inserted`,
      [connectionId, waiting, type, minutes(-120), minutes(60 * 24 * 30)],
    );
    const due = await insert({ scheduledAt: minutes(-1) });
    expect((await jobs.lease('w1', [type], NOW, 30_000, 4)).map((j) => j.id)).toEqual([due]);
  });

  it('takes over a job whose lease ran out, never one whose lease is live', async () => {
    const expired = await insert();
    const live = await insert();
    await holdJob(dataSource, expired, 'dead', `now() - interval '1 second'`, 1);
    await holdJob(dataSource, live, 'alive', `now() + interval '1 minute'`, 1);
    const leased = await jobs.lease('w2', [type], NOW, 30_000, 10);
    expect(leased.map((j) => [j.id, j.attempts])).toEqual([[expired, 2]]);
    const [row] = await dataSource.query(`SELECT leased_by FROM job_queue WHERE job_id = $1`, [expired]);
    expect(row.leased_by).toBe('w2');
  });

  it('workers leasing at once never get the same job, and together get every due one', async () => {
    const ids = [];
    for (let i = 0; i < 40; i++) ids.push(await insert({ scheduledAt: minutes(-40 + i) }));
    const rounds = await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        const got: string[] = [];
        for (let round = 0; round < 10; round++) got.push(...(await jobs.lease(`w${w}`, [type], NOW, 30_000, 2)).map((j) => j.id));
        return got;
      }),
    );
    const all = rounds.flat();
    expect(new Set(all).size).toBe(all.length);
    expect([...all].sort()).toEqual([...ids].sort());
  });
});
