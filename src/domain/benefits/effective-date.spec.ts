import { latestEffectiveDate, resolveEffectiveDate, startOfUtcDate, utcDateOf } from './effective-date';

const TODAY = '2026-06-01';

describe('resolveEffectiveDate', () => {
  it.each([
    ['2026-07-01', '2026-07-01'],
    ['07/01/2026', '2026-07-01'],
    ['2026-07-01T00:00:00.000Z', '2026-07-01'],
    ['2026-07-01T23:30:00Z', '2026-07-01'],
    ['2026-07-01T00:00:00-05:00', '2026-07-01'],
    ['2026-07-01T08:15+0200', '2026-07-01'],
    ['2028-02-29', '2028-02-29'],
  ])('accepts %s as %s', (input, expected) => {
    expect(resolveEffectiveDate(input, TODAY)).toEqual({ ok: true, date: expected });
  });

  it.each([undefined, null])('takes the request date for %s', (input) => {
    expect(resolveEffectiveDate(input, TODAY)).toEqual({ ok: true, date: TODAY });
  });

  it.each(['2020-01-01', '05/31/2026', '2026-05-31T23:59:59.999Z'])('moves a past date (%s) to the request date', (input) => {
    expect(resolveEffectiveDate(input, TODAY)).toEqual({ ok: true, date: TODAY });
  });

  it('keeps today as today', () => {
    expect(resolveEffectiveDate('06/01/2026', TODAY)).toEqual({ ok: true, date: TODAY });
  });

  it.each([
    '2026-02-30',
    '2026-13-01',
    '13/01/2026',
    '02/30/2026',
    '2026-7-1',
    '7/1/2026',
    '2026-07-01T25:00:00Z',
    '2026-07-01T10:00:00',
    '2026/07/01',
    'tomorrow',
    '',
  ])('refuses %j', (input) => {
    const result = resolveEffectiveDate(input, TODAY);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problem).toMatch(/^effective_date must be YYYY-MM-DD, MM\/DD\/YYYY or an ISO 8601 date-time/);
  });

  it('takes dates up to the latest given and refuses later ones; unbounded without one', () => {
    expect(latestEffectiveDate(TODAY)).toBe(`${Number(TODAY.slice(0, 4)) + 2}${TODAY.slice(4)}`);
    const latest = latestEffectiveDate(TODAY);
    expect(resolveEffectiveDate(latest, TODAY, latest)).toEqual({ ok: true, date: latest });
    const dayAfter = new Date(Date.parse(`${latestEffectiveDate(TODAY)}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    for (const input of [dayAfter, '9999-12-31', '12/31/9999', '9999-12-31T00:00:00Z']) {
      expect(resolveEffectiveDate(input, TODAY).ok).toBe(true);
      const result = resolveEffectiveDate(input, TODAY, latest);
      expect(result).toEqual({ ok: false, problem: expect.stringMatching(/^effective_date must be within two years of today \(on or before \d{4}-\d{2}-\d{2}\)/) });
    }
  });

  it('bounds a leap day by the 28th of February two years on', () => {
    expect(latestEffectiveDate('2028-02-29')).toBe('2030-02-28');
  });

  it.each([20260701, true, {}, []])('refuses a non-string %j', (input) => {
    expect(resolveEffectiveDate(input, TODAY)).toEqual({ ok: false, problem: 'effective_date must be a string date' });
  });
});

describe('UTC dates', () => {
  it('takes today in UTC and a date at its UTC midnight', () => {
    expect(utcDateOf(new Date('2026-06-01T23:59:59-05:00'))).toBe('2026-06-02');
    expect(startOfUtcDate('2026-07-01').toISOString()).toBe('2026-07-01T00:00:00.000Z');
  });
});
