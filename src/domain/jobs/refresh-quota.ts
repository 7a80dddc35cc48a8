/**
 * Data syncs a connection may start per hour, in a fixed clock-hour window (spec "Limits":
 * `allowed_refreshes`, `remaining_refreshes`). Pure arithmetic; the count comes from the jobs.
 */
export interface RefreshWindow {
  start: Date;
  end: Date;
}

const HOUR_MS = 60 * 60 * 1000;

/** The fixed window `now` falls in: [hh:00:00, hh+1:00:00) UTC. */
export function refreshWindowOf(now: Date): RefreshWindow {
  const start = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  return { start: new Date(start), end: new Date(start + HOUR_MS) };
}

export interface RefreshQuota {
  allowedRefreshes: number;
  remainingRefreshes: number;
  window: RefreshWindow;
}

export function refreshQuotaOf(allowed: number, usedInWindow: number, window: RefreshWindow): RefreshQuota {
  return { allowedRefreshes: allowed, remainingRefreshes: Math.max(0, allowed - usedInWindow), window };
}

/** Whole seconds until the window ends (at least 1), for `Retry-After`. */
export function secondsUntil(end: Date, now: Date): number {
  return Math.max(1, Math.ceil((end.getTime() - now.getTime()) / 1000));
}
