import { divideRoundingHalfUp } from './cents';
import type { MatchTier } from './payroll.types';

/**
 * The employer match on a deferral. Tiers are bands of pay with cumulative thresholds:
 * [{match: 10000, threshold: 300}, {match: 5000, threshold: 500}] matches 100 % of the
 * deferral on the first 3 % of pay, 50 % of the deferral between 3 % and 5 % of pay, and
 * nothing above 5 %. Tiers given out of order are sorted by threshold.
 *
 * Everything is scaled to cents × bp × bp (BigInt) and divided once, so the match is rounded
 * once, half up.
 */
export function companyMatchOf(deferral: number, grossPay: number, tiers: readonly MatchTier[]): number {
  const ordered = [...tiers].sort((a, b) => a.threshold - b.threshold);
  const deferralScaled = BigInt(deferral) * 10_000n; // cents × bp, comparable to gross × threshold
  const gross = BigInt(grossPay);
  let matchScaled = 0n;
  let bandStart = 0n;
  for (const tier of ordered) {
    const bandEnd = BigInt(tier.threshold);
    if (bandEnd <= bandStart) continue;
    const deferralAboveStart = deferralScaled - gross * bandStart;
    const bandWidth = gross * (bandEnd - bandStart);
    let deferralInBand = deferralAboveStart < bandWidth ? deferralAboveStart : bandWidth;
    if (deferralInBand < 0n) deferralInBand = 0n;
    matchScaled += deferralInBand * BigInt(tier.match);
    bandStart = bandEnd;
  }
  return divideRoundingHalfUp(matchScaled, 100_000_000n);
}
