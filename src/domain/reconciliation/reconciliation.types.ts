import type { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import type { BenefitType, Frequency, MatchTier, StatementKind } from '../payroll/payroll.types';

/**
 * Reconciliation: did payroll deduct what was enrolled? Expected amounts come from the
 * enrollment the service applied (its timeline) and the payroll rules it already computes
 * with (src/domain/payroll); observed ones from the synced pay statements and the provider's
 * own enrollments. Amounts are integer cents.
 */

/** How one statement came out for one benefit of one person (docs/reconciliation.md). */
export const STATEMENT_RESULTS = ['matched', 'missing', 'amount_mismatch', 'unexpected', 'match_mismatch', 'over_limit'] as const;
export type StatementResultKind = (typeof STATEMENT_RESULTS)[number];

/** The kinds of discrepancy: every statement result but `matched`, and a provider configuration that differs. */
export const DISCREPANCY_KINDS = ['missing', 'amount_mismatch', 'unexpected', 'match_mismatch', 'over_limit', 'configuration_drift'] as const;
export type DiscrepancyKind = (typeof DISCREPANCY_KINDS)[number];

export const DISCREPANCY_STATUSES = ['open', 'acknowledged', 'resolved'] as const;
export type DiscrepancyStatus = (typeof DISCREPANCY_STATUSES)[number];

/**
 * Cents an observed amount may differ from the expected one and still match: a percent of gross
 * rounded half up here may be rounded down or half-even by a provider, which moves a line by at
 * most one cent. Fixed amounts and matches are held to the same cent.
 */
export const ROUNDING_TOLERANCE_CENTS = 1;

/** How a deduction is taxed, for the recordkeeper's split: pre-tax, Roth (after-tax deferrals) or other after-tax. */
export type TaxTreatment = 'pre_tax' | 'roth' | 'after_tax';

/** A benefit of the employer, as reconciliation reads it. */
export interface ReconciledBenefit {
  id: string;
  type: BenefitType;
  /** What its lines on pay statements are called. */
  description: string;
  frequency: Frequency | null;
  matchTiers: MatchTier[] | null;
  /** `YYYY-MM-DD`: statements paid before it are not reconciled (the service did not run the benefit then). */
  reconcileFrom: string;
}

/** A pay statement as payroll wrote it. */
export interface ObservedStatement {
  paymentId: string;
  /** `YYYY-MM-DD` */
  payDate: string;
  individualId: string;
  kind: StatementKind;
  grossPay: number;
  netPay: number;
  employeeDeductions: { name: string; amount: number; preTax: boolean; type: string | null }[];
  employerContributions: { name: string; amount: number; type: string | null }[];
}

/** One statement's outcome for one benefit. */
export interface StatementResult {
  paymentId: string;
  payDate: string;
  individualId: string;
  benefitId: string;
  result: StatementResultKind;
  /** What the enrollment in force implies; 0 when none is. */
  expectedEmployee: number;
  observedEmployee: number;
  expectedEmployer: number;
  observedEmployer: number;
  /** What was left of the annual maximum and the IRS limit before this statement; null when nothing caps it. */
  limitRoom: number | null;
  taxTreatment: TaxTreatment;
  /** The configuration in force on the pay date (null: none), and the job that applied it. */
  configuration: EnrollmentConfigurationParams | null;
  jobId: string | null;
}

/** A discrepancy not yet resolved, as the lifecycle needs it. */
export interface LiveDiscrepancy {
  id: string;
  benefitId: string;
  individualId: string;
  kind: DiscrepancyKind;
  status: Exclude<DiscrepancyStatus, 'resolved'>;
  lastPaymentId: string | null;
  lastPayDate: string | null;
  occurrences: number;
}

/** What statements counted against the IRS limits (cents), as YearToDate names them. */
export interface LimitTotals {
  electiveDeferrals: number;
  simpleDeferrals: number;
  section457Deferrals: number;
  hsaTotal: number;
}
