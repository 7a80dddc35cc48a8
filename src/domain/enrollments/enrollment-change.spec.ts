import { groupByEffectiveDate, jobStatusOf, repeatedKeys } from './enrollment-change';

describe('groupByEffectiveDate', () => {
  it('makes one group per date, oldest first, items in request order', () => {
    const groups = groupByEffectiveDate([
      { id: 'c', effectiveDate: '2026-08-01' },
      { id: 'a', effectiveDate: '2026-06-01' },
      { id: 'd', effectiveDate: '2026-07-01' },
      { id: 'b', effectiveDate: '2026-06-01' },
    ]);
    expect(groups.map((g) => [g.effectiveDate, g.items.map((i) => i.id)])).toEqual([
      ['2026-06-01', ['a', 'b']],
      ['2026-07-01', ['d']],
      ['2026-08-01', ['c']],
    ]);
  });

  it('makes no group of nothing', () => expect(groupByEffectiveDate([])).toEqual([]));
});

describe('jobStatusOf', () => {
  it('stays pending while a change waits, the latest-dated included', () => {
    expect(jobStatusOf({ waiting: 1, succeeded: 0, failed: 0, superseded: 0 })).toBe('pending');
    expect(jobStatusOf({ waiting: 1, succeeded: 5, failed: 0, superseded: 0 })).toBe('pending');
  });

  it('completes when some individuals failed or were taken over, errs only when some failed and none succeeded', () => {
    expect(jobStatusOf({ waiting: 0, succeeded: 1, failed: 1, superseded: 0 })).toBe('complete');
    expect(jobStatusOf({ waiting: 0, succeeded: 0, failed: 2, superseded: 0 })).toBe('error');
    expect(jobStatusOf({ waiting: 0, succeeded: 0, failed: 0, superseded: 3 })).toBe('complete');
  });
});

describe('repeatedKeys', () => {
  it('finds keys named twice, case-insensitively, each once', () => {
    expect(repeatedKeys(['a', 'B', 'b', 'c', 'A', 'a'])).toEqual(['b', 'A']);
    expect(repeatedKeys(['a', 'b'])).toEqual([]);
  });
});
