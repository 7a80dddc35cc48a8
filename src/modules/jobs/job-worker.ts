import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Job, nextAttemptAt, RetryPolicy } from '../../domain/jobs/job';
import { DomainError } from '../../domain/shared/domain-error';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { JobDeferral, JobHandler, JobHandlerRegistry, JobOutcome } from './job-handler';
import { JobSignal } from './job-signal';
import { JobsRepository } from './jobs.repository';

export interface JobWorkerSettings {
  /** How often an idle worker looks for due jobs. */
  pollMs: number;
  /** How long a lease lasts; it is renewed every third of it while the job runs. */
  leaseMs: number;
  /** Jobs one worker runs at once. */
  concurrency: number;
  retry: RetryPolicy;
  /** On shutdown, how long running jobs may take to finish before they are aborted and given back. */
  shutdownGraceMs: number;
}

export const JOB_WORKER_SETTINGS = Symbol('JobWorkerSettings');

/** Why a running job was told to stop. */
class JobInterruption extends Error {
  constructor(readonly reason: 'shutdown' | 'lease_lost') {
    super(reason === 'shutdown' ? 'the worker is shutting down' : 'the lease was lost to another worker');
  }
}

const TRANSIENT_FAMILIES = new Set(['provider_error', 'provider_timeout']);

/** Provider failures that may pass: the job runs again later. */
export function isTransientFailure(error: unknown): boolean {
  return error instanceof DomainError && TRANSIENT_FAMILIES.has(error.family);
}

