import { nextAttemptAt, RetryPolicy, retryPolicyForLatency } from './job';

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

describe('retries bounded by time', () => {
  const start = new Date('2026-06-01T12:00:00.000Z');
  const at = (ms: number) => new Date(start.getTime() + ms);

  it('retries until the next run would start past the budget, however many runs that is', () => {
    const policy: RetryPolicy = { maxAttempts: 100, baseDelayMs: 1_000, maxDelayMs: 60_000, budgetMs: 10 * 60_000 };
    expect(nextAttemptAt(at(8 * 60_000), 7, policy, start)).toEqual(at(8 * 60_000 + 60_000));
    expect(nextAttemptAt(at(9 * 60_000 + 1), 8, policy, start)).toBeUndefined();
  });

  it('sizes the retries of a provider from its latency: a slow provider gets longer waits and a longer budget', () => {
    const fast = retryPolicyForLatency({ min: 50, max: 500 });
    const slow = retryPolicyForLatency({ min: 5_000, max: 120_000 });
    expect(fast.baseDelayMs).toBe(1_000);
    expect(fast.budgetMs).toBe(10 * 60_000);
    expect(slow.baseDelayMs).toBe(12_000);
    expect(slow.budgetMs).toBe(40 * 60_000);
    // Far more than the few seconds five quick tries would give a call that itself takes two minutes.
    let runs = 1;
    let now = start;
    for (;;) {
      const next = nextAttemptAt(new Date(now.getTime() + 120_000), runs, slow, start);
      if (!next) break;
      now = next;
      runs++;
    }
    expect(now.getTime() - start.getTime()).toBeGreaterThan(30 * 60_000);
  });

  it('caps every wait at the configured longest, the first one too, and runs more often within the same budget', () => {
    const capped = retryPolicyForLatency({ min: 5_000, max: 120_000 }, 8_000);
    expect(capped.baseDelayMs).toBe(8_000);
    expect(capped.maxDelayMs).toBe(8_000);
    expect(capped.budgetMs).toBe(40 * 60_000);
    const fast = retryPolicyForLatency({ min: 50, max: 500 }, 8_000);
    const waits: number[] = [];
    for (let runs = 1; runs <= 6; runs++) waits.push(nextAttemptAt(start, runs, fast, start)!.getTime() - start.getTime());
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    expect(retryPolicyForLatency({ min: 50, max: 500 }).maxDelayMs).toBe(5 * 60_000);
  });
});
