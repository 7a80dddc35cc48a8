import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The waiting changes of an individual listed in a narrow table of their own,
 * `waiting_enrollment_items` (inserted with a waiting item, deleted when it stops waiting),
 * instead of enrollment_items_waiting_idx (benefit_id, individual_id) WHERE status = 'waiting'.
 * That index read the status every item's result changes, so no such update was HOT (in place,
 * no index entry written): each wrote an entry in both of the table's indexes. Now no index of
 * `enrollment_items` reads a column its updates change, and the ledger finds an individual's
 * waiting changes by the list's key as it did by the index. With room on each page for the
 * rows' next versions (InPlaceUpdates1798310000000 says why half a page).
 */
export class EnrollmentItemsUpdatedInPlace1798320000000 implements MigrationInterface {
  name = 'EnrollmentItemsUpdatedInPlace1798320000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE waiting_enrollment_items (
        benefit_id uuid NOT NULL,
        individual_id uuid NOT NULL,
        group_id uuid NOT NULL,
        PRIMARY KEY (benefit_id, individual_id, group_id)
      ) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0.02,
              autovacuum_vacuum_insert_threshold = 5000, autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_limit = 2000)`);
    await q.query(
      `INSERT INTO waiting_enrollment_items (benefit_id, individual_id, group_id) SELECT benefit_id, individual_id, group_id FROM enrollment_items WHERE status = 'waiting'`,
    );
    await q.query(`DROP INDEX enrollment_items_waiting_idx`);
    await q.query(`ALTER TABLE enrollment_items SET (fillfactor = 50)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE enrollment_items SET (fillfactor = 80)`);
    await q.query(`CREATE INDEX enrollment_items_waiting_idx ON enrollment_items (benefit_id, individual_id) WHERE status = 'waiting'`);
    await q.query(`DROP TABLE waiting_enrollment_items`);
  }
}
