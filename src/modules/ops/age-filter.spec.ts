import { ageWindow, durationMs } from './age-filter';

describe('ops age filters', () => {
  it('reads whole seconds, minutes, hours and days', () => {
    expect(durationMs('90s')).toBe(90_000);
    expect(durationMs('15m')).toBe(900_000);
    expect(durationMs('2h')).toBe(7_200_000);
    expect(durationMs('3d')).toBe(259_200_000);
  });

  it.each(['', '0m', '15', 'm', '1.5h', '-2h', '2H', '2 h', '2w', '123456d', 'PT2H', '2026-07-01T00:00:00Z'])('refuses %p', (text) => {
    expect(durationMs(text)).toBeUndefined();
  });

  it('turns older_than and newer_than into a creation window back from now', () => {
    const now = new Date('2026-07-02T12:00:00Z');
    expect(ageWindow(now, '2h', '1d')).toEqual({
      createdAtOrBefore: new Date('2026-07-02T10:00:00Z'),
      createdAfter: new Date('2026-07-01T12:00:00Z'),
    });
    expect(ageWindow(now)).toEqual({});
    expect(ageWindow(now, undefined, '15m')).toEqual({ createdAfter: new Date('2026-07-02T11:45:00Z') });
  });

  it('explains a bad duration and a window nothing can fall in', () => {
    expect(ageWindow(new Date(), '2 hours')).toEqual({ error: expect.stringContaining('older_than must be a duration') });
    expect(ageWindow(new Date(), undefined, 'yesterday')).toEqual({ error: expect.stringContaining('newer_than must be a duration') });
    expect(ageWindow(new Date(), '2h', '1h')).toEqual({ error: expect.stringContaining('must be shorter than newer_than') });
    expect(ageWindow(new Date(), '60m', '1h')).toEqual({ error: expect.stringContaining('must be shorter than newer_than') });
  });
});
