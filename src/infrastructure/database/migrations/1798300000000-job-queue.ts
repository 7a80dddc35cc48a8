import { MigrationInterface, QueryRunner } from 'typeorm';
import { LEASE_JOBS_BY_WEIGHT } from './1797950000000-job-weights';

/**
 * The upkeep settings of the other queue tables (QueueTablesUpkeep1796300000000), and room on
 * each page: a worker leases a batch of jobs, neighbours on a page, in one statement, and each
 * leased row's new version (longer by the holder's name) needs room while the old one stays. The
 * table holds only open jobs, so a sparse fill costs little.
 */
const QUEUE_TABLE_SETTINGS = `fillfactor = 30, autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_vacuum_insert_threshold = 5000, autovacuum_analyze_scale_factor = 0.02,
  autovacuum_vacuum_cost_limit = 2000`;

/**
 * The scheduling state of jobs in a narrow table of its own, `job_queue`: one row per job a
 * worker runs (automated or internal) while it is pending or in progress, inserted with the job
 * and deleted when it ends. It holds the due time, the lease holder and the lease's expiry.
 *
 * Why: PostgreSQL updates a row in place (HOT: no index entry written, the old version pruned on
 * its page) only when no indexed column changes, partial indexes' predicate columns included.
 * Every status change of a job touched one (jobs_pending_due_idx and jobs_one_open_sync_idx read
 * status, jobs_lease_expiry_idx leased_until, jobs_internal_finished_idx completed_at), so none
 * of a 10,000-event run's ~12,600 job updates was HOT: each wrote an entry in every index of
 * `jobs`. Now no index of `jobs` reads a column a job's run changes, and `job_queue`'s indexes
 * read only what a lease leaves alone (type, due time, order, the sync's connection), so a lease,
 * its renewals and its expiry are HOT on both tables; a deferral (a new due time) is not.
 *
 * - A job's lease: `leased_by` set (in progress); `leased_until` past: expired, taken over.
 * - jobs_one_open_sync_idx keeps its name, on the queue: at most one open sync per connection
 *   (syncs are never manual, so every open one has a queue row).
 * - Manual jobs (done by people) and the enrollment requests' own jobs, whose status their
 *   groups move, have no queue row: no worker leases them.
 * - Rows are locked queue row first, then the job's (the lease, finish, wake and call-off all
 *   do), so they never deadlock each other.
 */
