import { EnrollmentConfigurationParams, EnrollmentGroupParams } from './benefit-job-params';

/**
 * The enrollment job aggregate's rules (DECISIONS.md "Effective dates", "Jobs"): a request is
 * split into one group per effective date, each group is one provider call on its date, and the
 * job's status follows from its groups.
 */

export interface EnrollmentItem {
  individualId: string;
  effectiveDate: string;
  configuration: EnrollmentConfigurationParams;
}

/** One group per distinct effective date, oldest first; items keep their request order. */
export function groupByEffectiveDate(items: EnrollmentItem[]): EnrollmentGroupParams[] {
  const groups = new Map<string, EnrollmentGroupParams>();
  for (const item of items) {
    let group = groups.get(item.effectiveDate);
    if (!group) {
      group = { effective_date: item.effectiveDate, items: [] };
      groups.set(item.effectiveDate, group);
    }
    group.items.push({ individual_id: item.individualId, configuration: item.configuration });
  }
  return [...groups.values()].sort((a, b) => a.effective_date.localeCompare(b.effective_date));
}

/** How one individual of a group came out: 200 done, otherwise a permanent per-individual error. */
export interface IndividualResult {
  individual_id: string;
  code: number;
  message?: string;
}

export interface GroupState {
  effectiveDate: string;
  processed: boolean;
  results: IndividualResult[] | null;
}

export type EnrollmentJobStatus = 'pending' | 'complete' | 'error';

/**
 * `pending` while any group (the latest-dated one included) is unprocessed; then `complete`, or
 * `error` only when not a single individual succeeded.
 */
export function enrollmentJobStatus(groups: GroupState[]): EnrollmentJobStatus {
  if (groups.length === 0 || groups.some((g) => !g.processed)) return 'pending';
  const succeeded = groups.some((g) => (g.results ?? []).some((r) => r.code === 200));
  return succeeded ? 'complete' : 'error';
}

/** Every processed individual's result, groups by date: the job's per-individual body. */
export function individualResultsOf(groups: GroupState[]): IndividualResult[] {
  return [...groups]
    .filter((g) => g.processed)
    .sort((a, b) => a.effectiveDate.localeCompare(b.effectiveDate))
    .flatMap((g) => g.results ?? []);
}

/** Request ids named more than once (compared case-insensitively), each listed once. */
export function repeatedIds(ids: string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Map<string, string>();
  for (const id of ids) {
    const key = id.toLowerCase();
    if (seen.has(key) && !repeated.has(key)) repeated.set(key, id);
    seen.add(key);
  }
  return [...repeated.values()];
}
