import { loadConfig } from '../../config/app-config';
import { ManualClock } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { MAX_TRACKED, OpsSignInThrottle, SignInAttempt } from './ops-sign-in-throttle';

/** Three failures per address and per device, nine per username, in a one-minute window. */
function throttle() {
  const clock = new ManualClock('2026-07-02T15:00:00Z');
  const config = loadConfig({ OPS_SIGN_IN_MAX_FAILURES: '3', OPS_SIGN_IN_LOCKOUT_SECONDS: '60' }, {}, { tool: true });
  return { clock, throttle: new OpsSignInThrottle(config, clock) };
}

const attempt = (address: string, username = 'ops', deviceToken?: string): SignInAttempt => ({ address, username, deviceToken });

/** The 429's message, or 'allowed'. */
function verdict(subject: OpsSignInThrottle, tried: SignInAttempt): string {
  try {
    subject.assertAllowed(tried);
    return 'allowed';
  } catch (error) {
    if (error instanceof DomainError) return error.message;
    throw error;
  }
}

const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

describe('OpsSignInThrottle', () => {
  it('limits one username across addresses to three times the per-address limit', () => {
    const { throttle: subject } = throttle();
    for (let i = 0; i < 9; i++) {
      expect(verdict(subject, attempt(address(i)))).toBe('allowed');
      subject.failed(attempt(address(i)));
    }
    expect(verdict(subject, attempt(address(100)))).toBe('Too many failed ops sign-ins for this username; try again in 60 s');
    expect(verdict(subject, attempt(address(100), 'someone-else'))).toBe('allowed');
  });

  it('exempts no address from the username limit for having signed in: only the device token it was given', () => {
    const { throttle: subject } = throttle();
    const token = subject.succeeded(attempt('192.0.2.1'));
    for (let i = 0; i < 9; i++) subject.failed(attempt(address(i)));
    expect(verdict(subject, attempt('192.0.2.1'))).toMatch(/for this username/);
    expect(verdict(subject, attempt('192.0.2.1', 'ops', token))).toBe('allowed');
    expect(verdict(subject, attempt(address(200), 'ops', token))).toBe('allowed');
  });

  it('holds a device to its own limit, and its address to the address limit', () => {
    const { throttle: subject } = throttle();
    const token = subject.succeeded(attempt('192.0.2.1'));
    for (let i = 0; i < 3; i++) subject.failed(attempt(address(i), 'ops', token));
    expect(verdict(subject, attempt(address(50), 'ops', token))).toBe('Too many failed ops sign-ins from this device; try again in 60 s');
    const other = subject.succeeded(attempt('192.0.2.2'));
    for (let i = 0; i < 3; i++) subject.failed(attempt('192.0.2.2', 'ops', other));
    expect(verdict(subject, attempt('192.0.2.2', 'ops', subject.succeeded(attempt('192.0.2.3'))))).toBe(
      'Too many failed ops sign-ins from this address; try again in 60 s',
    );
  });

  it('takes no token it did not issue for that username, nor one changed by a character', () => {
    const { throttle: subject } = throttle();
    const token = subject.succeeded(attempt('192.0.2.1'));
    const elsewhere = throttle().throttle.succeeded(attempt('192.0.2.1'));
    for (let i = 0; i < 9; i++) subject.failed(attempt(address(i)));
    const last = token.slice(-1) === 'A' ? 'B' : 'A';
    for (const forged of [`${token.slice(0, -1)}${last}`, elsewhere, 'not-a-token', '']) {
      expect(verdict(subject, attempt(address(300), 'ops', forged))).toMatch(/for this username/);
    }
    for (let i = 0; i < 9; i++) subject.failed(attempt(address(i), 'other'));
    expect(verdict(subject, attempt(address(300), 'other', token))).toMatch(/for this username/);
  });

  it('lets a device token expire after 30 days', () => {
    const { clock, throttle: subject } = throttle();
    const token = subject.succeeded(attempt('192.0.2.1'));
    clock.advance(30 * 24 * 3600 * 1000);
    for (let i = 0; i < 9; i++) subject.failed(attempt(address(i)));
    expect(verdict(subject, attempt(address(300), 'ops', token))).toMatch(/for this username/);
  });

  it('keeps the username count through a success', () => {
    const { throttle: subject } = throttle();
    for (let i = 0; i < 8; i++) subject.failed(attempt(address(i)));
    subject.succeeded(attempt('192.0.2.1'));
    subject.failed(attempt(address(8)));
    expect(verdict(subject, attempt(address(9)))).toMatch(/for this username/);
  });

  it('gives an address no guess past the username limit when a flood of other addresses makes it forget the address', () => {
    const { throttle: subject } = throttle();
    subject.succeeded(attempt('192.0.2.1'));
    let guesses = 0;
    const guess = (from: string) => {
      if (verdict(subject, attempt(from)) !== 'allowed') return;
      guesses++;
      subject.failed(attempt(from));
    };
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 3; i++) guess('192.0.2.1');
      for (let i = 0; i < MAX_TRACKED + 1; i++) subject.failed(attempt(address(round * 100_000 + i), `made-up-${i}`));
    }
    expect(guesses).toBe(9);
  });

  it('holds at most MAX_TRACKED addresses and usernames, however many arrive', () => {
    const { clock, throttle: subject } = throttle();
    for (let i = 0; i < MAX_TRACKED + 5_000; i++) subject.failed(attempt(address(i), `user-${i}`));
    expect(subject.tracked).toEqual({ addresses: MAX_TRACKED, usernames: MAX_TRACKED, devices: 0 });
    // Once the window has ended, new failures find room again.
    clock.advance(60_000);
    subject.failed(attempt('192.0.2.7'));
    expect(subject.tracked.usernames).toBeLessThanOrEqual(MAX_TRACKED);
    expect(verdict(subject, attempt(address(1), 'user-1'))).toBe('allowed');
  });

  it('does not let a flood of made-up usernames wipe the real one: the usernames it cannot hold share one count', () => {
    const { clock, throttle: subject } = throttle();
    for (let i = 0; i < 8; i++) subject.failed(attempt(address(i)));
    clock.advance(1_000);
    for (let i = 0; i < MAX_TRACKED + 100; i++) subject.failed(attempt(address(1_000 + i), `made-up-${i}`));
    subject.failed(attempt(address(99_999)));
    expect(verdict(subject, attempt(address(100_000)))).toMatch(/for this username/);
    // A username first seen while the table is full is under the shared, used-up count...
    expect(verdict(subject, attempt(address(100_000), 'new-name'))).toMatch(/for this username/);
    // ...except from a device that has signed in with it.
    const token = subject.succeeded(attempt('192.0.2.1', 'new-name'));
    expect(verdict(subject, attempt('192.0.2.1', 'new-name', token))).toBe('allowed');
  });

  it('forgets everything once the window ends', () => {
    const { clock, throttle: subject } = throttle();
    for (let i = 0; i < 9; i++) subject.failed(attempt('192.0.2.9'));
    expect(verdict(subject, attempt('192.0.2.9'))).toMatch(/from this address/);
    clock.advance(60_000);
    expect(verdict(subject, attempt('192.0.2.9'))).toBe('allowed');
    expect(verdict(subject, attempt(address(5)))).toBe('allowed');
  });
});
