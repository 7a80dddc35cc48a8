export interface Failures {
  /** When the first failure of the current window happened (ms). */
  since: number;
  count: number;
}

/**
 * What a full table does with a key it cannot hold:
 * - `evict-oldest` forgets the window closest to its end. Only for keys where forgetting gives
 *   nothing away: another limit bounds the same attempts (a forgotten ops address is still held
 *   by its username's limit), or nobody but a proven client can make the key (a device token).
 * - `share-one-count` counts every key it cannot hold in one shared window instead, so a flood
 *   of made-up keys can never wipe a real key's count; the flood's own keys then share one
 *   small allowance.
 */
export type WhenFull = 'evict-oldest' | 'share-one-count';

/**
 * Failures per key within a fixed window that starts at the key's first failure, holding at
 * most `capacity` keys however many distinct keys arrive (see WhenFull). Kept in memory: the
 * limits built on it protect one instance and are not correctness rules.
 */
export class FailureWindows {
  private readonly windows = new Map<string, Failures>();
  private shared: Failures | undefined;

  constructor(
    private readonly windowMs: number,
    private readonly capacity: number,
    private readonly whenFull: WhenFull,
  ) {}

  /** The failures that count against `key` now. */
  of(key: string, now: number): Failures | undefined {
    const own = this.live(key, now);
    if (own || this.whenFull === 'evict-oldest' || !this.full(now)) return own;
    return this.liveShared(now);
  }

  fail(key: string, now: number): void {
    const own = this.live(key, now);
    if (own) {
      own.count++;
      return;
    }
    if (this.full(now)) {
      if (this.whenFull === 'share-one-count') {
        this.shared = this.liveShared(now) ?? { since: now, count: 0 };
        this.shared.count++;
        return;
      }
      // Keys are inserted at their first failure, so the first in order is the oldest window.
      this.windows.delete(this.windows.keys().next().value!);
    }
    this.windows.set(key, { since: now, count: 1 });
  }

  /**
   * Takes back one failure counted against `key` (where it was counted: its own window, else
   * the shared one): for limits that count an attempt before its slow check, so that
   * concurrent attempts cannot all pass under the limit, and forgive the ones that succeed.
   */
  forgive(key: string, now: number): void {
    const failures = this.live(key, now) ?? (this.whenFull === 'share-one-count' ? this.liveShared(now) : undefined);
    if (failures && failures.count > 0) failures.count--;
  }

  clear(key: string): void {
    this.windows.delete(key);
  }

  get size(): number {
    return this.windows.size;
  }

  /** Seconds until the window of `failures` ends (at least 1), for Retry-After. */
  secondsLeft(failures: Failures, now: number): number {
    return Math.max(1, Math.ceil((failures.since + this.windowMs - now) / 1000));
  }

  private live(key: string, now: number): Failures | undefined {
    const entry = this.windows.get(key);
    if (entry && now - entry.since >= this.windowMs) {
      this.windows.delete(key);
      return undefined;
    }
    return entry;
  }

  private liveShared(now: number): Failures | undefined {
    if (this.shared && now - this.shared.since >= this.windowMs) this.shared = undefined;
    return this.shared;
  }

  /** Whether the table is full of live windows (ended ones are swept first). */
  private full(now: number): boolean {
    if (this.windows.size < this.capacity) return false;
    // Windows are inserted as they start, so the ended ones come first: stop at the first live one.
    for (const [key, entry] of this.windows) {
      if (now - entry.since < this.windowMs) break;
      this.windows.delete(key);
    }
    return this.windows.size >= this.capacity;
  }
}
