import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Job } from '../../../src/domain/jobs/job';
import { SystemClock } from '../../../src/domain/shared/clock';
import { DomainError } from '../../../src/domain/shared/domain-error';
import { JobHandler, JobHandlerRegistry, JobOutcome, JobRunContext } from '../../../src/modules/jobs/job-handler';
import { JobSignal } from '../../../src/modules/jobs/job-signal';
import { JobWorker } from '../../../src/modules/jobs/job-worker';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { describeWithPostgres } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { holdJob, JOB_WITH_LEASE } from '../../utils/job-queue';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createConnection, newWorker } from './sync-test-kit';

/** A handler whose behaviour each test sets; it records every run. */
class ScriptedHandler implements JobHandler {
  readonly runs: { jobId: string; attempt: number }[] = [];
  behaviour: (job: Job, context: JobRunContext) => Promise<JobOutcome> = async () => ({ status: 'complete' });

  constructor(readonly type: string) {}

  run(job: Job, context: JobRunContext): Promise<JobOutcome> {
    this.runs.push({ jobId: job.id, attempt: context.attempt });
    return this.behaviour(job, context);
  }
}

interface JobState {
  id: string;
  status: string;
  attempts: number;
  leased_by: string | null;
  leased_until: Date | null;
  result: Record<string, unknown> | null;
  scheduled_at: Date;
}

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

