import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { FinalJobStatus, Job } from '../../domain/jobs/job';

/** What a handler gets besides its job. */
export interface JobRunContext {
  /** Aborted when the worker loses the lease or shuts down: stop at the next safe point. */
  signal: AbortSignal;
  /** The run this is, 1 for the first. */
  attempt: number;
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
   * What a job ends with when the worker gives up on it (its runs keep dying); its commit runs
   * in the transaction that ends it. Without it, or if it throws, the job ends in `error`.
   */
  abandon?(job: Job, reason: string): Promise<JobOutcome>;
}

/**
 * Thrown by a handler whose job must wait for other work first (it does not count as a run):
 * the job goes back to the queue, due at once, and is leased again at the next poll.
 */
export class JobDeferral extends Error {
  constructor(reason: string) {
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
}
