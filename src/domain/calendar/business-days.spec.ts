import { addBusinessDays, isBusinessDay, utcDateOf } from './business-days';

/** The observed US federal holidays these cases touch, written out by hand. */
const HOLIDAYS = new Set([
  '2026-07-03', // Independence Day (Sat Jul 4) observed Friday
  '2026-09-07', // Labor Day
  '2026-11-26', // Thanksgiving
  '2026-12-25', // Christmas (a Friday)
  '2027-07-05', // Independence Day (Sun Jul 4) observed Monday
  '2027-12-24', // Christmas (Sat Dec 25) observed Friday
  '2027-12-31', // New Year's Day 2028 (a Saturday) observed Friday of the year before
]);
const isHoliday = (date: string) => HOLIDAYS.has(date);
const noHolidays = () => false;

describe('addBusinessDays', () => {
  it('skips weekends; the start day itself never counts', () => {
    expect(addBusinessDays('2026-06-01', 2, noHolidays)).toBe('2026-06-03'); // Mon → Wed
    expect(addBusinessDays('2026-06-04', 2, noHolidays)).toBe('2026-06-08'); // Thu → Mon
    expect(addBusinessDays('2026-06-05', 2, noHolidays)).toBe('2026-06-09'); // Fri → Tue
    expect(addBusinessDays('2026-06-06', 2, noHolidays)).toBe('2026-06-09'); // Sat → Tue
    expect(addBusinessDays('2026-06-07', 1, noHolidays)).toBe('2026-06-08'); // Sun → Mon
    expect(addBusinessDays('2026-06-06', 0, noHolidays)).toBe('2026-06-06');
  });

  it('skips Independence Day observed on Friday Jul 3 2026 (Jul 4 is a Saturday)', () => {
    expect(addBusinessDays('2026-07-02', 2, isHoliday)).toBe('2026-07-07'); // Thu → (Fri off, weekend) Mon, Tue
    expect(addBusinessDays('2026-07-01', 2, isHoliday)).toBe('2026-07-06'); // Wed → Thu, (Fri off) Mon
  });

  it('skips a Monday holiday after a weekend: Fri 2026-09-04 + 2 is Wed 2026-09-09 (Labor Day)', () => {
    expect(addBusinessDays('2026-09-04', 2, isHoliday)).toBe('2026-09-09');
  });

  it('skips Thanksgiving, Thu 2026-11-26', () => {
    expect(addBusinessDays('2026-11-24', 2, isHoliday)).toBe('2026-11-27'); // Tue → Wed, (Thu off) Fri
    expect(addBusinessDays('2026-11-25', 2, isHoliday)).toBe('2026-11-30'); // Wed → (Thu off) Fri, Mon
  });

  it('skips Christmas, and observed dates that cross into the next year', () => {
    expect(addBusinessDays('2026-12-24', 2, isHoliday)).toBe('2026-12-29'); // Thu → (Fri off) Mon, Tue
    expect(addBusinessDays('2027-12-23', 2, isHoliday)).toBe('2027-12-28'); // Thu → (Fri Dec 24 off) Mon, Tue
    expect(addBusinessDays('2027-12-30', 1, isHoliday)).toBe('2028-01-03'); // Thu → (Fri Dec 31 off) Mon
  });

  it('skips a Sunday holiday observed on Monday', () => {
    expect(addBusinessDays('2027-07-02', 1, isHoliday)).toBe('2027-07-06'); // Fri → (Mon Jul 5 off) Tue
  });

  it('refuses what is not a date or a whole number of days', () => {
    expect(() => addBusinessDays('2026-02-30', 1, noHolidays)).toThrow(/not a calendar date/);
    expect(() => addBusinessDays('07/02/2026', 1, noHolidays)).toThrow(/YYYY-MM-DD/);
    expect(() => addBusinessDays('2026-07-02', -1, noHolidays)).toThrow(/whole number/);
    expect(() => addBusinessDays('2026-07-02', 1.5, noHolidays)).toThrow(/whole number/);
  });
});

describe('isBusinessDay', () => {
  it('is Monday to Friday except holidays', () => {
    expect(isBusinessDay('2026-07-02', isHoliday)).toBe(true);
    expect(isBusinessDay('2026-07-03', isHoliday)).toBe(false);
    expect(isBusinessDay('2026-07-04', isHoliday)).toBe(false);
    expect(isBusinessDay('2026-07-05', isHoliday)).toBe(false);
  });
});

describe('utcDateOf', () => {
  it('takes the UTC calendar date of an instant', () => {
    expect(utcDateOf(new Date('2026-07-02T23:59:59.999Z'))).toBe('2026-07-02');
    expect(utcDateOf(new Date('2026-07-03T00:00:00Z'))).toBe('2026-07-03');
    expect(utcDateOf(new Date('2026-07-02T21:00:00-04:00'))).toBe('2026-07-03');
  });
});
