import { MigrationInterface, QueryRunner } from 'typeorm';
import { JobLeaseFunction1797700000000 } from './1797700000000-job-lease-function';

/**
 * A job's weight: how much work it carries (an enrollment group's people), 1 unless told. A
 * worker leasing a batch of one type takes due jobs in order while their weights add up to at
 * most `max_weight` (and the first one whatever it weighs when `take_first`: the worker runs
 * nothing of the type then), so the work it holds in memory is bounded, not only the number of
 * its jobs: five hundred groups of 10,000 people each would not fit an instance's heap. NULL
 * `max_weight` leases by count alone, as before.
 */
export class JobWeights1797950000000 implements MigrationInterface {
  name = 'JobWeights1797950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs ADD COLUMN weight integer NOT NULL DEFAULT 1 CHECK (weight >= 1)`);
    await q.query(`DROP FUNCTION lease_jobs(text, integer, timestamptz, text[], integer, integer)`);
    await q.query(LEASE_JOBS_BY_WEIGHT);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION lease_jobs(text, integer, timestamptz, text[], integer, integer, bigint, boolean)`);
    await q.query(`ALTER TABLE jobs DROP COLUMN weight`);
    // The function as it was, leasing by count alone.
    await new JobLeaseFunction1797700000000().up(q);
  }
}

/** The lease by weight on the columns of `jobs` (JobQueue1798300000000 moved it to `job_queue`; its down puts this back). */
export const LEASE_JOBS_BY_WEIGHT = `
      CREATE FUNCTION lease_jobs(lease_owner text, lease_ms integer, due_by timestamptz, job_types text[], max_jobs integer, candidates integer, max_weight bigint, take_first boolean)
      RETURNS SETOF jobs LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
      BEGIN
        RETURN QUERY
        UPDATE jobs SET status = 'in_progress', leased_by = lease_owner, leased_until = statement_timestamp() + lease_ms * interval '1 millisecond',
          attempts = jobs.attempts + 1, started_at = coalesce(jobs.started_at, due_by)
        WHERE jobs.id IN (
          SELECT c.id FROM jobs c
          WHERE c.id IN (
              -- The candidates in lease order, as long as their weights add up to max_weight
              -- (and the first when take_first): a candidate another worker holds is skipped
              -- below but its weight counted here, so a batch weighs at most this.
              SELECT w.id FROM (
                SELECT u.id,
                       sum(u.weight) OVER (ORDER BY u.scheduled_at, u.seq ROWS UNBOUNDED PRECEDING) AS running,
                       row_number() OVER (ORDER BY u.scheduled_at, u.seq) AS n
                FROM (
                  (SELECT p.id, p.weight, p.scheduled_at, p.seq FROM jobs p
                   WHERE p.status = 'pending' AND p.kind <> 'manual' AND p.type = ANY(job_types) AND p.scheduled_at <= due_by
                     -- A job that runs after another waits while that one is queued or running.
                     AND (p.after_job_id IS NULL
                       OR NOT EXISTS (SELECT 1 FROM jobs a WHERE a.id = p.after_job_id AND a.status IN ('pending', 'in_progress')))
                   ORDER BY p.scheduled_at, p.seq LIMIT candidates)
                  UNION ALL
                  (SELECT e.id, e.weight, e.scheduled_at, e.seq FROM jobs e
                   WHERE e.status = 'in_progress' AND e.leased_until < statement_timestamp() AND e.kind <> 'manual' AND e.type = ANY(job_types)
                   ORDER BY e.scheduled_at, e.seq LIMIT candidates)) u
              ) w
              WHERE max_weight IS NULL OR w.running <= max_weight OR (w.n = 1 AND take_first))
            -- Checked again on the row as locked: another worker may have leased or finished it.
            -- Manual jobs are done by people (Assisted providers' ops tasks), never by a worker.
            AND c.kind <> 'manual' AND c.type = ANY(job_types)
            AND ((c.status = 'pending' AND c.scheduled_at <= due_by) OR (c.status = 'in_progress' AND c.leased_until < statement_timestamp()))
          ORDER BY c.scheduled_at, c.seq
          LIMIT max_jobs
          FOR UPDATE SKIP LOCKED)
        RETURNING jobs.*;
      END $$`;
