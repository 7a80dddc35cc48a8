import { PayStatementRecord } from '../../../domain/employer/unified-records';
import { computePayStatement, yearToDateAfterWritten } from '../../../domain/payroll/pay-statement-calculator';
import { EnrollmentInForce, PayStatementInput } from '../../../domain/payroll/payroll.types';
import { applyPayAdjustments, keptEnrollments, PayRunAdjustments, SandboxPayAdjustment } from './sandbox-pay-adjustments';
import { enrollmentInForceOf, toPayStatementRecord, writtenStatementOf } from './sandbox-pay-run';
import { SandboxBenefit, SandboxEnrollment, SandboxEnrollmentConfiguration } from './sandbox-payroll.types';

const PERSON = 'a0000000-0000-4000-8000-000000000001';
const OTHER = 'a0000000-0000-4000-8000-000000000002';
const PAY_DATE = '2026-06-12';

const benefit = (benefit_id: string, type: SandboxBenefit['type'], description: string): SandboxBenefit => ({
  benefit_id,
  type,
  description,
  frequency: 'every_paycheck',
  company_contribution: null,
});
const K401 = benefit('b0000000-0000-4000-8000-000000000001', '401k', '401(k)');
const MEDICAL = benefit('b0000000-0000-4000-8000-000000000002', 's125_medical', 'Medical');
const ROTH = benefit('b0000000-0000-4000-8000-000000000003', '401k_roth', 'Roth 401(k)');
const BENEFITS = new Map([K401, MEDICAL, ROTH].map((b) => [b.benefit_id, b]));

const configuration = (overrides: Partial<SandboxEnrollmentConfiguration> = {}): SandboxEnrollmentConfiguration => ({
  employee_deduction: { type: 'percent', amount: 600 },
  company_contribution: { type: 'fixed', amount: 4_000 },
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
  ...overrides,
});
const enrollment = (of: SandboxBenefit, overrides: Partial<SandboxEnrollment> = {}): SandboxEnrollment => ({
  benefit_id: of.benefit_id,
  individual_id: PERSON,
  effective_date: '2026-01-01',
  configuration: configuration(),
  ended_on: null,
  ...overrides,
});

const adjustment = (of: SandboxBenefit, action: SandboxPayAdjustment['action'], amounts: Partial<SandboxPayAdjustment> = {}): SandboxPayAdjustment => ({
  individual_id: PERSON,
  benefit_id: of.benefit_id,
  action,
  employee_amount: null,
  employer_amount: null,
  ...amounts,
});

function input(enrollments: EnrollmentInForce[]): PayStatementInput {
  return {
    kind: 'regular_payroll',
    payDate: PAY_DATE,
    employee: { dob: '1985-12-10', state: 'CA', incomeUnit: 'yearly', incomeAmount: 9_100_000, payPeriodsPerYear: 26 },
    enrollments,
    yearToDate: null,
  };
}

/** The statement the pay run computes for PERSON with these enrollments in force. */
function computed(enrollments: SandboxEnrollment[]): PayStatementRecord {
  const inForce = enrollments.map((e) => enrollmentInForceOf(BENEFITS.get(e.benefit_id)!, e));
  return toPayStatementRecord(PERSON, 'direct_deposit', computePayStatement(input(inForce)).statement);
}

const lineOf = (lines: { name: string; type: string | null; amount: number }[], of: SandboxBenefit) => lines.find((l) => l.name === of.description && l.type === of.type);
const sum = (lines: { amount: number }[]) => lines.reduce((total, line) => total + line.amount, 0);
const employeeTaxes = (s: PayStatementRecord) => sum(s.taxes.filter((t) => !t.employer));

