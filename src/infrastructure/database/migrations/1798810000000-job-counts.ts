import { MigrationInterface, QueryRunner } from 'typeorm';

/** The statuses the ops overview counts; `complete`, the bulk of the table, is not read. */
const COUNTED = `('pending', 'in_progress', 'error')`;
/** A job's key in the counts: pending ones by when made and when due (the overview's ages), the others by status alone. */
const keyOf = (row: string) =>
  `${row}.status, CASE WHEN ${row}.status = 'pending' THEN ${row}.created_at ELSE '-infinity' END, CASE WHEN ${row}.status = 'pending' THEN ${row}.scheduled_at ELSE '-infinity' END`;

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

    await q.query(`
      CREATE FUNCTION job_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO job_count_changes (status, created_at, scheduled_at, n)
        SELECT ${keyOf('n')}, count(*) FROM new_rows n WHERE n.status IN ${COUNTED} GROUP BY 1, 2, 3;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION job_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        -- Each row counted again under its new key and taken off its old one: a row whose key
        -- stayed cancels out, with no join of the two transition tables.
        INSERT INTO job_count_changes (status, created_at, scheduled_at, n)
        SELECT status, created_at, scheduled_at, sum(n) FROM (
          SELECT ${keyOf('n')}, 1 FROM new_rows n WHERE n.status IN ${COUNTED}
          UNION ALL
          SELECT ${keyOf('o')}, -1 FROM old_rows o WHERE o.status IN ${COUNTED}
        ) AS moved(status, created_at, scheduled_at, n)
        GROUP BY 1, 2, 3 HAVING sum(n) <> 0;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION job_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO job_count_changes (status, created_at, scheduled_at, n)
        SELECT ${keyOf('o')}, -count(*) FROM old_rows o WHERE o.status IN ${COUNTED} GROUP BY 1, 2, 3;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION job_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        DELETE FROM job_count_changes;
        DELETE FROM job_counts;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER job_counts_inserted AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION job_counts_inserted()`);
    await q.query(
      `CREATE TRIGGER job_counts_updated AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION job_counts_updated()`,
    );
    await q.query(`CREATE TRIGGER job_counts_deleted AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION job_counts_deleted()`);
    await q.query(`CREATE TRIGGER job_counts_truncated AFTER TRUNCATE ON jobs FOR EACH STATEMENT EXECUTE FUNCTION job_counts_truncated()`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of ['job_counts_truncated', 'job_counts_deleted', 'job_counts_updated', 'job_counts_inserted']) {
      await q.query(`DROP TRIGGER ${name} ON jobs`);
      await q.query(`DROP FUNCTION ${name}()`);
    }
    await q.query(`DROP TABLE job_count_changes`);
    await q.query(`DROP TABLE job_counts`);
  }
}
