import { loadConfig } from '../../config/app-config';
import { ManualClock } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { MAX_TRACKED, OpsSignInThrottle } from './ops-sign-in-throttle';

/** Three failures per address, nine per username, in a one-minute window. */
function throttle() {
  const clock = new ManualClock('2026-07-02T15:00:00Z');
  const config = loadConfig({ OPS_SIGN_IN_MAX_FAILURES: '3', OPS_SIGN_IN_LOCKOUT_SECONDS: '60' }, {}, { tool: true });
  return { clock, throttle: new OpsSignInThrottle(config, clock) };
}

/** The 429's message, or 'allowed'. */
function verdict(subject: OpsSignInThrottle, address: string, username: string): string {
  try {
    subject.assertAllowed(address, username);
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
      expect(verdict(subject, address(i), 'ops')).toBe('allowed');
      subject.failed(address(i), 'ops');
    }
    expect(verdict(subject, address(100), 'ops')).toBe('Too many failed ops sign-ins for this username; try again in 60 s');
    expect(verdict(subject, address(100), 'someone-else')).toBe('allowed');
  });

  it('exempts an address that has signed in from the username limit, not from its own', () => {
    const { throttle: subject } = throttle();
    subject.succeeded('192.0.2.1');
    for (let i = 0; i < 9; i++) subject.failed(address(i), 'ops');
    expect(verdict(subject, '192.0.2.1', 'ops')).toBe('allowed');
    for (let i = 0; i < 3; i++) subject.failed('192.0.2.1', 'ops');
    expect(verdict(subject, '192.0.2.1', 'ops')).toBe('Too many failed ops sign-ins from this address; try again in 60 s');
  });

  it('keeps the username count through a success', () => {
    const { throttle: subject } = throttle();
    for (let i = 0; i < 8; i++) subject.failed(address(i), 'ops');
    subject.succeeded('192.0.2.1');
    subject.failed(address(8), 'ops');
    expect(verdict(subject, address(9), 'ops')).toMatch(/for this username/);
  });

  it('holds at most MAX_TRACKED addresses and usernames, however many arrive', () => {
    const { clock, throttle: subject } = throttle();
    for (let i = 0; i < MAX_TRACKED + 5_000; i++) subject.failed(address(i), `user-${i}`);
    expect(subject.tracked).toEqual({ addresses: MAX_TRACKED, usernames: MAX_TRACKED, knownAddresses: 0 });
    // Once the window has ended, new failures find room again.
    clock.advance(60_000);
    subject.failed('192.0.2.7', 'ops');
    expect(subject.tracked.usernames).toBeLessThanOrEqual(MAX_TRACKED);
    expect(verdict(subject, address(1), 'user-1')).toBe('allowed');
  });

  it('does not let a flood of made-up usernames wipe the real one: the usernames it cannot hold share one count', () => {
    const { clock, throttle: subject } = throttle();
    for (let i = 0; i < 8; i++) subject.failed(address(i), 'ops');
    clock.advance(1_000);
    for (let i = 0; i < MAX_TRACKED + 100; i++) subject.failed(address(1_000 + i), `made-up-${i}`);
    subject.failed(address(99_999), 'ops');
    expect(verdict(subject, address(100_000), 'ops')).toMatch(/for this username/);
    // A username first seen while the table is full is under the shared, used-up count...
    expect(verdict(subject, address(100_000), 'new-name')).toMatch(/for this username/);
    // ...except from an address that has signed in.
    subject.succeeded('192.0.2.1');
    expect(verdict(subject, '192.0.2.1', 'new-name')).toBe('allowed');
  });

  it('forgets everything once the window ends', () => {
    const { clock, throttle: subject } = throttle();
    for (let i = 0; i < 9; i++) subject.failed('192.0.2.9', 'ops');
    expect(verdict(subject, '192.0.2.9', 'ops')).toMatch(/from this address/);
    clock.advance(60_000);
    expect(verdict(subject, '192.0.2.9', 'ops')).toBe('allowed');
    expect(verdict(subject, address(5), 'ops')).toBe('allowed');
  });
});