describe('applyPayAdjustments', () => {
  const base = computed([enrollment(K401), enrollment(MEDICAL, { configuration: configuration({ employee_deduction: { type: 'fixed', amount: 9_000 } }) })]);

  it('the computed statement has both benefits’ lines to adjust', () => {
    expect(lineOf(base.employee_deductions, K401)?.amount).toBeGreaterThan(0);
    expect(lineOf(base.employer_contributions, K401)?.amount).toBeGreaterThan(0);
    expect(lineOf(base.employee_deductions, MEDICAL)?.amount).toBeGreaterThan(0);
  });

  it('skip drops the benefit’s deduction and contribution lines; net pay rises by the deduction, taxes as computed', () => {
    const skipped = applyPayAdjustments(base, [{ adjustment: adjustment(K401, 'skip'), benefit: K401 }]);
    const deduction = lineOf(base.employee_deductions, K401)!.amount;
    expect(lineOf(skipped.employee_deductions, K401)).toBeUndefined();
    expect(lineOf(skipped.employer_contributions, K401)).toBeUndefined();
    expect(skipped.employee_deductions).toEqual(base.employee_deductions.filter((l) => l.name !== K401.description));
    expect(skipped.employer_contributions).toEqual(base.employer_contributions.filter((l) => l.name !== K401.description));
    expect(skipped.net_pay.amount).toBe(base.net_pay.amount + deduction);
    expect(skipped.taxes).toEqual(base.taxes);
    expect(skipped.gross_pay).toEqual(base.gross_pay);
    expect(skipped.net_pay.amount).toBe(skipped.gross_pay.amount - employeeTaxes(skipped) - sum(skipped.employee_deductions));
  });

  it('change sets the lines to the amounts, in place, keeping pre_tax; a null amount leaves its line as computed', () => {
    const before = lineOf(base.employee_deductions, K401)!;
    const employeeAmount = before.amount + 1_234;
    const changed = applyPayAdjustments(base, [{ adjustment: adjustment(K401, 'change', { employee_amount: employeeAmount }), benefit: K401 }]);
    expect(changed.employee_deductions.map((l) => l.name)).toEqual(base.employee_deductions.map((l) => l.name));
    expect(lineOf(changed.employee_deductions, K401)).toEqual({ ...before, amount: employeeAmount });
    expect(changed.employer_contributions).toEqual(base.employer_contributions);
    expect(changed.net_pay.amount).toBe(base.net_pay.amount - (employeeAmount - before.amount));

    const employerAmount = lineOf(base.employer_contributions, K401)!.amount * 2 + 1;
    const contribution = applyPayAdjustments(base, [{ adjustment: adjustment(K401, 'change', { employer_amount: employerAmount }), benefit: K401 }]);
    expect(lineOf(contribution.employer_contributions, K401)?.amount).toBe(employerAmount);
    expect(contribution.employee_deductions).toEqual(base.employee_deductions);
    expect(contribution.net_pay).toEqual(base.net_pay);
  });

  it('change adds an absent line named by the benefit’s description, typed by its type, pre-tax by its tax treatment', () => {
    const withoutRoth = base;
    const added = applyPayAdjustments(withoutRoth, [
      { adjustment: adjustment(ROTH, 'change', { employee_amount: 2_500, employer_amount: 700 }), benefit: ROTH },
    ]);
    expect(added.employee_deductions.slice(0, -1)).toEqual(withoutRoth.employee_deductions);
    expect(added.employee_deductions.at(-1)).toEqual({ name: 'Roth 401(k)', amount: 2_500, currency: 'usd', pre_tax: false, type: '401k_roth' });
    expect(added.employer_contributions.at(-1)).toEqual({ name: 'Roth 401(k)', amount: 700, currency: 'usd', type: '401k_roth' });
    expect(added.net_pay.amount).toBe(withoutRoth.net_pay.amount - 2_500);

    const noMedical = computed([enrollment(K401)]);
    const medical = applyPayAdjustments(noMedical, [{ adjustment: adjustment(MEDICAL, 'change', { employee_amount: 3_000 }), benefit: MEDICAL }]);
    expect(lineOf(medical.employee_deductions, MEDICAL)).toMatchObject({ amount: 3_000, pre_tax: true, type: 's125_medical' });
  });

  it('change to 0 removes the line', () => {
    const zero = applyPayAdjustments(base, [{ adjustment: adjustment(MEDICAL, 'change', { employee_amount: 0 }), benefit: MEDICAL }]);
    expect(lineOf(zero.employee_deductions, MEDICAL)).toBeUndefined();
    expect(zero.net_pay.amount).toBe(base.net_pay.amount + lineOf(base.employee_deductions, MEDICAL)!.amount);
    const noContribution = applyPayAdjustments(base, [{ adjustment: adjustment(K401, 'change', { employer_amount: 0 }), benefit: K401 }]);
    expect(lineOf(noContribution.employer_contributions, K401)).toBeUndefined();
    expect(lineOf(noContribution.employee_deductions, K401)).toEqual(lineOf(base.employee_deductions, K401));
  });

  it('never takes net pay below zero: a deduction larger than what is left is cut to it', () => {
    const before = lineOf(base.employee_deductions, K401)!.amount;
    const huge = applyPayAdjustments(base, [{ adjustment: adjustment(K401, 'change', { employee_amount: base.gross_pay.amount * 10 }), benefit: K401 }]);
    expect(lineOf(huge.employee_deductions, K401)!.amount).toBe(base.net_pay.amount + before);
    expect(huge.net_pay.amount).toBe(0);
  });

  it('applies several benefits in order, and answers the statement itself when nothing changes', () => {
    const both = applyPayAdjustments(base, [
      { adjustment: adjustment(K401, 'skip'), benefit: K401 },
      { adjustment: adjustment(MEDICAL, 'change', { employee_amount: 1_111 }), benefit: MEDICAL },
    ]);
    expect(both.employee_deductions.map((l) => [l.name, l.amount])).toEqual([[MEDICAL.description, 1_111]]);
    expect(both.net_pay.amount).toBe(base.net_pay.amount + sum(base.employee_deductions) - 1_111);

    expect(applyPayAdjustments(base, [])).toBe(base);
    expect(applyPayAdjustments(base, [{ adjustment: adjustment(ROTH, 'skip'), benefit: ROTH }])).toBe(base);
    expect(applyPayAdjustments(base, [{ adjustment: adjustment(K401, 'keep'), benefit: K401 }])).toBe(base);
    const same = lineOf(base.employee_deductions, K401)!.amount;
    expect(applyPayAdjustments(base, [{ adjustment: adjustment(K401, 'change', { employee_amount: same }), benefit: K401 }])).toBe(base);
  });

  it('leaves running totals that count what the adjusted statement shows (yearToDateAfterWritten)', () => {
    const inForce = [enrollmentInForceOf(K401, enrollment(K401))];
    const statement = computed([enrollment(K401)]);
    const totals = (s: PayStatementRecord) => yearToDateAfterWritten({ payDate: PAY_DATE, statement: writtenStatementOf(s), enrollments: inForce, yearToDate: null });
    expect(totals(statement).employeeByBenefit[K401.benefit_id]).toBe(lineOf(statement.employee_deductions, K401)!.amount);
    const skipped = applyPayAdjustments(statement, [{ adjustment: adjustment(K401, 'skip'), benefit: K401 }]);
    expect(totals(skipped).employeeByBenefit[K401.benefit_id]).toBeUndefined();
    expect(totals(skipped).electiveDeferrals).toBe(0);
    const changed = applyPayAdjustments(statement, [{ adjustment: adjustment(K401, 'change', { employee_amount: 4_321 }), benefit: K401 }]);
    expect(totals(changed).employeeByBenefit[K401.benefit_id]).toBe(4_321);
    expect(totals(changed).electiveDeferrals).toBe(4_321);
  });
});

