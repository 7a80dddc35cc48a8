import { MigrationInterface, QueryRunner } from 'typeorm';
import { createKeptCountTriggers, dropKeptCountTriggers, KeptCountTriggers } from './kept-count-triggers';
import { JOBS } from './1798810000000-job-counts';

/** Every job, under its status, kind and type; pending ones also by when made and due. */
const BY_KIND_AND_TYPE: KeptCountTriggers = {
  ...JOBS,
  columns: 'status, kind, type, created_at, scheduled_at',
  keyOf: (row) =>
    `${row}.status, ${row}.kind, ${row}.type, CASE WHEN ${row}.status = 'pending' THEN ${row}.created_at ELSE '-infinity' END, ` +
    `CASE WHEN ${row}.status = 'pending' THEN ${row}.scheduled_at ELSE '-infinity' END`,
  counted: () => 'true',
};
/** As 1798870000000 left them. */
const EVERY_JOB: KeptCountTriggers = { ...JOBS, counted: () => 'true' };

/**
 * The jobs' kept counts (1798810000000, every status since 1798870000000) are kept by kind and
 * type too: the ops list of jobs filtered by kind or type (the dashboard's "manual jobs waiting
 * on ops") counted the whole table for its paging. Statuses other than pending had a row each;
 * now a row per kind and type in use, a few dozen. The counts are made again from `jobs` under
 * the lock DROP TRIGGER takes on it, as 1798870000000 does.
 */
export class JobCountsByKindAndType1798930000000 implements MigrationInterface {
  name = 'JobCountsByKindAndType1798930000000';

  async up(q: QueryRunner): Promise<void> {
    await dropKeptCountTriggers(q, JOBS);
    await rekey(q, ['kind', 'type']);
    await createKeptCountTriggers(q, BY_KIND_AND_TYPE);
    await recount(q, BY_KIND_AND_TYPE);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropKeptCountTriggers(q, JOBS);
    await rekey(q, []);
    await createKeptCountTriggers(q, EVERY_JOB);
    await recount(q, EVERY_JOB);
  }
}

/** Empties both counts tables and gives them the key's columns (`extra` between the status and the times). */
async function rekey(q: QueryRunner, extra: readonly string[]): Promise<void> {
  await q.query(`TRUNCATE job_counts, job_count_changes`);
  await q.query(`ALTER TABLE job_counts DROP CONSTRAINT job_counts_pkey`);
  for (const table of ['job_counts', 'job_count_changes']) {
    for (const column of ['kind', 'type']) await q.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS ${column}`);
    for (const column of extra) await q.query(`ALTER TABLE ${table} ADD COLUMN ${column} text NOT NULL`);
  }
  await q.query(`ALTER TABLE job_counts ADD CONSTRAINT job_counts_pkey PRIMARY KEY (${['status', ...extra, 'created_at', 'scheduled_at'].join(', ')})`);
}

async function recount(q: QueryRunner, t: KeptCountTriggers): Promise<void> {
  const positions = t.columns.split(',').map((_, i) => i + 1).join(', ');
  await q.query(`INSERT INTO job_counts (${t.columns}, n) SELECT ${t.keyOf('j')}, count(*) FROM jobs j GROUP BY ${positions}`);
}
