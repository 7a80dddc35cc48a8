/**
 * Jobs: work the service does outside the request that asked for it (data syncs, benefit
 * operations), leased by workers from the database and polled by clients.
 */

/** Automated job statuses (DECISIONS.md "Jobs"); manual jobs use the first four. */
export const JOB_STATUSES = ['pending', 'in_progress', 'complete', 'error', 'reauth_error', 'permissions_error'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Where a job ends. */
export type FinalJobStatus = Exclude<JobStatus, 'pending' | 'in_progress'>;

/** The statuses of a job that failed. */
export const FAILED_JOB_STATUSES: readonly FinalJobStatus[] = ['error', 'reauth_error', 'permissions_error'];

/**
 * `automated`: polled at /jobs/automated/{id}; `manual`: at /jobs/manual/{id} (Assisted
 * providers); `internal`: work with no pollable id, e.g. the sync behind `POST /sandbox/jobs`
 * of an Assisted sandbox connection, whose `job_id` the spec makes null.
 */
export const JOB_KINDS = ['automated', 'manual', 'internal'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** The one data sync type of the API: a full copy of the employer's data. */
export const DATA_SYNC_ALL = 'data_sync_all';
/**
 * `params.trigger` of data syncs the service starts itself (a sandbox edit, a provider's event),
 * which do not count against the client's hourly refreshes.
 */
export const SERVICE_SYNC_TRIGGERS = ['sandbox_edit', 'gusto_event'] as const;

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
  /** The work it carries (an enrollment group's people), for batches bounded by weight; 1 when absent. */
  weight?: number;
}

export interface RetryPolicy {
  /**
   * Runs a job may take in all, the first included. Also bounds runs that never finish (a job
   * that kills its worker): past it the job is given up.
   */
  maxAttempts: number;
  /** Delay before the second run; it doubles each time after. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** How long after its first run a job may still be retried; unbounded when absent. */
  budgetMs?: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 5 * 60_000 };

/**
 * When a job that failed transiently on its `attempts`-th run runs again, or undefined when it
 * has used up its attempts or its time budget (counted from `firstRunAt`). Exponential: base,
 * 2×base, 4×base … capped at maxDelayMs.
 */
export function nextAttemptAt(now: Date, attempts: number, policy: RetryPolicy, firstRunAt: Date = now): Date | undefined {
  if (attempts >= policy.maxAttempts) return undefined;
  const delay = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempts - 1));
  const next = new Date(now.getTime() + delay);
  if (policy.budgetMs !== undefined && next.getTime() > firstRunAt.getTime() + policy.budgetMs) return undefined;
  return next;
}

/** The longest wait between two runs of work against a provider, unless configured shorter or longer. */
export const DEFAULT_PROVIDER_RETRY_MAX_DELAY_MS = 5 * 60_000;

/**
 * Retries of work against a provider, sized from its live latency (the catalogue's range): a
 * provider whose calls take up to two minutes gets minutes between runs and most of an hour in
 * all, one answering in half a second gets seconds and ten minutes. Bounded by time, not by a
 * count, so a slow provider is not given up on after a few quick tries. `maxDelayMs` caps each
 * wait (the first one too): a shorter cap means more runs within the same budget.
 */
export function retryPolicyForLatency(latency: { min: number; max: number }, maxDelayMs = DEFAULT_PROVIDER_RETRY_MAX_DELAY_MS): RetryPolicy {
  const baseDelayMs = Math.min(maxDelayMs, 30_000, Math.max(1_000, Math.round(latency.max / 10)));
  return {
    maxAttempts: 30,
    baseDelayMs,
    maxDelayMs,
    budgetMs: Math.max(10 * 60_000, 20 * latency.max),
  };
}
