import type { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import { AppliedTimeline, segmentInForceOn } from '../enrollments/applied-timeline';
import { taxTreatmentOf } from '../payroll/benefit-tax-treatment';
import { irsLimitsFor } from '../payroll/irs-limits';
import {
  count,
  countAgainstLimit,
  countedFrom,
  CountedContributions,
  emptyYearToDate,
  employeeRoomOf,
  hsaLimitOf,
  isDue,
  requestedEmployeeDeduction,
  requestedEmployerContribution,
  yearToDateFor,
} from '../payroll/pay-statement-calculator';
import type { BenefitType, EnrollmentInForce, YearToDate } from '../payroll/payroll.types';
import { BENEFIT_TYPES } from '../providers/provider';
import {
  LimitTotals,
  ObservedStatement,
  ReconciledBenefit,
  ROUNDING_TOLERANCE_CENTS,
  StatementResult,
  StatementResultKind,
  TaxTreatment,
} from './reconciliation.types';

/** One person's statements to reconcile, oldest first, and what reconciling them needs. */
export interface PersonStatements {
  individualId: string;
  /** `YYYY-MM-DD`, for catch-up eligibility; null when the directory has none (no catch-up room). */
  dob: string | null;
  statements: readonly ObservedStatement[];
  /** The service's applied timeline per benefit id; a benefit the person never had is absent. */
  timelines: ReadonlyMap<string, AppliedTimeline>;
  /**
   * What payroll deducted before the first of these statements in its year, as reconciled
   * statements recorded it (totals by benefit and by IRS limit); null: nothing yet.
   */
  yearToDate: YearToDate | null;
}

/**
 * Reconciles one person's statements in pay-date order, every benefit of the employer on each.
 * For a benefit whose enrollment is in force on the pay date, the expected employee deduction is
 * the calculator's: the election (percent of the statement's gross, or fixed on regular runs),
 * only when due (monthly, one-time and off-cycle rules), capped by what is left of the annual
 * maximum and the IRS limit after what payroll really deducted before, and by what the
 * statement's net pay left room for. The expected employer contribution is the individual's own
 * contribution or the benefit's match on the deduction payroll really took (so a wrong deduction
 * is one discrepancy, not two). Results, in this order of precedence:
 * - `unexpected`: something deducted or contributed with no enrollment in force;
 * - `over_limit`: more deducted than was left of the annual maximum or the IRS limit;
 * - `missing`: a deduction expected and none taken;
 * - `amount_mismatch`: the deduction differs from the expected one by more than the tolerance;
 * - `match_mismatch`: the employer contribution does;
 * - `matched`: otherwise. An ended enrollment with nothing deducted is matched (0 = 0): the end
 *   reached payroll. A benefit the person never had and nothing on the statement gives no result.
 * Year-to-date totals carry what payroll took, statement to statement.
 */
export function reconcilePerson(person: PersonStatements, benefits: readonly ReconciledBenefit[]): StatementResult[] {
  const results: StatementResult[] = [];
  let yearToDate = person.yearToDate;
  for (const statement of person.statements) {
    const year = Number(statement.payDate.slice(0, 4));
    const month = Number(statement.payDate.slice(5, 7));
    const before = yearToDateFor(yearToDate, year);
    const after = yearToDateFor(before, year);
    const limits = irsLimitsFor(year);
    const age = person.dob === null ? 0 : year - Number(person.dob.slice(0, 4));
    const supplemental = statement.kind !== 'regular_payroll';
    const lines = new StatementLines(statement, benefits);
    // The statement's deductions of plans the service does not run share the IRS limits, and are
    // counted first, as taken: whichever order payroll capped the plans in, a payroll that keeps
    // to the limit leaves the service's deduction within what the others' left.
    const counted = countedFrom(before);
    for (const line of lines.unowned) countAgainstLimit(counted, line.type, line.employee, line.employer);
    const countBoth = (enrollment: EnrollmentInForce, observed: { employee: number; employer: number }) =>
      count(counted, enrollment, observed.employee, observed.employer);

    for (const benefit of benefits) {
      const observed = lines.of(benefit);
      const timeline = person.timelines.get(benefit.id);
      const segment = timeline ? segmentInForceOn(timeline, statement.payDate) : null;
      const configuration = segment?.configuration ?? null;
      if (statement.payDate < benefit.reconcileFrom) {
        countBoth(enrollmentOf(benefit, configuration), observed);
        continue;
      }
      const base = {
        paymentId: statement.paymentId,
        payDate: statement.payDate,
        individualId: person.individualId,
        benefitId: benefit.id,
        observedEmployee: observed.employee,
        observedEmployer: observed.employer,
        taxTreatment: taxTreatmentOfType(benefit.type),
        configuration,
        jobId: segment?.jobId ?? null,
      };

      if (configuration === null) {
        countBoth(enrollmentOf(benefit, null), observed);
        if (observed.employee === 0 && observed.employer === 0 && !timeline) continue;
        const result: StatementResultKind = observed.employee > 0 || observed.employer > 0 ? 'unexpected' : 'matched';
        results.push({ ...base, result, expectedEmployee: 0, expectedEmployer: 0, limitRoom: null });
        continue;
      }

      const enrollment = enrollmentOf(benefit, configuration);
      const due = isDue(enrollment, supplemental, month, before);
      const capped = enrollment.annualMaximum !== null || taxTreatmentOf(benefit.type).limit !== null;
      const requested = due ? requestedEmployeeDeduction(enrollment, statement.grossPay, supplemental) : 0;
      // Payroll cannot take more than net pay leaves: what was taken plus what was paid out.
      const netRoom = observed.employee + Math.max(0, statement.netPay);
      const room = employeeRoomOf(enrollment, counted, limits, age);
      const expectedEmployee = Math.min(requested, room, netRoom);
      let expectedEmployer = due ? requestedEmployerContribution(enrollment, observed.employee, statement.grossPay, supplemental) : 0;
      if (taxTreatmentOf(benefit.type).limit === 'hsa') {
        expectedEmployer = Math.min(expectedEmployer, Math.max(0, hsaLimitOf(enrollment, limits, age) - counted.hsaTotal - observed.employee));
      }

      results.push({
        ...base,
        result: resultOf(observed, { employee: expectedEmployee, employer: expectedEmployer }, capped ? room : null),
        expectedEmployee,
        expectedEmployer,
        limitRoom: capped ? room : null,
      });
      countBoth(enrollment, observed);
      if (due && !supplemental) spendFrequency(after, enrollment, month);
    }
    yearToDate = withCountedTotals(after, counted);
  }
  return results;
}

/**
 * What a statement counts against the IRS limits, every typed line included (plans the service
 * does not run too): what the next statements' limits start from.
 */
export function limitTotalsOf(statement: ObservedStatement): LimitTotals {
  const counted = countedFrom(emptyYearToDate(Number(statement.payDate.slice(0, 4))));
  for (const line of statement.employeeDeductions) if (isBenefitType(line.type)) countAgainstLimit(counted, line.type, line.amount, 0);
  for (const line of statement.employerContributions) if (isBenefitType(line.type)) countAgainstLimit(counted, line.type, 0, line.amount);
  return {
    electiveDeferrals: counted.electiveDeferrals,
    simpleDeferrals: counted.simpleDeferrals,
    section457Deferrals: counted.section457Deferrals,
    hsaTotal: counted.hsaTotal,
  };
}

function isBenefitType(type: string | null): type is BenefitType {
  return type !== null && (BENEFIT_TYPES as readonly string[]).includes(type);
}

function resultOf(
  observed: { employee: number; employer: number },
  expected: { employee: number; employer: number },
  room: number | null,
): StatementResultKind {
  const differs = (a: number, b: number) => Math.abs(a - b) > ROUNDING_TOLERANCE_CENTS;
  if (room !== null && observed.employee > room + ROUNDING_TOLERANCE_CENTS) return 'over_limit';
  if (expected.employee > ROUNDING_TOLERANCE_CENTS && observed.employee === 0) return 'missing';
  if (differs(observed.employee, expected.employee)) return 'amount_mismatch';
  if (differs(observed.employer, expected.employer)) return 'match_mismatch';
  return 'matched';
}

function enrollmentOf(benefit: ReconciledBenefit, configuration: EnrollmentConfigurationParams | null): EnrollmentInForce {
  if (configuration === null) return { ...enrollmentOf(benefit, NO_ELECTION), employeeDeduction: null };
  return {
    benefitId: benefit.id,
    benefitType: benefit.type,
    description: benefit.description,
    frequency: benefit.frequency,
    employeeDeduction: configuration.employee_deduction,
    companyContribution: configuration.company_contribution,
    companyMatchTiers: benefit.matchTiers,
    annualMaximum: configuration.annual_maximum,
    catchUp: configuration.catch_up,
    hsaContributionLimit: configuration.hsa_contribution_limit,
  };
}

/** A monthly deduction due is spent for its month, a one-time one for good (as the calculator counts them). */
function spendFrequency(after: YearToDate, enrollment: EnrollmentInForce, month: number): void {
  if (enrollment.frequency === 'monthly') after.monthlyDeductionMonths[enrollment.benefitId] = month;
  if (enrollment.frequency === 'one_time' && !after.oneTimeBenefitsTaken.includes(enrollment.benefitId)) {
    after.oneTimeBenefitsTaken.push(enrollment.benefitId);
  }
}

function withCountedTotals(after: YearToDate, counted: CountedContributions): YearToDate {
  return {
    ...after,
    employeeByBenefit: Object.fromEntries(Object.entries(counted.byBenefit).filter(([, amount]) => amount > 0)),
    electiveDeferrals: counted.electiveDeferrals,
    simpleDeferrals: counted.simpleDeferrals,
    section457Deferrals: counted.section457Deferrals,
    hsaTotal: counted.hsaTotal,
  };
}

const NO_ELECTION: EnrollmentConfigurationParams = {
  employee_deduction: null,
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
};

const ROTH_TYPES: ReadonlySet<BenefitType> = new Set(['401k_roth', '403b_roth', '457_roth']);

export function taxTreatmentOfType(type: BenefitType): TaxTreatment {
  if (ROTH_TYPES.has(type)) return 'roth';
  return taxTreatmentOf(type).preTaxScope === 'post_tax' ? 'after_tax' : 'pre_tax';
}

/**
 * A statement's lines by benefit. A line belongs to the benefit whose description it carries as
 * its name (trimmed, any case) and, when the line has a type, whose type it has: providers print
 * a deduction under its description. A line named after no benefit of the service (a deduction
 * the employer runs outside it) belongs to none: matching by type alone would add such a plan's
 * deductions to one of the service's. Lines of one benefit are summed (a provider may split one
 * deduction in two).
 */
class StatementLines {
  private readonly employee = new Map<string, number>();
  private readonly employer = new Map<string, number>();
  /** Typed lines of plans the service does not run. */
  readonly unowned: { type: BenefitType; employee: number; employer: number }[] = [];

  constructor(statement: ObservedStatement, benefits: readonly ReconciledBenefit[]) {
    const byName = new Map<string, ReconciledBenefit[]>();
    for (const benefit of benefits) {
      const name = normalName(benefit.description);
      byName.set(name, [...(byName.get(name) ?? []), benefit]);
    }
    const owner = (line: { name: string; type: string | null }): ReconciledBenefit | undefined =>
      (byName.get(normalName(line.name)) ?? []).find((b) => line.type === null || b.type === line.type);
    for (const line of statement.employeeDeductions) {
      const benefit = owner(line);
      if (benefit) add(this.employee, benefit, line.amount);
      else if (isBenefitType(line.type)) this.unowned.push({ type: line.type, employee: line.amount, employer: 0 });
    }
    for (const line of statement.employerContributions) {
      const benefit = owner(line);
      if (benefit) add(this.employer, benefit, line.amount);
      else if (isBenefitType(line.type)) this.unowned.push({ type: line.type, employee: 0, employer: line.amount });
    }
  }

  of(benefit: ReconciledBenefit): { employee: number; employer: number } {
    return { employee: this.employee.get(benefit.id) ?? 0, employer: this.employer.get(benefit.id) ?? 0 };
  }
}

function add(totals: Map<string, number>, benefit: ReconciledBenefit, amount: number): void {
  totals.set(benefit.id, (totals.get(benefit.id) ?? 0) + amount);
}

function normalName(name: string): string {
  return name.trim().toLowerCase();
}
