import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { FinalJobStatus, Job, JobKind, JobStatus } from '../../domain/jobs/job';
import { affectedCount, returnedRows } from '../../infrastructure/database/query-result';
import { ColumnSet } from '../../infrastructure/database/column-set';
import { insertNewJobs, queuedByDefault } from '../../infrastructure/database/new-jobs';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';

/** A `jobs` row as the database answers it (JOB_COLUMNS). */
export interface JobRow {
  id: string;
  connection_id: string;
  entity_id: string | null;
  kind: JobKind;
  type: string;
  status: JobStatus;
  params: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  attempts: number;
  created_at: Date;
  scheduled_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  weight?: number;
}

const JOB_COLUMN_NAMES = ['id', 'connection_id', 'entity_id', 'kind', 'type', 'status', 'params', 'result', 'attempts', 'created_at', 'scheduled_at', 'started_at', 'completed_at', 'weight'];
/** The columns a job is read from (toJob), qualified by `alias` when given. */
export const jobColumns = (alias?: string): string => JOB_COLUMN_NAMES.map((column) => (alias ? `${alias}.${column}` : column)).join(', ');
export const JOB_COLUMNS = jobColumns();

const FINAL_STATUSES = new ColumnSet<{ id: string; status: string; result: Record<string, unknown> | null }>({ id: 'uuid', status: 'text', result: 'jsonb' });

/** A job's weight as stored: a whole number of at least 1. */
const weightOf = (job: NewJob): number => Math.max(1, Math.ceil(job.weight ?? 1));

export function toJob(row: JobRow): Job {
  return {
    id: row.id,
    connectionId: row.connection_id,
    entityId: row.entity_id,
    kind: row.kind,
    type: row.type,
    status: row.status,
    params: row.params,
    result: row.result,
    attempts: row.attempts,
    createdAt: new Date(row.created_at),
    scheduledAt: new Date(row.scheduled_at),
    startedAt: row.started_at === null ? null : new Date(row.started_at),
    completedAt: row.completed_at === null ? null : new Date(row.completed_at),
    weight: row.weight ?? 1,
  };
}

export interface NewJob {
  id: string;
  connectionId: string;
  entityId?: string | null;
  kind: JobKind;
  type: string;
  params?: Record<string, unknown> | null;
  createdAt: Date;
  /** When it may run; defaults to createdAt (at once). */
  scheduledAt?: Date;
  /** A job this one runs after: it is not leased while that one is pending or running. */
  afterJobId?: string | null;
  /** The work it carries (an enrollment group's people), for batches leased by weight; 1 when absent. */
  weight?: number;
  /** Whether a worker leases it (NewJobRow.queued): every job but a manual one unless told. */
  queued?: boolean;
}

/** A leased job put back to wait: due at `scheduledAt`, unless woken meanwhile (deferMany). */
export interface Deferral {
  id: string;
  scheduledAt: Date;
  /** The job's due time when it was leased. */
  leasedDueAt: Date;
}

/**
 * The `jobs` table, and `job_queue`, the scheduling state of the jobs a worker runs while they are
 * open (JobQueue1798300000000): a job's row is updated in place (HOT) as it runs, since no index
 * of `jobs` reads its status, and a lease touches only unindexed columns of its queue row. A
 * statement that changes both locks the queue row first.
 *
 * Business times (created, scheduled, started, completed) are the service's clock, passed in, so
 * tests that move the clock move them; leases are database time, because they measure real time
 * between processes.
 */
@Injectable()
export class JobsRepository {
  constructor(private readonly dataSource: DataSource) {}

  private db(manager?: EntityManager) {
    return manager ?? this.dataSource.manager;
  }

  async insert(job: NewJob, manager?: EntityManager): Promise<Job> {
    const [row] = await this.db(manager).query(
      `WITH inserted AS (
         INSERT INTO jobs (id, connection_id, entity_id, kind, type, status, params, created_at, scheduled_at, after_job_id, weight)
         VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, $10)
         RETURNING ${JOB_COLUMNS}, after_job_id, seq),
       queued AS (
         INSERT INTO job_queue (job_id, type, connection_id, after_job_id, scheduled_at, seq, weight)
         SELECT id, type, connection_id, after_job_id, scheduled_at, seq, weight FROM inserted WHERE $11)
       SELECT ${JOB_COLUMNS} FROM inserted`,
      [
        job.id,
        job.connectionId,
        job.entityId ?? null,
        job.kind,
        job.type,
        job.params === undefined || job.params === null ? null : JSON.stringify(job.params),
        job.createdAt,
        job.scheduledAt ?? job.createdAt,
        job.afterJobId ?? null,
        weightOf(job),
        job.queued ?? queuedByDefault(job.kind),
      ],
    );
    return toJob(row);
  }

