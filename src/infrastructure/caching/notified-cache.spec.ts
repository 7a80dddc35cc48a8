import { NotifiedCache } from './notified-cache';

/** Reads answered by the test, in the order asked. */
class Reads {
  calls: string[] = [];
  private pending: ((value: string | null) => void)[] = [];
  read = (key: string): Promise<string | null> => {
    this.calls.push(key);
    return new Promise((resolve) => this.pending.push(resolve));
  };
  answer(value: string | null): void {
    for (const resolve of this.pending.splice(0)) resolve(value);
  }
}

const settle = async () => {
  for (let i = 0; i < 3; i++) await Promise.resolve();
};

describe('NotifiedCache', () => {
  let reads: Reads;
  let live: boolean;
  let gone: string[];
  let cache: NotifiedCache<string, string | null>;

  const make = (keeps?: (value: string | null) => boolean) =>
    new NotifiedCache<string, string | null>({
      max: 10,
      ttlMs: 10_000,
      refreshAheadMs: 2_000,
      live: () => live,
      read: reads.read,
      ...(keeps && { keeps }),
      onGone: (key) => gone.push(key),
    });

  beforeEach(() => {
    jest.useFakeTimers();
    // lru-cache reads a start time of 0 as "no time-to-live": the fake clock starts past it.
    jest.advanceTimersByTime(1_000);
    reads = new Reads();
    live = true;
    gone = [];
    cache = make();
  });
  afterEach(() => jest.useRealTimers());

  it('keeps what it read, null included, and answers it from memory', async () => {
    const first = cache.find('k');
    reads.answer(null);
    expect(await first).toBeNull();
    expect(cache.cached('k')).toEqual({ value: null });
    expect(await cache.find('k')).toBeNull();
    expect(reads.calls).toEqual(['k']);
  });

  it('callers missing one key at once share a read; after a change, a new caller reads afresh and the old read is not kept', async () => {
    const together = [cache.find('k'), cache.find('k')];
    expect(reads.calls).toEqual(['k']);
    const before = cache.changeCount;
    cache.forget(['other']);
    expect(cache.changeCount).toBe(before + 1);
    const after = cache.find('k');
    expect(reads.calls).toEqual(['k', 'k']);
    reads.answer('v1');
    expect(await Promise.all([...together, after])).toEqual(['v1', 'v1', 'v1']);
    // The second read began after the change: it is the one kept.
    expect(cache.cached('k')).toEqual({ value: 'v1' });
  });

  it('a read that began before a change does not fill the cache', async () => {
    const old = cache.find('k');
    cache.forget(['k']);
    reads.answer('stale');
    await old;
    expect(cache.cached('k')).toBeUndefined();
  });

  it('an entry in use is read again in its last seconds, and never misses', async () => {
    const first = cache.find('k');
    reads.answer('v1');
    await first;
    jest.advanceTimersByTime(7_000);
    expect(cache.cached('k')).toEqual({ value: 'v1' });
    expect(reads.calls).toHaveLength(1);
    jest.advanceTimersByTime(1_500);
    expect(cache.cached('k')).toEqual({ value: 'v1' });
    expect(reads.calls).toHaveLength(2);
    reads.answer('v2');
    await settle();
    jest.advanceTimersByTime(5_000);
    expect(cache.cached('k')).toEqual({ value: 'v2' });
  });

  it('drops an entry whose value is not to be kept, and says so', async () => {
    cache = make((value) => value !== null);
    const first = cache.find('k');
    reads.answer('v1');
    await first;
    jest.advanceTimersByTime(8_500);
    cache.cached('k');
    reads.answer(null);
    await settle();
    expect(cache.cached('k')).toBeUndefined();
    expect(gone).toEqual(['k']);
  });

  it('answers nothing from memory, and keeps nothing, while changes are not heard', async () => {
    const first = cache.find('k');
    reads.answer('v1');
    await first;
    live = false;
    expect(cache.cached('k')).toBeUndefined();
    const missed = cache.find('other');
    reads.answer('v2');
    await missed;
    live = true;
    expect(cache.cached('other')).toBeUndefined();
    cache.clear();
    expect(cache.cached('k')).toBeUndefined();
  });
});
