import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ManualJobBody } from '../../domain/assisted/manual-job';
import { SagasRepository } from '../saga-state/saga-state.repository';

/** UPDATE … RETURNING answers [rows, count] through TypeORM's postgres driver. */
const affected = (result: unknown): number => (Array.isArray(result) && typeof result[1] === 'number' ? result[1] : 0);

/**
 * Status changes of manual jobs (rows of `jobs` with kind `manual`). No worker ever leases them:
 * an ops task moves them, so they are written here rather than through a lease.
 */
@Injectable()
export class ManualJobsRepository {
  constructor(private readonly sagas: SagasRepository) {}

  /** pending → in_progress: the task was completed and the change is being applied. */
  async markInProgress(jobId: string, at: Date, manager: EntityManager): Promise<boolean> {
    const result = await manager.query(
      `UPDATE jobs SET status = 'in_progress', started_at = coalesce(started_at, $2)
       WHERE id = $1 AND kind = 'manual' AND status = 'pending' RETURNING id`,
      [jobId, at],
    );
    return affected(result) === 1;
  }

  /** Ends an unfinished manual job (and moves the sagas waiting on it); false when it had already ended. */
  async finish(jobId: string, status: 'complete' | 'error', body: ManualJobBody, at: Date, manager: EntityManager): Promise<boolean> {
    const result = await manager.query(
      `UPDATE jobs SET status = $2, result = $3::jsonb, completed_at = $4, started_at = coalesce(started_at, $4)
       WHERE id = $1 AND kind = 'manual' AND status IN ('pending', 'in_progress') RETURNING id`,
      [jobId, status, JSON.stringify(body), at],
    );
    if (affected(result) !== 1) return false;
    await this.sagas.jobEnded(manager, jobId, status, at);
    return true;
  }
}
