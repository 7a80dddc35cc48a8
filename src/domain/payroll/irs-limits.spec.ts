import { irsLimitsFor } from './irs-limits';

describe('irsLimitsFor', () => {
  // Published figures in dollars (IRS notices and revenue procedures, SSA); the table is in cents.
  it.each([
    // year, 402(g), catch-up 50+, 60–63, 457(b), SIMPLE, HSA self-only, HSA family, SS wage base
    [2023, 22_500, 7_500, null, 22_500, 15_500, 3_850, 7_750, 160_200],
    [2024, 23_000, 7_500, null, 23_000, 16_000, 4_150, 8_300, 168_600],
    [2025, 23_500, 7_500, 11_250, 23_500, 16_500, 4_300, 8_550, 176_100],
    [2026, 24_500, 8_000, 11_250, 24_500, 17_000, 4_400, 8_750, 184_500],
  ])(
    'has the published %i figures',
    (year, deferral, catchUp, catchUp60To63, section457, simple, hsaSelf, hsaFamily, wageBase) => {
    const limits = irsLimitsFor(year);
    expect(limits.year).toBe(year);
    expect(limits.electiveDeferral).toBe(deferral * 100);
    expect(limits.catchUpAge50).toBe(catchUp * 100);
    expect(limits.catchUpAges60To63).toBe(catchUp60To63 === null ? null : catchUp60To63 * 100);
    expect(limits.section457Deferral).toBe(section457 * 100);
    expect(limits.simpleDeferral).toBe(simple * 100);
    expect(limits.hsaSelfOnly).toBe(hsaSelf * 100);
    expect(limits.hsaFamily).toBe(hsaFamily * 100);
    expect(limits.hsaCatchUpAge55).toBe(1_000 * 100);
    expect(limits.socialSecurityWageBase).toBe(wageBase * 100);
    expect(limits.additionalMedicareThreshold).toBe(200_000 * 100);
    },
  );

  it('uses the latest year for a year after the table, the first for one before it', () => {
    expect(irsLimitsFor(2031)).toEqual(irsLimitsFor(2026));
    expect(irsLimitsFor(2019)).toEqual(irsLimitsFor(2023));
  });
});
