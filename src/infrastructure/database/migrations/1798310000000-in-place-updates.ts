import { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables whose rows are updated soon after they are written, set-wise, by columns no index reads (sagas: once sagas_state_idx is gone). */
const TABLES = ['sagas', 'saga_jobs', 'enrollment_groups', 'enrollments'];

/**
 * Lets the updates of sagas, their jobs, enrollment groups and enrollments be HOT (in place, no
 * index entry written), as JobQueue1798300000000 does for jobs:
 *
 * - Room on each page for the rows' next versions. A version is pruned only once no running
 *   transaction sees it, and these rows are updated set-wise, many on one page in one statement:
 *   each needs room for its new version while the old one stays. At the queue tables' 80 % fill
 *   (QueueTablesUpkeep1796300000000) 30–40 % of these updates found none in a 10,000-event run.
 *   Half a page leaves room for every row's next version. Only new pages are filled so.
 * - sagas_state_idx goes: a saga's state changes as it moves on, and an index reading it made
 *   every such update write an entry in each of the table's five indexes. What read it by state
 *   (the ops overview's counts by type and state, the ops list's filter by state) reads the
 *   table or the list index (created_at) instead; the counts were a whole-index read already.
 */
export class InPlaceUpdates1798310000000 implements MigrationInterface {
  name = 'InPlaceUpdates1798310000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} SET (fillfactor = 50)`);
    await q.query(`DROP INDEX sagas_state_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX sagas_state_idx ON sagas (state, type, created_at)`);
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} SET (fillfactor = 80)`);
  }
}
