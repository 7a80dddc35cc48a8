import type { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import type { AppliedTimeline } from '../enrollments/applied-timeline';
import { irsLimitsFor } from '../payroll/irs-limits';
import { emptyYearToDate } from '../payroll/pay-statement-calculator';
import { ObservedStatement, ReconciledBenefit } from './reconciliation.types';
import { reconcilePerson, taxTreatmentOfType } from './statement-reconciliation';

const K401: ReconciledBenefit = {
  id: 'b-401k',
  type: '401k',
  description: '401(k) Plan',
  frequency: 'every_paycheck',
  matchTiers: [{ match: 10_000, threshold: 300 }],
  reconcileFrom: '2026-01-01',
};
const MEDICAL: ReconciledBenefit = { id: 'b-med', type: 's125_medical', description: 'Medical', frequency: 'monthly', matchTiers: null, reconcileFrom: '2026-01-01' };

const percent = (amount: number, extra: Partial<EnrollmentConfigurationParams> = {}): EnrollmentConfigurationParams => ({
  employee_deduction: { type: 'percent', amount },
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
  ...extra,
});
const fixed = (amount: number, extra: Partial<EnrollmentConfigurationParams> = {}): EnrollmentConfigurationParams => ({
  ...percent(0),
  employee_deduction: { type: 'fixed', amount },
  ...extra,
});

function statement(payDate: string, lines: { name?: string; type?: string | null; employee?: number; employer?: number }[] = [], gross = 400_000): ObservedStatement {
  return {
    paymentId: `p-${payDate}`,
    payDate,
    individualId: 'ada',
    kind: 'regular_payroll',
    grossPay: gross,
    netPay: 250_000,
    employeeDeductions: lines
      .filter((l) => l.employee !== undefined)
      .map((l) => ({ name: l.name ?? K401.description, amount: l.employee!, preTax: true, type: l.type === undefined ? '401k' : l.type })),
    employerContributions: lines
      .filter((l) => l.employer !== undefined)
      .map((l) => ({ name: l.name ?? K401.description, amount: l.employer!, type: l.type === undefined ? '401k' : l.type })),
  };
}

function reconcile(statements: ObservedStatement[], timelines: Record<string, AppliedTimeline>, benefits = [K401], dob: string | null = '1990-05-05') {
  return reconcilePerson({ individualId: 'ada', dob, statements, timelines: new Map(Object.entries(timelines)), yearToDate: null }, benefits);
}

describe('reconciling a pay statement', () => {
  const enrolled: AppliedTimeline = [{ from: '2026-03-01', configuration: percent(500), jobId: 'job-1' }];

  it('matches 5 % of gross with the tiered match on what was deducted, within a cent of rounding', () => {
    // 5 % of 4,000.00 = 200.00; match 100 % of the first 3 % of pay = 120.00.
    const [exact] = reconcile([statement('2026-03-13', [{ employee: 20_000, employer: 12_000 }])], { [K401.id]: enrolled });
    expect(exact).toMatchObject({ result: 'matched', expectedEmployee: 20_000, expectedEmployer: 12_000, jobId: 'job-1', taxTreatment: 'pre_tax' });
    const [rounded] = reconcile([statement('2026-03-13', [{ employee: 19_999, employer: 12_000 }])], { [K401.id]: enrolled });
    expect(rounded.result).toBe('matched');
  });

  it('is missing when nothing was deducted, amount_mismatch when two cents off, match_mismatch when only the match is off', () => {
    expect(reconcile([statement('2026-03-13', [])], { [K401.id]: enrolled })[0].result).toBe('missing');
    expect(reconcile([statement('2026-03-13', [{ employee: 19_998, employer: 11_999 }])], { [K401.id]: enrolled })[0].result).toBe('amount_mismatch');
    const [match] = reconcile([statement('2026-03-13', [{ employee: 20_000, employer: 20_000 }])], { [K401.id]: enrolled });
    expect(match).toMatchObject({ result: 'match_mismatch', expectedEmployer: 12_000, observedEmployer: 20_000 });
  });

  it('expects nothing before a mid-period effective date and the election from the first pay date on or after it', () => {
    const timeline: AppliedTimeline = [{ from: '2026-03-18', configuration: percent(500) }];
    const results = reconcile(
      [statement('2026-03-13', []), statement('2026-03-27', [{ employee: 20_000, employer: 12_000 }])],
      { [K401.id]: timeline },
    );
    // No enrollment in force and nothing deducted, for a person who has a timeline: matched at 0.
    expect(results.map((r) => [r.payDate, r.result, r.expectedEmployee])).toEqual([
      ['2026-03-13', 'matched', 0],
      ['2026-03-27', 'matched', 20_000],
    ]);
  });

  it('is unexpected when a deduction keeps running after the enrollment ended', () => {
    const ended: AppliedTimeline = [...enrolled, { from: '2026-04-01', configuration: null, jobId: 'job-2' }];
    const [result] = reconcile([statement('2026-04-10', [{ employee: 20_000, employer: 12_000 }])], { [K401.id]: ended });
    expect(result).toMatchObject({ result: 'unexpected', expectedEmployee: 0, observedEmployee: 20_000, jobId: 'job-2' });
  });

  it('gives no result for a benefit the person never had and nothing deducted', () => {
    expect(reconcile([statement('2026-04-10', [])], {})).toEqual([]);
  });

  it('counts the annual maximum from what payroll took before: the last deduction is cut, then none is due', () => {
    const timeline: AppliedTimeline = [{ from: '2026-01-01', configuration: fixed(40_000, { annual_maximum: 100_000 }) }];
    const results = reconcile(
      [
        statement('2026-01-09', [{ employee: 40_000, employer: 12_000 }]),
        statement('2026-01-23', [{ employee: 40_000, employer: 12_000 }]),
        statement('2026-02-06', [{ employee: 20_000, employer: 12_000 }]),
        statement('2026-02-20', []),
      ],
      { [K401.id]: timeline },
    );
    expect(results.map((r) => [r.result, r.expectedEmployee, r.limitRoom])).toEqual([
      ['matched', 40_000, 100_000],
      ['matched', 40_000, 60_000],
      ['matched', 20_000, 20_000],
      ['matched', 0, 0],
    ]);
  });

  it('is over_limit when payroll deducts past the annual maximum', () => {
    const timeline: AppliedTimeline = [{ from: '2026-01-01', configuration: fixed(40_000, { annual_maximum: 50_000 }) }];
    const results = reconcile(
      [statement('2026-01-09', [{ employee: 40_000, employer: 12_000 }]), statement('2026-01-23', [{ employee: 40_000, employer: 12_000 }])],
      { [K401.id]: timeline },
    );
    expect(results.map((r) => r.result)).toEqual(['matched', 'over_limit']);
    expect(results[1]).toMatchObject({ expectedEmployee: 10_000, limitRoom: 10_000 });
  });

  it('gives catch-up room over 50 only with catch_up: the 402(g) limit plus the catch-up is not over the limit', () => {
    const limits = irsLimitsFor(2026);
    const big = 1_100_000;
    const deducted = [big, big, limits.electiveDeferral + limits.catchUpAge50 - 2 * big];
    const statements = deducted.map((employee, i) => statement(`2026-0${i + 1}-15`, [{ employee, employer: 0 }], 2_000_000));
    const noMatch = { ...K401, matchTiers: null };
    const withCatchUp = reconcile(statements, { [K401.id]: [{ from: '2026-01-01', configuration: fixed(big, { catch_up: true }) }] }, [noMatch], '1972-02-02');
    expect(withCatchUp.map((r) => r.result)).toEqual(['matched', 'matched', 'matched']);
    const without = reconcile(statements, { [K401.id]: [{ from: '2026-01-01', configuration: fixed(big) }] }, [noMatch], '1972-02-02');
    expect(without.map((r) => r.result)).toEqual(['matched', 'matched', 'over_limit']);
    // Under 50 the catch-up election gives no room.
    const young = reconcile(statements, { [K401.id]: [{ from: '2026-01-01', configuration: fixed(big, { catch_up: true }) }] }, [noMatch], '1990-02-02');
    expect(young[2].result).toBe('over_limit');
  });

  it('takes a monthly deduction on the first regular statement of the month only', () => {
    const timeline: AppliedTimeline = [{ from: '2026-01-01', configuration: fixed(15_000) }];
    const medical = (payDate: string, employee?: number) =>
      statement(payDate, employee === undefined ? [] : [{ name: 'Medical', type: 's125_medical', employee }]);
    const results = reconcile([medical('2026-01-09', 15_000), medical('2026-01-23'), medical('2026-02-06', 15_000)], { [MEDICAL.id]: timeline }, [MEDICAL]);
    expect(results.map((r) => [r.result, r.expectedEmployee])).toEqual([
      ['matched', 15_000],
      ['matched', 0],
      ['matched', 15_000],
    ]);
  });

  it('matches lines by the benefit description in any case, never a plan the service does not run by its type alone', () => {
    const byName = reconcile([statement('2026-03-13', [{ name: '  401(K) PLAN ', employee: 20_000, employer: 12_000 }])], { [K401.id]: enrolled });
    expect(byName[0].result).toBe('matched');
    const otherPlan = reconcile(
      [statement('2026-03-13', [{ employee: 20_000, employer: 12_000 }, { name: 'Legacy 401(k)', employee: 5_000, employer: 0 }])],
      { [K401.id]: enrolled },
    );
    expect(otherPlan[0]).toMatchObject({ result: 'matched', observedEmployee: 20_000 });
  });

  it('counts a plan the service does not run against the shared IRS limit, whichever order payroll capped them in', () => {
    const limits = irsLimitsFor(2026);
    const noMatch = { ...K401, matchTiers: null };
    const timeline: AppliedTimeline = [{ from: '2026-01-01', configuration: fixed(1_000_000) }];
    const legacyBefore = limits.electiveDeferral - 1_500_000; // deducted by the other plan earlier in the year
    const yearToDate = { ...emptyYearToDate(2026), electiveDeferrals: legacyBefore };
    const run = (ours: number, legacy: number) =>
      reconcilePerson(
        {
          individualId: 'ada',
          dob: '1990-01-01',
          statements: [statement('2026-06-12', [{ employee: ours }, { name: 'Legacy 401(k)', employee: legacy }], 2_000_000)],
          timelines: new Map([[K401.id, timeline]]),
          yearToDate,
        },
        [noMatch],
      )[0];
    // 15,000.00 of room left: the other plan took 10,000.00 first and ours the 5,000.00 left…
    expect(run(500_000, 1_000_000)).toMatchObject({ result: 'matched', expectedEmployee: 500_000 });
    // …or ours came first and the other plan was cut to what was left.
    expect(run(1_000_000, 500_000)).toMatchObject({ result: 'matched', expectedEmployee: 1_000_000 });
    // Anything else is a mismatch; more than the room is over the limit.
    expect(run(300_000, 1_000_000).result).toBe('amount_mismatch');
    expect(run(700_000, 1_000_000).result).toBe('over_limit');
    expect(run(1_000_000, 1_000_000).result).toBe('over_limit');
  });

  it('does not reconcile statements paid before the service ran the benefit', () => {
    const late = { ...K401, reconcileFrom: '2026-06-01' };
    expect(reconcile([statement('2026-03-13', [{ employee: 1 }])], { [K401.id]: enrolled }, [late])).toEqual([]);
  });

  it('splits pre-tax, Roth and other after-tax deductions', () => {
    expect(taxTreatmentOfType('401k')).toBe('pre_tax');
    expect(taxTreatmentOfType('401k_roth')).toBe('roth');
    expect(taxTreatmentOfType('hsa_post')).toBe('after_tax');
    expect(taxTreatmentOfType('s125_medical')).toBe('pre_tax');
  });
});
