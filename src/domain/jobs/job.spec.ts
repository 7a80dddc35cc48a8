import { nextAttemptAt, RetryPolicy } from './job';

describe('nextAttemptAt', () => {
  const policy: RetryPolicy = { maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 5_000 };
  const now = new Date('2026-06-01T12:00:00.000Z');
  const delayAfter = (attempts: number) => nextAttemptAt(now, attempts, policy)!.getTime() - now.getTime();

  it('doubles the delay after each failed run', () => {
    expect([1, 2, 3].map(delayAfter)).toEqual([1_000, 2_000, 4_000]);
  });

  it('caps the delay', () => {
    expect(delayAfter(4)).toBe(5_000);
  });

  it('stops once the runs are used up', () => {
    expect(nextAttemptAt(now, 5, policy)).toBeUndefined();
    expect(nextAttemptAt(now, 6, policy)).toBeUndefined();
  });
});
