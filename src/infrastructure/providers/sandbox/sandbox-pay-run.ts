import { EmploymentRecord, PaymentRecord, PayStatementRecord } from '../../../domain/employer/unified-records';
import { payPeriodsPerYear } from '../../../domain/payroll/pay-statement-calculator';
import {
  BenefitType,
  ComputedPayStatement,
  EarningLine,
  EnrollmentInForce,
  PayStatementInput,
  StatementKind,
  WrittenPayStatement,
  YearToDate,
} from '../../../domain/payroll/payroll.types';
import { SandboxPayFrequency } from './sandbox-pay-calendar';
import { PaymentMethod, SandboxBenefit, SandboxEnrollment, SandboxPerson } from './sandbox-payroll.types';
import { SeededRandom } from './seeded-random';

/**
 * The pure parts of a sandbox pay run: who is paid, what each statement is computed from, and
 * how a payment's totals follow from its statements. The payroll itself (earnings, taxes,
 * deductions, contributions) is `computePayStatement`'s.
 */

export const CURRENCY = 'usd';

export interface PayRun {
  kind: StatementKind;
  payDate: string;
  period: { start_date: string; end_date: string };
  /** The calendar's bi-weekly, or the frequency of a given period: it sets pay per period and withholding. */
  frequency: SandboxPayFrequency;
  /** Days of a given period that is not a whole one of any frequency: pay is those days' share of the year's. */
  periodDays?: number;
  /** Earnings instead of salary or wage (off-cycle and one-time runs). */
  earnings?: EarningLine[];
}

/**
 * Paid by payroll in a period: an employee (contractors are paid outside payroll) who started
 * by the period's end and had not left before its start; without an end date, one still active.
 */
export function isPaidInPeriod(employment: EmploymentRecord, period: { start_date: string; end_date: string }): boolean {
  if (employment.employment.type !== 'employee') return false;
  if (employment.start_date > period.end_date) return false;
  return employment.end_date === null ? employment.is_active : employment.end_date >= period.start_date;
}

/** A bonus of 5% of a year's pay (hourly: 2,080 hours, half for part-time), in whole dollars. */
export function defaultBonusOf(employment: EmploymentRecord): EarningLine[] {
  const yearly =
    employment.income.unit === 'yearly'
      ? employment.income.amount
      : employment.income.amount * (employment.employment.subtype === 'full_time' ? 2_080 : 1_040);
  return [{ type: 'bonus', name: 'Bonus', amount: Math.max(100, Math.round((yearly * 0.05) / 100) * 100), hours: null }];
}

export function payStatementInputOf(
  person: SandboxPerson,
  run: PayRun,
  enrollments: EnrollmentInForce[],
  yearToDate: YearToDate | null,
): PayStatementInput {
  const { employment, individual } = person;
  const periodsPerYear = payPeriodsPerYear(run.frequency);
  const hours = run.earnings === undefined && employment.income.unit === 'hourly' ? hoursWorked(person, run.payDate, periodsPerYear, run.periodDays) : {};
  return {
    kind: run.kind,
    payDate: run.payDate,
    employee: {
      dob: individual.dob,
      state: individual.residence.state,
      incomeUnit: employment.income.unit,
      incomeAmount: employment.income.amount,
      payPeriodsPerYear: periodsPerYear,
      ...(run.periodDays !== undefined && { periodDays: run.periodDays }),
      ...hours,
    },
    earnings: run.kind === 'regular_payroll' && run.earnings === undefined ? undefined : (run.earnings ?? defaultBonusOf(employment)),
    enrollments,
    yearToDate,
  };
}

/**
 * Hourly workers' hours in two weeks: 80 full-time (40–64 otherwise), now and then some
 * overtime; a period of another frequency scales them (a month: 80 × 26 / 12 = 173.33), and a
 * period of some other length by its days (10 days: 80 × 10 / 14 = 57.14).
 */
function hoursWorked(person: SandboxPerson, payDate: string, periodsPerYear: number, periodDays?: number): { regularHours: number; overtimeHours: number } {
  // Seeded by person and date: re-running history gives the same hours.
  const random = SeededRandom.derive(person.individual.id, `hours:${payDate}`);
  const fullTime = person.employment.employment.subtype === 'full_time';
  const regularHours = fullTime ? 80 : random.int(40, 64);
  const overtimeHours = fullTime && random.chance(0.25) ? random.int(1, 12) : 0;
  const scale = (hours: number) =>
    periodDays === undefined ? Math.round((hours * 26 * 100) / periodsPerYear) / 100 : Math.round((hours * periodDays * 100) / 14) / 100;
  return { regularHours: scale(regularHours), overtimeHours: scale(overtimeHours) };
}

/**
 * Of one individual's enrollment rows, those in force on `date`: per benefit the row with the
 * latest effective date on or before it, unless that row ended on or before the date. (The
 * store's SQL applies the same rule to stored rows.)
 */