  /** Several jobs in one statement, in the caller's transaction. */
  async insertMany(jobs: readonly NewJob[], manager: EntityManager): Promise<void> {
    if (jobs.length === 0) return;
    await manager.query(
      ...insertNewJobs(
        jobs.map((j) => ({
          id: j.id,
          connection_id: j.connectionId,
          entity_id: j.entityId ?? null,
          kind: j.kind,
          type: j.type,
          params: j.params ?? null,
          created_at: j.createdAt,
          scheduled_at: j.scheduledAt ?? j.createdAt,
          weight: weightOf(j),
          queued: j.queued,
        })),
      ),
    );
  }

  async find(id: string, manager?: EntityManager): Promise<Job | undefined> {
    const [row] = await this.db(manager).query(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [id]);
    return row ? toJob(row) : undefined;
  }

  /** A job of this connection and kind; undefined for any other (another connection's is not found). */
  async findOfConnection(id: string, connectionId: string, kind: JobKind): Promise<Job | undefined> {
    const [row] = await this.dataSource.query(
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 AND connection_id = $2 AND kind = $3`,
      [id, connectionId, kind],
    );
    return row ? toJob(row) : undefined;
  }

  /** A job of this type of the connection that is queued or running, any kind. */
  async findOpen(connectionId: string, type: string, manager?: EntityManager): Promise<Job | undefined> {
    const [row] = await this.db(manager).query(
      `SELECT ${JOB_COLUMNS} FROM jobs
       WHERE connection_id = $1 AND type = $2 AND status IN ('pending', 'in_progress')
       ORDER BY seq LIMIT 1`,
      [connectionId, type],
    );
    return row ? toJob(row) : undefined;
  }

  /**
   * Jobs of this type the connection created in [from, to), any kind and status; those whose
   * `params.trigger` is `exceptTrigger` are left out.
   */
  async countCreated(
    connectionId: string,
    type: string,
    from: Date,
    to: Date,
    manager?: EntityManager,
    { exceptTriggers = [] }: { exceptTriggers?: readonly string[] } = {},
  ): Promise<number> {
    const [row] = await this.db(manager).query(
      `SELECT count(*)::int AS n FROM jobs WHERE connection_id = $1 AND type = $2 AND created_at >= $3 AND created_at < $4
         AND (params->>'trigger' IS NULL OR NOT params->>'trigger' = ANY($5::text[]))`,
      [connectionId, type, from, to, exceptTriggers],
    );
    return row.n;
  }

  /**
   * The connection's jobs of this type that are queued or running, any kind, oldest first, each
   * with the job it waits for (null when none).
   */
  async listOpen(connectionId: string, type: string, manager?: EntityManager): Promise<(Job & { afterJobId: string | null })[]> {
    const rows: (JobRow & { after_job_id: string | null })[] = await this.db(manager).query(
      `SELECT ${JOB_COLUMNS}, after_job_id FROM jobs
       WHERE connection_id = $1 AND type = $2 AND status IN ('pending', 'in_progress')
       ORDER BY seq`,
      [connectionId, type],
    );
    return rows.map((row) => ({ ...toJob(row), afterJobId: row.after_job_id }));
  }

  /** Newest first, with the total for paging. */
  async listOfConnection(
    connectionId: string,
    kind: JobKind,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; jobs: Job[] }> {
    const where = new SqlFilter().and((p) => `connection_id = ${p}`, connectionId).and((p) => `kind = ${p}`, kind);
    const { count, rows } = await countedPage<JobRow>(
      this.dataSource,
      { from: 'jobs', select: `SELECT ${JOB_COLUMNS} FROM jobs`, where, orderBy: 'created_at DESC, seq DESC' },
      page,
    );
    return { count, jobs: rows.map(toJob) };
  }

  // ---- used by workers ----

  /**
   * Leases up to `limit` automated or internal jobs of the given types that are due (pending, scheduled by `now`) or
   * whose worker's lease ran out (a crashed worker's job). SKIP LOCKED lets workers of several
   * instances lease at once without waiting on, or taking, each other's rows.
   *
   * The candidates come from one index read of `job_queue` (job_queue_due_idx, by type and due
   * time: a running job was due when leased, so an expired lease is in the same range), a few
   * times `limit` so that rows another worker holds can be skipped; only the rows leased are
   * locked, and their conditions are checked again under the lock. No index reads the lease
   * columns, so leasing, renewing and expiring write no index entry (HOT updates).
   */
  /**
   * Leases up to `limit` due jobs of `types`, oldest first. With `weight`, only as many as weigh
   * at most `weight.max` together; the first one even when it alone weighs more if
   * `weight.takeFirst` (nothing of the kind is running: a heavy job is never left behind), so
   * work in flight stays bounded by the larger of the bound and one job.
   */
  async lease(owner: string, types: string[], now: Date, leaseMs: number, limit: number, weight?: { max: number; takeFirst: boolean }): Promise<Job[]> {
    if (types.length === 0 || limit <= 0) return [];
    // The statement is the function's (migration 1797950000000): planned once per connection, not on every poll.
    const rows: JobRow[] = await this.dataSource.query(`SELECT ${JOB_COLUMNS} FROM lease_jobs($1, $2, $3, $4::text[], $5, $6, $7, $8)`, [
      owner,
      leaseMs,
      now,
      types,
      limit,
      limit * 4,
      weight?.max ?? null,
      weight?.takeFirst ?? true,
    ]);
    return rows.map(toJob);
  }

  /** Extends the lease; false when it is no longer this owner's (taken over or finished). */
  async renewLease(id: string, owner: string, leaseMs: number): Promise<boolean> {
    const result = await this.dataSource.query(
      `UPDATE job_queue SET leased_until = now() + ($3 || ' milliseconds')::interval
       WHERE job_id = $1 AND leased_by = $2 RETURNING job_id`,
      [id, owner, String(leaseMs)],
    );
    return affectedCount(result) === 1;
  }

  /** Records the final status; false (nothing written) when the lease is no longer this owner's. */
  async finish(
    id: string,
    owner: string,
    outcome: { status: FinalJobStatus; result: Record<string, unknown> | null; completedAt: Date },
    manager?: EntityManager,
  ): Promise<boolean> {
    if (!manager) return this.dataSource.transaction((m) => this.finish(id, owner, outcome, m));
    const result = await manager.query(
      `WITH ended AS (DELETE FROM job_queue WHERE job_id = $1 AND leased_by = $2 RETURNING job_id)
       UPDATE jobs j SET status = $3, result = $4, completed_at = $5 FROM ended WHERE j.id = ended.job_id RETURNING j.id`,
      [id, owner, outcome.status, outcome.result === null ? null : JSON.stringify(outcome.result), outcome.completedAt],
    );
    return affectedCount(result) === 1;
  }

  /**
   * Deletes internal jobs that ended before `before` (10,000 at a time, up to a million a call),
   * read by creation time (jobs_internal_created_idx): a job ends after it is made, and no index
   * may read its status or end time, which its run changes.
   */
  async purgeFinishedInternal(before: Date): Promise<void> {
    for (let round = 0; round < 100; round++) {
      const result = await this.dataSource.query(
        `DELETE FROM jobs WHERE id IN (
           SELECT id FROM jobs WHERE kind = 'internal' AND created_at < $1 AND status NOT IN ('pending', 'in_progress') AND completed_at < $1 LIMIT 10000)`,
        [before],
      );
      if (affectedCount(result) < 10_000) return;
    }
  }

  /** Extends the leases this owner still holds; answers the ids held. */
  async renewLeases(ids: readonly string[], owner: string, leaseMs: number): Promise<string[]> {
    const rows = returnedRows<{ job_id: string }>(
      await this.dataSource.query(
        `UPDATE job_queue q SET leased_until = now() + ($3 || ' milliseconds')::interval
         FROM unnest($1::uuid[]) AS k(id)
         WHERE q.job_id = k.id AND q.leased_by = $2 RETURNING q.job_id`,
        [ids, owner, String(leaseMs)],
      ),
    );
    return rows.map((r) => r.job_id);
  }

  /** Final statuses of many jobs in one statement, for those whose lease is still this owner's; answers those. */
  async finishMany(
    owner: string,
    outcomes: readonly { id: string; status: FinalJobStatus; result: Record<string, unknown> | null }[],
    completedAt: Date,
    manager: EntityManager,
  ): Promise<string[]> {
    if (outcomes.length === 0) return [];
    const rows = returnedRows<{ id: string }>(
      await manager.query(
        `WITH ended AS (
           DELETE FROM job_queue q USING ${FINAL_STATUSES.from(3)}
           WHERE q.job_id = u.id AND q.leased_by = $1 RETURNING q.job_id, u.status, u.result)
         UPDATE jobs j SET status = e.status, result = e.result, completed_at = $2
         FROM ended e WHERE j.id = e.job_id RETURNING j.id`,
        [owner, completedAt, ...FINAL_STATUSES.values(outcomes.map((o) => ({ id: o.id, status: o.status, result: o.result })))],
      ),
    );
    return rows.map((r) => r.id);
  }

  /**
   * Puts jobs that must wait back in the queue, each due at its time; these runs are not counted.
   * `leasedDueAt` is the job's due time as leased: one moved since was woken while it ran (what
   * it waits for ended meanwhile) and is due at once, not after the wait it asked for.
   */
  async deferMany(owner: string, deferrals: readonly Deferral[]): Promise<number> {
    if (deferrals.length === 0) return 0;
    const updated = await this.dataSource.query(
      `WITH waiting AS (
         UPDATE job_queue q SET leased_by = NULL, leased_until = NULL,
           scheduled_at = CASE WHEN date_trunc('milliseconds', q.scheduled_at) <> u.leased_due_at THEN least(q.scheduled_at, u.scheduled_at) ELSE u.scheduled_at END
         FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[]) AS u(id, scheduled_at, leased_due_at)
         WHERE q.job_id = u.id AND q.leased_by = $4 RETURNING q.job_id, q.scheduled_at)
       UPDATE jobs j SET status = 'pending', attempts = greatest(j.attempts - 1, 0), scheduled_at = w.scheduled_at
       FROM waiting w WHERE j.id = w.job_id RETURNING j.id`,
      [deferrals.map((d) => d.id), deferrals.map((d) => d.scheduledAt), deferrals.map((d) => d.leasedDueAt), owner],
    );
    return affectedCount(updated);
  }

  /** Puts the job back in the queue to run at `scheduledAt` (a retry), keeping why it failed. */
  async reschedule(id: string, owner: string, scheduledAt: Date, result: Record<string, unknown>): Promise<boolean> {
    const updated = await this.dataSource.query(
      `WITH waiting AS (
         UPDATE job_queue SET leased_by = NULL, leased_until = NULL, scheduled_at = $3 WHERE job_id = $1 AND leased_by = $2 RETURNING job_id)
       UPDATE jobs j SET status = 'pending', scheduled_at = $3, result = $4 FROM waiting w WHERE j.id = w.job_id RETURNING j.id`,
      [id, owner, scheduledAt, JSON.stringify(result)],
    );
    return affectedCount(updated) === 1;
  }

  /** Puts a job that must wait back in the queue, due at `scheduledAt`; this run is not counted (as deferMany). */
  async defer(job: Pick<Job, 'id' | 'scheduledAt'>, owner: string, scheduledAt: Date): Promise<boolean> {
    return (await this.deferMany(owner, [{ id: job.id, scheduledAt, leasedDueAt: job.scheduledAt }])) === 1;
  }

  /**
   * Ends at once the leases of holders known to be dead (their instance stopped beating, or was
   * replaced by its restart): the lease path takes their jobs over, counting the run that died.
   */
  async expireLeasesOf(holders: readonly string[], manager: EntityManager): Promise<number> {
    if (holders.length === 0) return 0;
    const result = await manager.query(
      `UPDATE job_queue SET leased_until = 'epoch'
       WHERE leased_by = ANY($1::text[]) AND leased_until > 'epoch' RETURNING job_id`,
      [holders],
    );
    return affectedCount(result);
  }

  /** Gives an unfinished job back (shutdown): due again at once, and this run is not counted. */
  async release(id: string, owner: string): Promise<boolean> {
    const updated = await this.dataSource.query(
      `WITH released AS (UPDATE job_queue SET leased_by = NULL, leased_until = NULL WHERE job_id = $1 AND leased_by = $2 RETURNING job_id)
       UPDATE jobs j SET status = 'pending', attempts = greatest(j.attempts - 1, 0) FROM released r WHERE j.id = r.job_id RETURNING j.id`,
      [id, owner],
    );
    return affectedCount(updated) === 1;
  }
}
