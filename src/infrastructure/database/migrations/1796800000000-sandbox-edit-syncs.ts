import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A job may wait for another to end before it runs (`after_job_id`): a sandbox edit made while
 * a data sync is running queues one more sync behind it, since the running one may have read
 * the employer before the edit. Such a follow-up is the connection's second open sync, so the
 * one-open-sync index leaves follow-ups out; one follow-up per sync is its own unique index,
 * which also finds the follow-up of a sync.
 */
export class SandboxEditSyncs1796800000000 implements MigrationInterface {
  name = 'SandboxEditSyncs1796800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs ADD COLUMN after_job_id uuid`);
    await q.query(`DROP INDEX jobs_one_open_sync_idx`);
    await q.query(
      `CREATE UNIQUE INDEX jobs_one_open_sync_idx ON jobs (connection_id)
       WHERE type = 'data_sync_all' AND status IN ('pending', 'in_progress') AND after_job_id IS NULL`,
    );
    await q.query(`CREATE UNIQUE INDEX jobs_one_sync_after_idx ON jobs (after_job_id) WHERE type = 'data_sync_all' AND after_job_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Follow-ups still queued would break the older index: they end, as if their edit's sync had failed.
    await q.query(
      `UPDATE jobs SET status = 'error', result = '{"error": "Dropped when the database was migrated down"}', completed_at = now(),
         leased_by = NULL, leased_until = NULL
       WHERE after_job_id IS NOT NULL AND status IN ('pending', 'in_progress')`,
    );
    await q.query(`DROP INDEX jobs_one_sync_after_idx`);
    await q.query(`DROP INDEX jobs_one_open_sync_idx`);
    await q.query(
      `CREATE UNIQUE INDEX jobs_one_open_sync_idx ON jobs (connection_id) WHERE type = 'data_sync_all' AND status IN ('pending', 'in_progress')`,
    );
    await q.query(`ALTER TABLE jobs DROP COLUMN after_job_id`);
  }
}
