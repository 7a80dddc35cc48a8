import { MigrationInterface, QueryRunner } from 'typeorm';
import { createKeptCountTriggers, dropKeptCountTriggers, KeptCountTriggers } from './kept-count-triggers';

/** The statuses the ops overview counts; `complete`, the bulk of the table, is not read. */
export const COUNTED = `('pending', 'in_progress', 'error')`;
/** A job's key in the counts: pending ones by when made and when due (the overview's ages), the others by status alone. */
export const keyOf = (row: string) =>
  `${row}.status, CASE WHEN ${row}.status = 'pending' THEN ${row}.created_at ELSE '-infinity' END, CASE WHEN ${row}.status = 'pending' THEN ${row}.scheduled_at ELSE '-infinity' END`;

export const JOBS: KeptCountTriggers = {
  table: 'jobs',
  prefix: 'job',
  columns: 'status, created_at, scheduled_at',
  keyOf,
  counted: (row) => `${row}.status IN ${COUNTED}`,
};

/**
 * Jobs counted for the ops overview without reading `jobs`, which keeps every enrollment job
 * for good: the overview's count of pending, in-progress and failed jobs was a scan of the whole
 * table on every refresh (0.57 s at 2,000,000 jobs, bench/README.md, "Ops reads over a long
 * history"). As for sagas (1798800000000, kept-counts.ts): statement triggers append each
 * statement's changes to `job_count_changes`, folded into `job_counts` in the background.
 * Pending jobs are kept by their `created_at` and `scheduled_at`, so the overview's ages and
 * "scheduled later" stay exact; their rows go once no job is left under them. A status index
 * on `jobs` would make every status change a non-HOT update instead.
 */
export class JobCounts1798810000000 implements MigrationInterface {
  name = 'JobCounts1798810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE job_counts (
        status text NOT NULL, created_at timestamptz NOT NULL, scheduled_at timestamptz NOT NULL, n bigint NOT NULL,
        PRIMARY KEY (status, created_at, scheduled_at))`);
    await q.query(`CREATE TABLE job_count_changes (status text NOT NULL, created_at timestamptz NOT NULL, scheduled_at timestamptz NOT NULL, n bigint NOT NULL)`);
    await q.query(`INSERT INTO job_counts (status, created_at, scheduled_at, n) SELECT ${keyOf('j')}, count(*) FROM jobs j WHERE j.status IN ${COUNTED} GROUP BY 1, 2, 3`);

    await createKeptCountTriggers(q, JOBS);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropKeptCountTriggers(q, JOBS);
    await q.query(`DROP TABLE job_count_changes`);
    await q.query(`DROP TABLE job_counts`);
  }
}
