import { randomUUID } from 'node:crypto';
import { Logger, LoggerService } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Job } from '../../../src/domain/jobs/job';
import { SystemClock } from '../../../src/domain/shared/clock';
import { JobHandler, JobHandlerRegistry, JobOutcome, JobRunContext } from '../../../src/modules/jobs/job-handler';
import { JobSignal } from '../../../src/modules/jobs/job-signal';
import { JobWorker } from '../../../src/modules/jobs/job-worker';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { describeWithPostgres } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { holdJob, JOB_WITH_LEASE } from '../../utils/job-queue';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createConnection, newWorker, workerSettings } from '../sync/sync-test-kit';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { DomainEventBus } from '../../../src/domain/events/domain-event-bus';

/**
 * A worker whose process hangs in a job: its renewals never reach the database, so its lease
 * runs out there and the next worker takes the job over, counting one more run.
 */
class HungJobs extends JobsRepository {
  override async renewLease(): Promise<boolean> {
    return true;
  }
}

/** A job handler whose runs never finish; `abandon` is set per test. */
class NeverFinishes implements JobHandler {
  readonly runs: number[] = [];
  readonly abandoned: { jobId: string; reason: string }[] = [];
  abandon?: (job: Job, reason: string) => Promise<JobOutcome>;

  constructor(readonly type: string) {}

  run(_job: Job, { attempt, signal }: JobRunContext): Promise<JobOutcome> {
    this.runs.push(attempt);
    return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  }

  withAbandon(abandon: (job: Job, reason: string) => Promise<JobOutcome>): this {
    this.abandon = async (job, reason) => {
      this.abandoned.push({ jobId: job.id, reason });
      return abandon(job, reason);
    };
    return this;
  }
}

/** Keeps the error lines the worker logs, so a test can read them. */
class CapturingLogger implements LoggerService {
  readonly errors: string[] = [];
  log(): void {}
  warn(): void {}
  debug(): void {}
  verbose(): void {}
  error(message: unknown): void {
    this.errors.push(String(message));
  }
}

const MAX_ATTEMPTS = 2;
const GAVE_UP = { error: `Gave up after ${MAX_ATTEMPTS} runs that never finished`, attempts: MAX_ATTEMPTS };

/**
 * The worker's give-up path: a job whose runs keep dying ends with its handler's `abandon`
 * outcome, committed with the job's final status in one transaction, or in `error` as before
 * when the handler has none or it fails.
 */