interface RunningJob {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Leases due jobs from PostgreSQL and runs the handler registered for each job's type. Several
 * workers (in one process or many) share the queue: a lease is taken with SKIP LOCKED, renewed
 * while the job runs, and a crashed worker's expired lease is taken over. The final status is
 * written only while the lease is still this worker's, so a job is never finished twice.
 */
@Injectable()
export class JobWorker {
  private readonly logger = new Logger(JobWorker.name);
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private failures = 0;
  private readonly running = new Map<string, RunningJob>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly jobs: JobsRepository,
    private readonly registry: JobHandlerRegistry,
    private readonly signal: JobSignal,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(JOB_WORKER_SETTINGS) private readonly settings: JobWorkerSettings,
  ) {}

  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = this.run();
  }

  /**
   * Stops leasing, lets running jobs finish within the grace period, then aborts the rest;
   * an aborted job is given back (pending again) for the next worker.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.signal.nudge();
    await this.loop;
    this.loop = undefined;
    if (await this.allDoneWithin(this.settings.shutdownGraceMs)) return;
    for (const r of this.running.values()) r.controller.abort(new JobInterruption('shutdown'));
    if (await this.allDoneWithin(this.settings.shutdownGraceMs)) return;
    // A handler that ignores its abort signal: give its job back anyway; whatever it ends with
    // later is dropped, since the lease is no longer this worker's.
    const stuck = [...this.running.keys()];
    this.logger.warn(`jobs ${stuck.join(', ')} did not stop when aborted; giving them back`);
    await Promise.all(stuck.map((id) => this.jobs.release(id, this.owner)));
  }

  private async allDoneWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const done = Promise.all([...this.running.values()].map((r) => r.done)).then(() => true);
    const finished = await Promise.race([done, timeout]);
    clearTimeout(timer);
    return finished;
  }

  /** Jobs this worker is running now. */
  get activeJobIds(): string[] {
    return [...this.running.keys()];
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let leased = 0;
      try {
        leased = await this.leaseRound();
        this.failures = 0;
      } catch (error) {
        this.failures++;
        this.logger.warn(`job lease round failed (attempt ${this.failures}): ${(error as Error).message}`);
      }
      if (this.stopping) break;
      if (this.failures > 0) {
        await this.signal.wait(Math.min(30_000, this.settings.pollMs * 2 ** Math.min(this.failures, 8)));
      } else if (leased === 0 || this.running.size >= this.settings.concurrency) {
        // A finishing job or a new one enqueued in this process nudges the signal.
        await this.signal.wait(this.settings.pollMs);
      }
    }
  }

  /** Leases as many due jobs as there are free slots and starts them. */
  async leaseRound(): Promise<number> {
    const free = this.settings.concurrency - this.running.size;
    if (free <= 0) return 0;
    const jobs = await this.jobs.lease(this.owner, this.registry.types(), this.clock.now(), this.settings.leaseMs, free);
    for (const job of jobs) this.launch(job);
    return jobs.length;
  }

  private launch(job: Job): void {
    const controller = new AbortController();
    let deferred = false;
    const done = this.execute(job, controller)
      .then((ended) => void (deferred = ended === 'deferred'))
      .catch((error) => this.logger.error(`job ${job.id} (${job.type}): ${(error as Error).stack ?? error}`))
      .finally(() => {
        this.running.delete(job.id);
        // A deferred job waits for the next poll: a nudge would lease it straight back.
        if (!deferred) this.signal.nudge();
      });
    this.running.set(job.id, { controller, done });
  }

  private async execute(job: Job, controller: AbortController): Promise<'ended' | 'deferred'> {
    // Only types with a handler are leased (lease() filters on registry.types()).
    const handler = this.registry.handlerFor(job.type)!;
    const renewal = setInterval(() => {
      this.jobs
        .renewLease(job.id, this.owner, this.settings.leaseMs)
        .then((held) => {
          if (!held && !controller.signal.aborted) controller.abort(new JobInterruption('lease_lost'));
        })
        // A database blip: the next renewal tries again; the lease is long enough for several.
        .catch((error) => this.logger.warn(`renewing the lease of job ${job.id} failed: ${(error as Error).message}`));
    }, Math.max(10, Math.floor(this.settings.leaseMs / 3)));
    try {
      if (job.attempts > this.settings.retry.maxAttempts) {
        await this.giveUp(job, handler, controller);
        return 'ended';
      }
      let outcome: JobOutcome;
      try {
        outcome = await handler.run(job, { signal: controller.signal, attempt: job.attempts });
      } catch (error) {
        if (controller.signal.aborted) await this.interrupted(job, controller.signal.reason);
        else if (error instanceof JobDeferral) {
          await this.jobs.defer(job.id, this.owner, this.clock.now());
          return 'deferred';
        } else await this.failed(job, error);
        return 'ended';
      }
      await this.conclude(job, outcome, controller, (error) => this.failed(job, error));
      return 'ended';
    } finally {
      clearInterval(renewal);
    }
  }

  /**
   * Leased more times than allowed: earlier runs died with their worker (a job that crashes it).
   * The handler's `abandon` outcome, when it has one, ends the job like any run's outcome, so
   * what the job stands for is not left waiting on it; otherwise, or if that fails, it ends in error.
   */
  private async giveUp(job: Job, handler: JobHandler, controller: AbortController): Promise<void> {
    const runs = job.attempts - 1;
    const reason = `Gave up after ${runs} runs that never finished`;
    const endInError = async () => {
      await this.jobs.finish(job.id, this.owner, { status: 'error', result: { error: reason, attempts: runs }, completedAt: this.clock.now() });
    };
    if (!handler.abandon) return endInError();
    let outcome: JobOutcome;
    try {
      outcome = await handler.abandon(job, reason);
    } catch (error) {
      this.logger.error(`job ${job.id} (${job.type}): abandoning it failed, ending it in error: ${(error as Error)?.stack ?? error}`);
      return endInError();
    }
    await this.conclude(job, outcome, controller, (error) => {
      this.logger.error(`job ${job.id} (${job.type}): committing its abandon outcome failed, ending it in error: ${(error as Error)?.stack ?? error}`);
      return endInError();
    });
  }

  /** Ends the job with a handler's outcome, unless it was told to stop meanwhile. */
  private async conclude(job: Job, outcome: JobOutcome, controller: AbortController, onCommitFailure: (error: unknown) => Promise<void>) {
    if (controller.signal.aborted) {
      await outcome.discard?.();
      return this.interrupted(job, controller.signal.reason);
    }
    await this.complete(job, outcome, onCommitFailure);
  }

  private async complete(job: Job, outcome: JobOutcome, onCommitFailure: (error: unknown) => Promise<void>): Promise<void> {
    let committed: boolean;
    try {
      committed = await this.dataSource.transaction(async (manager) => {
        const held = await this.jobs.finish(
          job.id,
          this.owner,
          { status: outcome.status, result: outcome.result ?? null, completedAt: this.clock.now() },
          manager,
        );
        if (!held) return false;
        await outcome.commit?.(manager);
        return true;
      });
    } catch (error) {
      await outcome.discard?.().catch((e) => this.logger.warn(`discarding job ${job.id}'s writes failed: ${(e as Error).message}`));
      return onCommitFailure(error);
    }
    if (!committed) {
      this.logger.warn(`job ${job.id} finished after its lease was taken over; its outcome is dropped`);
      await outcome.discard?.();
      return;
    }
    await outcome.afterCommit?.().catch((e) => this.logger.warn(`clean-up after job ${job.id} failed: ${(e as Error).message}`));
  }

  /** Transient provider failures are retried with backoff until attempts run out; the rest end in error. */
  private async failed(job: Job, error: unknown): Promise<void> {
    const reason = error instanceof Error ? error.message : String(error);
    if (isTransientFailure(error)) {
      const next = nextAttemptAt(this.clock.now(), job.attempts, this.settings.retry);
      if (next) {
        this.logger.warn(`job ${job.id} (${job.type}) failed transiently on run ${job.attempts}, retrying at ${next.toISOString()}: ${reason}`);
        await this.jobs.reschedule(job.id, this.owner, next, { error: reason, attempts: job.attempts });
        return;
      }
    } else if (!(error instanceof DomainError)) {
      this.logger.error(`job ${job.id} (${job.type}) failed: ${(error as Error)?.stack ?? reason}`);
    }
    await this.jobs.finish(job.id, this.owner, {
      status: 'error',
      result: { error: reason, attempts: job.attempts },
      completedAt: this.clock.now(),
    });
  }

  private async interrupted(job: Job, reason: unknown): Promise<void> {
    // A lost lease belongs to another worker now: leave the row alone.
    if (reason instanceof JobInterruption && reason.reason === 'lease_lost') return;
    await this.jobs.release(job.id, this.owner);
  }
}
