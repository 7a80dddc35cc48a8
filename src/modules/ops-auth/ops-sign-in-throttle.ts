import { createHash } from 'node:crypto';
import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { Failures, FailureWindows } from '../../infrastructure/auth/failure-windows';
import { OpsDeviceTokens } from './ops-device-token';

/** Most addresses, usernames and devices each table holds; beyond it, see WhenFull. */
export const MAX_TRACKED = 10_000;
/** A username may fail this many times the per-address limit: more than one address can reach in a window. */
export const USERNAME_LIMIT_FACTOR = 3;

/** One try at the ops credentials. */
export interface SignInAttempt {
  /** The client's address (clientAddressOf). */
  address: string;
  username: string;
  /** The Ops-Device-Token header as sent, if any (checked here). */
  deviceToken?: string;
}

/**
 * Limits failed ops sign-ins, for the ops API and the dashboard's sign-in alike:
 * - per client address (clientAddressOf: X-Forwarded-For only from TRUST_PROXY, well-formed
 *   entries only): after OPS_SIGN_IN_MAX_FAILURES wrong credentials within
 *   OPS_SIGN_IN_LOCKOUT_SECONDS the address is refused (429 with Retry-After), right
 *   credentials included, until the window that began with its first failure ends. A success
 *   clears the address.
 * - per username, from all addresses together: USERNAME_LIMIT_FACTOR times as many, so a
 *   guesser with many addresses gets no more tries per window than three addresses would. A
 *   refused address adds no failures, so one address alone never locks the username. A success
 *   does not clear it: the ops user signing in must not give a guesser new tries. Every
 *   username is counted, not only the real one, so a 429 never tells which username is right.
 * - per device: a request carrying a valid device token (OpsDeviceTokens: handed out by every
 *   successful sign-in) is exempt from the username limit and held to its own, the per-address
 *   number. So an attacker who locks the username does not lock out the ops user where they
 *   already signed in, and being known rests on a token a guesser cannot make or copy, never on
 *   an address it can share or name.
 * No table gives a guess away when it is full: the username table shares one count among the
 *   usernames it cannot hold; the address table forgets its oldest window, which frees only that
 *   address's own limit, never the username's; and only a sign-in can add a device.
 * The ops password is chosen by a person, so unlike an application secret it can be guessed;
 * this bounds guessing to a handful of tries per window. Kept in memory, per instance, as the
 * token rate limiter is: several instances each allow the limits, which keeps guessing just as
 * hopeless without a database write per attempt. Memory is bounded (MAX_TRACKED per table).
 */
@Injectable()
export class OpsSignInThrottle {
  private readonly addresses: FailureWindows;
  private readonly usernames: FailureWindows;
  private readonly devices: FailureWindows;
  private readonly tokens: OpsDeviceTokens;

  constructor(
    private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    const windowMs = config.OPS_SIGN_IN_LOCKOUT_SECONDS * 1000;
    this.addresses = new FailureWindows(windowMs, MAX_TRACKED, 'evict-oldest');
    this.usernames = new FailureWindows(windowMs, MAX_TRACKED, 'share-one-count');
    this.devices = new FailureWindows(windowMs, MAX_TRACKED, 'evict-oldest');
    this.tokens = OpsDeviceTokens.fromSecret(config.OPS_DEVICE_SIGNING_KEY);
  }

  /** Throws the 429 when the attempt's address, device or username has used up its failures; call before checking credentials. */
  assertAllowed(attempt: SignInAttempt): void {
    const now = this.clock.now().getTime();
    const max = this.config.OPS_SIGN_IN_MAX_FAILURES;
    const byAddress = this.addresses.of(attempt.address, now);
    if (byAddress && byAddress.count >= max) throw this.lockedOut('from this address', this.addresses, byAddress, now);
    const device = this.deviceOf(attempt, now);
    if (device !== undefined) {
      const byDevice = this.devices.of(device, now);
      if (byDevice && byDevice.count >= max) throw this.lockedOut('from this device', this.devices, byDevice, now);
      return;
    }
    const byUsername = this.usernames.of(usernameKey(attempt.username), now);
    if (byUsername && byUsername.count >= max * USERNAME_LIMIT_FACTOR) throw this.lockedOut('for this username', this.usernames, byUsername, now);
  }

  failed(attempt: SignInAttempt): void {
    const now = this.clock.now().getTime();
    this.addresses.fail(attempt.address, now);
    this.usernames.fail(usernameKey(attempt.username), now);
    const device = this.deviceOf(attempt, now);
    if (device !== undefined) this.devices.fail(device, now);
  }

  /** Clears the address (and the device); returns the device token to answer with, renewed or new. */
  succeeded(attempt: SignInAttempt): string {
    const now = this.clock.now().getTime();
    this.addresses.clear(attempt.address);
    const device = this.deviceOf(attempt, now);
    if (device !== undefined) this.devices.clear(device);
    return this.tokens.issue(attempt.username, now, device);
  }

  /** How many addresses, usernames and devices are held (bounded by MAX_TRACKED each). */
  get tracked(): { addresses: number; usernames: number; devices: number } {
    return { addresses: this.addresses.size, usernames: this.usernames.size, devices: this.devices.size };
  }

  private deviceOf(attempt: SignInAttempt, now: number): string | undefined {
    return this.tokens.deviceOf(attempt.deviceToken, attempt.username, now);
  }

  private lockedOut(scope: string, table: FailureWindows, failures: Failures, now: number): DomainError {
    const retryAfterSeconds = table.secondsLeft(failures, now);
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
