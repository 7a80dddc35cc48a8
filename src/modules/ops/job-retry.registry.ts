import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { DomainEventBus } from '../../domain/events/domain-event-bus';
import { DATA_SYNC_ALL, Job } from '../../domain/jobs/job';
import { JobRetried } from '../../domain/jobs/job-events';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { returnedRows } from '../../infrastructure/database/query-result';
import { JobsRepository } from '../jobs/jobs.repository';

/**
 * Runs a job in `error` again, inside the ops action's transaction (the job row is locked and
 * known to be in error). Only job types whose work is safe to repeat have one: a retry must not
 * undo or double what the failed run already did.
 */
export interface JobRetrier {
  readonly types: readonly string[];
  retry(job: Job, manager: EntityManager): Promise<void>;
}

/** Retriers by job type. Feature modules register theirs at init (one per type). */
@Injectable()
export class JobRetryRegistry {
  private readonly byType = new Map<string, JobRetrier>();

  register(retrier: JobRetrier): void {
    for (const type of retrier.types) {
      if (this.byType.has(type)) throw new Error(`A job retrier for ${type} is already registered`);
      this.byType.set(type, retrier);
    }
  }

  retrierFor(type: string): JobRetrier | undefined {
    return this.byType.get(type);
  }
}

/**
 * Leaseable jobs whose handlers are idempotent (a sync rewrites a whole generation; the provider's
 * create and update are keyed by benefit_id): back to `pending`, due now, with a fresh set of
 * attempts and no result, for the workers to lease like a new job.
 */
@Injectable()
export class RequeueJobRetrier implements JobRetrier {
  readonly types = [DATA_SYNC_ALL, 'benefit_create', 'benefit_update'] as const;

  constructor(
    private readonly jobs: JobsRepository,
    private readonly events: DomainEventBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async retry(job: Job, manager: EntityManager): Promise<void> {
    if (job.type === DATA_SYNC_ALL) {
      // Serializes with sync requests (they lock the connection too): at most one open sync.
      await manager.query(`SELECT 1 FROM connections WHERE id = $1 FOR UPDATE`, [job.connectionId]);
      const open = await this.jobs.findOpen(job.connectionId, DATA_SYNC_ALL, manager);
      if (open) {
        throw new DomainError('conflict_error', `Sync ${open.id} of this connection is ${open.status}; retry this one after it ends`, {
          serviceCode: 'sync_already_open',
        });
      }
    }
    // Queued again (JobQueue1798300000000): a job in error has no queue row.
    const result = await manager.query(
      `WITH reopened AS (
         UPDATE jobs SET status = 'pending', attempts = 0, scheduled_at = $2, result = NULL, started_at = NULL, completed_at = NULL
         WHERE id = $1 AND status = 'error' RETURNING id, type, connection_id, after_job_id, scheduled_at, seq, weight)
       INSERT INTO job_queue (job_id, type, connection_id, after_job_id, scheduled_at, seq, weight)
       SELECT id, type, connection_id, after_job_id, scheduled_at, seq, weight FROM reopened RETURNING job_id`,
      [job.id, this.clock.now()],
    );
    if (returnedRows(result).length !== 1) throw new Error(`job ${job.id} was not in error when retried`);
    await this.events.publish([new JobRetried(job.id, this.clock.now())]);
  }
}