describeWithPostgres('job worker (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let jobs: JobsRepository;
  let connectionId: string;
  const clock = new SystemClock();
  const workers: JobWorker[] = [];
  let type: string;

  const start = (registry: JobHandlerRegistry, settings: Parameters<typeof newWorker>[3] = {}, signal?: JobSignal) => {
    const worker = newWorker(dataSource, registry, clock, settings, signal);
    workers.push(worker);
    worker.start();
    return worker;
  };

  const registryWith = (handler: JobHandler) => {
    const registry = new JobHandlerRegistry();
    registry.register(handler);
    return registry;
  };

  const enqueue = (jobType = type) =>
    jobs.insert({ id: randomUUID(), connectionId, kind: 'automated', type: jobType, createdAt: clock.now() });

  const state = async (id: string): Promise<JobState> => {
    const [row] = await dataSource.query(
      `SELECT j.id, j.status, j.attempts, q.leased_by, q.leased_until, j.result, j.scheduled_at FROM ${JOB_WITH_LEASE} WHERE j.id = $1`,
      [id],
    );
    return row;
  };

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ dataSource, database } = await openTestDataSource(12));
    jobs = new JobsRepository(dataSource);
    connectionId = (await createConnection(dataSource)).id;
  });

  beforeEach(() => {
    // Each test its own job type, so no worker runs another test's jobs.
    type = `test_${randomUUID().slice(0, 8)}`;
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('runs each job exactly once when two workers share the queue', async () => {
    const a = new ScriptedHandler(type);
    const b = new ScriptedHandler(type);
    const work = async (): Promise<JobOutcome> => {
      await new Promise((r) => setTimeout(r, 5));
      return { status: 'complete' };
    };
    a.behaviour = work;
    b.behaviour = work;
    const enqueued = await Promise.all(Array.from({ length: 30 }, () => enqueue()));
    start(registryWith(a), { concurrency: 3 });
    start(registryWith(b), { concurrency: 3 });

    await expectEventually(async () => {
      const states = await Promise.all(enqueued.map((j) => state(j.id)));
      expect(states.filter((s) => s.status !== 'complete')).toEqual([]);
    });
    const ran = [...a.runs, ...b.runs].map((r) => r.jobId);
    expect(ran.sort()).toEqual(enqueued.map((j) => j.id).sort());
    expect(a.runs.length).toBeGreaterThan(0);
    expect(b.runs.length).toBeGreaterThan(0);
    // Leased once each: no worker ever took a job another held.
    const states = await Promise.all(enqueued.map((j) => state(j.id)));
    expect(states.map((s) => s.attempts)).toEqual(enqueued.map(() => 1));
    expect(states.every((s) => s.leased_by === null)).toBe(true);
  });

  it('runs batches of a weighed type within their weight together, a heavier job alone, every job once', async () => {
    const inFlight: number[] = [];
    const batches: number[][] = [];
    let weightNow = 0;
    const handler: JobHandler = {
      type,
      run: () => Promise.reject(new Error('batches only')),
      batch: {
        size: 50,
        atOnce: 2,
        maxWeight: 10,
        run: async (leased) => {
          const weights = leased.map((j) => j.weight ?? 1);
          batches.push(weights);
          weightNow += weights.reduce((a, b) => a + b, 0);
          inFlight.push(weightNow);
          await new Promise((r) => setTimeout(r, 30));
          weightNow -= weights.reduce((a, b) => a + b, 0);
          return { ended: new Map(leased.map((j) => [j.id, { status: 'complete' as const }])), deferred: new Map(), failed: new Map() };
        },
      },
    };
    const weights = [6, 6, 3, 12, 1, 2, 2, 4];
    const enqueued: Job[] = [];
    for (const weight of weights) {
      enqueued.push(await jobs.insert({ id: randomUUID(), connectionId, kind: 'internal', type, createdAt: clock.now(), weight }));
    }
    start(registryWith(handler), { concurrency: 4 });

    await expectEventually(async () => {
      const states = await Promise.all(enqueued.map((j) => state(j.id)));
      expect(states.filter((st) => st.status !== 'complete')).toEqual([]);
    });
    expect(batches.flat().sort((a, b) => a - b)).toEqual([...weights].sort((a, b) => a - b));
    // Never more than the bound in flight, except the one job heavier than it, running alone.
    expect(Math.max(...inFlight)).toBe(12);
    expect(inFlight.filter((w) => w > 10)).toEqual([12]);
    expect(batches.find((b) => b.includes(12))).toEqual([12]);
  });

  it("takes over a crashed worker's expired lease, and leaves a live lease alone", async () => {
    const handler = new ScriptedHandler(type);
    const crashed = await enqueue();
    const held = await enqueue();
    await holdJob(dataSource, crashed.id, 'crashed-worker', `now() - interval '1 second'`, 1);
    await holdJob(dataSource, held.id, 'live-worker', `now() + interval '1 hour'`, 1);
    start(registryWith(handler));

    await expectEventually(async () => expect((await state(crashed.id)).status).toBe('complete'));
    expect(await state(crashed.id)).toMatchObject({ attempts: 2, leased_by: null });
    expect(handler.runs).toEqual([{ jobId: crashed.id, attempt: 2 }]);
    expect(await state(held.id)).toMatchObject({ status: 'in_progress', leased_by: 'live-worker', attempts: 1 });
  });

  it('gives up on a job whose runs keep dying with their worker', async () => {
    const handler = new ScriptedHandler(type);
    const job = await enqueue();
    await holdJob(dataSource, job.id, 'crashed-worker', `now() - interval '1 second'`, 3);
    start(registryWith(handler), { retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 10 } });

    await expectEventually(async () => expect((await state(job.id)).status).toBe('error'));
    expect((await state(job.id)).result).toEqual({ error: 'Gave up after 3 runs that never finished', attempts: 3 });
    expect(handler.runs).toEqual([]);
  });

  it('retries a transient provider failure with backoff, then succeeds', async () => {
    const handler = new ScriptedHandler(type);
    handler.behaviour = async (_job, { attempt }) => {
      if (attempt <= 2) throw new DomainError('provider_timeout', `provider timed out on run ${attempt}`);
      return { status: 'complete', result: { synced: true } };
    };
    const job = await enqueue();
    start(registryWith(handler), { retry: { maxAttempts: 5, baseDelayMs: 30, maxDelayMs: 1_000 } });

    await expectEventually(async () => expect((await state(job.id)).status).toBe('complete'));
    const final = await state(job.id);
    expect(final).toMatchObject({ attempts: 3, result: { synced: true } });
    expect(handler.runs.map((r) => r.attempt)).toEqual([1, 2, 3]);
    // Backoff moved the schedule: 30 ms after run 1, then 60 ms after run 2.
    expect(new Date(final.scheduled_at).getTime() - job.scheduledAt.getTime()).toBeGreaterThanOrEqual(90);
  });

  it('ends in error with the reason once the transient failures use up the attempts', async () => {
    const handler = new ScriptedHandler(type);
    handler.behaviour = async () => {
      throw new DomainError('provider_error', 'The provider answered 503');
    };
    const job = await enqueue();
    start(registryWith(handler), { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } });

    await expectEventually(async () => expect((await state(job.id)).status).toBe('error'));
    expect(await state(job.id)).toMatchObject({ attempts: 3, result: { error: 'The provider answered 503', attempts: 3 } });
    expect(handler.runs).toHaveLength(3);
  });

  it('does not retry other failures', async () => {
    const handler = new ScriptedHandler(type);
    handler.behaviour = async () => {
      throw new DomainError('unprocessable_request_error', 'HSA is not supported by this provider');
    };
    const job = await enqueue();
    start(registryWith(handler));

    await expectEventually(async () => expect((await state(job.id)).status).toBe('error'));
    expect(await state(job.id)).toMatchObject({ attempts: 1, result: { error: 'HSA is not supported by this provider' } });
    expect(handler.runs).toHaveLength(1);
  });

  it('renews the lease of a long job, so another worker never takes it', async () => {
    const release = gate();
    const handler = new ScriptedHandler(type);
    handler.behaviour = async () => {
      await release.opened;
      return { status: 'complete' };
    };
    const job = await enqueue();
    start(registryWith(handler), { leaseMs: 1_000 });
    await expectEventually(async () => expect((await state(job.id)).status).toBe('in_progress'));
    expect(handler.runs).toHaveLength(1);
    // The other worker starts once the job is leased, so only renewal can keep it away.
    const other = new ScriptedHandler(type);
    start(registryWith(other), { leaseMs: 1_000 });
    const first = (await state(job.id)).leased_until!.getTime();
    // Renewed twice: the lease now ends well past its first end, while the other worker polls.
    let renewed = first;
    await expectEventually(async () => {
      const until = (await state(job.id)).leased_until!.getTime();
      if (until > renewed) renewed = until;
      expect(renewed).toBeGreaterThan(first + 1_000);
    });
    release.open();
    await expectEventually(async () => expect((await state(job.id)).status).toBe('complete'));
    expect([...handler.runs, ...other.runs]).toHaveLength(1);
    expect((await state(job.id)).attempts).toBe(1);
  });

  it('drops the outcome of a run whose lease was taken over, and undoes its writes', async () => {
    const running = gate();
    const release = gate();
    let discarded = false;
    let committed = false;
    const handler = new ScriptedHandler(type);
    handler.behaviour = async () => {
      running.open();
      await release.opened;
      return {
        status: 'complete',
        commit: async () => {
          committed = true;
        },
        discard: async () => {
          discarded = true;
        },
      };
    };
    const job = await enqueue();
    start(registryWith(handler));
    await running.opened;
    // Another worker took the job over (as after an expired lease).
    await dataSource.query(`UPDATE job_queue SET leased_by = 'other-worker' WHERE job_id = $1`, [job.id]);
    release.open();

    await expectEventually(() => expect(discarded).toBe(true));
    expect(committed).toBe(false);
    expect(await state(job.id)).toMatchObject({ status: 'in_progress', leased_by: 'other-worker' });
  });

  it('on shutdown gives an unfinished job back to the queue', async () => {
    const handler = new ScriptedHandler(type);
    handler.behaviour = (_job, { signal }) =>
      new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    const job = await enqueue();
    const worker = start(registryWith(handler), { shutdownGraceMs: 50 });
    await expectEventually(() => expect(worker.activeJobIds).toEqual([job.id]));

    await worker.stop();
    expect(await state(job.id)).toMatchObject({ status: 'pending', attempts: 0, leased_by: null });

    // The next worker runs it.
    handler.behaviour = async () => ({ status: 'complete' });
    start(registryWith(handler));
    await expectEventually(async () => expect((await state(job.id)).status).toBe('complete'));
  });

  it('on shutdown lets a job that finishes within the grace period complete', async () => {
    const release = gate();
    const handler = new ScriptedHandler(type);
    handler.behaviour = async () => {
      await release.opened;
      return { status: 'complete' };
    };
    const job = await enqueue();
    const worker = start(registryWith(handler));
    await expectEventually(() => expect(worker.activeJobIds).toEqual([job.id]));

    const stopped = worker.stop();
    release.open();
    await stopped;
    expect(await state(job.id)).toMatchObject({ status: 'complete', attempts: 1 });
  });

  it('wakes at once when a job is enqueued in its process, without waiting for the poll', async () => {
    const handler = new ScriptedHandler(type);
    const signal = new JobSignal();
    // A poll interval far longer than expectEventually waits: only the nudge can get the job run.
    start(registryWith(handler), { pollMs: 60_000 }, signal);
    await new Promise((r) => setImmediate(r));
    const job = await enqueue();
    signal.nudge();
    await expectEventually(async () => expect((await state(job.id)).status).toBe('complete'), { timeoutMs: 10_000 });
  });

  it('leases only the job types it has handlers for', async () => {
    const handler = new ScriptedHandler(type);
    const foreign = await enqueue(`${type}_other`);
    const own = await enqueue();
    start(registryWith(handler));
    await expectEventually(async () => expect((await state(own.id)).status).toBe('complete'));
    expect(await state(foreign.id)).toMatchObject({ status: 'pending', attempts: 0 });
  });
});
