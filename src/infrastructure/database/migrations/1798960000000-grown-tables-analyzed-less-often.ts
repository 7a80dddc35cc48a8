import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The tables that gain a row with every HRIS event and are read only by key (`sagas`,
 * `saga_jobs`, `enrollment_items`) are analyzed after 10 % of change, PostgreSQL's default,
 * instead of the 2 % the queue tables got with their vacuum settings (1796300000000). Their
 * statistics steer no plan that 2 % would keep better: the hot statements find their rows by
 * key, and the planner scales a table's row count by its current size between two ANALYZEs.
 * What an ANALYZE costs beyond its own sample is the plans: it invalidates every session's
 * prepared statements on the table, which plan again (custom plans, five of them, before a
 * generic one): over 20,000 events on a young database the hot statements were planned on 70 to
 * 100 % of their runs, and ANALYZE of `sagas` took 0.024 ms per event, 0.012–0.016 at 10 %
 * (bench/README.md, "The database at scale"). Their vacuum thresholds are unchanged.
 */
const READ_BY_KEY = ['sagas', 'saga_jobs', 'enrollment_items'];

export class GrownTablesAnalyzedLessOften1798960000000 implements MigrationInterface {
  name = 'GrownTablesAnalyzedLessOften1798960000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of READ_BY_KEY) await q.query(`ALTER TABLE ${table} SET (autovacuum_analyze_scale_factor = 0.1)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of READ_BY_KEY) await q.query(`ALTER TABLE ${table} SET (autovacuum_analyze_scale_factor = 0.02)`);
  }
}
