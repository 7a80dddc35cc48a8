import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ops list of jobs, newest first, without a connection (the dashboard's jobs page as it
 * opens): `jobs` had no index in that order but per connection, so each page sorted every job
 * there ever was (about 270 ms of PostgreSQL at 1,000,000 jobs, bench/README.md, "Ops reads over
 * a long history"). Neither column ever changes, so the index keeps the jobs' updates HOT; it
 * costs each new job one index entry. Built inside the migration's transaction, it holds off
 * writes of jobs for as long as it takes (a second or two per million jobs).
 */
export class JobsListIndex1798880000000 implements MigrationInterface {
  name = 'JobsListIndex1798880000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX jobs_list_idx ON jobs (created_at DESC, seq DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs_list_idx`);
  }
}
