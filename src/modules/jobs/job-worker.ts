import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { DomainEventBus } from '../../domain/events/domain-event-bus';
import { FinalJobStatus, Job, nextAttemptAt, RetryPolicy } from '../../domain/jobs/job';
import { JobEnded } from '../../domain/jobs/job-events';
import { isTransientDatabaseError } from '../../infrastructure/database/transient-errors';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { DomainError } from '../../domain/shared/domain-error';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { PollingLoop, RoundOutcome } from '../../infrastructure/scheduling/polling-loop';
import { ServiceInstance } from '../../infrastructure/scheduling/service-instance';
import { BatchOutcome, JobDeferral, JobHandler, JobHandlerRegistry, JobOutcome, JobRunContext } from './job-handler';
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

/** How long an internal job is kept after it ends (for the ops dashboard's recent history). */
const INTERNAL_JOB_RETENTION_MS = 7 * 24 * 3_600_000;

/** Why a running job was told to stop. */
class JobInterruption extends Error {
  constructor(readonly reason: 'shutdown' | 'lease_lost') {
    super(reason === 'shutdown' ? 'the worker is shutting down' : 'the lease was lost to another worker');
  }
}

const TRANSIENT_FAMILIES = new Set(['provider_error', 'provider_timeout']);

/**
 * Failures that may pass: the provider's (an outage, a timeout), or the database's (a deadlock
 * with other work, a lost connection): the job runs again later.
 */
export function isTransientFailure(error: unknown): boolean {
  return (error instanceof DomainError && TRANSIENT_FAMILIES.has(error.family)) || isTransientDatabaseError(error);
}

/** What the worker runs: one job, or a batch of one type's jobs. */
interface RunningUnit {
  controller: AbortController;
  done: Promise<void>;
  jobIds: string[];
  /** The job type of a batch; undefined for a single job. */
  batchOf?: string;
  /** What its jobs weigh together (Job.weight). */
  weight: number;
}

/**
 * Leases due jobs from PostgreSQL and runs the handler registered for each job's type. Several
 * workers (in one process or many) share the queue: a lease is taken with SKIP LOCKED, renewed
 * while the job runs, and a crashed worker's lease is taken over once it has run out, or at once
 * when its instance is known gone (ServiceInstance). The final status is written only while the
 * lease is still this worker's, so a job is never finished twice.
 */
