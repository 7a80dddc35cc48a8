import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Queue tables keep their cost flat over a long stream. Every HRIS event inserts and then
 * updates rows of `inbox_messages`, `outbox_messages`, `jobs`, `enrollment_groups`,
 * `enrollment_items`, `enrollments`, `sagas` and `saga_jobs`; PostgreSQL's default autovacuum
 * waits for 20 % of a table to be dead before it cleans, so on a busy queue the partial indexes
 * the workers read ("pending", "unpublished", "waiting") fill with dead entries and every read
 * slows as the stream goes on. Here they are vacuumed after 1,000 dead rows or 1 % of the
 * table, with more of autovacuum's budget, and the tables updated in place leave room in each
 * page so an update that changes no indexed column stays on its page (a HOT update). The 64
 * rows of `outbox_lanes` are updated twice per relay round, so they are on the list too.
 */
const UPKEEP = `autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_vacuum_insert_threshold = 5000,
  autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_limit = 2000`;

const QUEUES = ['inbox_messages', 'outbox_messages', 'outbox_lanes', 'jobs', 'enrollment_groups', 'enrollment_items', 'enrollments', 'sagas', 'saga_jobs', 'dead_letters'];
const UPDATED_IN_PLACE = ['outbox_lanes', 'jobs', 'enrollment_groups', 'enrollment_items', 'enrollments', 'sagas', 'saga_jobs', 'outbox_messages'];

export class QueueTablesUpkeep1796300000000 implements MigrationInterface {
  name = 'QueueTablesUpkeep1796300000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of QUEUES) await q.query(`ALTER TABLE ${table} SET (${UPKEEP})`);
    for (const table of UPDATED_IN_PLACE) await q.query(`ALTER TABLE ${table} SET (fillfactor = 80)`);
    // Purges read these by age (inbox retention, finished internal jobs).
    await q.query(`CREATE INDEX jobs_internal_finished_idx ON jobs (completed_at) WHERE kind = 'internal' AND status NOT IN ('pending', 'in_progress')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs_internal_finished_idx`);
    for (const table of UPDATED_IN_PLACE) await q.query(`ALTER TABLE ${table} RESET (fillfactor)`);
    const options = UPKEEP.split(',').map((o) => o.split('=')[0].trim()).join(', ');
    for (const table of QUEUES) await q.query(`ALTER TABLE ${table} RESET (${options})`);
  }
}
