import { PayStatementRecord } from '../../../domain/employer/unified-records';
import { taxTreatmentOf } from '../../../domain/payroll/benefit-tax-treatment';
import { EnrollmentInForce } from '../../../domain/payroll/payroll.types';
import { CURRENCY, enrollmentInForceOf } from './sandbox-pay-run';
import { SandboxBenefit, SandboxEnrollment } from './sandbox-payroll.types';

/**
 * Adjustments of the next regular pay run: a payroll admin's one-off corrections in the
 * provider's own screens, which make a statement differ from the enrollments (a fault for the
 * reconciliation to find). The pure part: what they do to a person's computation and to their
 * computed statement. They are stored until the next regular run, which consumes them all
 * (sandbox-pay-adjustment-rows.ts, SandboxEmployerStore.runPayPeriod).
 *
 * - `skip`: the benefit's employee deduction line and its employer contribution line are left off.
 * - `change`: the benefit's employee deduction line becomes `employee_amount` and/or its employer
 *   contribution line `employer_amount` (a line absent is added, named by the benefit's
 *   description and typed by its type; 0 leaves the line off). A null amount leaves that line as computed.
 * - `keep`: a person whose enrollment in the benefit has ended (or who has none in force) is
 *   deducted with the last configuration that enrollment had, as if it were still in force: the
 *   statement is computed with it (limits, match and taxes included). Nothing to keep: no effect.
 *
 * Taxes stay as computed: skip and change move net pay by the deduction difference only, as a
 * correction keyed in after the payroll was calculated would (a pre-tax deduction changed this
 * way leaves the withholding of the original amount). A changed deduction never takes net pay
 * below zero: it is cut to what is left, as payroll cuts deductions (the calculator does the same).
 */

export const PAY_ADJUSTMENT_ACTIONS = ['skip', 'change', 'keep'] as const;
export type PayAdjustmentAction = (typeof PAY_ADJUSTMENT_ACTIONS)[number];

/** Most adjustments one request sets. */
export const MAX_PAY_ADJUSTMENTS = 1_000;

/** One pending adjustment, as stored and answered. */
export interface SandboxPayAdjustment {
  individual_id: string;
  benefit_id: string;
  action: PayAdjustmentAction;
  /** Cents; `change` only, null: the employee deduction as computed. */
  employee_amount: number | null;
  /** Cents; `change` only, null: the employer contribution as computed. */
  employer_amount: number | null;
}

/** What a run's adjustments do to one person paid by it. */
export interface PersonAdjustments {
  /** Enrollments to compute the statement with beside those in force (`keep`). */
  kept: EnrollmentInForce[];
  /** The computed statement with the `skip` and `change` adjustments applied (the same object when they change nothing). */
  apply(statement: PayStatementRecord): PayStatementRecord;
}

const pairKey = (benefitId: string, individualId: string) => `${benefitId.toLowerCase()}|${individualId.toLowerCase()}`;

/**
 * The adjustments one regular pay run applies, read with its transaction: by person, with the
 * latest enrollment row (on or before the pay date) of each `keep`.
 */
export class PayRunAdjustments {
  private readonly byPerson = new Map<string, SandboxPayAdjustment[]>();
  private readonly lastRows = new Map<string, SandboxEnrollment>();

  constructor(adjustments: readonly SandboxPayAdjustment[], lastEnrollments: readonly SandboxEnrollment[]) {
    for (const adjustment of adjustments) {
      const id = adjustment.individual_id.toLowerCase();
      this.byPerson.set(id, [...(this.byPerson.get(id) ?? []), adjustment]);
    }
    for (const row of lastEnrollments) this.lastRows.set(pairKey(row.benefit_id, row.individual_id), row);
  }

  /** One person's adjustments, given their enrollments in force on the pay date; undefined without any. */
  forPerson(individualId: string, inForce: readonly SandboxEnrollment[], benefits: ReadonlyMap<string, SandboxBenefit>): PersonAdjustments | undefined {
    const adjustments = this.byPerson.get(individualId.toLowerCase());
    if (!adjustments) return undefined;
    const known = adjustments.filter((a) => benefits.has(a.benefit_id));
    const kept = keptEnrollments(
      known.filter((a) => a.action === 'keep'),
      inForce,
      (a) => this.lastRows.get(pairKey(a.benefit_id, a.individual_id)),
      benefits,
    );
    const edits = known.filter((a) => a.action !== 'keep').map((adjustment) => ({ adjustment, benefit: benefits.get(adjustment.benefit_id)! }));
    return { kept, apply: (statement) => applyPayAdjustments(statement, edits) };
  }
}

