import { etagOf, ifNoneMatchHolds, ResponseCache } from './response-cache';

describe('etagOf / ifNoneMatchHolds', () => {
  const etag = etagOf('{"a":1}');

  it('tags equal bytes equally and different bytes differently, as a quoted strong tag', () => {
    expect(etagOf('{"a":1}')).toBe(etag);
    expect(etagOf('{"a":2}')).not.toBe(etag);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  });

  it.each([
    [etag, true],
    [`W/${etag}`, true],
    [`"x", ${etag}`, true],
    [` ${etag} `, true],
    ['*', true],
    [[`"x"`, etag], true],
    ['"x"', false],
    ['', false],
    [etag.slice(1, -1), false],
    [undefined, false],
  ])('If-None-Match %j holds: %s', (header, holds) => {
    expect(ifNoneMatchHolds(header as string | string[] | undefined, etag)).toBe(holds);
  });
});

describe('ResponseCache', () => {
  const answer = (bytes: number) => ({ body: Buffer.alloc(bytes, 'x'), etag: '"t"', product: 'company' as const, route: '/employer/company' });

  it('keeps answers up to its size in bytes, dropping the least recently used first', () => {
    const cache = new ResponseCache(10_000);
    cache.set('a', answer(4_000));
    cache.set('b', answer(4_000));
    expect(cache.get('a')).toBeDefined(); // a is now the most recently used
    cache.set('c', answer(4_000));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.body).toHaveLength(4_000);
    expect(cache.get('c')).toBeDefined();
    expect(cache.size.bytes).toBeLessThanOrEqual(10_000);
  });

  it('keeps nothing with a size of 0, nor an answer larger than the whole cache', () => {
    const off = new ResponseCache(0);
    off.set('a', answer(10));
    expect(off.get('a')).toBeUndefined();
    const small = new ResponseCache(1_000);
    small.set('big', answer(5_000));
    expect(small.get('big')).toBeUndefined();
  });
});