@Injectable()
export class JobWorker {
  private readonly logger = new Logger(JobWorker.name);
  /** The holder id its leases record: this instance's, so they are freed at once if it dies. */
  readonly owner: string;
  private readonly loop: PollingLoop;
  private readonly running = new Map<string, RunningUnit>();
  private lastPurge = 0;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly jobs: JobsRepository,
    private readonly registry: JobHandlerRegistry,
    private readonly signal: JobSignal,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(JOB_WORKER_SETTINGS) private readonly settings: JobWorkerSettings,
    private readonly events: DomainEventBus,
    @Optional() instance?: ServiceInstance,
  ) {
    this.owner = instance?.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    instance?.holdsLeases({
      what: 'job leases',
      release: (holders, manager) => jobs.expireLeasesOf(holders, manager),
      onFreed: () => signal.nudge(),
    });
    this.loop = new PollingLoop({
      name: 'job lease round',
      pollMs: settings.pollMs,
      signal,
      logger: this.logger,
      round: () => this.round(),
    });
  }

  start(): void {
    this.loop.start();
  }

  /**
   * Stops leasing, lets running jobs finish within the grace period, then aborts the rest;
   * an aborted job is given back (pending again) for the next worker.
   */
  async stop(): Promise<void> {
    await this.loop.stop();
    if (await this.allDoneWithin(this.settings.shutdownGraceMs)) return;
    for (const r of this.running.values()) r.controller.abort(new JobInterruption('shutdown'));
    if (await this.allDoneWithin(this.settings.shutdownGraceMs)) return;
    // A handler that ignores its abort signal: give its job back anyway; whatever it ends with
    // later is dropped, since the lease is no longer this worker's.
    const stuck = this.activeJobIds;
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
    return [...this.running.values()].flatMap((unit) => unit.jobIds);
  }

  private async round(): Promise<RoundOutcome> {
    await this.purgeIfDue();
    const leased = await this.leaseRound();
    // A finishing job or a new one enqueued in this process nudges the signal.
    return leased === 0 || this.running.size >= this.settings.concurrency ? 'wait' : 'more';
  }

  /**
   * Internal jobs (enrollment groups' work, Assisted applies, syncs without a job id) are nobody's
   * to poll: a week after they end they are deleted, so a stream of events does not grow the
   * queue table for ever. Every ten minutes, in chunks.
   */
  private async purgeIfDue(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurge < 10 * 60_000) return;
    this.lastPurge = now;
    await this.jobs.purgeFinishedInternal(new Date(this.clock.now().getTime() - INTERNAL_JOB_RETENTION_MS));
  }

  /**
   * Fills the free slots: a batch of each batch type's due jobs (one slot each), then single
   * jobs of the other types, one slot each. Answers how many jobs it leased.
   */
  async leaseRound(): Promise<number> {
    let free = this.settings.concurrency - this.running.size;
    let leased = 0;
    for (const handler of this.registry.batchHandlers()) {
      if (free <= 0) break;
      const batch = handler.batch!;
      const running = [...this.running.values()].filter((unit) => unit.batchOf === handler.type);
      if (running.length >= (batch.atOnce ?? 1)) continue;
      // The type's batches together weigh at most maxWeight, or one job when it alone weighs more.
      const held = running.reduce((sum, unit) => sum + unit.weight, 0);
      if (batch.maxWeight !== undefined && held >= batch.maxWeight) continue;
      const weight = batch.maxWeight === undefined ? undefined : { max: batch.maxWeight - held, takeFirst: running.length === 0 };
      const jobs = await this.jobs.lease(this.owner, [handler.type], this.clock.now(), this.settings.leaseMs, batch.size, weight);
      if (jobs.length === 0) continue;
      this.launchUnit(`batch:${randomUUID()}`, jobs, (controller) => this.executeBatch(handler, jobs, controller), handler.type);
      free--;
      leased += jobs.length;
    }
    const types = this.registry.singleTypes();
    if (free <= 0 || types.length === 0) return leased;
    const jobs = await this.jobs.lease(this.owner, types, this.clock.now(), this.settings.leaseMs, free);
    for (const job of jobs) this.launchUnit(job.id, [job], (controller) => this.execute(job, controller));
    return leased + jobs.length;
  }

  private launchUnit(unitId: string, jobs: readonly Job[], run: (controller: AbortController) => Promise<'ended' | 'deferred'>, batchOf?: string): void {
    const controller = new AbortController();
    let deferred = false;
    const done = run(controller)
      .then((ended) => void (deferred = ended === 'deferred'))
      .catch((error) => this.logger.error(`jobs ${jobs.map((j) => j.id).join(', ')} (${jobs[0].type}): ${(error as Error).stack ?? error}`))
      .finally(() => {
        this.running.delete(unitId);
        // Deferred jobs wait for the next poll: a nudge would lease them straight back.
        if (!deferred) this.signal.nudge();
      });
    this.running.set(unitId, { controller, done, jobIds: jobs.map((j) => j.id), batchOf, weight: jobs.reduce((sum, j) => sum + (j.weight ?? 1), 0) });
  }

  /**
   * A batch of one type's jobs: the handler runs them together; those that must wait go back,
   * failures are retried (or ended) one by one, and the ones that ended are finished in one
   * transaction with the handler's commit and JobEnded. A lease lost meanwhile keeps its job out
   * of the final statuses (its new holder finishes it); the commit's writes are idempotent.
   */
  private async executeBatch(handler: JobHandler, leased: readonly Job[], controller: AbortController): Promise<'ended' | 'deferred'> {
    const ids = leased.map((j) => j.id);
    const renewal = setInterval(() => {
      this.jobs
        .renewLeases(ids, this.owner, this.settings.leaseMs)
        .catch((error) => this.logger.warn(`renewing the leases of ${ids.length} ${handler.type} jobs failed: ${(error as Error).message}`));
    }, Math.max(10, Math.floor(this.settings.leaseMs / 3)));
    try {
      const policies = new Map<string, RetryPolicy>();
      const contexts = new Map<string, JobRunContext>();
      const runnable: Job[] = [];
      for (const job of leased) {
        const policy = await this.policyOf(handler, job);
        policies.set(job.id, policy);
        if (job.attempts > policy.maxAttempts) {
          await this.endWith(job, handler, controller, `Gave up after ${job.attempts - 1} runs that never finished`, job.attempts - 1);
          continue;
        }
        const lastAttempt = nextAttemptAt(this.clock.now(), job.attempts, policy, job.startedAt ?? this.clock.now()) === undefined;
        contexts.set(job.id, { signal: controller.signal, attempt: job.attempts, lastAttempt });
        runnable.push(job);
      }
      if (runnable.length === 0) return 'ended';
      const byId = new Map(runnable.map((j) => [j.id, j]));
      let outcome: BatchOutcome;
      try {
        outcome = await handler.batch!.run(runnable, contexts);
      } catch (error) {
        for (const job of runnable) {
          if (controller.signal.aborted) await this.interrupted(job, controller.signal.reason);
          else await this.failed(job, handler, policies.get(job.id)!, controller, error);
        }
        return 'ended';
      }
      if (controller.signal.aborted) {
        for (const job of runnable) await this.interrupted(job, controller.signal.reason);
        return 'ended';
      }
      const now = this.clock.now();
      await this.jobs.deferMany(
        this.owner,
        [...outcome.deferred].map(([id, deferral]) => ({ id, scheduledAt: new Date(now.getTime() + deferral.delayMs), leasedDueAt: byId.get(id)!.scheduledAt })),
      );
      for (const [id, error] of outcome.failed) await this.failed(byId.get(id)!, handler, policies.get(id)!, controller, error);
      if (outcome.ended.size > 0) {
        try {
          await this.uow.transaction(async (manager) => {
            const completedAt = this.clock.now();
            const ended = [...outcome.ended].map(([id, o]) => ({ id, status: o.status, result: o.result ?? null }));
            const held = new Set(await this.jobs.finishMany(this.owner, ended, completedAt, manager));
            await outcome.commit?.(manager);
            await this.events.publish(ended.filter((e) => held.has(e.id)).map((e) => new JobEnded(e.id, e.status, completedAt)));
          });
        } catch (error) {
          for (const id of outcome.ended.keys()) await this.failed(byId.get(id)!, handler, policies.get(id)!, controller, error, true);
        }
      }
      return outcome.deferred.size === runnable.length ? 'deferred' : 'ended';
    } finally {
      clearInterval(renewal);
    }
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
      const policy = await this.policyOf(handler, job);
      if (job.attempts > policy.maxAttempts) {
        await this.endWith(job, handler, controller, `Gave up after ${job.attempts - 1} runs that never finished`, job.attempts - 1);
        return 'ended';
      }
      const firstRunAt = job.startedAt ?? this.clock.now();
      const lastAttempt = nextAttemptAt(this.clock.now(), job.attempts, policy, firstRunAt) === undefined;
      let outcome: JobOutcome;
      try {
        outcome = await handler.run(job, { signal: controller.signal, attempt: job.attempts, lastAttempt });
      } catch (error) {
        if (controller.signal.aborted) await this.interrupted(job, controller.signal.reason);
        else if (error instanceof JobDeferral) {
          await this.jobs.defer(job, this.owner, new Date(this.clock.now().getTime() + error.delayMs));
          return 'deferred';
        } else await this.failed(job, handler, policy, controller, error);
        return 'ended';
      }
      // A commit that fails (the database, a conflict) is retried like a provider failure: the
      // work is idempotent, and ending the job instead could leave what it stands for waiting.
      await this.conclude(job, outcome, controller, (error) => this.failed(job, handler, policy, controller, error, true));
      return 'ended';
    } finally {
      clearInterval(renewal);
    }
  }

  private async policyOf(handler: JobHandler, job: Job): Promise<RetryPolicy> {
    if (!handler.retryPolicy) return this.settings.retry;
    try {
      return await handler.retryPolicy(job);
    } catch (error) {
      this.logger.warn(`job ${job.id} (${job.type}): no retry policy (${(error as Error).message}); using the default`);
      return this.settings.retry;
    }
  }

  /**
   * The job cannot go on (its runs keep dying, it failed for good, or its retries are used up).
   * The handler's `abandon` outcome, when it has one, ends the job like any run's outcome, so
   * what the job stands for is not left waiting on it; otherwise, or if that fails, it ends in error.
   */
  private async endWith(job: Job, handler: JobHandler, controller: AbortController, reason: string, runs = job.attempts): Promise<void> {
    const endInError = async () => void (await this.finish(job, { status: 'error', result: { error: reason, attempts: runs } }));
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

  /** The final status and the handler's writes in one transaction, the ambient unit of work of the commit. */
  private async complete(job: Job, outcome: JobOutcome, onCommitFailure: (error: unknown) => Promise<void>): Promise<void> {
    let committed: boolean;
    try {
      committed = await this.uow.transaction(async (manager) => {
        if (!(await this.finish(job, { status: outcome.status, result: outcome.result ?? null }))) return false;
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

  /**
   * Records the final status while the lease is still this worker's, and tells the sagas waiting
   * on the job (JobEnded), in one transaction (the ambient one when there is one).
   */
  private finish(job: Job, outcome: { status: FinalJobStatus; result: Record<string, unknown> | null }): Promise<boolean> {
    return this.uow.transaction(async (manager) => {
      const completedAt = this.clock.now();
      if (!(await this.jobs.finish(job.id, this.owner, { ...outcome, completedAt }, manager))) return false;
      await this.events.publish([new JobEnded(job.id, outcome.status, completedAt)]);
      return true;
    });
  }

  /**
   * Transient failures (the provider's, or a commit that failed) are retried with backoff while
   * the job's retry policy allows; the rest, and retries used up, end the job (endWith).
   */
  private async failed(job: Job, handler: JobHandler, policy: RetryPolicy, controller: AbortController, error: unknown, commit = false): Promise<void> {
    const reason = error instanceof Error ? error.message : String(error);
    if (commit || isTransientFailure(error)) {
      const next = nextAttemptAt(this.clock.now(), job.attempts, policy, job.startedAt ?? this.clock.now());
      if (next) {
        const what = commit ? 'its commit failed' : 'failed transiently';
        this.logger.warn(`job ${job.id} (${job.type}) ${what} on run ${job.attempts}, retrying at ${next.toISOString()}: ${reason}`);
        await this.jobs.reschedule(job.id, this.owner, next, { error: reason, attempts: job.attempts });
        return;
      }
    } else if (!(error instanceof DomainError)) {
      this.logger.error(`job ${job.id} (${job.type}) failed: ${(error as Error)?.stack ?? reason}`);
    }
    await this.endWith(job, handler, controller, reason);
  }

  private async interrupted(job: Job, reason: unknown): Promise<void> {
    // A lost lease belongs to another worker now: leave the row alone.
    if (reason instanceof JobInterruption && reason.reason === 'lease_lost') return;
    await this.jobs.release(job.id, this.owner);
  }
}
