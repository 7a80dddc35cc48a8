import { refreshQuotaOf, refreshWindowOf, secondsUntil } from './refresh-quota';

describe('refresh quota', () => {
  it('uses fixed clock-hour windows', () => {
    expect(refreshWindowOf(new Date('2026-06-01T12:59:59.999Z'))).toEqual({
      start: new Date('2026-06-01T12:00:00.000Z'),
      end: new Date('2026-06-01T13:00:00.000Z'),
    });
    expect(refreshWindowOf(new Date('2026-06-01T13:00:00.000Z')).start).toEqual(new Date('2026-06-01T13:00:00.000Z'));
  });

  it('never reports fewer than zero remaining refreshes', () => {
    const window = refreshWindowOf(new Date('2026-06-01T12:00:00Z'));
    expect(refreshQuotaOf(10, 3, window)).toMatchObject({ allowedRefreshes: 10, remainingRefreshes: 7 });
    expect(refreshQuotaOf(10, 12, window).remainingRefreshes).toBe(0);
  });

  it('rounds Retry-After up to whole seconds, at least one', () => {
    const end = new Date('2026-06-01T13:00:00.000Z');
    expect(secondsUntil(end, new Date('2026-06-01T12:10:00.000Z'))).toBe(3_000);
    expect(secondsUntil(end, new Date('2026-06-01T12:59:59.200Z'))).toBe(1);
    expect(secondsUntil(end, end)).toBe(1);
  });
});
