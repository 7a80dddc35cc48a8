import { IndividualResult } from '../enrollments/enrollment-change';

/**
 * The `body` of a manual job (`GET /jobs/manual/{id}`): null while its ops task is open or
 * being applied; once resolved, what came of it.
 */
export interface ManualJobBody {
  benefit_id: string;
  /** The ops team's note on the task (required when they fail it). */
  note: string | null;
  /** Why the work was not done: the failed task's note, or the provider's refusal; null when done. */
  error: string | null;
  /** Enroll and unenroll work: how each individual came out (200 done, else a per-individual error). */
  individuals?: IndividualResult[];
}

/** Enrolling or unenrolling succeeds when at least one individual did, or when there was no one to do. */
export function someSucceeded(results: IndividualResult[]): boolean {
  return results.length === 0 || results.some((r) => r.code === 200);
}
