import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ops list of jobs of one kind, in time order (the dashboard's "manual jobs waiting on ops"):
 * with only `jobs_list_idx` (1798880000000) a page of a rare kind walked every job there ever was
 * to find its fifty (about 90 ms of PostgreSQL at 1,000,000 jobs, one in 500 of them manual,
 * bench/README.md, "Ops reads over a long history"). Neither column ever changes, so the jobs'
 * updates stay HOT; each new job costs one index entry more. Built inside the migration's
 * transaction, as `jobs_list_idx` was: it holds off writes of jobs for a second or two per
 * million jobs.
 */
export class JobsKindListIndex1798940000000 implements MigrationInterface {
  name = 'JobsKindListIndex1798940000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX jobs_kind_list_idx ON jobs (kind, created_at, seq)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs_kind_list_idx`);
  }
}