/**
 * The enrollments `keep` adds: for each kept benefit the person has no enrollment in force in,
 * its last row (ended), as the computation takes it. A benefit still in force needs nothing;
 * one never enrolled in has nothing to keep.
 */
export function keptEnrollments(
  keeps: readonly SandboxPayAdjustment[],
  inForce: readonly SandboxEnrollment[],
  lastRowOf: (adjustment: SandboxPayAdjustment) => SandboxEnrollment | undefined,
  benefits: ReadonlyMap<string, SandboxBenefit>,
): EnrollmentInForce[] {
  const inForceBenefits = new Set(inForce.map((e) => e.benefit_id.toLowerCase()));
  return keeps.flatMap((adjustment) => {
    const benefit = benefits.get(adjustment.benefit_id);
    if (!benefit || inForceBenefits.has(adjustment.benefit_id.toLowerCase())) return [];
    const last = lastRowOf(adjustment);
    return last ? [enrollmentInForceOf(benefit, last)] : [];
  });
}

type Deduction = PayStatementRecord['employee_deductions'][number];
type Contribution = PayStatementRecord['employer_contributions'][number];

/**
 * The statement with `skip` and `change` applied in order (a `keep` among them is ignored: it
 * acts on the computation). A line is the benefit's when it has the benefit's description and
 * type, as the computation names it. Net pay moves by the employee deductions' difference;
 * taxes and everything else stay as computed. Returns the statement itself when nothing changed.
 */
export function applyPayAdjustments(
  statement: PayStatementRecord,
  adjustments: readonly { adjustment: Pick<SandboxPayAdjustment, 'action' | 'employee_amount' | 'employer_amount'>; benefit: SandboxBenefit }[],
): PayStatementRecord {
  let deductions: Deduction[] = statement.employee_deductions;
  let contributions: Contribution[] = statement.employer_contributions;
  let netPay = statement.net_pay.amount;
  let changed = false;

  for (const { adjustment, benefit } of adjustments) {
    const isBenefits = (line: { name: string; type: string | null }) => line.name === benefit.description && line.type === benefit.type;
    if (adjustment.action === 'skip') {
      const dropped = deductions.filter(isBenefits);
      netPay += sumOf(dropped);
      changed ||= dropped.length > 0 || contributions.some(isBenefits);
      deductions = deductions.filter((line) => !isBenefits(line));
      contributions = contributions.filter((line) => !isBenefits(line));
      continue;
    }
    if (adjustment.action !== 'change') continue;
    if (adjustment.employee_amount !== null) {
      const current = deductions.filter(isBenefits);
      const before = sumOf(current);
      // Never below zero net pay: what the other lines leave is the most this line can take.
      const amount = Math.min(adjustment.employee_amount, netPay + before);
      const line: Deduction = {
        name: benefit.description,
        amount,
        currency: CURRENCY,
        pre_tax: current[0]?.pre_tax ?? taxTreatmentOf(benefit.type).preTaxScope !== 'post_tax',
        type: benefit.type,
      };
      deductions = replaceLines(deductions, isBenefits, amount > 0 ? line : undefined);
      netPay += before - amount;
      changed ||= current.length !== (amount > 0 ? 1 : 0) || before !== amount;
    }
    if (adjustment.employer_amount !== null) {
      const current = contributions.filter(isBenefits);
      const amount = adjustment.employer_amount;
      const line: Contribution = { name: benefit.description, amount, currency: CURRENCY, type: benefit.type };
      contributions = replaceLines(contributions, isBenefits, amount > 0 ? line : undefined);
      changed ||= current.length !== (amount > 0 ? 1 : 0) || sumOf(current) !== amount;
    }
  }
  if (!changed) return statement;
  return {
    ...statement,
    net_pay: { ...statement.net_pay, amount: netPay },
    employee_deductions: deductions,
    employer_contributions: contributions,
  };
}

/** The lines with the matching ones replaced by `line` where the first was (at the end when none was), or dropped without one. */
function replaceLines<L>(lines: readonly L[], matches: (line: L) => boolean, line: L | undefined): L[] {
  const at = lines.findIndex(matches);
  const others = lines.filter((l) => !matches(l));
  if (!line) return others;
  if (at < 0) return [...others, line];
  return [...others.slice(0, at), line, ...others.slice(at)];
}

function sumOf(lines: readonly { amount: number }[]): number {
  return lines.reduce((total, line) => total + line.amount, 0);
}
