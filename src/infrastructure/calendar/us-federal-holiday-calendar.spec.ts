import { addBusinessDays } from '../../domain/calendar/business-days';
import { UsFederalHolidayCalendar } from './us-federal-holiday-calendar';

describe('UsFederalHolidayCalendar', () => {
  const calendar = new UsFederalHolidayCalendar();
  const isHoliday = (date: string) => calendar.isHoliday(date);

  it('lists the eleven federal holidays of 2026 as observed', () => {
    const year = Array.from({ length: 365 }, (_, i) => new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10));
    expect(year.filter(isHoliday)).toEqual([
      '2026-01-01', // New Year's Day
      '2026-01-19', // Martin Luther King, Jr.
      '2026-02-16', // Washington's Birthday
      '2026-05-25', // Memorial Day
      '2026-06-19', // Juneteenth
      '2026-07-03', // Independence Day, Sat Jul 4 observed Friday
      '2026-09-07', // Labor Day
      '2026-10-12', // Columbus Day
      '2026-11-11', // Veterans Day
      '2026-11-26', // Thanksgiving
      '2026-12-25', // Christmas
    ]);
  });

  it('moves a Saturday holiday to Friday and a Sunday one to Monday', () => {
    expect(isHoliday('2026-07-04')).toBe(false);
    expect(isHoliday('2027-07-05')).toBe(true); // Sun Jul 4 2027
    expect(isHoliday('2027-06-18')).toBe(true); // Sat Jun 19 2027
    expect(isHoliday('2027-12-24')).toBe(true); // Sat Dec 25 2027
    expect(isHoliday('2027-12-31')).toBe(true); // Sat Jan 1 2028, observed the year before
    expect(isHoliday('2028-01-01')).toBe(false);
  });

  it('is no holiday on ordinary days, whatever the process time zone', () => {
    expect(isHoliday('2026-07-02')).toBe(false);
    expect(isHoliday('2026-12-24')).toBe(false);
    expect(isHoliday('2026-12-31')).toBe(false);
  });

  it('drives the 2 business day SLA over holiday weekends', () => {
    expect(addBusinessDays('2026-07-02', 2, isHoliday)).toBe('2026-07-07');
    expect(addBusinessDays('2026-09-04', 2, isHoliday)).toBe('2026-09-09');
    expect(addBusinessDays('2026-11-25', 2, isHoliday)).toBe('2026-11-30');
    expect(addBusinessDays('2026-12-24', 2, isHoliday)).toBe('2026-12-29');
    expect(addBusinessDays('2027-12-30', 1, isHoliday)).toBe('2028-01-03');
  });
});
