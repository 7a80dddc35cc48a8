import { yearlyRowFor } from './yearly-table';

/**
 * IRS contribution limits and payroll-tax thresholds by calendar year, in cents. Yearly data,
 * not constants in code: adding a year is adding a row.
 *
 * Sources: IRS cost-of-living notices (Notice 2022-55, 2023-75, 2024-80, 2025-67) for the
 * retirement limits, Rev. Proc. 2022-24, 2023-23, 2024-25, 2025-19 for HSA limits, the SSA
 * for the wage base. The additional Medicare threshold and the HSA catch-up are set by statute
 * and not indexed.
 */
export interface IrsLimits {
  year: number;
  /** 402(g) elective deferral limit, shared by 401(k), 403(b), their Roth kinds and SIMPLE plans. */
  electiveDeferral: number;
  /** Catch-up added from the year the employee turns 50. */
  catchUpAge50: number;
  /** SECURE 2.0 catch-up for ages 60–63 (instead of the age-50 one); null before 2025. */
  catchUpAges60To63: number | null;
  /** 457(b) deferral limit, separate from 402(g). */
  section457Deferral: number;
  simpleDeferral: number;
  simpleCatchUpAge50: number;
  simpleCatchUpAges60To63: number | null;
  hsaSelfOnly: number;
  hsaFamily: number;
  /** HSA catch-up from the year the employee turns 55. */
  hsaCatchUpAge55: number;
  socialSecurityWageBase: number;
  /** Medicare wages in a year above which the employee owes the additional 0.9 %. */
  additionalMedicareThreshold: number;
}

const dollars = (amount: number): number => amount * 100;

// 2027 is left out on purpose: its retirement limits were not yet published when this table
// was written, and a guessed row would look authoritative. Later years use the latest row.
const IRS_LIMITS_BY_YEAR: readonly IrsLimits[] = [
  {
    year: 2023,
    electiveDeferral: dollars(22_500),
    catchUpAge50: dollars(7_500),
    catchUpAges60To63: null,
    section457Deferral: dollars(22_500),
    simpleDeferral: dollars(15_500),
    simpleCatchUpAge50: dollars(3_500),
    simpleCatchUpAges60To63: null,
    hsaSelfOnly: dollars(3_850),
    hsaFamily: dollars(7_750),
    hsaCatchUpAge55: dollars(1_000),
    socialSecurityWageBase: dollars(160_200),
    additionalMedicareThreshold: dollars(200_000),
  },
  {
    year: 2024,
    electiveDeferral: dollars(23_000),
    catchUpAge50: dollars(7_500),
    catchUpAges60To63: null,
    section457Deferral: dollars(23_000),
    simpleDeferral: dollars(16_000),
    simpleCatchUpAge50: dollars(3_500),
    simpleCatchUpAges60To63: null,
    hsaSelfOnly: dollars(4_150),
    hsaFamily: dollars(8_300),
    hsaCatchUpAge55: dollars(1_000),
    socialSecurityWageBase: dollars(168_600),
    additionalMedicareThreshold: dollars(200_000),
  },
  {
    year: 2025,
    electiveDeferral: dollars(23_500),
    catchUpAge50: dollars(7_500),
    catchUpAges60To63: dollars(11_250),
    section457Deferral: dollars(23_500),
    simpleDeferral: dollars(16_500),
    simpleCatchUpAge50: dollars(3_500),
    simpleCatchUpAges60To63: dollars(5_250),
    hsaSelfOnly: dollars(4_300),
    hsaFamily: dollars(8_550),
    hsaCatchUpAge55: dollars(1_000),
    socialSecurityWageBase: dollars(176_100),
    additionalMedicareThreshold: dollars(200_000),
  },
  {
    year: 2026,
    electiveDeferral: dollars(24_500),
    catchUpAge50: dollars(8_000),
    catchUpAges60To63: dollars(11_250),
    section457Deferral: dollars(24_500),
    simpleDeferral: dollars(17_000),
    simpleCatchUpAge50: dollars(4_000),
    simpleCatchUpAges60To63: dollars(5_250),
    hsaSelfOnly: dollars(4_400),
    hsaFamily: dollars(8_750),
    hsaCatchUpAge55: dollars(1_000),
    socialSecurityWageBase: dollars(184_500),
    additionalMedicareThreshold: dollars(200_000),
  },
];

/**
 * The limits of a calendar year. A year after the table uses the latest year (limits only
 * grow, so this under-states rather than over-states them); a year before it uses the first.
 */
export function irsLimitsFor(year: number): IrsLimits {
  return yearlyRowFor(IRS_LIMITS_BY_YEAR, year);
}
