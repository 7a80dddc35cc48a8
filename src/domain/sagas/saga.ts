import { ChangeStatus } from '../enrollments/enrollment-change';

/**
 * Saga state as the ops dashboard reads it. Sagas route (an event or request to commands and
 * jobs); aggregates (benefits, enrollments, jobs) remember. A saga waits on the jobs it started
 * and ends when the last of them ends.
 */
export const SAGA_TYPES = ['enrollment', 'new_hire', 'contribution_change', 'termination', 'assisted_fulfilment'] as const;
export type SagaType = (typeof SAGA_TYPES)[number];

export const SAGA_STATES = ['started', 'waiting', 'completed', 'failed'] as const;
export type SagaState = (typeof SAGA_STATES)[number];

export interface SagaStep {
  /** ISO 8601 instant */
  at: string;
  name: string;
  detail?: Record<string, unknown>;
}

export interface Saga {
  id: string;
  type: SagaType;
  state: SagaState;
  /** Why it ended as it did, e.g. `enrolled`, `no_policy`, `partially_failed`. */
  outcome: string | null;
  connectionId: string;
  entityId: string | null;
  sourceEventId: string | null;
  steps: SagaStep[];
  attempts: number;
  lastError: string | null;
  jobIds: string[];
  createdAt: Date;
  updatedAt: Date;
}

/**
 * How a job ended for the sagas waiting on it: a final job status, or `superseded` for a job
 * whose every individual a later request took over (cancelled, not failed).
 */
export const SUPERSEDED = 'superseded';

/** How a saga ends once its jobs have ended: failed if any failed, else completed. */
export function stateAfterJobs(jobStatuses: readonly string[]): SagaState {
  if (jobStatuses.some((s) => s === 'pending' || s === 'in_progress' || s === null)) return 'waiting';
  return jobStatuses.some((s) => s !== 'complete' && s !== SUPERSEDED) ? 'failed' : 'completed';
}

/**
 * A saga's status in a job it shares with other sagas (the HRIS events of a batch), from the
 * outcome of each of its own individuals in it: complete when one succeeded, superseded when all
 * were taken over, else an error; undefined when none has an outcome or one still waits.
 */
export function statusOfIndividuals(own: ReadonlySet<string>, outcomes: ReadonlyMap<string, ChangeStatus>): string | undefined {
  const theirs = [...own].map((id) => outcomes.get(id)).filter((o): o is ChangeStatus => o !== undefined);
  if (theirs.length === 0 || theirs.some((o) => o === 'waiting')) return undefined;
  if (theirs.some((o) => o === 'done')) return 'complete';
  if (theirs.every((o) => o === 'superseded')) return SUPERSEDED;
  return 'error';
}
