/**
 * Business-day arithmetic on calendar dates (`YYYY-MM-DD`, no time of day, no time zone).
 * Which days are holidays is data passed in (a HolidayCalendar), so this stays pure.
 */

/** True when the calendar date `YYYY-MM-DD` is a holiday (as observed). */
export type IsHoliday = (date: string) => boolean;

/** Where holidays come from; an adapter in infrastructure implements it. */
export interface HolidayCalendar {
  isHoliday(date: string): boolean;
}

export const HOLIDAY_CALENDAR = Symbol('HolidayCalendar');

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 24 * 60 * 60 * 1000;

function parseDate(date: string): number {
  const match = DATE.exec(date);
  if (!match) throw new Error(`expected a YYYY-MM-DD date, got ${JSON.stringify(date)}`);
  const time = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  if (new Date(time).toISOString().slice(0, 10) !== date) throw new Error(`${date} is not a calendar date`);
  return time;
}

const formatDate = (time: number) => new Date(time).toISOString().slice(0, 10);

/** The calendar date an instant falls on in UTC (the service's business dates are UTC dates). */
export function utcDateOf(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

/** Monday to Friday and not a holiday. */
export function isBusinessDay(date: string, isHoliday: IsHoliday): boolean {
  const weekday = new Date(parseDate(date)).getUTCDay();
  return weekday !== 0 && weekday !== 6 && !isHoliday(date);
}

/**
 * The date `n` business days after `date`. The start date itself never counts, business day
 * or not: Thursday + 2 is Monday, Saturday + 2 is Tuesday (holidays aside). n = 0 is `date`.
 */
export function addBusinessDays(date: string, n: number, isHoliday: IsHoliday): string {
  if (!Number.isInteger(n) || n < 0) throw new Error(`business days must be a whole number ≥ 0, got ${n}`);
  let time = parseDate(date);
  for (let counted = 0; counted < n; ) {
    time += DAY_MS;
    if (isBusinessDay(formatDate(time), isHoliday)) counted++;
  }
  return formatDate(time);
}
