import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for the checks every enrollment request and group makes: the groups of a benefit still
 * waiting (take-over and request order), and a group's own job (found by its params). Without
 * them each check scans every group and job ever written, and a stream of HRIS events slows down
 * as it goes.
 */
export class EnrollmentWorkIndexes1796000000000 implements MigrationInterface {
  name = 'EnrollmentWorkIndexes1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX enrollment_groups_waiting_idx ON enrollment_groups (benefit_id, effective_date) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX jobs_enrollment_group_idx ON jobs ((params->>'group_id')) WHERE type = 'benefit_enrollment_group'`);
    await q.query(`CREATE INDEX enrollments_individual_idx ON enrollments (entity_id, individual_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX enrollments_individual_idx`);
    await q.query(`DROP INDEX jobs_enrollment_group_idx`);
    await q.query(`DROP INDEX enrollment_groups_waiting_idx`);
  }
}
