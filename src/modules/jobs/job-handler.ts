import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { FinalJobStatus, Job, RetryPolicy } from '../../domain/jobs/job';

/** What a handler gets besides its job. */
export interface JobRunContext {
  /** Aborted when the worker loses the lease or shuts down: stop at the next safe point. */
  signal: AbortSignal;
  /** The run this is, 1 for the first. */
  attempt: number;
  /**
   * No run follows this one if it fails transiently (its retry policy is used up): the handler
   * ends the work with what it has rather than leaving it waiting.
   */
  lastAttempt: boolean;
}

/**
 * How a run ended. `commit` writes what must become visible together with the job's final
 * status (one transaction, only if this worker still holds the lease); `afterCommit` runs once
 * that committed (clean-ups); `discard` runs when it did not (undo side writes).
 */
export interface JobOutcome {
  status: FinalJobStatus;
  result?: Record<string, unknown>;
  commit?: (manager: EntityManager) => Promise<void>;
  afterCommit?: () => Promise<void>;
  discard?: () => Promise<void>;
}

/**
 * Runs the jobs of one `type`. Throwing a DomainError of family `provider_error` or
 * `provider_timeout` is transient (the job is retried with backoff); anything else thrown ends
 * the job in `error` with the message as the reason.
 */
export interface JobHandler {
  readonly type: string;
  run(job: Job, context: JobRunContext): Promise<JobOutcome>;
  /**
   * What a job ends with when the worker gives up on it (its runs keep dying, or it failed for
   * good); its commit runs in the transaction that ends it. Without it, or if it throws, the job
   * ends in `error`.
   */
  abandon?(job: Job, reason: string): Promise<JobOutcome>;
  /** How this job is retried; the worker's default when absent (provider work sizes it from the provider's latency). */
  retryPolicy?(job: Job): Promise<RetryPolicy>;
  /**
   * Jobs of this type run many at once when present: up to `size` due jobs are leased together
   * and handed to `run`, which may fold their work (one provider call for many), and those that
   * end are finished in one transaction with the outcome's commit. At most `atOnce` batches of
   * the type run in one worker (default 1): jobs that come due meanwhile wait for one to end and
   * are leased together, so a trickle of jobs still makes few, large batches. With `maxWeight`,
   * the type's running batches together take only as many jobs as weigh that much (NewJob.weight),
   * or one job alone when it weighs more: what they hold in memory is bounded by their work, not
   * by their count.
   */
  batch?: {
    size: number;
    atOnce?: number;
    maxWeight?: number;
    run(jobs: readonly Job[], contexts: ReadonlyMap<string, JobRunContext>): Promise<BatchOutcome>;
  };
}

/** How a batch of jobs came out, per job. */
export interface BatchOutcome {
  /** Jobs that ended, finished together with `commit`. */
  ended: Map<string, { status: FinalJobStatus; result?: Record<string, unknown> }>;
  /** Jobs that must wait for other work first (no run spent). */
  deferred: Map<string, JobDeferral>;
  /** Jobs whose run failed: retried when transient, else ended (abandon) one by one. */
  failed: Map<string, unknown>;
  /** Writes that become visible with the ended jobs' final statuses (one transaction). */
  commit?: (manager: EntityManager) => Promise<void>;
}

/**
 * Thrown by a handler whose job must wait for other work first (it does not count as a run):
 * the job goes back to the queue, due at once (leased again at the next poll) or after
 * `delayMs`, to be woken earlier by that work's end (also when it ends while this run decides
 * to wait: JobsRepository.deferMany).
 */
export class JobDeferral extends Error {
  constructor(
    reason: string,
    readonly delayMs = 0,
  ) {
    super(reason);
    this.name = 'JobDeferral';
  }
}

/** Handlers by job type; modules register theirs at init, workers start after. */
@Injectable()
export class JobHandlerRegistry {
  private readonly handlers = new Map<string, JobHandler>();

  register(handler: JobHandler): void {
    if (this.handlers.has(handler.type)) throw new Error(`A job handler for ${handler.type} is already registered`);
    this.handlers.set(handler.type, handler);
  }

  handlerFor(type: string): JobHandler | undefined {
    return this.handlers.get(type);
  }

  types(): string[] {
    return [...this.handlers.keys()];
  }

  /** Handlers whose jobs run many at once. */
  batchHandlers(): JobHandler[] {
    return [...this.handlers.values()].filter((h) => h.batch !== undefined);
  }

  /** Types whose jobs run one by one. */
  singleTypes(): string[] {
    return [...this.handlers.values()].filter((h) => h.batch === undefined).map((h) => h.type);
  }
}
