/**
 * Age filters of the ops API are durations back from now: `90s`, `15m`, `2h`, `3d`. A duration
 * reads the same whatever the dashboard's time zone, and "older than 2h" is what ops ask.
 */
export const DURATION_PATTERN = /^([1-9][0-9]{0,4})([smhd])$/;

export const DURATION_HINT = 'a duration like 90s, 15m, 2h or 3d (a whole number of seconds, minutes, hours or days)';

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a duration, or undefined when the text is not one. */
export function durationMs(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text);
  return match ? Number(match[1]) * UNIT_MS[match[2]] : undefined;
}

export interface AgeWindow {
  /** Created at or before this instant (`older_than`). */
  createdAtOrBefore?: Date;
  /** Created after this instant (`newer_than`). */
  createdAfter?: Date;
}

/**
 * The creation window `older_than` and `newer_than` describe at `now`; an error message when
 * they cannot both hold (older than 2h and newer than 1h matches nothing, which is a mistake).
 */
export function ageWindow(now: Date, olderThan?: string, newerThan?: string): AgeWindow | { error: string } {
  const older = olderThan === undefined ? undefined : durationMs(olderThan);
  const newer = newerThan === undefined ? undefined : durationMs(newerThan);
  if (olderThan !== undefined && older === undefined) return { error: `older_than must be ${DURATION_HINT}` };
  if (newerThan !== undefined && newer === undefined) return { error: `newer_than must be ${DURATION_HINT}` };
  if (older !== undefined && newer !== undefined && older >= newer) {
    return { error: `older_than (${olderThan}) must be shorter than newer_than (${newerThan}), or nothing can match` };
  }
  return {
    ...(older !== undefined && { createdAtOrBefore: new Date(now.getTime() - older) }),
    ...(newer !== undefined && { createdAfter: new Date(now.getTime() - newer) }),
  };
}
