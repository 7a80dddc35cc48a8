import { EmploymentRecord, IndividualRecord, PayStatementRecord } from '../../../domain/employer/unified-records';
import { BenefitType, EarningLine, FixedOrPercent, Frequency, MatchTier, StatementKind } from '../../../domain/payroll/payroll.types';

/**
 * The sandbox payroll system's own records beyond the Unified API's employer data: the
 * deductions the provider runs and who is enrolled in them. Wire shape (snake_case), as
 * `GET /employer/benefits` and `GET /employer/benefits/{id}/individuals` return them.
 */
export interface SandboxBenefit {
  benefit_id: string;
  type: BenefitType;
  description: string;
  frequency: Frequency | null;
  /** Company-wide match set at creation; null when the benefit has none. */
  company_contribution: { type: 'match'; tiers: MatchTier[] } | null;
}

/** One individual's configuration of one benefit (`body` of `GET /employer/benefits/{id}/individuals`). */
export interface SandboxEnrollmentConfiguration {
  employee_deduction: FixedOrPercent | null;
  company_contribution: FixedOrPercent | null;
  /** Cents per calendar year, or null for the IRS limit only. */
  annual_maximum: number | null;
  catch_up: boolean;
  hsa_contribution_limit: 'individual' | 'family' | null;
}

export interface SandboxEnrollment {
  benefit_id: string;
  individual_id: string;
  /** `YYYY-MM-DD`: this configuration applies to pay dates on or after it. */
  effective_date: string;
  configuration: SandboxEnrollmentConfiguration;
  /** `YYYY-MM-DD` from which the enrollment no longer applies (unenrolled), or null. */
  ended_on: string | null;
}

export type PaymentMethod = 'check' | 'direct_deposit';

/** An employee as the sandbox stores them: the two wire records plus how they are paid. */
export interface SandboxPerson {
  individual: IndividualRecord;
  employment: EmploymentRecord;
  paymentMethod: PaymentMethod;
}

/** An employee added by a sandbox edit; the store mints the id unless given and copies the names. */
export interface NewSandboxPerson {
  id?: string;
  individual: Omit<IndividualRecord, 'id'>;
  employment: Omit<EmploymentRecord, 'id' | 'first_name' | 'middle_name' | 'last_name'>;
  paymentMethod?: PaymentMethod;
}

export interface PayRunOptions {
  /**
   * `YYYY-MM-DD`. Default: 14 days after the latest regular run's pay date, or today (clock)
   * when that is earlier than today.
   */
  payDate?: string;
  /** Default `regular_payroll`. */
  kind?: StatementKind;
  /** Only these employees (each must be paid by payroll and employed on the pay date). Default: all. */
  individualIds?: string[];
  /**
   * Earnings paid to each employee instead of their salary or wage (off-cycle and one-time
   * runs). Default for a regular run: salary/wage; for others: a bonus of 5% of a year's pay.
   */
  earnings?: EarningLine[];
  /**
   * The pay period instead of the calendar's two weeks before the pay date (which must then be
   * given). A week, two weeks, the 1st–15th or 16th–last of a month or a calendar month is paid
   * as a whole period of that frequency; any other is paid for its days, at the pay schedule's.
   */
  period?: { start_date: string; end_date: string };
  /**
   * Statements stored as given (one per individual, each paid by payroll in the period) and
   * counted in the running totals; everyone else paid gets a computed one. Not with individualIds.
   */
  statements?: PayStatementRecord[];
}
