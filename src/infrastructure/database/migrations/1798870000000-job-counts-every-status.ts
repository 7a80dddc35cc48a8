import { MigrationInterface, QueryRunner } from 'typeorm';
import { createKeptCountTriggers, dropKeptCountTriggers, KeptCountTriggers } from './kept-count-triggers';
import { COUNTED, JOBS, keyOf } from './1798810000000-job-counts';

/** Every job counted, under the same key: pending ones by when made and due, the others by status alone. */
const EVERY_JOB: KeptCountTriggers = { ...JOBS, counted: () => 'true' };

/**
 * The jobs' kept counts (1798810000000) count every status, `complete` too: the ops list of jobs
 * counted the whole table for its paging on every read (515 ms at 1,000,000 jobs, bench/README.md,
 * "Ops reads over a long history"), and now reads the counts when it filters by status alone or
 * not at all. A statement that completes jobs appends one more row to `job_count_changes`, under
 * a key per status. The triggers are replaced under the lock DROP TRIGGER takes on `jobs`, which
 * waits for the writers in flight and holds off new ones until this commits, so no write falls
 * between the count of the jobs already there and the new triggers.
 */
export class JobCountsEveryStatus1798870000000 implements MigrationInterface {
  name = 'JobCountsEveryStatus1798870000000';

  async up(q: QueryRunner): Promise<void> {
    await dropKeptCountTriggers(q, JOBS);
    await createKeptCountTriggers(q, EVERY_JOB);
    await q.query(`INSERT INTO job_counts (status, created_at, scheduled_at, n) SELECT ${keyOf('j')}, count(*) FROM jobs j WHERE j.status NOT IN ${COUNTED} GROUP BY 1, 2, 3`);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropKeptCountTriggers(q, JOBS);
    await createKeptCountTriggers(q, JOBS);
    await q.query(`DELETE FROM job_count_changes WHERE status NOT IN ${COUNTED}`);
    await q.query(`DELETE FROM job_counts WHERE status NOT IN ${COUNTED}`);
  }
}