describe('keep', () => {
  const ended = enrollment(K401, { configuration: configuration({ employee_deduction: { type: 'fixed', amount: 6_543 } }), ended_on: '2026-06-01' });

  it('adds the last configuration of an ended enrollment, as the computation takes it', () => {
    expect(keptEnrollments([adjustment(K401, 'keep')], [], () => ended, BENEFITS)).toEqual([enrollmentInForceOf(K401, ended)]);
  });

  it('adds nothing while the enrollment is in force, without any row, or for a benefit the provider does not run', () => {
    expect(keptEnrollments([adjustment(K401, 'keep')], [enrollment(K401)], () => ended, BENEFITS)).toEqual([]);
    expect(keptEnrollments([adjustment(K401, 'keep')], [], () => undefined, BENEFITS)).toEqual([]);
    expect(keptEnrollments([adjustment(K401, 'keep')], [], () => ended, new Map())).toEqual([]);
  });

  it('a run’s keep computes the statement with the ended configuration: the deduction and the match come back', () => {
    const run = new PayRunAdjustments([adjustment(K401, 'keep')], [ended]);
    const person = run.forPerson(PERSON.toUpperCase(), [], BENEFITS)!;
    expect(person.kept).toEqual([enrollmentInForceOf(K401, ended)]);
    const statement = toPayStatementRecord(PERSON, 'direct_deposit', computePayStatement(input(person.kept)).statement);
    expect(lineOf(statement.employee_deductions, K401)?.amount).toBe(6_543);
    expect(lineOf(statement.employer_contributions, K401)?.amount).toBe(ended.configuration.company_contribution!.amount);
    expect(person.apply(statement)).toBe(statement);
    expect(computed([]).employee_deductions).toEqual([]);
  });
});

describe('PayRunAdjustments', () => {
  it('gives each person their own adjustments, skip and change applied, none for others', () => {
    const run = new PayRunAdjustments(
      [adjustment(K401, 'skip'), adjustment(MEDICAL, 'change', { employee_amount: 2_000 }), { ...adjustment(K401, 'change', { employer_amount: 50 }), individual_id: OTHER }],
      [],
    );
    expect(run.forPerson('a0000000-0000-4000-8000-00000000ffff', [], BENEFITS)).toBeUndefined();
    const statement = computed([enrollment(K401)]);
    const mine = run.forPerson(PERSON, [enrollment(K401)], BENEFITS)!;
    expect(mine.kept).toEqual([]);
    const adjusted = mine.apply(statement);
    expect(adjusted.employee_deductions.map((l) => [l.name, l.amount])).toEqual([[MEDICAL.description, 2_000]]);
    expect(lineOf(adjusted.employer_contributions, K401)).toBeUndefined();
    const theirs = run.forPerson(OTHER, [], BENEFITS)!;
    expect(lineOf(theirs.apply(statement).employer_contributions, K401)?.amount).toBe(50);
  });

  it('ignores an adjustment of a benefit the run does not know', () => {
    const run = new PayRunAdjustments([adjustment(K401, 'skip')], []);
    const statement = computed([enrollment(K401)]);
    expect(run.forPerson(PERSON, [], new Map())!.apply(statement)).toBe(statement);
  });
});
