import {
  addDays,
  addMonths,
  daysBetween,
  debitDateOf,
  isIsoDate,
  nextRegularPayDate,
  payFrequencyOfPeriod,
  payPeriodOf,
  regularPayDatesBetween,
  weekdayOf,
  yearsBetween,
} from './sandbox-pay-calendar';

const viaDate = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

describe('sandbox pay calendar', () => {
  it('adds days exactly as Date does, across month ends, leap days and centuries', () => {
    for (const start of ['1899-12-31', '1900-02-28', '1999-12-31', '2000-02-28', '2024-02-28', '2026-06-01']) {
      for (const days of [-40_000, -366, -365, -59, -1, 0, 1, 28, 29, 365, 366, 20_000]) {
        expect(addDays(start, days)).toBe(viaDate(start, days));
        expect(daysBetween(start, addDays(start, days))).toBe(days);
      }
    }
  });

  it('knows weekdays, and validates calendar dates', () => {
    expect(weekdayOf('2026-06-01')).toBe(1); // a Monday
    expect(weekdayOf('1969-12-31')).toBe(3);
    expect(isIsoDate('2024-02-29')).toBe(true);
    expect(isIsoDate('2026-02-29')).toBe(false);
    expect(isIsoDate('1900-02-29')).toBe(false);
    expect(isIsoDate('2026-13-01')).toBe(false);
    expect(isIsoDate('2026-6-1')).toBe(false);
  });

  it('moves by months clamping to the month end, and counts whole years', () => {
    expect(addMonths('2026-03-31', -1)).toBe('2026-02-28');
    expect(addMonths('2026-01-15', -13)).toBe('2024-12-15');
    expect(addMonths('2024-02-29', 12)).toBe('2025-02-28');
    expect(yearsBetween('1956-06-02', '2026-06-01')).toBe(69);
    expect(yearsBetween('1956-06-01', '2026-06-01')).toBe(70);
  });

  it('pays every other Friday, for the two weeks ending a week before, debited two business days early', () => {
    expect(nextRegularPayDate('2026-06-01')).toBe('2026-06-05');
    expect(nextRegularPayDate('2026-06-05')).toBe('2026-06-19');
    expect(regularPayDatesBetween('2026-05-01', '2026-06-01')).toEqual(['2026-05-08', '2026-05-22']);
    expect(regularPayDatesBetween('2026-05-08', '2026-05-22')).toEqual(['2026-05-22']);
    expect(payPeriodOf('2026-06-05')).toEqual({ start_date: '2026-05-16', end_date: '2026-05-29' });
    expect(debitDateOf('2026-06-05')).toBe('2026-06-03');
    expect(debitDateOf('2026-06-15')).toBe('2026-06-11'); // a Monday: back over the weekend
  });

  it('tells the frequency of a given pay period by its shape, and has none for other spans', () => {
    const of = (start_date: string, end_date: string) => payFrequencyOfPeriod({ start_date, end_date });
    expect(of('2026-06-01', '2026-06-07')).toBe('weekly');
    expect(of('2026-05-16', '2026-05-29')).toBe('bi_weekly');
    expect(of('2026-12-26', '2027-01-08')).toBe('bi_weekly');
    expect(of('2026-06-01', '2026-06-15')).toBe('semi_monthly');
    expect(of('2026-02-16', '2026-02-28')).toBe('semi_monthly');
    expect(of('2024-02-16', '2024-02-29')).toBe('bi_weekly'); // 14 days: the span decides first
    expect(of('2026-06-16', '2026-06-30')).toBe('semi_monthly');
    expect(of('2026-02-01', '2026-02-28')).toBe('monthly');
    expect(of('2026-07-01', '2026-07-31')).toBe('monthly');
    for (const [start, end] of [
      ['2026-06-01', '2026-06-01'],
      ['2026-06-01', '2026-06-10'],
      ['2026-06-02', '2026-06-16'],
      ['2026-06-16', '2026-06-28'],
      ['2026-06-15', '2026-07-14'],
      ['2026-01-01', '2026-12-31'],
    ]) {
      expect({ start, end, frequency: of(start, end) }).toEqual({ start, end, frequency: undefined });
    }
  });
});