export function enrollmentsInForceOn(enrollments: SandboxEnrollment[], date: string): SandboxEnrollment[] {
  const latest = new Map<string, SandboxEnrollment>();
  for (const enrollment of enrollments) {
    if (enrollment.effective_date > date) continue;
    const current = latest.get(enrollment.benefit_id);
    if (!current || enrollment.effective_date > current.effective_date) latest.set(enrollment.benefit_id, enrollment);
  }
  return [...latest.values()].filter((e) => e.ended_on === null || e.ended_on > date);
}

/** The benefit and one individual's enrollment in it, as the payroll computation takes them. */
export function enrollmentInForceOf(benefit: SandboxBenefit, enrollment: SandboxEnrollment): EnrollmentInForce {
  const configuration = enrollment.configuration;
  return {
    benefitId: benefit.benefit_id,
    benefitType: benefit.type,
    description: benefit.description,
    frequency: benefit.frequency,
    employeeDeduction: configuration.employee_deduction,
    companyContribution: configuration.company_contribution,
    companyMatchTiers: benefit.company_contribution?.tiers ?? null,
    annualMaximum: configuration.annual_maximum,
    catchUp: configuration.catch_up,
    hsaContributionLimit: configuration.hsa_contribution_limit,
  };
}

/** A statement given as written, as the running totals count it (its types were validated against the benefit types). */
export function writtenStatementOf(statement: PayStatementRecord): WrittenPayStatement {
  return {
    kind: statement.type,
    grossPay: statement.gross_pay.amount,
    employeeDeductions: statement.employee_deductions.map((d) => ({
      name: d.name,
      amount: d.amount,
      preTax: d.pre_tax,
      type: d.type as BenefitType | null,
    })),
    employerContributions: statement.employer_contributions.map((c) => ({ name: c.name, amount: c.amount, type: c.type as BenefitType | null })),
  };
}

export function toPayStatementRecord(individualId: string, paymentMethod: PaymentMethod, computed: ComputedPayStatement): PayStatementRecord {
  return {
    individual_id: individualId,
    type: computed.kind,
    payment_method: paymentMethod,
    total_hours: computed.totalHours,
    gross_pay: { amount: computed.grossPay, currency: CURRENCY },
    net_pay: { amount: computed.netPay, currency: CURRENCY },
    earnings: computed.earnings.map((e) => ({ type: e.type, name: e.name, amount: e.amount, currency: CURRENCY, hours: e.hours })),
    taxes: computed.taxes.map((t) => ({ type: t.type, name: t.name, employer: t.employer, amount: t.amount, currency: CURRENCY })),
    employee_deductions: computed.employeeDeductions.map((d) => ({
      name: d.name,
      amount: d.amount,
      currency: CURRENCY,
      pre_tax: d.preTax,
      type: d.type,
    })),
    employer_contributions: computed.employerContributions.map((c) => ({ name: c.name, amount: c.amount, currency: CURRENCY, type: c.type })),
  };
}

/**
 * A payment's totals, summed from its statements. The company's debit is everything that
 * leaves its account for the run: net pay, employee and employer taxes, employee deductions
 * (remitted to the plans) and employer contributions, i.e. gross pay + employer taxes +
 * employer contributions.
 */
export class PaymentTotals {
  gross = 0;
  net = 0;
  employerTaxes = 0;
  employeeTaxes = 0;
  employeeDeductions = 0;
  employerContributions = 0;
  readonly individualIds: string[] = [];
  readonly payGroupIds = new Set<string>();

  add(statement: PayStatementRecord, payGroupIds: string[]): void {
    this.gross += statement.gross_pay.amount;
    this.net += statement.net_pay.amount;
    for (const tax of statement.taxes) {
      if (tax.employer) this.employerTaxes += tax.amount;
      else this.employeeTaxes += tax.amount;
    }
    for (const deduction of statement.employee_deductions) this.employeeDeductions += deduction.amount;
    for (const contribution of statement.employer_contributions) this.employerContributions += contribution.amount;
    this.individualIds.push(statement.individual_id);
    for (const id of payGroupIds) this.payGroupIds.add(id);
  }

  get companyDebit(): number {
    return this.net + this.employeeTaxes + this.employeeDeductions + this.employerTaxes + this.employerContributions;
  }

  toPayment(id: string, run: PayRun, debitDate: string): PaymentRecord {
    const money = (amount: number) => ({ amount, currency: CURRENCY });
    return {
      id,
      pay_date: run.payDate,
      debit_date: debitDate,
      pay_period: run.period,
      company_debit: money(this.companyDebit),
      gross_pay: money(this.gross),
      net_pay: money(this.net),
      employer_taxes: money(this.employerTaxes),
      employee_taxes: money(this.employeeTaxes),
      individual_ids: [...this.individualIds].sort(),
      pay_group_ids: [...this.payGroupIds].sort(),
      // Off-cycle and one-time runs follow no schedule.
      pay_frequencies: run.kind === 'regular_payroll' ? [run.frequency] : ['other'],
    };
  }
}
