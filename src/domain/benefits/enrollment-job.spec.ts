import { EnrollmentConfigurationParams } from './benefit-job-params';
import { enrollmentJobStatus, GroupState, groupByEffectiveDate, individualResultsOf, repeatedIds } from './enrollment-job';

const config = (amount: number): EnrollmentConfigurationParams => ({
  employee_deduction: { type: 'percent', amount },
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
});

describe('groupByEffectiveDate', () => {
  it('makes one group per date, oldest first, items in request order', () => {
    const groups = groupByEffectiveDate([
      { individualId: 'c', effectiveDate: '2026-08-01', configuration: config(3) },
      { individualId: 'a', effectiveDate: '2026-06-01', configuration: config(1) },
      { individualId: 'd', effectiveDate: '2026-07-01', configuration: config(4) },
      { individualId: 'b', effectiveDate: '2026-06-01', configuration: config(2) },
    ]);
    expect(groups.map((g) => [g.effective_date, g.items.map((i) => i.individual_id)])).toEqual([
      ['2026-06-01', ['a', 'b']],
      ['2026-07-01', ['d']],
      ['2026-08-01', ['c']],
    ]);
    expect(groups[0].items[1].configuration).toEqual(config(2));
  });

  it('makes no group of nothing', () => expect(groupByEffectiveDate([])).toEqual([]));
});

describe('enrollmentJobStatus', () => {
  const ok = (id: string) => ({ individual_id: id, code: 200 });
  const missing = (id: string) => ({ individual_id: id, code: 404, message: 'no such individual' });
  const group = (effectiveDate: string, results: GroupState['results']): GroupState => ({
    effectiveDate,
    processed: results !== null,
    results,
  });

  it('stays pending until every group, the latest included, is processed', () => {
    expect(enrollmentJobStatus([group('2026-06-01', null), group('2026-07-01', null)])).toBe('pending');
    expect(enrollmentJobStatus([group('2026-06-01', [ok('a')]), group('2026-07-01', null)])).toBe('pending');
    expect(enrollmentJobStatus([group('2026-06-01', null), group('2026-07-01', [ok('b')])])).toBe('pending');
    expect(enrollmentJobStatus([group('2026-06-01', [ok('a')]), group('2026-07-01', [ok('b')])])).toBe('complete');
  });

  it('completes when some individuals failed, errs only when none succeeded', () => {
    expect(enrollmentJobStatus([group('2026-06-01', [missing('a')]), group('2026-07-01', [ok('b')])])).toBe('complete');
    expect(enrollmentJobStatus([group('2026-06-01', [missing('a')]), group('2026-07-01', [missing('b')])])).toBe('error');
  });

  it('lists processed results by date', () => {
    expect(individualResultsOf([group('2026-07-01', [ok('b')]), group('2026-06-01', [missing('a')]), group('2026-08-01', null)])).toEqual([
      missing('a'),
      ok('b'),
    ]);
  });
});

describe('repeatedIds', () => {
  it('finds ids named twice, case-insensitively', () => {
    expect(repeatedIds(['a', 'B', 'b', 'c', 'A', 'a'])).toEqual(['b', 'A']);
    expect(repeatedIds(['a', 'b'])).toEqual([]);
  });
});
