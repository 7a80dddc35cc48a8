import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ManualJobBody } from '../../domain/assisted/manual-job';
import { DomainEventBus } from '../../domain/events/domain-event-bus';
import { JobEnded } from '../../domain/jobs/job-events';
import { affectedCount } from '../../infrastructure/database/query-result';

/**
 * Status changes of the manual jobs of benefit work (create, register, update: rows of `jobs`
 * with kind `manual`). No worker ever leases them: an ops task moves them. Enrollment requests'
 * manual jobs move with their groups, through the enrollment lifecycle.
 */
@Injectable()
export class ManualJobsRepository {
  constructor(private readonly events: DomainEventBus) {}

  /** pending → in_progress: the task was completed and the change is being applied. */
  async markInProgress(jobId: string, at: Date, manager: EntityManager): Promise<boolean> {
    const result = await manager.query(
      `UPDATE jobs SET status = 'in_progress', started_at = coalesce(started_at, $2)
       WHERE id = $1 AND kind = 'manual' AND status = 'pending' RETURNING id`,
      [jobId, at],
    );
    return affectedCount(result) === 1;
  }

  /** Ends an unfinished manual job (JobEnded for the sagas waiting on it); false when it had already ended. */
  async finish(jobId: string, status: 'complete' | 'error', body: ManualJobBody, at: Date, manager: EntityManager): Promise<boolean> {
    const result = await manager.query(
      `UPDATE jobs SET status = $2, result = $3::jsonb, completed_at = $4, started_at = coalesce(started_at, $4)
       WHERE id = $1 AND kind = 'manual' AND status IN ('pending', 'in_progress') RETURNING id`,
      [jobId, status, JSON.stringify(body), at],
    );
    if (affectedCount(result) !== 1) return false;
    await this.events.publish([new JobEnded(jobId, status, at)]);
    return true;
  }
}
