import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Foreign keys that a set-wise enrollment write paid for row by row, and that guard nothing the
 * enrollment ledger does not already guarantee. PostgreSQL checks a foreign key with one lookup
 * per inserted row (and per updated row whose key changed): a request of 10,000 individuals ran
 * 30,000 of them for its enrollment rows and 10,000 for its items, about 9 µs each, over a third
 * of the time its rows took to write (bench/README.md, Enrollment).
 *
 * - `enrollments.job_id` names the latest request; the ledger writes it in the transaction that
 *   inserts that job, and enrollment jobs are never deleted.
 * - `enrollments.entity_id` is the benefit's entity, copied for the reads by individual; the
 *   benefit's own key (kept) already ties the row to an existing benefit of an existing entity.
 * - `enrollment_items.group_id`: items are written by the statement after the one that inserts
 *   their group, in the same transaction; groups are never deleted.
 */
export class EnrollmentWritePath1797100000000 implements MigrationInterface {
  name = 'EnrollmentWritePath1797100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE enrollments DROP CONSTRAINT IF EXISTS enrollments_job_id_fkey, DROP CONSTRAINT IF EXISTS enrollments_entity_id_fkey`);
    await q.query(`ALTER TABLE enrollment_items DROP CONSTRAINT IF EXISTS enrollment_items_group_id_fkey`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE enrollment_items ADD CONSTRAINT enrollment_items_group_id_fkey FOREIGN KEY (group_id) REFERENCES enrollment_groups (id)`);
    await q.query(`
      ALTER TABLE enrollments
        ADD CONSTRAINT enrollments_entity_id_fkey FOREIGN KEY (entity_id) REFERENCES connection_entities (id),
        ADD CONSTRAINT enrollments_job_id_fkey FOREIGN KEY (job_id) REFERENCES jobs (id)`);
  }
}
