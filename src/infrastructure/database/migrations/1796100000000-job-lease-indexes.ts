import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes the workers' lease reads in two parts: pending jobs due now, by type (a type no worker
 * runs, such as an enrollment request waiting on its groups, is never visited), and leases that
 * ran out. The index they replace held every pending and running job by date, and the lease's
 * "due or expired" condition could not bound it: each poll walked every waiting job, so with
 * thousands of future-dated enrollments an idle poll cost tens of milliseconds, growing with them.
 */
export class JobLeaseIndexes1796100000000 implements MigrationInterface {
  name = 'JobLeaseIndexes1796100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX jobs_pending_due_idx ON jobs (type, scheduled_at, seq) WHERE status = 'pending' AND kind <> 'manual'`);
    await q.query(`CREATE INDEX jobs_lease_expiry_idx ON jobs (leased_until) WHERE status = 'in_progress'`);
    await q.query(`DROP INDEX jobs_due_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX jobs_due_idx ON jobs (scheduled_at) WHERE status IN ('pending', 'in_progress')`);
    await q.query(`DROP INDEX jobs_lease_expiry_idx`);
    await q.query(`DROP INDEX jobs_pending_due_idx`);
  }
}
