import { basisPointsOf, divideRoundingHalfUp } from './cents';
import type { IrsLimits } from './irs-limits';
import type { ComputedPayStatement } from './payroll.types';
import { FICA_RATES, federalWithholdingFor, stateIncomeTaxRateOf } from './tax-tables';

export type TaxLine = ComputedPayStatement['taxes'][number];

/** Wages of one statement after the pre-tax deductions each tax allows. */
export interface TaxableWages {
  federal: number;
  state: number;
  fica: number;
}

export interface PayrollTaxesInput {
  wages: TaxableWages;
  /** Regular wages are withheld on annualized; supplemental (off-cycle, one-time) at a flat rate. */
  supplemental: boolean;
  year: number;
  payPeriodsPerYear: number;
  state: string;
  limits: IrsLimits;
  socialSecurityWagesBefore: number;
  medicareWagesBefore: number;
}

export interface PayrollTaxes {
  /** Employee and employer lines, zero amounts left out. */
  lines: TaxLine[];
  employeeTotal: number;
  /** Wages of this statement taxed for Social Security (stops at the wage base). */
  socialSecurityWages: number;
}

export function computePayrollTaxes(input: PayrollTaxesInput): PayrollTaxes {
  const { wages, limits } = input;
  const stateCode = input.state.trim().toUpperCase();

  // Social Security stops at the year's wage base; Medicare has none. The additional 0.9 %
  // applies to the part of this statement's Medicare wages above the threshold year to date.
  const socialSecurityWages = Math.min(
    wages.fica,
    Math.max(0, limits.socialSecurityWageBase - input.socialSecurityWagesBefore),
  );
  const medicareWagesAfter = input.medicareWagesBefore + wages.fica;
  const wagesOverMedicareThreshold = Math.max(
    0,
    medicareWagesAfter - Math.max(limits.additionalMedicareThreshold, input.medicareWagesBefore),
  );

  const employee: TaxLine[] = [
    {
      type: 'federal',
      name: 'Federal Income Tax',
      employer: false,
      amount: input.supplemental
        ? basisPointsOf(wages.federal, federalWithholdingFor(input.year).supplementalRate)
        : annualizedFederalWithholding(wages.federal, input.year, input.payPeriodsPerYear),
    },
    {
      type: 'state',
      name: `${stateCode} State Income Tax`,
      employer: false,
      amount: basisPointsOf(wages.state, stateIncomeTaxRateOf(stateCode)),
    },
    {
      type: 'fica',
      name: 'Social Security',
      employer: false,
      amount: basisPointsOf(socialSecurityWages, FICA_RATES.socialSecurity),
    },
    { type: 'fica', name: 'Medicare', employer: false, amount: basisPointsOf(wages.fica, FICA_RATES.medicare) },
    {
      type: 'fica',
      name: 'Additional Medicare',
      employer: false,
      amount: basisPointsOf(wagesOverMedicareThreshold, FICA_RATES.additionalMedicare),
    },
  ];
  // The employer matches Social Security and Medicare, never the additional Medicare tax.
  const employer: TaxLine[] = [
    {
      type: 'fica',
      name: 'Social Security (Employer)',
      employer: true,
      amount: basisPointsOf(socialSecurityWages, FICA_RATES.socialSecurity),
    },
    {
      type: 'fica',
      name: 'Medicare (Employer)',
      employer: true,
      amount: basisPointsOf(wages.fica, FICA_RATES.medicare),
    },
  ];

  const lines = [...employee, ...employer].filter((line) => line.amount > 0);
  return {
    lines,
    employeeTotal: employee.reduce((total, line) => total + line.amount, 0),
    socialSecurityWages,
  };
}

/**
 * Annualized percentage method (IRS Pub. 15-T), single filer: the period's wages × periods,
 * less the standard deduction, through the brackets, divided back by periods. Rounded once.
 */
export function annualizedFederalWithholding(federalWages: number, year: number, payPeriodsPerYear: number): number {
  const table = federalWithholdingFor(year);
  const annualTaxable = Math.max(0, federalWages * payPeriodsPerYear - table.standardDeduction);
  // Σ (cents in bracket × rate in bp) stays exact as BigInt; one division by 10,000 × periods.
  let annualTaxTimesBasisPoints = 0n;
  table.brackets.forEach((bracket, index) => {
    const next = table.brackets[index + 1];
    const top = next ? Math.min(annualTaxable, next.from) : annualTaxable;
    if (top > bracket.from) annualTaxTimesBasisPoints += BigInt(top - bracket.from) * BigInt(bracket.rate);
  });
  return divideRoundingHalfUp(annualTaxTimesBasisPoints, 10_000n * BigInt(payPeriodsPerYear));
}
