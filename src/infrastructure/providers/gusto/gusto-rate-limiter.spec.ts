import { GUSTO_RATE_LIMIT, GUSTO_SAFETY_MARGIN, GustoRateLimiter } from './gusto-rate-limiter';

/** Resolution order of acquire() calls, recorded as they resolve. */
function track(limiter: GustoRateLimiter, key: string, count: number, signal?: AbortSignal) {
  const done: number[] = [];
  const promises = Array.from({ length: count }, (_, i) =>
    limiter.acquire(key, signal).then(
      () => void done.push(i),
      () => undefined,
    ),
  );
  return { done, promises };
}

describe('GustoRateLimiter', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-03-02T09:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  it('defaults to Gusto’s 200 a minute minus the safety margin', () => {
    const limiter = new GustoRateLimiter();
    expect(limiter.limit).toBe(GUSTO_RATE_LIMIT - GUSTO_SAFETY_MARGIN);
    expect(limiter.windowMs).toBe(60_000);
  });

  it('grants up to the limit at once, then one slot each time the oldest leaves the rolling window', async () => {
    const limiter = new GustoRateLimiter({ limit: 3, windowMs: 60_000 });
    await limiter.acquire('c1');
    await jest.advanceTimersByTimeAsync(10_000);
    await limiter.acquire('c1');
    await limiter.acquire('c1');

    const { done } = track(limiter, 'c1', 2);
    await jest.advanceTimersByTimeAsync(0);
    expect(done).toEqual([]);
    expect(limiter.waiting('c1')).toBe(2);

    // The first slot (t=0) leaves the window at t=60 s; the next two (t=10 s) at t=70 s.
    await jest.advanceTimersByTimeAsync(49_999);
    expect(done).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(done).toEqual([0]);
    await jest.advanceTimersByTimeAsync(9_999);
    expect(done).toEqual([0]);
    await jest.advanceTimersByTimeAsync(1);
    expect(done).toEqual([0, 1]);
  });

  it('serves waiters first come, first served, and a newcomer does not jump the queue', async () => {
    const limiter = new GustoRateLimiter({ limit: 2, windowMs: 1_000 });
    await limiter.acquire('c1');
    await limiter.acquire('c1');
    const { done } = track(limiter, 'c1', 5);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(done).toEqual([0, 1]);
    // A new caller arrives while three are queued: it waits behind them.
    let late = false;
    const latecomer = limiter.acquire('c1').then(() => (late = true));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(done).toEqual([0, 1, 2, 3]);
    expect(late).toBe(false);
    await jest.advanceTimersByTimeAsync(1_000);
    await latecomer;
    expect(done).toEqual([0, 1, 2, 3, 4]);
    expect(late).toBe(true);
  });

  it('keeps one window per key', async () => {
    const limiter = new GustoRateLimiter({ limit: 1, windowMs: 60_000 });
    await limiter.acquire('company-a');
    const { done } = track(limiter, 'company-a', 1);
    await expect(limiter.acquire('company-b')).resolves.toBeUndefined();
    await jest.advanceTimersByTimeAsync(0);
    expect(done).toEqual([]);
  });

  it('pause holds every request of the key for Retry-After, queued or new, and never shortens a longer pause', async () => {
    const limiter = new GustoRateLimiter({ limit: 100 });
    limiter.pause('c1', 5_000);
    limiter.pause('c1', 1_000);
    const { done } = track(limiter, 'c1', 3);
    await jest.advanceTimersByTimeAsync(4_999);
    expect(done).toEqual([]);
    await expect(limiter.acquire('other')).resolves.toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(done).toEqual([0, 1, 2]);
  });

  it('a pause while requests wait for the window pushes their timer later', async () => {
    const limiter = new GustoRateLimiter({ limit: 1, windowMs: 1_000 });
    await limiter.acquire('c1');
    const { done } = track(limiter, 'c1', 1);
    await jest.advanceTimersByTimeAsync(500);
    limiter.pause('c1', 2_000);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(done).toEqual([]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(done).toEqual([0]);
  });

  it('an aborted waiter leaves the queue with the signal’s reason and the next one moves up', async () => {
    const limiter = new GustoRateLimiter({ limit: 1, windowMs: 1_000 });
    await limiter.acquire('c1');
    const controller = new AbortController();
    const aborted = limiter.acquire('c1', controller.signal);
    const { done } = track(limiter, 'c1', 1);
    controller.abort(new Error('shutting down'));
    await expect(aborted).rejects.toThrow('shutting down');
    expect(limiter.waiting('c1')).toBe(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(done).toEqual([0]);
  });

  it('refuses at once on an already aborted signal', async () => {
    const limiter = new GustoRateLimiter();
    await expect(limiter.acquire('c1', AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
  });

  it('waits with one timer per key, not a polling loop', async () => {
    const limiter = new GustoRateLimiter({ limit: 1, windowMs: 60_000 });
    await limiter.acquire('c1');
    track(limiter, 'c1', 50);
    await jest.advanceTimersByTimeAsync(0);
    expect(jest.getTimerCount()).toBe(1);
  });

  it('reads time from the injected clock', async () => {
    let now = Date.parse('2026-03-02T09:00:00Z');
    const limiter = new GustoRateLimiter({ limit: 1, windowMs: 60_000, clock: { now: () => new Date(now) } });
    await limiter.acquire('c1');
    now += 60_000;
    await expect(limiter.acquire('c1')).resolves.toBeUndefined();
  });
});
