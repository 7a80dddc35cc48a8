/**
 * Inputs and outputs of the payroll computation (pay-statement-calculator.ts). Plain data in
 * camelCase; integer cents for money and basis points for percentages throughout.
 */

/** Benefit types of the spec (Benefit fields enum, without null). */
export type BenefitType =
  | '457'
  | '401k'
  | '401k_roth'
  | '401k_loan'
  | '403b'
  | '403b_roth'
  | '457_roth'
  | 'commuter'
  | 'custom_post_tax'
  | 'custom_pre_tax'
  | 'fsa_dependent_care'
  | 'fsa_medical'
  | 'hsa_post'
  | 'hsa_pre'
  | 's125_dental'
  | 's125_medical'
  | 's125_vision'
  | 'simple'
  | 'simple_ira';

export type Frequency = 'every_paycheck' | 'monthly' | 'one_time';

export interface FixedOrPercent {
  type: 'fixed' | 'percent';
  /** Cents when fixed, basis points of gross pay when percent. */
  amount: number;
}

/** Company match: `match` bp of the employee's deferral, on deferrals up to `threshold` bp of pay. */
export interface MatchTier {
  match: number;
  threshold: number;
}

/** One enrollment of the employee in force on the pay date, with its benefit. */
export interface EnrollmentInForce {
  benefitId: string;
  benefitType: BenefitType;
  /** As the benefit appears on pay statements. */
  description: string;
  frequency: Frequency | null;
  employeeDeduction: FixedOrPercent | null;
  /** Per-individual contribution; falls back to the benefit's company match tiers when null. */
  companyContribution: FixedOrPercent | null;
  /** The benefit's company-wide match tiers (create benefit `company_contribution`), if any. */
  companyMatchTiers: MatchTier[] | null;
  /** Cents per calendar year for this enrollment's employee deduction; null means the IRS limit only. */
  annualMaximum: number | null;
  catchUp: boolean;
  hsaContributionLimit: 'individual' | 'family' | null;
}

/** Per calendar year running totals, carried from one statement of an employee to the next. */
export interface YearToDate {
  year: number;
  /** Employee deductions per benefit id (for annual maximums). */
  employeeByBenefit: Record<string, number>;
  /** Elective deferrals counted against 402(g): 401k, 403b, their Roth kinds, simple and simple_ira. */
  electiveDeferrals: number;
  /** SIMPLE deferrals (simple, simple_ira), which also have their own, lower limit. */
  simpleDeferrals: number;
  /** 457(b) deferrals (457, 457_roth): a limit of their own, separate from 402(g). */
  section457Deferrals: number;
  /** Employee plus employer HSA contributions (the HSA limit covers both). */
  hsaTotal: number;
  /** Social Security taxable wages so far, never above the year's wage base. */
  socialSecurityWages: number;
  /** Medicare wages so far (for the additional Medicare tax threshold). */
  medicareWages: number;
  /** Month (1–12) of the last regular statement that took each monthly benefit, by benefit id. */
  monthlyDeductionMonths: Record<string, number>;
  /**
   * Benefit ids whose one_time deduction has been taken. Unlike the totals above it is carried
   * into the next year: a one-time deduction is taken once, not once a year.
   */
  oneTimeBenefitsTaken: string[];
}

export type StatementKind = 'regular_payroll' | 'off_cycle_payroll' | 'one_time_payment';

export interface EarningLine {
  type: 'salary' | 'wage' | 'overtime' | 'bonus' | 'commission' | 'pto' | 'sick' | 'other';
  name: string;
  amount: number;
  hours: number | null;
}

export interface PayStatementInput {
  kind: StatementKind;
  /** `YYYY-MM-DD`. Decides the tax year, the IRS limits and the employee's age for catch-up. */
  payDate: string;
  employee: {
    dob: string;
    /** Two-letter state of residence, for state income tax. */
    state: string;
    incomeUnit: 'yearly' | 'hourly';
    /** Cents per year (yearly) or per hour (hourly). */
    incomeAmount: number;
    /** 26 for bi-weekly: the pay schedule's, which withholding annualizes by. */
    payPeriodsPerYear: number;
    /**
     * Days of a pay period that is not a whole period of the schedule (a short or odd one): the
     * salary and the standard hours are those days' share of the year's (days / 365), not
     * 1 / payPeriodsPerYear. Absent: a whole period.
     */
    periodDays?: number;
    /** Hours in the period for hourly workers (regular, then overtime at 1.5×). */
    regularHours?: number;
    overtimeHours?: number;
  };
  /**
   * Earnings to pay instead of the regular salary/wage (off-cycle bonus runs, one-time
   * payments). Regular runs leave it undefined and earn from `employee`.
   */
  earnings?: EarningLine[];
  enrollments: EnrollmentInForce[];
  /** Totals before this statement; a different `year` than the pay date's starts from zero. */
  yearToDate: YearToDate | null;
}

export interface ComputedPayStatement {
  kind: StatementKind;
  totalHours: number;
  grossPay: number;
  netPay: number;
  earnings: EarningLine[];
  taxes: { type: 'federal' | 'state' | 'local' | 'fica'; name: string; employer: boolean; amount: number }[];
  employeeDeductions: { name: string; amount: number; preTax: boolean; type: BenefitType }[];
  employerContributions: { name: string; amount: number; type: BenefitType }[];
}

/**
 * A pay statement given as written rather than computed (a sandbox payment's given statement):
 * what the running totals need of it. Lines without a type count against no limit.
 */
export interface WrittenPayStatement {
  kind: StatementKind;
  grossPay: number;
  employeeDeductions: { name: string; amount: number; preTax: boolean; type: BenefitType | null }[];
  employerContributions: { name: string; amount: number; type: BenefitType | null }[];
}

export interface PayStatementResult {
  statement: ComputedPayStatement;
  /** Totals after this statement, to pass to the employee's next one. */
  yearToDate: YearToDate;
}
