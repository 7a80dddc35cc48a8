import { Clock, SystemClock } from '../../../domain/shared/clock';

/**
 * Gusto allows 200 requests per rolling 60 s window per OAuth grant (App Integrations) or per
 * application-user pair (Embedded), and answers 429 with `Retry-After` beyond that:
 * https://docs.gusto.com/app-integrations/docs/rate-limits
 * https://docs.gusto.com/embedded-payroll/v2024-04-01/docs/rate-limits
 */
export const GUSTO_RATE_LIMIT = 200;
export const GUSTO_RATE_WINDOW_MS = 60_000;

/**
 * We stay 10% under Gusto's limit. Gusto stamps a request when it arrives, we when we send it, so
 * a slow request counted late by us can share Gusto's window with one we think fell out of it;
 * and calls made outside this limiter (token refresh, another replica during a deploy) count
 * against the same grant. 20 spare slots a minute absorb that at a cost of 10% throughput.
 */
export const GUSTO_SAFETY_MARGIN = 20;

/** setTimeout's longest delay; a longer one would fire at once (TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2_147_483_647;

export interface GustoRateLimiterOptions {
  /** Requests allowed per key and window; defaults to Gusto's limit minus the safety margin. */
  limit?: number;
  windowMs?: number;
  clock?: Clock;
}

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface KeyState {
  /** Send times (ms) of the slots granted in the current window, oldest first. */
  sent: number[];
  pausedUntil: number;
  waiters: Waiter[];
  timer?: NodeJS.Timeout;
}

/**
 * A client-side sliding-window limiter, one window per key (an OAuth grant / company): at most
 * `limit` slots in any `windowMs`, handed out first come, first served. Waiting is a timer set
 * for the moment the oldest slot leaves the window (or a pause ends), never a polling loop.
 *
 * It counts what one process sends: replicas sharing a grant each keep their own window, so the
 * server's 429 (honoured with `pause`) stays the backstop.
 */
export class GustoRateLimiter {
  readonly limit: number;
  readonly windowMs: number;
  private readonly clock: Clock;
  private readonly keys = new Map<string, KeyState>();
  private lastSweep = 0;

  constructor(options: GustoRateLimiterOptions = {}) {
    this.limit = options.limit ?? GUSTO_RATE_LIMIT - GUSTO_SAFETY_MARGIN;
    this.windowMs = options.windowMs ?? GUSTO_RATE_WINDOW_MS;
    this.clock = options.clock ?? new SystemClock();
    if (!Number.isInteger(this.limit) || this.limit < 1) throw new Error(`limit must be a positive integer, got ${this.limit}`);
    if (!(this.windowMs > 0)) throw new Error(`windowMs must be positive, got ${this.windowMs}`);
  }

  /** Resolves once a slot of `key` is taken; rejects with the signal's reason if it aborts first. */
  acquire(key: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sweep();
    const state = this.stateOf(key);
    // Only an empty queue may take a free slot at once: anything else would jump the line.
    if (state.waiters.length === 0 && this.take(state)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const at = state.waiters.indexOf(waiter);
          if (at >= 0) state.waiters.splice(at, 1);
          reject(signal.reason);
          this.drain(key, state);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      state.waiters.push(waiter);
      this.drain(key, state);
    });
  }

  /**
   * Holds every request of `key` for `ms` (from now): the server said the window is spent
   * (429 + Retry-After), and the other requests queued on that grant would only be refused too.
   * A shorter pause never cuts a longer one short.
   */
  pause(key: string, ms: number): void {
    const state = this.stateOf(key);
    state.pausedUntil = Math.max(state.pausedUntil, this.now() + Math.max(0, ms));
    this.drain(key, state);
  }

  /** How many requests are queued on `key` (for metrics and tests). */
  waiting(key: string): number {
    return this.keys.get(key)?.waiters.length ?? 0;
  }

  private stateOf(key: string): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      state = { sent: [], pausedUntil: 0, waiters: [] };
      this.keys.set(key, state);
    }
    return state;
  }

  private now(): number {
    return this.clock.now().getTime();
  }

  /** Takes a slot if one is free now. */
  private take(state: KeyState): boolean {
    const now = this.now();
    this.expire(state, now);
    if (now < state.pausedUntil || state.sent.length >= this.limit) return false;
    state.sent.push(now);
    return true;
  }

  private expire(state: KeyState, now: number): void {
    let old = 0;
    while (old < state.sent.length && state.sent[old] + this.windowMs <= now) old++;
    if (old > 0) state.sent.splice(0, old);
  }

  /** Grants slots to the head of the queue while it can, then sleeps until the next slot frees. */
  private drain(key: string, state: KeyState): void {
    if (state.timer) {
      clearTimeout(state.timer);
      state.timer = undefined;
    }
    while (state.waiters.length > 0 && this.take(state)) {
      const waiter = state.waiters.shift() as Waiter;
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
    const now = this.now();
    if (state.waiters.length > 0) {
      const slotFreesAt = state.sent.length >= this.limit ? state.sent[0] + this.windowMs : now;
      const wait = Math.max(slotFreesAt, state.pausedUntil) - now;
      state.timer = setTimeout(() => {
        state.timer = undefined;
        this.drain(key, state);
      }, Math.min(MAX_TIMER_MS, Math.max(1, wait)));
      return;
    }
    this.forgetIfIdle(key, state, now);
  }

  /** Once a window, drops the keys nothing counts against any more: companies come and go. */
  private sweep(): void {
    const now = this.now();
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    this.keys.forEach((state, key) => this.forgetIfIdle(key, state, now));
  }

  private forgetIfIdle(key: string, state: KeyState, now: number): void {
    if (state.waiters.length > 0 || state.timer) return;
    this.expire(state, now);
    if (state.sent.length === 0 && now >= state.pausedUntil) this.keys.delete(key);
  }
}
