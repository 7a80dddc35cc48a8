import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The job lease as a function whose statement is planned once per connection. As a prepared
 * statement PostgreSQL planned it again on every run: its plan with the run's values (the
 * clock, the types) always looked cheaper than the generic one, and planning an UPDATE over
 * three reads of `jobs`, a table of eight indexes, took about 1 ms, longer than the lease itself
 * (about 0.7 ms). A workers' poll runs it several times a second whatever the load, so under a
 * moderate stream (500 HRIS events/s) it was the database's costliest statement. The function's
 * own setting keeps the generic plan (force_generic_plan), which reads the same indexes.
 *
 * What it leases: up to `max_jobs` automated or internal jobs of the given types that are due
 * (pending, scheduled by `due_by`) or whose worker's lease ran out, oldest first; see
 * JobsRepository.lease for why it reads two index ranges of `candidates` rows each.
 */
export class JobLeaseFunction1797700000000 implements MigrationInterface {
  name = 'JobLeaseFunction1797700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION lease_jobs(lease_owner text, lease_ms integer, due_by timestamptz, job_types text[], max_jobs integer, candidates integer)
      RETURNS SETOF jobs LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
      BEGIN
        RETURN QUERY
        UPDATE jobs SET status = 'in_progress', leased_by = lease_owner, leased_until = statement_timestamp() + lease_ms * interval '1 millisecond',
          attempts = jobs.attempts + 1, started_at = coalesce(jobs.started_at, due_by)
        WHERE jobs.id IN (
          SELECT c.id FROM jobs c
          WHERE c.id IN (
              (SELECT p.id FROM jobs p
               WHERE p.status = 'pending' AND p.kind <> 'manual' AND p.type = ANY(job_types) AND p.scheduled_at <= due_by
                 -- A job that runs after another waits while that one is queued or running.
                 AND (p.after_job_id IS NULL
                   OR NOT EXISTS (SELECT 1 FROM jobs a WHERE a.id = p.after_job_id AND a.status IN ('pending', 'in_progress')))
               ORDER BY p.scheduled_at, p.seq LIMIT candidates)
              UNION ALL
              (SELECT e.id FROM jobs e
               WHERE e.status = 'in_progress' AND e.leased_until < statement_timestamp() AND e.kind <> 'manual' AND e.type = ANY(job_types)
               ORDER BY e.scheduled_at, e.seq LIMIT candidates))
            -- Checked again on the row as locked: another worker may have leased or finished it.
            -- Manual jobs are done by people (Assisted providers' ops tasks), never by a worker.
            AND c.kind <> 'manual' AND c.type = ANY(job_types)
            AND ((c.status = 'pending' AND c.scheduled_at <= due_by) OR (c.status = 'in_progress' AND c.leased_until < statement_timestamp()))
          ORDER BY c.scheduled_at, c.seq
          LIMIT max_jobs
          FOR UPDATE SKIP LOCKED)
        RETURNING jobs.*;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION lease_jobs(text, integer, timestamptz, text[], integer, integer)`);
  }
}
