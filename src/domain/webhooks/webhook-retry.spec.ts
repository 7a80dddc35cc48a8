import { DEFAULT_WEBHOOK_RETRY_POLICY, nextWebhookAttemptAt, WebhookRetryPolicy } from './webhook-retry';

const SECOND = 1_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

// A window long enough that it never shortens a delay in the tests of the steps themselves.
const policy: WebhookRetryPolicy = { baseDelayMs: 1_000, maxDelayMs: 60_000, windowMs: 30 * DAY };
const createdAt = new Date('2025-03-01T12:00:00.000Z');

const fixed = (value: number) => () => value;

/** Milliseconds from creation to the next attempt when the `attempts`-th fails at creation. */
function delayAfter(attempts: number, random: number): number {
  const at = nextWebhookAttemptAt(createdAt, createdAt, attempts, policy, fixed(random));
  if (at === undefined) throw new Error(`no attempt scheduled after ${attempts}`);
  return at.getTime() - createdAt.getTime();
}

describe('nextWebhookAttemptAt', () => {
  it('doubles the step with each failed attempt (random 0.5 is the step itself)', () => {
    expect([1, 2, 3, 4, 5].map((n) => delayAfter(n, 0.5))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
  });

  it('draws the delay from [½, 1½) of the step', () => {
    // Step of the third attempt: 4 × base = 4 000 ms.
    expect(delayAfter(3, 0)).toBe(2_000);
    expect(delayAfter(3, 0.5)).toBe(4_000);
    expect(delayAfter(3, 0.999)).toBe(5_996);
    expect(delayAfter(1, 0)).toBe(500);
    expect(delayAfter(1, 0.999)).toBe(1_499);
  });

  it('treats attempts below one as the first step', () => {
    expect(delayAfter(0, 0.5)).toBe(1_000);
  });

  it('counts from now, not from the creation of the delivery', () => {
    const now = new Date(createdAt.getTime() + 5 * HOUR);
    expect(nextWebhookAttemptAt(now, createdAt, 2, policy, fixed(0.5))).toEqual(new Date(now.getTime() + 2_000));
  });

  it('caps the step at maxDelayMs, jitter applied to the capped step', () => {
    // 1 000 × 2^6 = 64 000 > 60 000.
    expect(delayAfter(7, 0.5)).toBe(60_000);
    expect(delayAfter(7, 0)).toBe(30_000);
    expect(delayAfter(7, 0.999)).toBe(89_940);
    expect(delayAfter(6, 0.5)).toBe(32_000);
  });

  it('does not overflow on huge attempt counts', () => {
    for (const attempts of [41, 1_000, 1_000_000, Number.MAX_SAFE_INTEGER]) {
      const next = nextWebhookAttemptAt(createdAt, createdAt, attempts, DEFAULT_WEBHOOK_RETRY_POLICY, fixed(0.5));
      expect(next).toEqual(new Date(createdAt.getTime() + DEFAULT_WEBHOOK_RETRY_POLICY.maxDelayMs));
    }
  });

  describe('the window', () => {
    const shortWindow: WebhookRetryPolicy = { baseDelayMs: 1_000, maxDelayMs: 60_000, windowMs: 10 * SECOND };
    const end = createdAt.getTime() + shortWindow.windowMs;

    it('schedules a try that would fall past the window at the window’s end instead of skipping it', () => {
      const now = new Date(end - 1_500);
      // The step after the third failure is 4 000 ms, which would land 2 500 ms past the end.
      expect(nextWebhookAttemptAt(now, createdAt, 3, shortWindow, fixed(0.5))).toEqual(new Date(end));
      expect(nextWebhookAttemptAt(new Date(end - 1), createdAt, 3, shortWindow, fixed(0.5))).toEqual(new Date(end));
    });

    it('leaves a try that fits inside the window where it falls', () => {
      const now = new Date(end - 5_000);
      expect(nextWebhookAttemptAt(now, createdAt, 3, shortWindow, fixed(0.5))).toEqual(new Date(end - 1_000));
    });

    it('schedules nothing once now reaches createdAt + window', () => {
      expect(nextWebhookAttemptAt(new Date(end), createdAt, 3, shortWindow, fixed(0.5))).toBeUndefined();
      expect(nextWebhookAttemptAt(new Date(end + 1), createdAt, 1, shortWindow, fixed(0))).toBeUndefined();
      expect(nextWebhookAttemptAt(new Date(end + DAY), createdAt, 1, shortWindow, fixed(0))).toBeUndefined();
    });
  });

  it('gives a delivery 20–30 attempts over the three days of the default policy, the last at the window’s end', () => {
    const end = createdAt.getTime() + DEFAULT_WEBHOOK_RETRY_POLICY.windowMs;
    expect(DEFAULT_WEBHOOK_RETRY_POLICY.windowMs).toBe(3 * DAY);
    // The first attempt is made at creation; each failure schedules the next until none is left.
    const attemptsAt: number[] = [createdAt.getTime()];
    for (;;) {
      const now = new Date(attemptsAt[attemptsAt.length - 1]);
      const next = nextWebhookAttemptAt(now, createdAt, attemptsAt.length, DEFAULT_WEBHOOK_RETRY_POLICY, fixed(0.5));
      if (next === undefined) break;
      expect(next.getTime()).toBeGreaterThan(now.getTime());
      attemptsAt.push(next.getTime());
      if (attemptsAt.length > 1_000) throw new Error('the retries never end');
    }
    expect(attemptsAt.length).toBeGreaterThanOrEqual(20);
    expect(attemptsAt.length).toBeLessThanOrEqual(30);
    expect(attemptsAt[attemptsAt.length - 1]).toBe(end);
    // Early retries are quick, late ones are the capped six hours apart.
    expect(attemptsAt[1] - attemptsAt[0]).toBe(5 * SECOND);
    expect(attemptsAt[attemptsAt.length - 2] - attemptsAt[attemptsAt.length - 3]).toBe(6 * HOUR);
  });
});
