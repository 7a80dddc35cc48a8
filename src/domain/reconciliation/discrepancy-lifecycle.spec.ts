import type { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import { applyConfigurationReads, applyStatementResults, emptyChanges, sameConfiguration, statementResultKey, yearToDateOfResults } from './discrepancy-lifecycle';
import { LiveDiscrepancy, StatementResult, StatementResultKind } from './reconciliation.types';

const result = (payDate: string, kind: StatementResultKind, paymentId = `p-${payDate}`): StatementResult => ({
  paymentId,
  payDate,
  individualId: 'ada',
  benefitId: 'b1',
  result: kind,
  expectedEmployee: 100,
  observedEmployee: kind === 'missing' ? 0 : 90,
  expectedEmployer: 0,
  observedEmployer: 0,
  limitRoom: null,
  taxTreatment: 'pre_tax',
  configuration: null,
  jobId: null,
});

const liveOne = (kind: LiveDiscrepancy['kind'], lastPayDate: string): LiveDiscrepancy => ({
  id: 'd1',
  benefitId: 'b1',
  individualId: 'ada',
  kind,
  status: 'open',
  lastPaymentId: `p-${lastPayDate}`,
  lastPayDate,
  occurrences: 1,
});

describe('discrepancy lifecycle', () => {
  it('opens once, counts later statements as occurrences, and resolves when a later statement agrees', () => {
    const live: LiveDiscrepancy[] = [];
    const changes = emptyChanges();
    applyStatementResults(live, [result('2026-03-13', 'missing'), result('2026-03-27', 'missing'), result('2026-04-10', 'matched')], changes);
    expect(changes.opened).toHaveLength(1);
    expect(changes.updated).toEqual([expect.objectContaining({ id: 'new:0', newOccurrence: true, paymentId: 'p-2026-03-27' })]);
    expect(changes.resolved).toEqual([{ id: 'new:0', resolution: 'agreed', paymentId: 'p-2026-04-10' }]);
    expect(live).toEqual([]);
  });

  it('tells each result the discrepancy it opened or added to, when the same kind opens again in one run', () => {
    const live = [liveOne('missing', '2026-03-13')];
    const changes = emptyChanges();
    const results = [result('2026-03-27', 'missing'), result('2026-04-10', 'matched'), result('2026-04-24', 'missing'), result('2026-05-08', 'missing')];
    applyStatementResults(live, results, changes);
    expect(results.map((r) => changes.shownIn.get(statementResultKey(r)) ?? null)).toEqual(['d1', null, 'new:0', 'new:0']);
    expect(changes.resolved).toEqual([{ id: 'd1', resolution: 'agreed', paymentId: 'p-2026-04-10' }]);
    expect(live.map((d) => d.id)).toEqual(['new:0']);
  });

  it('updates the live discrepancy of an earlier run without opening another, and counts a corrected statement once', () => {
    const live = [liveOne('amount_mismatch', '2026-03-13')];
    const changes = emptyChanges();
    applyStatementResults(live, [result('2026-03-13', 'amount_mismatch'), result('2026-03-27', 'amount_mismatch')], changes);
    expect(changes.opened).toEqual([]);
    expect(changes.updated.map((u) => u.newOccurrence)).toEqual([false, true]);
    expect(live[0].occurrences).toBe(2);
  });

  it('resolves a discrepancy whose problem changed kind and opens the new kind', () => {
    const live = [liveOne('missing', '2026-03-13')];
    const changes = emptyChanges();
    applyStatementResults(live, [result('2026-03-27', 'amount_mismatch')], changes);
    expect(changes.resolved).toEqual([{ id: 'd1', resolution: 'became_amount_mismatch', paymentId: 'p-2026-03-27' }]);
    expect(changes.opened.map((o) => o.kind)).toEqual(['amount_mismatch']);
  });

  it('leaves live discrepancies alone for a statement older than what they have seen', () => {
    const live = [liveOne('missing', '2026-03-27')];
    const changes = emptyChanges();
    applyStatementResults(live, [result('2026-03-13', 'matched')], changes);
    expect(changes).toEqual(emptyChanges());
  });

  it('opens configuration drift for a provider configuration that differs, and resolves it when both agree again', () => {
    const service: EnrollmentConfigurationParams = {
      employee_deduction: { type: 'percent', amount: 500 },
      company_contribution: null,
      annual_maximum: null,
      catch_up: false,
      hsa_contribution_limit: null,
    };
    const edited = { ...service, employee_deduction: { type: 'percent' as const, amount: 800 } };
    const opened = emptyChanges();
    applyConfigurationReads([], [{ benefitId: 'b1', individualId: 'ada', service, provider: edited }], opened);
    expect(opened.opened).toEqual([expect.objectContaining({ kind: 'configuration_drift', expected: { configuration: service }, observed: { configuration: edited } })]);

    const drift = { ...liveOne('configuration_drift', '2026-03-13'), lastPayDate: null, lastPaymentId: null };
    const agreed = emptyChanges();
    applyConfigurationReads([drift], [{ benefitId: 'b1', individualId: 'ada', service, provider: { ...service } }], agreed);
    expect(agreed.resolved).toEqual([{ id: 'd1', resolution: 'agreed', paymentId: null }]);
    expect(sameConfiguration(service, null)).toBe(false);
    expect(sameConfiguration(null, null)).toBe(true);
  });

  it('rebuilds year-to-date totals: per benefit from earlier results of the year, IRS limits from the statements', () => {
    const statementTotals = [
      { electiveDeferrals: 300, simpleDeferrals: 0, section457Deferrals: 0, hsaTotal: 0 },
      { electiveDeferrals: 700, simpleDeferrals: 0, section457Deferrals: 0, hsaTotal: 300 },
    ];
    const totals = yearToDateOfResults(2026, [
      { benefitId: 'b1', benefitType: '401k', frequency: 'every_paycheck', payDate: '2025-12-19', regular: true, observedEmployee: 999, observedEmployer: 0 },
      { benefitId: 'b1', benefitType: '401k', frequency: 'every_paycheck', payDate: '2026-01-09', regular: true, observedEmployee: 300, observedEmployer: 50 },
      { benefitId: 'b2', benefitType: 'hsa_pre', frequency: 'monthly', payDate: '2026-02-06', regular: true, observedEmployee: 200, observedEmployer: 100 },
    ], statementTotals);
    // 700 of the elective deferrals are a plan the service does not run: they count against 402(g) all the same.
    expect(totals).toMatchObject({ year: 2026, employeeByBenefit: { b1: 300, b2: 200 }, electiveDeferrals: 1_000, hsaTotal: 300, monthlyDeductionMonths: { b2: 2 } });
    expect(yearToDateOfResults(2026, [])).toBeNull();
  });
});
