/**
 * Integer money arithmetic. Amounts are cents, rates basis points; every result is rounded
 * once, half up, through BigInt so no intermediate product loses precision.
 */

/** numerator / denominator rounded half up; both non-negative integers, denominator > 0. */
export function divideRoundingHalfUp(numerator: bigint, denominator: bigint): number {
  return Number((2n * numerator + denominator) / (2n * denominator));
}

/** `basisPoints` of `cents`, rounded half up to a cent (250 bp of 10,001 → 250.025 → 250). */
export function basisPointsOf(cents: number, basisPoints: number): number {
  return divideRoundingHalfUp(BigInt(cents) * BigInt(basisPoints), 10_000n);
}

/** `hours` (up to two decimals) at `centsPerHour` times `numerator / denominator`, to a cent. */
export function payForHours(centsPerHour: number, hours: number, numerator = 1, denominator = 1): number {
  const hundredthsOfHours = BigInt(Math.round(hours * 100));
  return divideRoundingHalfUp(
    BigInt(centsPerHour) * hundredthsOfHours * BigInt(numerator),
    100n * BigInt(denominator),
  );
}
