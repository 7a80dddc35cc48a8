import { yearlyRowFor } from './yearly-table';

/**
 * Tax rates and tables the pay-statement calculator withholds by. Money in cents, rates in
 * basis points (620 = 6.2 %).
 */

export interface FederalBracket {
  /** Annual taxable income (after the standard deduction) from which `rate` applies. */
  from: number;
  rate: number;
}

/** Federal income tax withholding of one year: single filer, standard deduction. */
export interface FederalWithholdingTable {
  year: number;
  standardDeduction: number;
  /** Ascending by `from`; the first starts at 0. */
  brackets: readonly FederalBracket[];
  /**
   * Flat rate on supplemental wages (bonuses, off-cycle runs). The mandatory 37 % on
   * supplemental wages above $1M a year is not modelled.
   */
  supplementalRate: number;
}

const dollars = (amount: number): number => amount * 100;

/** Bracket rates of the single filer, the same 10–37 % ladder every year since 2018. */
function singleFilerBrackets(thresholds: readonly number[]): FederalBracket[] {
  const rates = [1000, 1200, 2200, 2400, 3200, 3500, 3700];
  return rates.map((rate, index) => ({ from: index === 0 ? 0 : dollars(thresholds[index - 1]), rate }));
}

// Rev. Proc. 2022-38, 2023-34, 2024-40 and 2025-32. The 2025 standard deduction is the
// 15,750 set by Public Law 119-21 (July 2025), not the 15,000 first published. Years after the
// table use its latest row (see yearlyRowFor).
const FEDERAL_WITHHOLDING_BY_YEAR: readonly FederalWithholdingTable[] = [
  {
    year: 2023,
    standardDeduction: dollars(13_850),
    brackets: singleFilerBrackets([11_000, 44_725, 95_375, 182_100, 231_250, 578_125]),
    supplementalRate: 2200,
  },
  {
    year: 2024,
    standardDeduction: dollars(14_600),
    brackets: singleFilerBrackets([11_600, 47_150, 100_525, 191_950, 243_725, 609_350]),
    supplementalRate: 2200,
  },
  {
    year: 2025,
    standardDeduction: dollars(15_750),
    brackets: singleFilerBrackets([11_925, 48_475, 103_350, 197_300, 250_525, 626_350]),
    supplementalRate: 2200,
  },
  {
    year: 2026,
    standardDeduction: dollars(16_100),
    brackets: singleFilerBrackets([12_400, 50_400, 105_700, 201_775, 256_225, 640_600]),
    supplementalRate: 2200,
  },
];

export function federalWithholdingFor(year: number): FederalWithholdingTable {
  return yearlyRowFor(FEDERAL_WITHHOLDING_BY_YEAR, year);
}

/** FICA rates (not indexed): Social Security up to the wage base, Medicare on all wages. */
export const FICA_RATES = {
  socialSecurity: 620,
  medicare: 145,
  /** Employee only, on Medicare wages above the year's threshold (irs-limits.ts). */
  additionalMedicare: 90,
} as const;

/**
 * State income tax as one flat effective rate per state: a simulation, not each state's
 * brackets. States with a flat tax use it; the others a middle-income effective rate. The nine
 * states without a wage income tax are 0.
 */
const STATE_INCOME_TAX_RATES: Readonly<Record<string, number>> = {
  AK: 0, AL: 450, AR: 390, AZ: 250, CA: 600, CO: 440, CT: 500, DC: 650, DE: 550, FL: 0,
  GA: 519, HI: 700, IA: 380, ID: 530, IL: 495, IN: 300, KS: 520, KY: 400, LA: 300, MA: 500,
  MD: 475, ME: 600, MI: 425, MN: 650, MO: 470, MS: 440, MT: 590, NC: 425, ND: 195, NE: 520,
  NH: 0, NJ: 500, NM: 490, NV: 0, NY: 600, OH: 275, OK: 475, OR: 875, PA: 307, RI: 475,
  SC: 620, SD: 0, TN: 0, TX: 0, UT: 455, VA: 575, VT: 600, WA: 0, WI: 530, WV: 480, WY: 0,
};

/**
 * The flat rate of a two-letter state code (any case). An unknown code (a territory, a typo in
 * a sandbox edit) withholds no state tax rather than failing the whole pay run.
 */
export function stateIncomeTaxRateOf(state: string): number {
  return STATE_INCOME_TAX_RATES[state.trim().toUpperCase()] ?? 0;
}
