/**
 * Domain events of the deductions engine, published on `benefits.events` (key: connection id,
 * so one employer's events stay in order). Versioned: a consumer reads `type` and `version`
 * before `data`; a change that breaks readers is a new version, never an edit of this one.
 */
export const BENEFIT_EVENT_TYPES = [
  'BenefitCreated',
  'BenefitRegistered',
  'BenefitUpdated',
  'EnrollmentJobCreated',
  'EnrollmentGroupProcessed',
  'EnrollmentJobCompleted',
  'EnrollmentJobFailed',
  'OpsTaskOpened',
  'OpsTaskCompleted',
  'OpsTaskFailed',
  'OpsTaskCancelled',
  // Reconciliation of payroll against enrollments (docs/reconciliation.md).
  'DeductionDiscrepancyOpened',
  'DeductionDiscrepancyResolved',
  'PaymentContributionsReady',
] as const;
export type BenefitEventType = (typeof BENEFIT_EVENT_TYPES)[number];

export interface BenefitEvent<T extends BenefitEventType = BenefitEventType> {
  /** UUID; also the outbox message id, so consumers dedupe on it. */
  id: string;
  type: T;
  version: 1;
  occurred_at: string;
  connection_id: string;
  entity_id: string;
  data: Record<string, unknown>;
}
