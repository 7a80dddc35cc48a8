/**
 * Dates of the sandbox payroll: bi-weekly Friday pay dates, their pay periods and debit dates.
 * Dates are `YYYY-MM-DD` strings, so no time zone can shift a day.
 */

/** A Friday every bi-weekly pay date is a multiple of 14 days from, so every employer agrees. */
export const BI_WEEKLY_ANCHOR = '2024-01-05';

export function isIsoDate(value: string): boolean {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const [year, month, day] = partsOf(value);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

export function toIsoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

// Date arithmetic on day numbers (days since 1970-01-01, proleptic Gregorian) rather than Date
// objects: generating 10,000 people does a few hundred thousand of these, and Date is slow.

export function addDays(date: string, days: number): string {
  return fromDayNumber(dayNumberOf(date) + days);
}

export function daysBetween(from: string, to: string): number {
  return dayNumberOf(to) - dayNumberOf(from);
}

/** The same day `months` later (earlier when negative), clamped to the month's last day. */
export function addMonths(date: string, months: number): string {
  const [year, month, day] = partsOf(date);
  const index = year * 12 + (month - 1) + months;
  const newYear = Math.floor(index / 12);
  const newMonth = index - newYear * 12 + 1;
  return formatDate(newYear, newMonth, Math.min(day, daysInMonth(newYear, newMonth)));
}

export function addYears(date: string, years: number): string {
  return addMonths(date, years * 12);
}

/** 0 = Sunday … 6 = Saturday. */
export function weekdayOf(date: string): number {
  return (((dayNumberOf(date) + 4) % 7) + 7) % 7;
}

function partsOf(date: string): [number, number, number] {
  return [Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10))];
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function formatDate(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${month < 10 ? '0' : ''}${month}-${day < 10 ? '0' : ''}${day}`;
}

/** Days from 1970-01-01 (H. Hinnant's days_from_civil). */
function dayNumberOf(date: string): number {
  const [y, m, d] = partsOf(date);
  const year = m <= 2 ? y - 1 : y;
  const era = Math.floor(year / 400);
  const yearOfEra = year - era * 400;
  const dayOfYear = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The date of a day number (H. Hinnant's civil_from_days). */
function fromDayNumber(days: number): string {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return formatDate(yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day);
}

/** Whole years from `from` to `to` (an age). */
export function yearsBetween(from: string, to: string): number {
  const [fy, fm, fd] = from.split('-').map(Number);
  const [ty, tm, td] = to.split('-').map(Number);
  return ty - fy - (tm < fm || (tm === fm && td < fd) ? 1 : 0);
}

/** The first regular pay date strictly after `date`. */
export function nextRegularPayDate(date: string): string {
  const offset = daysBetween(BI_WEEKLY_ANCHOR, date);
  const steps = Math.floor(offset / 14) + 1;
  return addDays(BI_WEEKLY_ANCHOR, steps * 14);
}

/** Regular pay dates in (afterExclusive, untilInclusive], oldest first. */
export function regularPayDatesBetween(afterExclusive: string, untilInclusive: string): string[] {
  const dates: string[] = [];
  for (let date = nextRegularPayDate(afterExclusive); date <= untilInclusive; date = addDays(date, 14)) dates.push(date);
  return dates;
}

/** The two weeks a pay date pays for: Saturday to Friday, ending a week before the pay date. */
export function payPeriodOf(payDate: string): { start_date: string; end_date: string } {
  const end = addDays(payDate, -7);
  return { start_date: addDays(end, -13), end_date: end };
}

/** Pay frequencies a sandbox payment may run at: the bi-weekly calendar's, or that of a given period. */
export type SandboxPayFrequency = 'weekly' | 'bi_weekly' | 'semi_monthly' | 'monthly';

/**
 * The frequency a given pay period (both ends included) is paid at, by its shape: a week (7
 * days), two weeks (14 days), the 1st–15th or the 16th–last day of a month, or a whole
 * calendar month. Undefined for any other span: the payroll computation needs the number of
 * periods in a year (withholding is annualized, salary divided by it).
 */
export function payFrequencyOfPeriod(period: { start_date: string; end_date: string }): SandboxPayFrequency | undefined {
  const days = daysBetween(period.start_date, period.end_date) + 1;
  if (days === 7) return 'weekly';
  if (days === 14) return 'bi_weekly';
  const [startYear, startMonth, startDay] = partsOf(period.start_date);
  const [endYear, endMonth, endDay] = partsOf(period.end_date);
  if (startYear !== endYear || startMonth !== endMonth) return undefined;
  const lastDay = daysInMonth(startYear, startMonth);
  if (startDay === 1 && endDay === lastDay) return 'monthly';
  if ((startDay === 1 && endDay === 15) || (startDay === 16 && endDay === lastDay)) return 'semi_monthly';
  return undefined;
}

/** Two business days before the pay date (weekends skipped; holidays are not modelled). */
export function debitDateOf(payDate: string): string {
  let date = payDate;
  for (let left = 2; left > 0; ) {
    date = addDays(date, -1);
    const weekday = weekdayOf(date);
    if (weekday !== 0 && weekday !== 6) left--;
  }
  return date;
}
