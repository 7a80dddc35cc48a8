import { CompanyMatch } from './benefit';

/** At most this many match tiers (DECISIONS.md "Limits"). */
export const MAX_MATCH_TIERS = 3;
/**
 * The names a company match is sent under: the contract's `match`, and `tiered`, the public
 * document's name for the same object (what this API family's client SDKs send). Either is
 * stored and returned as `match`.
 */
export const COMPANY_MATCH_TYPES = ['match', 'tiered'] as const;
/** Basis points: 10,000 is 100 %. */
export const MAX_BASIS_POINTS = 10_000;

/**
 * What is wrong with a company match, one message per problem, each naming its field; empty
 * when valid. Tiers are cumulative bands of pay (src/domain/payroll/company-match.ts): each
 * `threshold` is where its band ends, so thresholds must rise strictly from tier to tier and be
 * above 0 (a band ending at 0 % of pay matches nothing). `match` is 1–10,000, the public
 * document's bounds (a tier matching nothing is left out instead).
 */
export function companyMatchProblems(match: CompanyMatch, field = 'company_contribution'): string[] {
  const problems: string[] = [];
  if (match.type !== 'match') problems.push(`${field}.type: type must be match`);
  const tiers = match.tiers;
  if (!Array.isArray(tiers) || tiers.length < 1 || tiers.length > MAX_MATCH_TIERS) {
    problems.push(`${field}.tiers: tiers must hold 1 to ${MAX_MATCH_TIERS} tiers`);
    return problems;
  }
  tiers.forEach((tier, index) => {
    const at = `${field}.tiers[${index}]`;
    if (!isBasisPoints(tier.match, 1)) problems.push(`${at}.match: match must be an integer from 1 to ${MAX_BASIS_POINTS} (basis points)`);
    if (!isBasisPoints(tier.threshold, 1)) {
      problems.push(`${at}.threshold: threshold must be an integer from 1 to ${MAX_BASIS_POINTS} (basis points)`);
    } else if (index > 0 && isBasisPoints(tiers[index - 1].threshold, 1) && tier.threshold <= tiers[index - 1].threshold) {
      problems.push(`${at}.threshold: thresholds must increase from tier to tier (tiers are cumulative bands of pay)`);
    }
  });
  return problems;
}

function isBasisPoints(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= MAX_BASIS_POINTS;
}
