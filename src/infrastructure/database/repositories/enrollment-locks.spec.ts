import { advisoryLocksFor, INDIVIDUAL_LOCKS_PER_BENEFIT } from './enrollment-locks';

describe('advisoryLocksFor', () => {
  it('takes each benefit shared, then each individual, every part sorted and each key once', () => {
    expect(advisoryLocksFor([['B2', 'i2'], ['b1', 'I9'], ['b2', 'i1'], ['b1', 'i9']])).toEqual([
      { key: 'benefit:b1', shared: true },
      { key: 'benefit:b2', shared: true },
      { key: 'b1:i9', shared: false },
      { key: 'b2:i1', shared: false },
      { key: 'b2:i2', shared: false },
    ]);
  });

  it('locks a benefit with more individuals than the bound as a whole, and none of them one by one', () => {
    const many = Array.from({ length: INDIVIDUAL_LOCKS_PER_BENEFIT + 1 }, (_, n) => ['big', `i${n}`] as const);
    const locks = advisoryLocksFor([...many, ['small', 'a']]);
    expect(locks).toEqual([
      { key: 'benefit:big', shared: false },
      { key: 'benefit:small', shared: true },
      { key: 'small:a', shared: false },
    ]);
  });

  it('keeps individual locks up to the bound', () => {
    const atBound = Array.from({ length: INDIVIDUAL_LOCKS_PER_BENEFIT }, (_, n) => ['b', `i${n}`] as const);
    const locks = advisoryLocksFor(atBound);
    expect(locks[0]).toEqual({ key: 'benefit:b', shared: true });
    expect(locks).toHaveLength(INDIVIDUAL_LOCKS_PER_BENEFIT + 1);
  });
});
