import { createHash } from 'node:crypto';
import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';

interface Failures {
  /** When the first failure of the current window happened (ms). */
  since: number;
  count: number;
}

/** Most addresses and usernames each table holds; beyond it, see FailureWindows. */
export const MAX_TRACKED = 10_000;
/** A username may fail this many times the per-address limit: more than one address can reach in a window. */
export const USERNAME_LIMIT_FACTOR = 3;
/** How long an address that signed in stays exempt from the per-username limit, and how many are kept. */
const KNOWN_ADDRESS_MS = 30 * 24 * 3600 * 1000;
const MAX_KNOWN_ADDRESSES = 1_000;

/**
 * Failures per key within a fixed window that starts at the key's first failure, holding at
 * most `capacity` keys however many distinct keys arrive. When full of live windows:
 * `evict-oldest` forgets the window closest to its end (addresses: forgetting one only frees
 * it, and the per-username limit still holds); `share-one-count` counts every key it cannot
 * hold in one shared window instead (usernames: evicting would let a flood of made-up usernames
 * wipe the real one's count).
 */
class FailureWindows {
  private readonly windows = new Map<string, Failures>();
  private shared: Failures | undefined;

  constructor(
    private readonly windowMs: number,
    private readonly capacity: number,
    private readonly whenFull: 'evict-oldest' | 'share-one-count',
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

  clear(key: string): void {
    this.windows.delete(key);
  }

  get size(): number {
    return this.windows.size;
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

/**
 * Limits failed ops sign-ins, in two ways, for the ops API and the dashboard's sign-in alike:
 * - per client address: after OPS_SIGN_IN_MAX_FAILURES wrong credentials within
 *   OPS_SIGN_IN_LOCKOUT_SECONDS the address is refused (429 with Retry-After), right
 *   credentials included, until the window that began with its first failure ends. A success
 *   clears the address.
 * - per username, from all addresses together: USERNAME_LIMIT_FACTOR times as many, so a
 *   guesser with many addresses gets no more tries per window than three addresses would. A
 *   refused address adds no failures, so one address alone (a colleague mistyping, a script
 *   with an old password) never locks the username. Addresses that signed in within
 *   KNOWN_ADDRESS_MS are exempt from it (only from it), so an attacker who locks the username
 *   does not lock out the ops user where they already work. A success does not clear it: the
 *   ops user signing in must not give a guesser new tries. Every username is counted, not
 *   only the real one, so a 429 never tells which username is right.
 * The ops password is chosen by a person, so unlike an application secret it can be guessed;
 * this bounds guessing to a handful of tries per window. Kept in memory, per instance, as the
 * token rate limiter is: several instances each allow the limits, which keeps guessing just as
 * hopeless without a database write per attempt. Memory is bounded (MAX_TRACKED per table).
 */
@Injectable()
export class OpsSignInThrottle {
  private readonly addresses: FailureWindows;
  private readonly usernames: FailureWindows;
  /** Address → when it last signed in (ms), oldest first. */
  private readonly knownAddresses = new Map<string, number>();

  constructor(
    private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    const windowMs = config.OPS_SIGN_IN_LOCKOUT_SECONDS * 1000;
    this.addresses = new FailureWindows(windowMs, MAX_TRACKED, 'evict-oldest');
    this.usernames = new FailureWindows(windowMs, MAX_TRACKED, 'share-one-count');
  }

  /** Throws the 429 when `address` or `username` has used up its failures; call before checking credentials. */
  assertAllowed(address: string, username: string): void {
    const now = this.clock.now().getTime();
    const max = this.config.OPS_SIGN_IN_MAX_FAILURES;
    const byAddress = this.addresses.of(address, now);
    if (byAddress && byAddress.count >= max) throw this.lockedOut('from this address', byAddress, now);
    if (this.isKnown(address, now)) return;
    const byUsername = this.usernames.of(usernameKey(username), now);
    if (byUsername && byUsername.count >= max * USERNAME_LIMIT_FACTOR) throw this.lockedOut('for this username', byUsername, now);
  }

  failed(address: string, username: string): void {
    const now = this.clock.now().getTime();
    this.addresses.fail(address, now);
    this.usernames.fail(usernameKey(username), now);
  }

  succeeded(address: string): void {
    this.addresses.clear(address);
    // Re-inserted so the map stays oldest first.
    this.knownAddresses.delete(address);
    this.knownAddresses.set(address, this.clock.now().getTime());
    if (this.knownAddresses.size > MAX_KNOWN_ADDRESSES) this.knownAddresses.delete(this.knownAddresses.keys().next().value!);
  }

  /** How many addresses and usernames are held (bounded by MAX_TRACKED each). */
  get tracked(): { addresses: number; usernames: number; knownAddresses: number } {
    return { addresses: this.addresses.size, usernames: this.usernames.size, knownAddresses: this.knownAddresses.size };
  }

  private isKnown(address: string, now: number): boolean {
    const signedInAt = this.knownAddresses.get(address);
    return signedInAt !== undefined && now - signedInAt < KNOWN_ADDRESS_MS;
  }

  private lockedOut(scope: string, failures: Failures, now: number): DomainError {
    const windowMs = this.config.OPS_SIGN_IN_LOCKOUT_SECONDS * 1000;
    const retryAfterSeconds = Math.max(1, Math.ceil((failures.since + windowMs - now) / 1000));
    return new DomainError('rate_limit_error', `Too many failed ops sign-ins ${scope}; try again in ${retryAfterSeconds} s`, {
      serviceCode: 'too_many_failed_sign_ins',
      details: { retry_after: retryAfterSeconds },
    });
  }
}

/** Usernames are whatever a client sends (up to ~760 bytes); a digest keeps every key small. */
const usernameKey = (username: string) => createHash('sha256').update(username, 'utf8').digest('base64url');

/** One throttle for every place that checks ops credentials (the guard in each module, the sign-in form). */
@Global()
@Module({ providers: [OpsSignInThrottle], exports: [OpsSignInThrottle] })
export class OpsSignInThrottleModule {}
