import { irsLimitsFor } from './irs-limits';
import { annualizedFederalWithholding, computePayrollTaxes, type PayrollTaxesInput } from './payroll-taxes';
import { stateIncomeTaxRateOf } from './tax-tables';

describe('annualizedFederalWithholding (single filer, standard deduction)', () => {
  it('walks every bracket up to 32 % (2026, $10,000 bi-weekly)', () => {
    // 10,000 × 26 = 260,000 − 16,100 = 243,900 taxable.
    // 12,400 × 10 % = 1,240; 38,000 × 12 % = 4,560; 55,300 × 22 % = 12,166; 96,075 × 24 % = 23,058;
    // (243,900 − 201,775) = 42,125 × 32 % = 13,480 → 54,504 / 26 = 2,096.3077 → $2,096.31.
    expect(annualizedFederalWithholding(1_000_000, 2026, 26)).toBe(209_631);
  });

  it('reaches the 37 % bracket (2026, $30,000 weekly)', () => {
    // 30,000 × 52 = 1,560,000 − 16,100 = 1,543,900.
    // 1,240 + 4,560 + 12,166 + 23,058 + 54,450 × 32 % = 17,424 + 384,375 × 35 % = 134,531.25
    // + (1,543,900 − 640,600) × 37 % = 334,221 → 527,200.25 / 52 = 10,138.4663 → $10,138.47.
    expect(annualizedFederalWithholding(3_000_000, 2026, 52)).toBe(1_013_847);
  });

  it("uses each year's own standard deduction and brackets", () => {
    // 2025: 78,000 − 15,750 = 62,250: 11,925 × 10 % = 1,192.50 + 36,550 × 12 % = 4,386
    //   + 13,775 × 22 % = 3,030.50 → 8,609 / 26 = 331.1154 → $331.12.
    expect(annualizedFederalWithholding(300_000, 2025, 26)).toBe(33_112);
    // 2023: 78,000 − 13,850 = 64,150: 1,100 + 33,725 × 12 % = 4,047 + 19,425 × 22 % = 4,273.50
    //   → 9,420.50 / 26 = 362.3269 → $362.33.
    expect(annualizedFederalWithholding(300_000, 2023, 26)).toBe(36_233);
  });

  it('withholds nothing below the standard deduction', () => {
    // 600 × 26 = 15,600 < 16,100.
    expect(annualizedFederalWithholding(60_000, 2026, 26)).toBe(0);
  });
});

describe('computePayrollTaxes', () => {
  const input = (overrides: Partial<PayrollTaxesInput>): PayrollTaxesInput => ({
    wages: { federal: 100_000, state: 100_000, fica: 100_000 },
    supplemental: false,
    year: 2026,
    payPeriodsPerYear: 26,
    state: 'NY',
    limits: irsLimitsFor(2026),
    socialSecurityWagesBefore: 0,
    medicareWagesBefore: 0,
    ...overrides,
  });

  it('withholds supplemental wages at the flat 22 %, state at its flat rate, FICA for both sides', () => {
    // $1,000 supplemental: federal 22 % = $220; NY 6 % = $60; SS 6.2 % = $62; Medicare 1.45 % = $14.50.
    const taxes = computePayrollTaxes(input({ supplemental: true }));
    expect(taxes.lines).toEqual([
      { type: 'federal', name: 'Federal Income Tax', employer: false, amount: 22_000 },
      { type: 'state', name: 'NY State Income Tax', employer: false, amount: 6_000 },
      { type: 'fica', name: 'Social Security', employer: false, amount: 6_200 },
      { type: 'fica', name: 'Medicare', employer: false, amount: 1_450 },
      { type: 'fica', name: 'Social Security (Employer)', employer: true, amount: 6_200 },
      { type: 'fica', name: 'Medicare (Employer)', employer: true, amount: 1_450 },
    ]);
    expect(taxes.employeeTotal).toBe(22_000 + 6_000 + 6_200 + 1_450);
    expect(taxes.socialSecurityWages).toBe(100_000);
  });

  it('owes additional Medicare only on the part above the threshold, once past it on all of it', () => {
    // $199,500 so far + $1,000 → $500 above → 0.9 % = $4.50.
    const crossing = computePayrollTaxes(input({ medicareWagesBefore: 19_950_000 }));
    expect(crossing.lines.find((line) => line.name === 'Additional Medicare')?.amount).toBe(450);
    // $250,000 so far → all $1,000 above → $9.00.
    const past = computePayrollTaxes(input({ medicareWagesBefore: 25_000_000 }));
    expect(past.lines.find((line) => line.name === 'Additional Medicare')?.amount).toBe(900);
  });
});

describe('stateIncomeTaxRateOf', () => {
  it('is 0 in the nine states without a wage income tax', () => {
    for (const state of ['AK', 'FL', 'NV', 'NH', 'SD', 'TN', 'TX', 'WA', 'WY']) {
      expect(stateIncomeTaxRateOf(state)).toBe(0);
    }
  });

  it('reads any case, and withholds nothing for an unknown code', () => {
    expect(stateIncomeTaxRateOf('ca')).toBe(600);
    expect(stateIncomeTaxRateOf('PA')).toBe(307);
    expect(stateIncomeTaxRateOf('PR')).toBe(0);
  });
});
