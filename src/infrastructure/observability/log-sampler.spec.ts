import { LogSampler } from './log-sampler';

describe('LogSampler', () => {
  it('lets the first line of a key through, leaves the rest of its interval out, and counts them on the next', () => {
    const sampler = new LogSampler(1_000);
    expect(sampler.take('40P01', 0)).toBe(0);
    expect(sampler.take('40P01', 10)).toBeUndefined();
    expect(sampler.take('40P01', 999)).toBeUndefined();
    expect(sampler.take('40P01', 1_000)).toBe(2);
    expect(sampler.take('40P01', 1_500)).toBeUndefined();
    expect(sampler.take('40P01', 5_000)).toBe(1);
    expect(sampler.take('40P01', 6_000)).toBe(0);
  });

  it('samples each key on its own', () => {
    const sampler = new LogSampler(1_000);
    expect(sampler.take('40P01', 0)).toBe(0);
    expect(sampler.take('55P03', 1)).toBe(0);
    expect(sampler.take('40P01', 2)).toBeUndefined();
    expect(sampler.take('55P03', 3)).toBeUndefined();
  });

  it('keeps at most maxKeys keys, starting over rather than growing', () => {
    const sampler = new LogSampler(1_000, 2);
    expect(sampler.take('a', 0)).toBe(0);
    expect(sampler.take('b', 0)).toBe(0);
    expect(sampler.take('c', 0)).toBe(0);
    // 'a' was forgotten with the rest when 'c' came: its next line goes through.
    expect(sampler.take('a', 1)).toBe(0);
    expect(sampler.take('c', 2)).toBeUndefined();
  });
});
