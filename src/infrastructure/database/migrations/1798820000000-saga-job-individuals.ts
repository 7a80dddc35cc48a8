import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The HRIS events of one batch share enrollment jobs (shared-jobs.ts): a saga that waits on a
 * shared job waits on its own individuals in it, listed here (a JSON array of ids), so its steps
 * and its outcome are theirs, not the whole job's. NULL: the saga waits on the whole job (a REST
 * request's saga, a job no other saga shares).
 */
export class SagaJobIndividuals1798820000000 implements MigrationInterface {
  name = 'SagaJobIndividuals1798820000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE saga_jobs ADD COLUMN individual_ids jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE saga_jobs DROP COLUMN individual_ids`);
  }
}
