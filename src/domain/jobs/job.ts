/**
 * Jobs: work the service does outside the request that asked for it (data syncs, benefit
 * operations), leased by workers from the database and polled by clients.
 */

/** Automated job statuses (DECISIONS.md "Jobs"); manual jobs use the first four. */
export const JOB_STATUSES = ['pending', 'in_progress', 'complete', 'error', 'reauth_error', 'permissions_error'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Where a job ends. */
export type FinalJobStatus = Exclude<JobStatus, 'pending' | 'in_progress'>;

/**
 * `automated`: polled at /jobs/automated/{id}; `manual`: at /jobs/manual/{id} (Assisted
 * providers); `internal`: work with no pollable id, e.g. the sync behind `POST /sandbox/jobs`
 * of an Assisted sandbox connection, whose `job_id` the spec makes null.
 */
export const JOB_KINDS = ['automated', 'manual', 'internal'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** The one data sync type of the API: a full copy of the employer's data. */
export const DATA_SYNC_ALL = 'data_sync_all';

export interface Job {
  id: string;
  connectionId: string;
  entityId: string | null;
  kind: JobKind;
  type: string;
  status: JobStatus;
  params: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  attempts: number;
  createdAt: Date;
  scheduledAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

export interface RetryPolicy {
  /** Runs a job may take in all, the first included. */
  maxAttempts: number;
  /** Delay before the second run; it doubles each time after. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 5 * 60_000 };

/**
 * When a job that failed transiently on its `attempts`-th run runs again, or undefined when it
 * has used up its attempts. Exponential: base, 2×base, 4×base … capped at maxDelayMs.
 */
export function nextAttemptAt(now: Date, attempts: number, policy: RetryPolicy): Date | undefined {
  if (attempts >= policy.maxAttempts) return undefined;
  const delay = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempts - 1));
  return new Date(now.getTime() + delay);
}
