import { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';

/**
 * The parts an enrollment request is made of. A request (a job) is split into effective-date
 * groups; each individual named on a date is one change, the unit the lifecycle rules speak of:
 * it waits, reaches the provider in its individual's request order, or is taken over by a later
 * request.
 */
export type EnrollmentOperation = 'enroll' | 'unenroll';

/** How one individual of a group came out: 200 done, otherwise a per-individual error. */
export interface IndividualResult {
  individual_id: string;
  code: number;
  message?: string;
}

export type ChangeStatus = 'waiting' | 'done' | 'failed' | 'superseded';

export interface EnrollmentChange {
  groupId: string;
  jobId: string;
  benefitId: string;
  individualId: string;
  operation: EnrollmentOperation;
  /** `YYYY-MM-DD` */
  effectiveDate: string;
  /** The configuration an enroll sets; null for an unenroll. */
  configuration: EnrollmentConfigurationParams | null;
  /** Request order of the job (its sequence): one individual's changes reach the provider in it. */
  order: number;
  /** Place in its request, so per-individual results come back in request order. */
  position: number;
  status: ChangeStatus;
  result: IndividualResult | null;
  /** Jobs whose waiting enrollments of this individual this change took over. */
  cancels: string[];
}

/**
 * Where an effective-date group's work stands. `waiting`: for its date (or for an earlier request
 * of the same individuals); `in_ops`: an Assisted provider's staff have it as an open task;
 * `submitting`: its provider call is under way (or ops completed its task and the change is being
 * applied), so no later request may take its individuals out; `processed`: every change has a result.
 */
export type GroupState = 'waiting' | 'in_ops' | 'submitting' | 'processed';

export interface ChangeCounts {
  waiting: number;
  succeeded: number;
  failed: number;
  superseded: number;
}

export const NO_CHANGES: ChangeCounts = { waiting: 0, succeeded: 0, failed: 0, superseded: 0 };

export interface EnrollmentGroup {
  id: string;
  jobId: string;
  benefitId: string;
  operation: EnrollmentOperation;
  effectiveDate: string;
  order: number;
  state: GroupState;
  counts: ChangeCounts;
}

export type EnrollmentJobKind = 'automated' | 'manual';
export type EnrollmentJobStatus = 'pending' | 'complete' | 'error';

/** An enrollment request's job: pollable, never leased; its groups move it. */
export interface EnrollmentJob {
  id: string;
  kind: EnrollmentJobKind;
  operation: EnrollmentOperation;
  connectionId: string;
  entityId: string;
  benefitId: string;
  order: number;
  status: EnrollmentJobStatus;
  /** Summed over all its groups, not only the ones a ledger holds. */
  counts: ChangeCounts;
}

/**
 * `pending` while any change waits (the latest-dated group included); then `error` only when
 * some individual failed and none succeeded. Individuals a later request took over are not
 * failures: a job whose every individual was taken over completes (its results say by which job).
 */
export function jobStatusOf(counts: ChangeCounts): EnrollmentJobStatus {
  if (counts.waiting > 0) return 'pending';
  return counts.succeeded === 0 && counts.failed > 0 ? 'error' : 'complete';
}

/** One group per distinct effective date, oldest first; items keep their request order. */
export function groupByEffectiveDate<T extends { effectiveDate: string }>(items: readonly T[]): { effectiveDate: string; items: T[] }[] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(item.effectiveDate);
    if (group) group.push(item);
    else groups.set(item.effectiveDate, [item]);
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([effectiveDate, grouped]) => ({ effectiveDate, items: grouped }));
}

/**
 * Keys named more than once (compared case-insensitively), each listed once: an individual may
 * appear on several dates of one request, but once per date.
 */
export function repeatedKeys(keys: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Map<string, string>();
  for (const key of keys) {
    const folded = key.toLowerCase();
    if (seen.has(folded) && !repeated.has(folded)) repeated.set(folded, key);
    seen.add(folded);
  }
  return [...repeated.values()];
}
