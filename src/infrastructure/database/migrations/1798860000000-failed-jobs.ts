import { MigrationInterface, QueryRunner } from 'typeorm';
import { createKeptSubset, dropKeptSubset, KeptSubset } from './kept-subset-triggers';

/**
 * The failed jobs (`error`, `reauth_error`, `permissions_error`), kept beside `jobs` in a table of
 * their own (kept-subset-triggers.ts), for the same reason as the failed sagas (1798850000000):
 * `jobs` has no index on its status but for the unfinished (a status change of a job in flight
 * stays HOT), so the ops list of failed jobs walked and counted every job.
 */
export const FAILED_JOBS: KeptSubset = {
  table: 'jobs',
  subset: 'failed_jobs',
  reference: 'job_id',
  column: 'status',
  values: ['error', 'reauth_error', 'permissions_error'],
  copied: [
    ['status', 'text'],
    ['created_at', 'timestamptz'],
    ['seq', 'bigint'],
  ],
  order: 'created_at DESC, seq DESC',
};

export class FailedJobs1798860000000 implements MigrationInterface {
  name = 'FailedJobs1798860000000';

  async up(q: QueryRunner): Promise<void> {
    await createKeptSubset(q, FAILED_JOBS);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropKeptSubset(q, FAILED_JOBS);
  }
}