export class JobQueue1798300000000 implements MigrationInterface {
  name = 'JobQueue1798300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE job_queue (
        job_id uuid PRIMARY KEY,
        type text NOT NULL,
        connection_id uuid NOT NULL,
        after_job_id uuid,
        scheduled_at timestamptz NOT NULL,
        seq bigint NOT NULL,
        weight integer NOT NULL,
        leased_by text,
        leased_until timestamptz
      ) WITH (${QUEUE_TABLE_SETTINGS})`);
    await q.query(`
      INSERT INTO job_queue (job_id, type, connection_id, after_job_id, scheduled_at, seq, weight, leased_by, leased_until)
      SELECT id, type, connection_id, after_job_id, scheduled_at, seq, weight, CASE WHEN status = 'in_progress' THEN coalesce(leased_by, 'unknown') END,
             CASE WHEN status = 'in_progress' THEN coalesce(leased_until, 'epoch') END
      FROM jobs
      WHERE status IN ('pending', 'in_progress') AND kind <> 'manual' AND type NOT IN ('benefit_enroll', 'benefit_unenroll')`);
    // Due and expired jobs are read in one range: a running job was due when it was leased.
    await q.query(`CREATE INDEX job_queue_due_idx ON job_queue (type, scheduled_at, seq)`);
    await q.query(`DROP INDEX jobs_one_open_sync_idx`);
    await q.query(`CREATE UNIQUE INDEX jobs_one_open_sync_idx ON job_queue (connection_id) WHERE type = 'data_sync_all' AND after_job_id IS NULL`);
    await q.query(`DROP INDEX jobs_pending_due_idx`);
    await q.query(`DROP INDEX jobs_lease_expiry_idx`);
    // The purge of ended internal jobs finds them by when they were made, a column no run changes.
    await q.query(`DROP INDEX jobs_internal_finished_idx`);
    await q.query(`CREATE INDEX jobs_internal_created_idx ON jobs (created_at) WHERE kind = 'internal'`);
    await q.query(`DROP FUNCTION lease_jobs(text, integer, timestamptz, text[], integer, integer, bigint, boolean)`);
    await q.query(`ALTER TABLE jobs DROP COLUMN leased_by, DROP COLUMN leased_until`);
    // Room for every job on a page to take its next version at once (a batch leased or finished
    // set-wise): at 80 % half of these updates found none. Only new pages are filled so.
    await q.query(`ALTER TABLE jobs SET (fillfactor = 40)`);
    await q.query(`
      CREATE FUNCTION lease_jobs(lease_owner text, lease_ms integer, due_by timestamptz, job_types text[], max_jobs integer, candidates integer, max_weight bigint, take_first boolean)
      RETURNS SETOF jobs LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
      BEGIN
        RETURN QUERY
        WITH leased AS (
          UPDATE job_queue q SET leased_by = lease_owner, leased_until = statement_timestamp() + lease_ms * interval '1 millisecond'
          WHERE q.job_id IN (
            SELECT c.job_id FROM job_queue c
            WHERE c.job_id IN (
                -- The candidates in lease order, as long as their weights add up to max_weight
                -- (and the first when take_first): a candidate another worker holds is skipped
                -- below but its weight counted here, so a batch weighs at most this.
                SELECT w.job_id FROM (
                  SELECT u.job_id,
                         sum(u.weight) OVER (ORDER BY u.scheduled_at, u.seq ROWS UNBOUNDED PRECEDING) AS running,
                         row_number() OVER (ORDER BY u.scheduled_at, u.seq) AS n
                  FROM (
                    -- Due and not leased, or leased by a worker whose lease ran out.
                    SELECT p.job_id, p.weight, p.scheduled_at, p.seq FROM job_queue p
                    WHERE p.type = ANY(job_types) AND p.scheduled_at <= due_by
                      AND (p.leased_until IS NULL OR p.leased_until < statement_timestamp())
                      -- A job that runs after another waits while that one is queued or running.
                      AND (p.after_job_id IS NULL OR NOT EXISTS (SELECT 1 FROM job_queue a WHERE a.job_id = p.after_job_id))
                    ORDER BY p.scheduled_at, p.seq LIMIT candidates) u
                ) w
                WHERE max_weight IS NULL OR w.running <= max_weight OR (w.n = 1 AND take_first))
              -- Checked again on the row as locked: another worker may have leased or finished it.
              AND c.scheduled_at <= due_by AND (c.leased_until IS NULL OR c.leased_until < statement_timestamp())
            ORDER BY c.scheduled_at, c.seq
            LIMIT max_jobs
            FOR UPDATE SKIP LOCKED)
          RETURNING q.job_id)
        UPDATE jobs SET status = 'in_progress', attempts = jobs.attempts + 1, started_at = coalesce(jobs.started_at, due_by)
        FROM leased WHERE jobs.id = leased.job_id
        RETURNING jobs.*;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION lease_jobs(text, integer, timestamptz, text[], integer, integer, bigint, boolean)`);
    await q.query(`ALTER TABLE jobs ADD COLUMN leased_by text, ADD COLUMN leased_until timestamptz`);
    await q.query(`ALTER TABLE jobs SET (fillfactor = 80)`);
    await q.query(`UPDATE jobs j SET leased_by = q.leased_by, leased_until = q.leased_until FROM job_queue q WHERE q.job_id = j.id`);
    await q.query(`DROP INDEX jobs_internal_created_idx`);
    await q.query(
      `CREATE INDEX jobs_internal_finished_idx ON jobs (completed_at) WHERE kind = 'internal' AND status NOT IN ('pending', 'in_progress')`,
    );
    await q.query(`CREATE INDEX jobs_lease_expiry_idx ON jobs (leased_until) WHERE status = 'in_progress'`);
    await q.query(`CREATE INDEX jobs_pending_due_idx ON jobs (type, scheduled_at, seq) WHERE status = 'pending' AND kind <> 'manual'`);
    await q.query(`DROP TABLE job_queue`);
    await q.query(
      `CREATE UNIQUE INDEX jobs_one_open_sync_idx ON jobs (connection_id) WHERE type = 'data_sync_all' AND status IN ('pending', 'in_progress') AND after_job_id IS NULL`,
    );
    // The function as it was, on the columns of jobs.
    await q.query(LEASE_JOBS_BY_WEIGHT);
  }
}