describeWithPostgres('job worker giving up on a job (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let jobs: JobsRepository;
  let connectionId: string;
  const clock = new SystemClock();
  const logger = new CapturingLogger();
  const workers: JobWorker[] = [];
  let type: string;

  const registryWith = (handler: JobHandler) => {
    const registry = new JobHandlerRegistry();
    registry.register(handler);
    return registry;
  };
  const retry = { maxAttempts: MAX_ATTEMPTS, baseDelayMs: 10, maxDelayMs: 10 };

  const startHealthy = (handler: JobHandler) => {
    const worker = newWorker(dataSource, registryWith(handler), clock, { retry, concurrency: 1, shutdownGraceMs: 50 });
    workers.push(worker);
    worker.start();
    return worker;
  };
  /** One run that dies: the worker leases the job once (concurrency 1) and hangs in it. */
  const startHung = (handler: JobHandler) => {
    const worker = new JobWorker(
      new UnitOfWork(dataSource),
      new HungJobs(dataSource),
      registryWith(handler),
      new JobSignal(),
      clock,
      workerSettings({ retry, concurrency: 1, leaseMs: 300, shutdownGraceMs: 50 }),
      new DomainEventBus(),
    );
    workers.push(worker);
    worker.start();
    return worker;
  };

  const enqueue = () => jobs.insert({ id: randomUUID(), connectionId, kind: 'automated', type, createdAt: clock.now() });
  const state = async (id: string) =>
    (await dataSource.query(`SELECT j.status, j.result, j.attempts, q.leased_by, j.xmin::text AS xmin FROM ${JOB_WITH_LEASE} WHERE j.id = $1`, [id]))[0];
  const marks = async (jobId: string) =>
    dataSource.query(`SELECT inside, outside, xmin::text AS xmin FROM abandon_marks WHERE job_id = $1`, [jobId]);

  /** A job whose earlier runs all died: its last worker's lease has run out, with no attempts left. */
  const enqueueDead = async () => {
    const job = await enqueue();
    await holdJob(dataSource, job.id, 'crashed-worker', `now() - interval '1 second'`, MAX_ATTEMPTS);
    return job;
  };

  /** An abandon outcome whose commit records what its transaction sees of the job. */
  const recordingOutcome = (job: Job, extra: Partial<JobOutcome> = {}): JobOutcome => ({
    status: 'complete',
    result: { abandoned: true },
    commit: async (manager) => {
      const [inside] = await manager.query(`SELECT status FROM jobs WHERE id = $1`, [job.id]);
      // Another connection still sees the committed state: this transaction has not ended yet.
      const [outside] = await dataSource.query(`SELECT status FROM jobs WHERE id = $1`, [job.id]);
      await manager.query(`INSERT INTO abandon_marks (job_id, inside, outside) VALUES ($1, $2, $3)`, [job.id, inside.status, outside.status]);
    },
    ...extra,
  });

  beforeAll(async () => {
    Logger.overrideLogger(logger);
    ({ dataSource, database } = await openTestDataSource(8));
    jobs = new JobsRepository(dataSource);
    connectionId = (await createConnection(dataSource)).id;
    await dataSource.query(`CREATE TABLE abandon_marks (job_id uuid PRIMARY KEY, inside text NOT NULL, outside text NOT NULL)`);
  });

  beforeEach(() => {
    // Each test its own job type, so no worker runs another test's jobs.
    type = `abandon_${randomUUID().slice(0, 8)}`;
    logger.errors.length = 0;
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** Runs the job on hung workers until it has no attempts left. */
  async function killEveryRun(handler: NeverFinishes, job: Job) {
    for (let run = 1; run <= MAX_ATTEMPTS; run++) {
      startHung(handler);
      await expectEventually(async () => expect((await state(job.id)).attempts).toBe(run));
      // The lease commits the attempt; the handler records its run a moment later, on the worker's next turn.
      await expectEventually(async () => expect(handler.runs).toEqual(Array.from({ length: run }, (_, i) => i + 1)));
    }
    expect((await state(job.id)).status).toBe('in_progress');
  }

  it("ends a job whose runs keep dying with its handler's abandon outcome, committed in the transaction that ends it", async () => {
    let afterCommit = 0;
    let discarded = 0;
    const handler = new NeverFinishes(type).withAbandon(async (job) =>
      recordingOutcome(job, {
        afterCommit: async () => void afterCommit++,
        discard: async () => void discarded++,
      }),
    );
    const job = await enqueue();
    await killEveryRun(handler, job);
    expect(handler.abandoned).toEqual([]);

    startHealthy(handler);
    await expectEventually(async () => expect((await state(job.id)).status).toBe('complete'));
    const final = await state(job.id);
    expect(final).toMatchObject({ result: { abandoned: true }, attempts: MAX_ATTEMPTS + 1, leased_by: null });
    expect(handler.abandoned).toEqual([{ jobId: job.id, reason: GAVE_UP.error }]);
    // The worker that gave up never ran the job again.
    expect(handler.runs).toEqual([1, 2]);

    const [mark] = await marks(job.id);
    // Inside the transaction the job was already ended; outside it was still running.
    expect(mark).toMatchObject({ inside: 'complete', outside: 'in_progress' });
    // One transaction wrote both rows.
    expect(mark.xmin).toBe(final.xmin);
    await expectEventually(() => expect(afterCommit).toBe(1));
    expect(discarded).toBe(0);
  });

  it('without abandon, still ends the job in error as before', async () => {
    const handler = new NeverFinishes(type);
    const job = await enqueue();
    await killEveryRun(handler, job);

    startHealthy(handler);
    await expectEventually(async () => expect((await state(job.id)).status).toBe('error'));
    expect(await state(job.id)).toMatchObject({ result: GAVE_UP, attempts: MAX_ATTEMPTS + 1, leased_by: null });
    expect(handler.runs).toEqual([1, 2]);
    expect(await marks(job.id)).toEqual([]);
  });

  it('does not call abandon while the job has attempts left', async () => {
    const handler = new NeverFinishes(type).withAbandon(async (job) => recordingOutcome(job));
    const job = await enqueue();
    await holdJob(dataSource, job.id, 'crashed-worker', `now() - interval '1 second'`, MAX_ATTEMPTS - 1);
    startHealthy(handler);
    await expectEventually(() => expect(handler.runs).toEqual([MAX_ATTEMPTS]));
    expect(handler.abandoned).toEqual([]);
    expect(await state(job.id)).toMatchObject({ status: 'in_progress', attempts: MAX_ATTEMPTS });
  });

  it('an abandon outcome may end the job in error, with its own result', async () => {
    const handler = new NeverFinishes(type).withAbandon(async (job, reason) => recordingOutcome(job, { status: 'error', result: { error: reason, cleaned_up: true } }));
    const job = await enqueueDead();
    startHealthy(handler);
    await expectEventually(async () => expect((await state(job.id)).status).toBe('error'));
    const final = await state(job.id);
    expect(final.result).toEqual({ error: GAVE_UP.error, cleaned_up: true });
    const [mark] = await marks(job.id);
    expect(mark).toMatchObject({ inside: 'error', outside: 'in_progress', xmin: final.xmin });
  });

  it('when abandon throws, ends the job in error as before and logs why', async () => {
    const handler = new NeverFinishes(type).withAbandon(async () => {
      throw new Error('the group is gone');
    });
    const job = await enqueueDead();
    startHealthy(handler);
    await expectEventually(async () => expect((await state(job.id)).status).toBe('error'));
    expect(await state(job.id)).toMatchObject({ result: GAVE_UP, leased_by: null });
    expect(handler.abandoned).toHaveLength(1);
    expect(logger.errors.filter((line) => line.includes(job.id))).toEqual([expect.stringContaining('the group is gone')]);
  });

  it("when abandon's commit fails, rolls it back, undoes its side writes and ends the job in error as before", async () => {
    let discarded = 0;
    let afterCommit = 0;
    const handler = new NeverFinishes(type).withAbandon(async (job) => ({
      ...recordingOutcome(job),
      commit: async (manager) => {
        await recordingOutcome(job).commit!(manager);
        throw new Error('constraint broken');
      },
      discard: async () => void discarded++,
      afterCommit: async () => void afterCommit++,
    }));
    const job = await enqueueDead();
    startHealthy(handler);
    await expectEventually(async () => expect((await state(job.id)).status).toBe('error'));
    expect(await state(job.id)).toMatchObject({ result: GAVE_UP, leased_by: null });
    expect(await marks(job.id)).toEqual([]);
    expect(discarded).toBe(1);
    expect(afterCommit).toBe(0);
    expect(logger.errors.filter((line) => line.includes(job.id))).toEqual([expect.stringContaining('constraint broken')]);
  });

  it('drops the abandon outcome when another worker took the job over meanwhile', async () => {
    let discarded = 0;
    const handler = new NeverFinishes(type).withAbandon(async (job) => {
      await dataSource.query(`UPDATE job_queue SET leased_by = 'other-worker' WHERE job_id = $1`, [job.id]);
      return recordingOutcome(job, { discard: async () => void discarded++ });
    });
    const job = await enqueueDead();
    startHealthy(handler);
    await expectEventually(() => expect(discarded).toBe(1));
    expect(await state(job.id)).toMatchObject({ status: 'in_progress', leased_by: 'other-worker' });
    expect(await marks(job.id)).toEqual([]);
  });
});
