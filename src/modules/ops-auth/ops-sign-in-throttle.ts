import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';

interface Failures {
  /** When the first failure of the current window happened (ms). */
  since: number;
  count: number;
}

/** Beyond this many tracked addresses, expired entries are swept before a new one is added. */
const SWEEP_ABOVE = 10_000;

/**
 * Limits failed ops sign-ins per client address: after OPS_SIGN_IN_MAX_FAILURES wrong
 * credentials within OPS_SIGN_IN_LOCKOUT_SECONDS, that address is refused (429 with
 * Retry-After), right credentials included, until the window that began with its first failure
 * ends. The ops password is chosen by a person, so unlike an application secret it can be
 * guessed; this bounds guessing to a handful of tries per window. A success clears the address.
 * Kept in memory, per instance, as the token rate limiter is: several instances each allow the
 * limit, which keeps guessing just as hopeless without a database write per attempt.
 */
@Injectable()
export class OpsSignInThrottle {
  private readonly failures = new Map<string, Failures>();

  constructor(
    private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Throws the 429 when `address` has used up its failures; call before checking credentials. */
  assertAllowed(address: string): void {
    const entry = this.current(address, this.clock.now().getTime());
    if (!entry || entry.count < this.config.OPS_SIGN_IN_MAX_FAILURES) return;
    const retryAfterSeconds = Math.max(1, Math.ceil((entry.since + this.windowMs - this.clock.now().getTime()) / 1000));
    throw new DomainError(
      'rate_limit_error',
      `Too many failed ops sign-ins from this address; try again in ${retryAfterSeconds} s`,
      { serviceCode: 'too_many_failed_sign_ins', details: { retry_after: retryAfterSeconds } },
    );
  }

  failed(address: string): void {
    const now = this.clock.now().getTime();
    const entry = this.current(address, now);
    if (entry) {
      entry.count++;
      return;
    }
    if (this.failures.size >= SWEEP_ABOVE) this.sweep(now);
    this.failures.set(address, { since: now, count: 1 });
  }

  succeeded(address: string): void {
    this.failures.delete(address);
  }

  private get windowMs(): number {
    return this.config.OPS_SIGN_IN_LOCKOUT_SECONDS * 1000;
  }

  private current(address: string, now: number): Failures | undefined {
    const entry = this.failures.get(address);
    if (entry && now - entry.since >= this.windowMs) {
      this.failures.delete(address);
      return undefined;
    }
    return entry;
  }

  private sweep(now: number): void {
    for (const [address, entry] of this.failures) if (now - entry.since >= this.windowMs) this.failures.delete(address);
  }
}

/** One throttle for every place that checks ops credentials (the guard in each module, the sign-in form). */
@Global()
@Module({ providers: [OpsSignInThrottle], exports: [OpsSignInThrottle] })
export class OpsSignInThrottleModule {}
