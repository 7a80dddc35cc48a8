import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The planner's price of a random page read, for this database: 1.1 instead of PostgreSQL's
 * default of 4, which prices a disk that seeks. The service's set-wise statements join a few
 * hundred keys (`unnest($1::uuid[])`) to a queue table; at 4, index probes into a table of tens of
 * thousands of rows cost more than reading it whole, so they were planned as hash joins over
 * sequential scans: auto_explain over a warm run showed the saga and saga-job reads and updates
 * of the job worker and the consumer scanning `sagas` and `saga_jobs` whole, 10–170 ms a call
 * against 1–2 ms by index (bench/README.md, "The database at scale"). The tables are in memory, so
 * 1.1 is the true price (the figure PostgreSQL's documentation gives for storage with cheap
 * random reads).
 *
 * Set only where the session sees the server's default: a value an operator chose (for the
 * server, the role or the database) is theirs and stays. Without the right to alter the database
 * (a managed role that does not own it) the migration leaves a notice and changes nothing.
 * Sessions opened before the migration keep the price they started with; this one takes the new.
 */
export class PlannerRandomPageCost1798900000000 implements MigrationInterface {
  name = 'PlannerRandomPageCost1798900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $$
      BEGIN
        IF current_setting('random_page_cost')::float8 = 4 THEN
          EXECUTE format('ALTER DATABASE %I SET random_page_cost = 1.1', current_database());
          PERFORM set_config('random_page_cost', '1.1', false);
        END IF;
      EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'random_page_cost left as it is: %', SQLERRM;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $$
      BEGIN
        EXECUTE format('ALTER DATABASE %I RESET random_page_cost', current_database());
      EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'random_page_cost left as it is: %', SQLERRM;
      END $$`);
  }
}
