/**
 * Enrollment `effective_date` (DECISIONS.md "Effective dates"): the spec's table says
 * `mm/dd/yyyy`, its sample an ISO 8601 date-time, clients send `YYYY-MM-DD` too; all three are
 * accepted and stored as a calendar date. Absent, null or past → the request date. A date a
 * caller writes is at most two years ahead (`latestEffectiveDate`): payroll providers schedule
 * deductions a plan year or so in advance, and 9999-12-31 is a typo that would leave a change
 * waiting forever. Dates the service computes from a policy (escalations years on) are not.
 */

/** `YYYY-MM-DD` of an instant in UTC: the service's "today". */
export function utcDateOf(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

/** Midnight UTC of a `YYYY-MM-DD` date: when a group of that date becomes due. */
export function startOfUtcDate(date: string): Date {
  return new Date(`${date}T00:00:00.000Z`);
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const US_DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;
// Date, `T`, time with optional seconds and fraction, then `Z` or an offset.
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

export type EffectiveDateResult = { ok: true; date: string } | { ok: false; problem: string };

/**
 * The date an enrollment takes effect, as `YYYY-MM-DD`. A date-time counts by the calendar date
 * it is written with (`2026-07-01T00:00:00-05:00` is July 1st): clients mean a day, not an instant.
 */
export function resolveEffectiveDate(value: unknown, today: string, latest?: string): EffectiveDateResult {
  if (value === undefined || value === null) return { ok: true, date: today };
  if (typeof value !== 'string') return { ok: false, problem: 'effective_date must be a string date' };
  const date = calendarDateOf(value.trim());
  if (date === undefined) {
    return { ok: false, problem: `effective_date must be YYYY-MM-DD, MM/DD/YYYY or an ISO 8601 date-time, not ${JSON.stringify(value.slice(0, 40))}` };
  }
  if (latest !== undefined && date > latest) return { ok: false, problem: `effective_date must be within two years of today (on or before ${latest}), not ${date}` };
  return { ok: true, date: date < today ? today : date };
}

/** The last date an enrollment may take effect: two years after `today` (Feb 29 → Feb 28). */
export function latestEffectiveDate(today: string): string {
  const monthDay = today.slice(5) === '02-29' ? '02-28' : today.slice(5);
  return `${String(Number(today.slice(0, 4)) + 2).padStart(4, '0')}-${monthDay}`;
}

/** The calendar date a value names in one of the accepted formats, as written (no bounds), or undefined. */
export function calendarDateOf(text: string): string | undefined {
  let match = ISO_DATE.exec(text);
  if (match) return validDate(match[1], match[2], match[3]);
  match = US_DATE.exec(text);
  if (match) return validDate(match[3], match[1], match[2]);
  match = ISO_DATE_TIME.exec(text);
  if (match) {
    const [, , , , hours, minutes, seconds = '00', zone] = match;
    if (Number(hours) > 23 || Number(minutes) > 59 || Number(seconds) > 59) return undefined;
    if (zone.toUpperCase() !== 'Z') {
      const offset = /^[+-](\d{2}):?(\d{2})$/.exec(zone)!;
      if (Number(offset[1]) > 23 || Number(offset[2]) > 59) return undefined;
    }
    return validDate(match[1], match[2], match[3]);
  }
  return undefined;
}

/** `YYYY-MM-DD` when it names a real calendar day (no 2026-02-30), else undefined. */
function validDate(year: string, month: string, day: string): string | undefined {
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  if (y < 1 || m < 1 || m > 12 || d < 1) return undefined;
  const probe = new Date(Date.UTC(y, m - 1, d));
  if (probe.getUTCFullYear() !== y || probe.getUTCMonth() !== m - 1 || probe.getUTCDate() !== d) return undefined;
  return `${year}-${month}-${day}`;
}
