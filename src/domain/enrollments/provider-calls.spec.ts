import { packIntoCalls } from './provider-calls';

describe('packIntoCalls', () => {
  const sizes = (calls: number[][]) => calls.map((call) => call.reduce((sum, n) => sum + n, 0));

  it('folds groups into one call while their changes fit the bound', () => {
    expect(packIntoCalls([1, 1, 1], (n) => n, 3)).toEqual([[1, 1, 1]]);
    expect(packIntoCalls([1, 1, 1, 1], (n) => n, 3)).toEqual([[1, 1, 1], [1]]);
  });

  it('keeps the groups in their order, starting a new call where the next would overflow', () => {
    const groups = [{ id: 'a', n: 2 }, { id: 'b', n: 2 }, { id: 'c', n: 1 }, { id: 'd', n: 3 }];
    const calls = packIntoCalls(groups, (g) => g.n, 3);
    expect(calls.map((call) => call.map((g) => g.id))).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  it('sends a group larger than the bound whole, alone in its call', () => {
    const calls = packIntoCalls([1, 10, 1, 1], (n) => n, 4);
    expect(calls).toEqual([[1], [10], [1, 1]]);
    expect(sizes(calls).filter((s) => s > 4)).toEqual([10]);
  });

  it('makes no call for no groups', () => {
    expect(packIntoCalls([], () => 1, 5)).toEqual([]);
  });

  it('puts every group in exactly one call', () => {
    const groups = Array.from({ length: 200 }, (_, i) => ({ i, n: 1 + ((i * 7) % 5) }));
    const calls = packIntoCalls(groups, (g) => g.n, 6);
    expect(calls.flat()).toEqual(groups);
    for (const call of calls) expect(call.length === 1 || call.reduce((s, g) => s + g.n, 0) <= 6).toBe(true);
  });
});
