import { ColumnSet } from './column-set';

/** A job as it is first written: pending, not leased, no attempt yet. */
export type NewJobRow = {
  id: string;
  connection_id: string;
  entity_id: string | null;
  kind: string;
  type: string;
  params: unknown;
  created_at: Date;
  scheduled_at: Date;
  /** The work it carries (JobWeights1797950000000); 1 for most jobs. */
  weight?: number;
  /**
   * Whether a worker leases it (a `job_queue` row, JobQueue1798300000000): by default every job
   * but a manual one; false for a job whose status its owner moves (an enrollment request's).
   */
  queued?: boolean;
};

/** A new job's `job_queue` row by default: every job a worker may lease, so every one but a manual job. */
export const queuedByDefault = (kind: string): boolean => kind !== 'manual';

/**
 * New jobs as columns (column-set.ts), `n` their order: PostgreSQL plans the set for few rows,
 * where a recordset read as 100 rows scanned the table. Jobs are inserted in that order, since a
 * job's seq (a request's order) is taken as it is inserted.
 */
const NEW_JOBS = new ColumnSet<Omit<NewJobRow, 'queued'> & { n: number }>({
  n: 'int',
  id: 'uuid',
  connection_id: 'uuid',
  entity_id: 'uuid',
  kind: 'text',
  type: 'text',
  params: 'jsonb',
  created_at: 'timestamptz',
  scheduled_at: 'timestamptz',
  weight: 'int',
});

/** One statement inserting these jobs, pending, in the order given, with the queue rows of those a worker leases. */
export function insertNewJobs(jobs: readonly NewJobRow[]): [sql: string, parameters: unknown[]] {
  return [
    `WITH inserted AS (
       INSERT INTO jobs (id, connection_id, entity_id, kind, type, status, params, created_at, scheduled_at, weight)
       SELECT u.id, u.connection_id, u.entity_id, u.kind, u.type, 'pending', u.params, u.created_at, u.scheduled_at, u.weight
       FROM ${NEW_JOBS.from(1)}
       ORDER BY u.n
       RETURNING id, type, connection_id, scheduled_at, seq, weight)
     INSERT INTO job_queue (job_id, type, connection_id, scheduled_at, seq, weight)
     SELECT i.id, i.type, i.connection_id, i.scheduled_at, i.seq, i.weight
     FROM inserted i
     WHERE i.id = ANY($${NEW_JOBS.count + 1}::uuid[])`,
    [
      ...NEW_JOBS.values(jobs.map(({ queued: _queued, ...job }, n) => ({ ...job, weight: job.weight ?? 1, n }))),
      jobs.filter((job) => job.queued ?? queuedByDefault(job.kind)).map((job) => job.id),
    ],
  ];
}
