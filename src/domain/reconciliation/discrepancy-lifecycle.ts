import type { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import { emptyYearToDate } from '../payroll/pay-statement-calculator';
import type { BenefitType, Frequency, YearToDate } from '../payroll/payroll.types';
import { DiscrepancyKind, LimitTotals, LiveDiscrepancy, StatementResult } from './reconciliation.types';

/**
 * How a discrepancy lives: opened once, when a statement or a read first shows the problem;
 * updated (one more occurrence, the latest amounts) while later ones still show it; resolved when
 * a later one agrees, or when the problem changes kind (a `missing` deduction that shows up at
 * the wrong amount is resolved, and an `amount_mismatch` opens). Acknowledged ones (ops saw them,
 * with a note) live on the same way but are not listed as open. One live discrepancy per benefit,
 * person and kind: the database holds to that too (a unique index).
 */

export interface DiscrepancyOpening {
  benefitId: string;
  individualId: string;
  kind: DiscrepancyKind;
  paymentId: string | null;
  payDate: string | null;
  expected: unknown;
  observed: unknown;
}

export interface DiscrepancyUpdate {
  id: string;
  paymentId: string | null;
  payDate: string | null;
  /** A statement not seen before adds an occurrence; the same statement corrected does not. */
  newOccurrence: boolean;
  expected: unknown;
  observed: unknown;
}

export interface DiscrepancyResolution {
  id: string;
  /** Why: `agreed` (a later statement or read agrees) or `became_<kind>` (the problem changed kind). */
  resolution: string;
  paymentId: string | null;
}

export interface LifecycleChanges {
  opened: DiscrepancyOpening[];
  updated: DiscrepancyUpdate[];
  resolved: DiscrepancyResolution[];
  /**
   * The discrepancy each statement result that showed a problem opened or added to (a stored id,
   * or a provisional `new:<i>` of `opened`), by `statementResultKey`: within one run the same kind
   * may be opened, resolved and opened again, so "the live one of its kind" is not the result's.
   */
  shownIn: Map<string, string>;
}

export const emptyChanges = (): LifecycleChanges => ({ opened: [], updated: [], resolved: [], shownIn: new Map() });

/** One statement's result for one benefit and person. */
export const statementResultKey = (r: Pick<StatementResult, 'paymentId' | 'individualId' | 'benefitId'>): string => `${r.paymentId}|${r.individualId}|${r.benefitId}`;

const STATEMENT_KINDS: ReadonlySet<DiscrepancyKind> = new Set(['missing', 'amount_mismatch', 'unexpected', 'match_mismatch', 'over_limit']);

/**
 * Applies one person's results for one benefit, oldest first, to the live statement
 * discrepancies of that pair (`live` is changed in place, so the caller can feed the next
 * results). A result paid before the latest statement a live discrepancy has seen is history
 * (a correction of an older statement): it neither opens nor resolves anything.
 */
export function applyStatementResults(live: LiveDiscrepancy[], results: readonly StatementResult[], changes: LifecycleChanges): void {
  for (const result of results) {
    const pair = live.filter((d) => STATEMENT_KINDS.has(d.kind) && d.benefitId === result.benefitId && d.individualId === result.individualId);
    if (pair.some((d) => d.lastPayDate !== null && d.lastPayDate > result.payDate)) continue;
    for (const discrepancy of pair) {
      if (discrepancy.kind === result.result) continue;
      changes.resolved.push({
        id: discrepancy.id,
        resolution: result.result === 'matched' ? 'agreed' : `became_${result.result}`,
        paymentId: result.paymentId,
      });
      live.splice(live.indexOf(discrepancy), 1);
    }
    if (result.result === 'matched') continue;
    const amounts = {
      expected: { employee: result.expectedEmployee, employer: result.expectedEmployer, limit_room: result.limitRoom },
      observed: { employee: result.observedEmployee, employer: result.observedEmployer },
    };
    const same = pair.find((d) => d.kind === result.result);
    if (same) {
      const newOccurrence = same.lastPaymentId !== result.paymentId;
      changes.updated.push({ id: same.id, paymentId: result.paymentId, payDate: result.payDate, newOccurrence, ...amounts });
      changes.shownIn.set(statementResultKey(result), same.id);
      same.lastPaymentId = result.paymentId;
      same.lastPayDate = result.payDate;
      if (newOccurrence) same.occurrences += 1;
      continue;
    }
    const opening: DiscrepancyOpening = {
      benefitId: result.benefitId,
      individualId: result.individualId,
      kind: result.result,
      paymentId: result.paymentId,
      payDate: result.payDate,
      ...amounts,
    };
    changes.opened.push(opening);
    // Known to later results of this run by a provisional id, replaced when it is written.
    const provisionalId = `new:${changes.opened.length - 1}`;
    changes.shownIn.set(statementResultKey(result), provisionalId);
    live.push({
      id: provisionalId,
      benefitId: opening.benefitId,
      individualId: opening.individualId,
      kind: opening.kind,
      status: 'open',
      lastPaymentId: result.paymentId,
      lastPayDate: result.payDate,
      occurrences: 1,
    });
  }
}

/** One individual's configuration of one benefit on both sides, today. */
export interface ConfigurationPair {
  benefitId: string;
  individualId: string;
  /** What the service applied (null: no enrollment in force). */
  service: EnrollmentConfigurationParams | null;
  /** What the provider reports (null: none). */
  provider: EnrollmentConfigurationParams | null;
}

/**
 * Configuration drift: the provider's configuration differs from the service's (someone
 * changed it in the payroll system). Opens or updates a `configuration_drift` for each pair that
 * differs and resolves the live one of each pair that agrees again. Pairs are compared field by
 * field, amounts exactly.
 */
export function applyConfigurationReads(live: readonly LiveDiscrepancy[], pairs: readonly ConfigurationPair[], changes: LifecycleChanges): void {
  const liveByPair = new Map(live.filter((d) => d.kind === 'configuration_drift').map((d) => [`${d.benefitId}|${d.individualId}`, d]));
  for (const pair of pairs) {
    const discrepancy = liveByPair.get(`${pair.benefitId}|${pair.individualId}`);
    if (sameConfiguration(pair.service, pair.provider)) {
      if (discrepancy) changes.resolved.push({ id: discrepancy.id, resolution: 'agreed', paymentId: null });
      continue;
    }
    const sides = { expected: { configuration: pair.service }, observed: { configuration: pair.provider } };
    if (discrepancy) changes.updated.push({ id: discrepancy.id, paymentId: null, payDate: null, newOccurrence: false, ...sides });
    else changes.opened.push({ benefitId: pair.benefitId, individualId: pair.individualId, kind: 'configuration_drift', paymentId: null, payDate: null, ...sides });
  }
}

export function sameConfiguration(a: EnrollmentConfigurationParams | null, b: EnrollmentConfigurationParams | null): boolean {
  if (a === null || b === null) return a === b;
  const amount = (x: { type: string; amount: number } | null) => (x === null ? null : `${x.type}:${x.amount}`);
  return (
    amount(a.employee_deduction) === amount(b.employee_deduction) &&
    amount(a.company_contribution) === amount(b.company_contribution) &&
    (a.annual_maximum ?? null) === (b.annual_maximum ?? null) &&
    Boolean(a.catch_up) === Boolean(b.catch_up) &&
    (a.hsa_contribution_limit ?? null) === (b.hsa_contribution_limit ?? null)
  );
}

/** An earlier statement's amounts for one benefit, as the year-to-date totals are rebuilt from them. */
export interface EarlierResult {
  benefitId: string;
  benefitType: BenefitType;
  frequency: Frequency | null;
  /** `YYYY-MM-DD` */
  payDate: string;
  regular: boolean;
  observedEmployee: number;
  observedEmployer: number;
}

/**
 * A person's totals of `year` from the statements already reconciled: what payroll deducted per
 * benefit of the service (annual maximums), the months a monthly deduction was taken and the
 * one-time deductions taken, from their results; what counted against each IRS limit from the
 * statements' own totals, which include plans the service does not run.
 */
export function yearToDateOfResults(year: number, earlier: readonly EarlierResult[], statementTotals: readonly LimitTotals[] = []): YearToDate | null {
  if (earlier.length === 0 && statementTotals.length === 0) return null;
  const totals = emptyYearToDate(year);
  for (const row of earlier) {
    if (row.payDate.startsWith(`${year}-`)) {
      totals.employeeByBenefit[row.benefitId] = (totals.employeeByBenefit[row.benefitId] ?? 0) + row.observedEmployee;
      if (row.regular && row.frequency === 'monthly' && row.observedEmployee > 0) {
        const month = Number(row.payDate.slice(5, 7));
        totals.monthlyDeductionMonths[row.benefitId] = Math.max(totals.monthlyDeductionMonths[row.benefitId] ?? 0, month);
      }
    }
    if (row.frequency === 'one_time' && row.observedEmployee > 0 && !totals.oneTimeBenefitsTaken.includes(row.benefitId)) {
      totals.oneTimeBenefitsTaken.push(row.benefitId);
    }
  }
  for (const t of statementTotals) {
    totals.electiveDeferrals += t.electiveDeferrals;
    totals.simpleDeferrals += t.simpleDeferrals;
    totals.section457Deferrals += t.section457Deferrals;
    totals.hsaTotal += t.hsaTotal;
  }
  return totals;
}
