/**
 * Tests that stage a job's lease by hand (a crashed worker's, a live one's) write it where the
 * service keeps it: the job's row for its status and attempts, its `job_queue` row for the
 * holder and the expiry (JobQueue1798300000000).
 */

/** Anything that runs SQL: a DataSource, an EntityManager or a QueryRunner. */
interface Sql {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * Marks the job in progress under `holder`'s lease until `until` (an SQL expression, e.g.
 * `now() - interval '1 second'` for a lease run out); `attempts` when given.
 */
export async function holdJob(db: Sql, jobId: string, holder: string, until: string, attempts?: number): Promise<void> {
  await db.query(`UPDATE job_queue SET leased_by = $2, leased_until = ${until} WHERE job_id = $1`, [jobId, holder]);
  await db.query(`UPDATE jobs SET status = 'in_progress', attempts = coalesce($2, attempts) WHERE id = $1`, [jobId, attempts ?? null]);
}

/** Ends jobs by hand (status and completion time), leaving the queue as the service would: without their rows. */
export async function endJobs(db: Sql, where: string, parameters: unknown[], status: string, extra = ''): Promise<void> {
  await db.query(
    `WITH ended AS (UPDATE jobs SET status = '${status}', completed_at = now()${extra} WHERE ${where} RETURNING id)
     DELETE FROM job_queue WHERE job_id IN (SELECT id FROM ended)`,
    parameters,
  );
}

/** A job's status and attempts with its lease (null holder and expiry when it has none). */
export const JOB_LEASE_COLUMNS = `j.status, j.attempts, q.leased_by, q.leased_until`;
export const JOB_WITH_LEASE = `jobs j LEFT JOIN job_queue q ON q.job_id = j.id`;

/** Queues jobs a test inserted by hand (pending), as the service's inserts do. */
export async function queueJobs(db: Sql, ids: readonly string[]): Promise<void> {
  await db.query(
    `INSERT INTO job_queue (job_id, type, connection_id, after_job_id, scheduled_at, seq, weight)
     SELECT id, type, connection_id, after_job_id, scheduled_at, seq, weight FROM jobs WHERE id = ANY($1::uuid[])`,
    [ids],
  );
}
