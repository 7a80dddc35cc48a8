import { computePayStatement, emptyYearToDate, payPeriodsPerYear, yearToDateAfterWritten } from './pay-statement-calculator';
import type {
  BenefitType,
  EnrollmentInForce,
  FixedOrPercent,
  PayStatementInput,
  PayStatementResult,
  WrittenPayStatement,
  YearToDate,
} from './payroll.types';

/*
 * Every expected value below is worked by hand in the comment above it, from the 2026 figures
 * unless a test says otherwise: standard deduction $16,100; single brackets 10 % to $12,400,
 * 12 % to $50,400, 22 % to $105,700, 24 % to $201,775, 32 % …; 402(g) $24,500, catch-up
 * $8,000 (60–63: $11,250); HSA $4,400 / $8,750; SS wage base $184,500; FICA 6.2 % + 1.45 %.
 * Amounts in the code are cents. Most employees live in TX (no state income tax) so a test's
 * arithmetic stays on the rule it is about.
 */

/** $78,000 a year, bi-weekly: $3,000.00 (300,000 cents) a period. */
function regularRun(
  overrides: Partial<PayStatementInput> = {},
  employee: Partial<PayStatementInput['employee']> = {},
): PayStatementInput {
  return {
    kind: 'regular_payroll',
    payDate: '2026-03-13',
    employee: {
      dob: '1985-04-20',
      state: 'TX',
      incomeUnit: 'yearly',
      incomeAmount: 7_800_000,
      payPeriodsPerYear: 26,
      ...employee,
    },
    enrollments: [],
    yearToDate: null,
    ...overrides,
  };
}

function enrollment(overrides: Partial<EnrollmentInForce>): EnrollmentInForce {
  return {
    benefitId: 'benefit-401k',
    benefitType: '401k',
    description: '401(k) Plan',
    frequency: 'every_paycheck',
    employeeDeduction: null,
    companyContribution: null,
    companyMatchTiers: null,
    annualMaximum: null,
    catchUp: false,
    hsaContributionLimit: null,
    ...overrides,
  };
}

const fixed = (amount: number): FixedOrPercent => ({ type: 'fixed', amount });
const percent = (amount: number): FixedOrPercent => ({ type: 'percent', amount });

/** Another benefit than the default 401(k), with its employee election. */
function benefit(
  benefitId: string,
  benefitType: BenefitType,
  description: string,
  employeeDeduction: FixedOrPercent,
): EnrollmentInForce {
  return enrollment({ benefitId, benefitType, description, employeeDeduction });
}

function yearToDate(year: number, totals: Partial<YearToDate>): YearToDate {
  return { ...emptyYearToDate(year), ...totals };
}

const tax = (result: PayStatementResult, name: string): number | undefined =>
  result.statement.taxes.find((line) => line.name === name)?.amount;
const deduction = (result: PayStatementResult, name: string): number | undefined =>
  result.statement.employeeDeductions.find((line) => line.name === name)?.amount;
const contribution = (result: PayStatementResult, name: string): number | undefined =>
  result.statement.employerContributions.find((line) => line.name === name)?.amount;

/** net = gross − employee taxes − employee deductions, whatever the statement. */
function expectBalanced(result: PayStatementResult): void {
  const { statement } = result;
  const employeeTaxes = statement.taxes.filter((line) => !line.employer).reduce((sum, line) => sum + line.amount, 0);
  const deductions = statement.employeeDeductions.reduce((sum, line) => sum + line.amount, 0);
  expect(statement.netPay).toBe(statement.grossPay - employeeTaxes - deductions);
  expect(statement.netPay).toBeGreaterThanOrEqual(0);
}

describe('computePayStatement', () => {
  describe('earnings', () => {
    it('pays a yearly income as one salary line of annual / periods, 80 hours bi-weekly', () => {
      // $50,000.00 / 26 = $1,923.0769… → $1,923.08 (192,308 cents).
      const result = computePayStatement(regularRun({}, { incomeAmount: 5_000_000 }));
      expect(result.statement.earnings).toEqual([{ type: 'salary', name: 'Salary', amount: 192_308, hours: 80 }]);
      expect(result.statement.grossPay).toBe(192_308);
      expect(result.statement.totalHours).toBe(80);
    });

    it('pays hourly work as wage plus overtime at 1.5 ×, and withholds on it', () => {
      // $25.50/h: regular 80 h (bi-weekly default) = $2,040.00; overtime 10 h × $38.25 = $382.50.
      // gross = $2,422.50. total hours 90.
      // Federal: 2,422.50 × 26 = 62,985 − 16,100 = 46,885 taxable;
      //   12,400 × 10 % = 1,240 + (46,885 − 12,400) × 12 % = 4,138.20 → 5,378.20 / 26 = 206.8538… → $206.85.
      // SS: 2,422.50 × 6.2 % = 150.195 → $150.20. Medicare: × 1.45 % = 35.12625 → $35.13.
      // net = 2,422.50 − 206.85 − 150.20 − 35.13 = $2,030.32.
      const result = computePayStatement(
        regularRun({}, { incomeUnit: 'hourly', incomeAmount: 2_550, overtimeHours: 10 }),
      );
      expect(result.statement).toEqual({
        kind: 'regular_payroll',
        totalHours: 90,
        grossPay: 242_250,
        netPay: 203_032,
        earnings: [
          { type: 'wage', name: 'Regular Wages', amount: 204_000, hours: 80 },
          { type: 'overtime', name: 'Overtime', amount: 38_250, hours: 10 },
        ],
        taxes: [
          { type: 'federal', name: 'Federal Income Tax', employer: false, amount: 20_685 },
          { type: 'fica', name: 'Social Security', employer: false, amount: 15_020 },
          { type: 'fica', name: 'Medicare', employer: false, amount: 3_513 },
          { type: 'fica', name: 'Social Security (Employer)', employer: true, amount: 15_020 },
          { type: 'fica', name: 'Medicare (Employer)', employer: true, amount: 3_513 },
        ],
        employeeDeductions: [],
        employerContributions: [],
      });
    });

    it('rounds overtime once, half up, on fractional hours', () => {
      // $25.01/h × 72.25 h = $1,806.97 (1,806.9725); overtime 2.5 h × 1.5 × $25.01 = $93.7875 → $93.79.
      const result = computePayStatement(
        regularRun({}, { incomeUnit: 'hourly', incomeAmount: 2_501, regularHours: 72.25, overtimeHours: 2.5 }),
      );
      expect(result.statement.earnings.map((line) => line.amount)).toEqual([180_697, 9_379]);
      expect(result.statement.totalHours).toBe(74.75);
    });
  });

  describe('employee deductions', () => {
    it('takes a percent election in basis points of gross, rounded half up', () => {
      // $65,013.00 / 26 = $2,500.50 gross. 100 bp = 1 % → $25.005 → $25.01.
      const result = computePayStatement(
        regularRun(
          { enrollments: [enrollment({ employeeDeduction: percent(100) })] },
          { incomeAmount: 6_501_300 },
        ),
      );
      expect(result.statement.grossPay).toBe(250_050);
      expect(deduction(result, '401(k) Plan')).toBe(2_501);
      expectBalanced(result);
    });

    it('takes a fixed election as cents; a Section 125 deduction lowers federal and FICA wages', () => {
      // gross $3,000; s125 medical $200.00 → FICA wages $2,800.
      // SS 2,800 × 6.2 % = $173.60; Medicare × 1.45 % = $40.60.
      // Federal: 2,800 × 26 = 72,800 − 16,100 = 56,700;
      //   1,240 + 38,000 × 12 % = 4,560 + (56,700 − 50,400) × 22 % = 1,386 → 7,186 / 26 = 276.3846 → $276.38.
      // net = 3,000 − 276.38 − 173.60 − 40.60 − 200 = $2,309.42.
      const result = computePayStatement(
        regularRun({
          enrollments: [
            enrollment({
              benefitId: 'medical',
              benefitType: 's125_medical',
              description: 'Medical',
              employeeDeduction: fixed(20_000),
            }),
          ],
        }),
      );
      expect(result.statement.employeeDeductions).toEqual([
        { name: 'Medical', amount: 20_000, preTax: true, type: 's125_medical' },
      ]);
      expect(tax(result, 'Federal Income Tax')).toBe(27_638);
      expect(tax(result, 'Social Security')).toBe(17_360);
      expect(tax(result, 'Medicare')).toBe(4_060);
      expect(result.statement.netPay).toBe(230_942);
      expect(result.yearToDate.socialSecurityWages).toBe(280_000);
      expect(result.yearToDate.medicareWages).toBe(280_000);
    });

    it('a traditional 401(k) lowers federal and state taxable wages but not FICA wages', () => {
      // CA resident, gross $3,000; 401(k) 5 % = $150 → income-tax wages $2,850, FICA wages $3,000.
      // Federal: 2,850 × 26 = 74,100 − 16,100 = 58,000;
      //   1,240 + 4,560 + (58,000 − 50,400) × 22 % = 1,672 → 7,472 / 26 = 287.3846 → $287.38.
      // CA 6 % × 2,850 = $171.00. SS 6.2 % × 3,000 = $186.00. Medicare 1.45 % × 3,000 = $43.50.
      // Match [100 % to 3 %, 50 % to 5 %] on 5 %: $90 + 50 % × $60 = $120.
      // net = 3,000 − 287.38 − 171 − 186 − 43.50 − 150 = $2,162.12.
      const result = computePayStatement(
        regularRun(
          {
            enrollments: [
              enrollment({
                employeeDeduction: percent(500),
                companyMatchTiers: [
                  { match: 10_000, threshold: 300 },
                  { match: 5_000, threshold: 500 },
                ],
              }),
            ],
          },
          { state: 'CA' },
        ),
      );
      expect(result.statement).toEqual({
        kind: 'regular_payroll',
        totalHours: 80,
        grossPay: 300_000,
        netPay: 216_212,
        earnings: [{ type: 'salary', name: 'Salary', amount: 300_000, hours: 80 }],
        taxes: [
          { type: 'federal', name: 'Federal Income Tax', employer: false, amount: 28_738 },
          { type: 'state', name: 'CA State Income Tax', employer: false, amount: 17_100 },
          { type: 'fica', name: 'Social Security', employer: false, amount: 18_600 },
          { type: 'fica', name: 'Medicare', employer: false, amount: 4_350 },
          { type: 'fica', name: 'Social Security (Employer)', employer: true, amount: 18_600 },
          { type: 'fica', name: 'Medicare (Employer)', employer: true, amount: 4_350 },
        ],
        employeeDeductions: [{ name: '401(k) Plan', amount: 15_000, preTax: true, type: '401k' }],
        employerContributions: [{ name: '401(k) Plan', amount: 12_000, type: '401k' }],
      });
      expect(result.yearToDate).toEqual(
        yearToDate(2026, {
          employeeByBenefit: { 'benefit-401k': 15_000 },
          electiveDeferrals: 15_000,
          socialSecurityWages: 300_000,
          medicareWages: 300_000,
        }),
      );
    });

    it('a Roth 401(k) is post-tax: taxes are those of the full gross', () => {
      // CA, gross $3,000, Roth 5 % = $150. Federal: 78,000 − 16,100 = 61,900;
      //   1,240 + 4,560 + (61,900 − 50,400) × 22 % = 2,530 → 8,330 / 26 = 320.3846 → $320.38.
      // CA 6 % × 3,000 = $180.00.
      const result = computePayStatement(
        regularRun(
          {
            enrollments: [
              enrollment({ benefitType: '401k_roth', description: 'Roth 401(k)', employeeDeduction: percent(500) }),
            ],
          },
          { state: 'CA' },
        ),
      );
      expect(result.statement.employeeDeductions).toEqual([
        { name: 'Roth 401(k)', amount: 15_000, preTax: false, type: '401k_roth' },
      ]);
      expect(tax(result, 'Federal Income Tax')).toBe(32_038);
      expect(tax(result, 'CA State Income Tax')).toBe(18_000);
      // Roth deferrals still count against 402(g).
      expect(result.yearToDate.electiveDeferrals).toBe(15_000);
    });

    it('treats a missing frequency as every paycheck', () => {
      const result = computePayStatement(
        regularRun({ enrollments: [enrollment({ frequency: null, employeeDeduction: fixed(1_000) })] }),
      );
      expect(deduction(result, '401(k) Plan')).toBe(1_000);
    });
  });

  describe('company match tiers', () => {
    const tiers = [
      { match: 10_000, threshold: 300 },
      { match: 5_000, threshold: 500 },
    ];
    const withDeferral = (basisPoints: number): PayStatementResult =>
      computePayStatement(
        regularRun({
          enrollments: [enrollment({ employeeDeduction: percent(basisPoints), companyMatchTiers: tiers })],
        }),
      );

    it('matches 100 % of a deferral exactly at the first threshold', () => {
      // gross $3,000, deferral 3 % = $90 → 100 % of $90 = $90.
      expect(contribution(withDeferral(300), '401(k) Plan')).toBe(9_000);
    });

    it('matches the second band at its own rate above the first threshold', () => {
      // deferral 4 % = $120: first 3 % ($90) at 100 % = $90; next 1 % ($30) at 50 % = $15 → $105.
      expect(contribution(withDeferral(400), '401(k) Plan')).toBe(10_500);
    });

    it('matches nothing above the last threshold', () => {
      // deferral 8 % = $240: $90 + 50 % × $60 = $120, the 3 % above 5 % unmatched.
      expect(contribution(withDeferral(800), '401(k) Plan')).toBe(12_000);
    });

    it("prefers the enrollment's own company contribution over the tiers", () => {
      // percent 400 bp of $3,000 = $120, whatever the 1 % deferral would earn under the tiers.
      const result = computePayStatement(
        regularRun({
          enrollments: [
            enrollment({
              employeeDeduction: percent(100),
              companyContribution: percent(400),
              companyMatchTiers: tiers,
            }),
          ],
        }),
      );
      expect(contribution(result, '401(k) Plan')).toBe(12_000);
    });
  });

  describe('annual maximum', () => {
    it('gives the statement that reaches it the remainder, then nothing, and matches what was taken', () => {
      // annual maximum $1,000; $300 a paycheck; match 50 % of the deferral up to 6 % of pay ($180).
      // #1 $300 (ytd 300), #2 $300 (600), #3 $300 (900), #4 $100 (1,000), #5 $0 → no line.
      // match: 50 % × min(deferral, $180) → $90, $90, $90, $50 (50 % of $100), then none.
      const plan = enrollment({
        employeeDeduction: fixed(30_000),
        annualMaximum: 100_000,
        companyMatchTiers: [{ match: 5_000, threshold: 600 }],
      });
      const payDates = ['2026-01-09', '2026-01-23', '2026-02-06', '2026-02-20', '2026-03-06'];
      let carried: YearToDate | null = null;
      const results = payDates.map((payDate) => {
        const result = computePayStatement(regularRun({ payDate, enrollments: [plan], yearToDate: carried }));
        carried = result.yearToDate;
        return result;
      });
      const deductions = results.map((result) => deduction(result, '401(k) Plan'));
      const matches = results.map((result) => contribution(result, '401(k) Plan'));
      expect(deductions).toEqual([30_000, 30_000, 30_000, 10_000, undefined]);
      expect(matches).toEqual([9_000, 9_000, 9_000, 5_000, undefined]);
      expect(results[4].yearToDate.employeeByBenefit['benefit-401k']).toBe(100_000);
      results.forEach(expectBalanced);
    });
  });

  describe('402(g) elective deferral limit and catch-up', () => {
    // $24,000 deferred so far in 2026; $1,000 asked for. Limit $24,500 → $500 left, or with the
    // age-50 catch-up $24,500 + $8,000 = $32,500 → $8,500 left, enough for the whole $1,000.
    const run = (dob: string, catchUp: boolean): PayStatementResult =>
      computePayStatement(
        regularRun(
          {
            payDate: '2026-11-20',
            enrollments: [enrollment({ employeeDeduction: fixed(100_000), catchUp })],
            yearToDate: yearToDate(2026, { electiveDeferrals: 2_400_000 }),
          },
          { dob },
        ),
      );

    it('cuts a deferral to what is left of the limit without catch-up', () => {
      expect(deduction(run('1976-06-01', false), '401(k) Plan')).toBe(50_000);
    });

    it('adds the age-50 catch-up when the enrollment has catch_up on', () => {
      expect(deduction(run('1976-06-01', true), '401(k) Plan')).toBe(100_000);
    });

    it('counts someone turning 50 on Dec 31 of the pay year, not the day after', () => {
      expect(deduction(run('1976-12-31', true), '401(k) Plan')).toBe(100_000);
      expect(deduction(run('1977-01-01', true), '401(k) Plan')).toBe(50_000);
    });

    it('shares the limit between a 401(k) and a Roth 401(k) on one statement, in order', () => {
      // $500 left: the 401(k) asks $300 and gets it; the Roth asks $300 and gets the last $200.
      const result = computePayStatement(
        regularRun({
          enrollments: [
            enrollment({ employeeDeduction: fixed(30_000) }),
            enrollment({
              benefitId: 'roth',
              benefitType: '401k_roth',
              description: 'Roth 401(k)',
              employeeDeduction: fixed(30_000),
            }),
          ],
          yearToDate: yearToDate(2026, { electiveDeferrals: 2_400_000 }),
        }),
      );
      expect(deduction(result, '401(k) Plan')).toBe(30_000);
      expect(deduction(result, 'Roth 401(k)')).toBe(20_000);
      expect(result.yearToDate.electiveDeferrals).toBe(2_450_000);
    });

    it('gives 457(b) its own limit, and leaves a 401(k) loan uncapped', () => {
      // 402(g) used up ($24,500), yet the 457 takes its $1,000 (457 limit $24,500, none used)
      // and the loan repayment $200 has no IRS limit at all.
      const result = computePayStatement(
        regularRun({
          enrollments: [
            benefit('457', '457', '457(b)', fixed(100_000)),
            benefit('loan', '401k_loan', '401(k) Loan', fixed(20_000)),
          ],
          yearToDate: yearToDate(2026, { electiveDeferrals: 2_450_000 }),
        }),
      );
      expect(deduction(result, '457(b)')).toBe(100_000);
      expect(result.statement.employeeDeductions.find((line) => line.type === '401k_loan')).toEqual({
        name: '401(k) Loan',
        amount: 20_000,
        preTax: false,
        type: '401k_loan',
      });
      expect(result.yearToDate.section457Deferrals).toBe(100_000);
      expect(result.yearToDate.electiveDeferrals).toBe(2_450_000);
    });

    it('holds a SIMPLE IRA to the SIMPLE limit and counts it in 402(g)', () => {
      // 2026 SIMPLE limit $17,000; $16,900 deferred → $100 left of the $500 asked.
      const result = computePayStatement(
        regularRun({
          enrollments: [
            benefit('simple', 'simple_ira', 'SIMPLE IRA', fixed(50_000)),
          ],
          yearToDate: yearToDate(2026, { simpleDeferrals: 1_690_000, electiveDeferrals: 1_690_000 }),
        }),
      );
      expect(deduction(result, 'SIMPLE IRA')).toBe(10_000);
      expect(result.yearToDate.simpleDeferrals).toBe(1_700_000);
      expect(result.yearToDate.electiveDeferrals).toBe(1_700_000);
    });
  });

  describe('SECURE 2.0 catch-up for ages 60–63', () => {
    // $34,000 deferred so far; $1,000 asked, catch_up on.
    const run = (payDate: string, dob: string, deferredSoFar: number): PayStatementResult =>
      computePayStatement(
        regularRun(
          {
            payDate,
            enrollments: [enrollment({ employeeDeduction: fixed(100_000), catchUp: true })],
            yearToDate: yearToDate(Number(payDate.slice(0, 4)), { electiveDeferrals: deferredSoFar }),
          },
          { dob },
        ),
      );

    it('gives someone 61 at the end of 2025 the $11,250 catch-up', () => {
      // 2025: $23,500 + $11,250 = $34,750; $34,000 used → $750.
      expect(deduction(run('2025-06-13', '1964-03-01', 3_400_000), '401(k) Plan')).toBe(75_000);
    });

    it('gives someone 55 or 64 only the age-50 catch-up', () => {
      // 2025: $23,500 + $7,500 = $31,000 < $34,000 used → nothing, no line.
      expect(deduction(run('2025-06-13', '1970-03-01', 3_400_000), '401(k) Plan')).toBeUndefined();
      expect(deduction(run('2025-06-13', '1961-03-01', 3_400_000), '401(k) Plan')).toBeUndefined();
    });

    it('does not exist before 2025', () => {
      // 2024, age 61: $23,000 + $7,500 = $30,500; $30,000 used → $500.
      expect(deduction(run('2024-06-14', '1963-03-01', 3_000_000), '401(k) Plan')).toBe(50_000);
    });
  });

  describe('HSA', () => {
    const hsa = (overrides: Partial<EnrollmentInForce>): EnrollmentInForce =>
      enrollment({
        benefitId: 'hsa',
        benefitType: 'hsa_pre',
        description: 'HSA',
        employeeDeduction: fixed(40_000),
        companyContribution: fixed(20_000),
        hsaContributionLimit: 'family',
        ...overrides,
      });

    it('counts employee and employer contributions together against the family limit', () => {
      // 2026 family limit $8,750; $8,300 contributed so far → $450 left.
      // Employee asks $400 → $400 (left $50); employer's $200 → cut to $50.
      // Next statement: nothing left → no lines at all.
      const first = computePayStatement(
        regularRun({ enrollments: [hsa({})], yearToDate: yearToDate(2026, { hsaTotal: 830_000 }) }),
      );
      expect(deduction(first, 'HSA')).toBe(40_000);
      expect(contribution(first, 'HSA')).toBe(5_000);
      expect(first.yearToDate.hsaTotal).toBe(875_000);

      const second = computePayStatement(
        regularRun({ payDate: '2026-03-27', enrollments: [hsa({})], yearToDate: first.yearToDate }),
      );
      expect(second.statement.employeeDeductions).toEqual([]);
      expect(second.statement.employerContributions).toEqual([]);
    });

    it('uses the self-only limit for individual coverage and adds $1,000 at 55 with catch_up', () => {
      // Self-only $4,400; $4,300 so far → employee $100 of $400, employer nothing.
      const individual = computePayStatement(
        regularRun({
          enrollments: [hsa({ hsaContributionLimit: 'individual' })],
          yearToDate: yearToDate(2026, { hsaTotal: 430_000 }),
        }),
      );
      expect(deduction(individual, 'HSA')).toBe(10_000);
      expect(contribution(individual, 'HSA')).toBeUndefined();

      // Born 1971: 55 by Dec 31 2026 → $5,400; $4,300 so far → employee $400, employer $200.
      const catchUp = computePayStatement(
        regularRun(
          {
            enrollments: [hsa({ hsaContributionLimit: 'individual', catchUp: true })],
            yearToDate: yearToDate(2026, { hsaTotal: 430_000 }),
          },
          { dob: '1971-12-31' },
        ),
      );
      expect(deduction(catchUp, 'HSA')).toBe(40_000);
      expect(contribution(catchUp, 'HSA')).toBe(20_000);
    });

    it('takes pre-tax HSA out of FICA wages', () => {
      // gross $3,000 − HSA $400 = $2,600 FICA wages: SS 6.2 % = $161.20, Medicare 1.45 % = $37.70.
      const result = computePayStatement(regularRun({ enrollments: [hsa({ companyContribution: null })] }));
      expect(tax(result, 'Social Security')).toBe(16_120);
      expect(tax(result, 'Medicare')).toBe(3_770);
    });
  });

  describe('FICA year to date', () => {
    it('stops Social Security at the wage base crossed mid-statement', () => {
      // $183,000 SS wages so far; base $184,500 → $1,500 of this $3,000 is taxed:
      // SS 6.2 % × 1,500 = $93.00 for the employee and $93.00 for the employer.
      // Medicare has no base: 1.45 % × 3,000 = $43.50. Next statement: no Social Security.
      const crossing = computePayStatement(
        regularRun({
          payDate: '2026-12-04',
          yearToDate: yearToDate(2026, { socialSecurityWages: 18_300_000, medicareWages: 18_300_000 }),
        }),
      );
      expect(tax(crossing, 'Social Security')).toBe(9_300);
      expect(tax(crossing, 'Social Security (Employer)')).toBe(9_300);
      expect(tax(crossing, 'Medicare')).toBe(4_350);
      expect(crossing.yearToDate.socialSecurityWages).toBe(18_450_000);
      expect(crossing.yearToDate.medicareWages).toBe(18_600_000);

      const after = computePayStatement(regularRun({ payDate: '2026-12-18', yearToDate: crossing.yearToDate }));
      expect(tax(after, 'Social Security')).toBeUndefined();
      expect(tax(after, 'Social Security (Employer)')).toBeUndefined();
      expect(tax(after, 'Medicare')).toBe(4_350);
    });

    it('adds the employee-only 0.9 % Medicare on wages above $200,000 for the year', () => {
      // $199,000 Medicare wages so far + $3,000 → $2,000 above $200,000 → 0.9 % = $18.00.
      const result = computePayStatement(
        regularRun({ yearToDate: yearToDate(2026, { socialSecurityWages: 18_450_000, medicareWages: 19_900_000 }) }),
      );
      expect(tax(result, 'Additional Medicare')).toBe(1_800);
      expect(tax(result, 'Medicare')).toBe(4_350);
      expect(tax(result, 'Medicare (Employer)')).toBe(4_350);
      expect(result.statement.taxes.filter((line) => line.employer).map((line) => line.name)).toEqual([
        'Medicare (Employer)',
      ]);
    });
  });

  describe('year boundary', () => {
    it('starts a new year from zero: deferrals and Social Security wages reset', () => {
      // 2025 ended at the 402(g) limit and the wage base; the first 2026 statement takes the
      // full $300 and pays Social Security on all $3,000 (6.2 % = $186).
      const december = yearToDate(2025, {
        employeeByBenefit: { 'benefit-401k': 2_350_000 },
        electiveDeferrals: 2_350_000,
        socialSecurityWages: 17_610_000,
        medicareWages: 19_000_000,
        oneTimeBenefitsTaken: ['bike'],
      });
      const result = computePayStatement(
        regularRun({
          payDate: '2026-01-09',
          enrollments: [enrollment({ employeeDeduction: fixed(30_000) })],
          yearToDate: december,
        }),
      );
      expect(deduction(result, '401(k) Plan')).toBe(30_000);
      expect(tax(result, 'Social Security')).toBe(18_600);
      expect(tax(result, 'Additional Medicare')).toBeUndefined();
      expect(result.yearToDate).toEqual(
        yearToDate(2026, {
          employeeByBenefit: { 'benefit-401k': 30_000 },
          electiveDeferrals: 30_000,
          socialSecurityWages: 300_000,
          medicareWages: 300_000,
          // A one-time deduction stays taken across years.
          oneTimeBenefitsTaken: ['bike'],
        }),
      );
    });
  });

  describe('frequencies', () => {
    it('takes a monthly deduction on the first regular statement of each calendar month', () => {
      // $50 dental: Jan 2 yes, Jan 16 no, Jan 30 no, Feb 13 yes.
      const dental = enrollment({
        benefitId: 'dental',
        benefitType: 's125_dental',
        description: 'Dental',
        frequency: 'monthly',
        employeeDeduction: fixed(5_000),
      });
      let carried: YearToDate | null = null;
      const taken = ['2026-01-02', '2026-01-16', '2026-01-30', '2026-02-13'].map((payDate) => {
        const result = computePayStatement(regularRun({ payDate, enrollments: [dental], yearToDate: carried }));
        carried = result.yearToDate;
        return deduction(result, 'Dental');
      });
      expect(taken).toEqual([5_000, undefined, undefined, 5_000]);
    });

    it('takes a one-time deduction once, never again, not even next year', () => {
      const bike = enrollment({
        benefitId: 'bike',
        benefitType: 'commuter',
        description: 'Bike Commute',
        frequency: 'one_time',
        employeeDeduction: fixed(10_000),
      });
      const first = computePayStatement(regularRun({ payDate: '2026-12-18', enrollments: [bike] }));
      const second = computePayStatement(
        regularRun({ payDate: '2027-01-01', enrollments: [bike], yearToDate: first.yearToDate }),
      );
      expect(deduction(first, 'Bike Commute')).toBe(10_000);
      expect(first.yearToDate.oneTimeBenefitsTaken).toEqual(['bike']);
      expect(second.statement.employeeDeductions).toEqual([]);
    });
  });

  describe('off-cycle bonus', () => {
    it('withholds at the 22 % supplemental rate and defers percent elections, not fixed ones', () => {
      // $10,000 bonus. 401(k) 6 % = $600 (a bonus defers like pay); the fixed $200 medical and
      // the fixed $100 Roth are regular-run deductions and are not taken.
      // Federal: 22 % × (10,000 − 600) = $2,068.00. SS 6.2 % × 10,000 = $620. Medicare $145.
      // Match [100 % to 3 %, 50 % to 5 %] on 6 %: $300 + 50 % × $200 = $400.
      // net = 10,000 − 2,068 − 620 − 145 − 600 = $6,567.
      const result = computePayStatement(
        regularRun({
          kind: 'off_cycle_payroll',
          payDate: '2026-03-20',
          earnings: [{ type: 'bonus', name: 'Bonus', amount: 1_000_000, hours: null }],
          enrollments: [
            enrollment({
              employeeDeduction: percent(600),
              companyMatchTiers: [
                { match: 10_000, threshold: 300 },
                { match: 5_000, threshold: 500 },
              ],
            }),
            enrollment({
              benefitId: 'medical',
              benefitType: 's125_medical',
              description: 'Medical',
              employeeDeduction: fixed(20_000),
            }),
            enrollment({
              benefitId: 'roth',
              benefitType: '401k_roth',
              description: 'Roth 401(k)',
              employeeDeduction: fixed(10_000),
            }),
          ],
        }),
      );
      expect(result.statement).toEqual({
        kind: 'off_cycle_payroll',
        totalHours: 0,
        grossPay: 1_000_000,
        netPay: 656_700,
        earnings: [{ type: 'bonus', name: 'Bonus', amount: 1_000_000, hours: null }],
        taxes: [
          { type: 'federal', name: 'Federal Income Tax', employer: false, amount: 206_800 },
          { type: 'fica', name: 'Social Security', employer: false, amount: 62_000 },
          { type: 'fica', name: 'Medicare', employer: false, amount: 14_500 },
          { type: 'fica', name: 'Social Security (Employer)', employer: true, amount: 62_000 },
          { type: 'fica', name: 'Medicare (Employer)', employer: true, amount: 14_500 },
        ],
        employeeDeductions: [{ name: '401(k) Plan', amount: 60_000, preTax: true, type: '401k' }],
        employerContributions: [{ name: '401(k) Plan', amount: 40_000, type: '401k' }],
      });
    });

    it('does not spend monthly or one-time deductions on an off-cycle run', () => {
      const dental = enrollment({
        benefitId: 'dental',
        benefitType: 's125_dental',
        description: 'Dental',
        frequency: 'monthly',
        employeeDeduction: percent(100),
      });
      const bonus = computePayStatement(
        regularRun({
          kind: 'one_time_payment',
          payDate: '2026-03-02',
          earnings: [{ type: 'bonus', name: 'Spot Bonus', amount: 50_000, hours: null }],
          enrollments: [dental],
        }),
      );
      expect(bonus.statement.employeeDeductions).toEqual([]);
      const regular = computePayStatement(regularRun({ enrollments: [dental], yearToDate: bonus.yearToDate }));
      // 1 % of $3,000.
      expect(deduction(regular, 'Dental')).toBe(3_000);
    });
  });

  describe('net pay never negative', () => {
    it('cuts post-tax deductions first, exactly to a net of 0', () => {
      // 20 h × $10 = $200 gross. Medical (pre-tax, all taxes) $150 → FICA wages $50:
      // SS 6.2 % = $3.10; Medicare 1.45 % = $0.725 → $0.73. Federal: 50 × 26 = 1,300 < 16,100 → 0.
      // 200 − 3.83 − 150 − 100 (post-tax) = −53.83 → the post-tax $100 is cut by $53.83 to $46.17.
      const result = computePayStatement(
        regularRun(
          {
            enrollments: [
              benefit('medical', 's125_medical', 'Medical', fixed(15_000)),
              benefit('union', 'custom_post_tax', 'Union Dues', fixed(10_000)),
            ],
          },
          { incomeUnit: 'hourly', incomeAmount: 1_000, regularHours: 20 },
        ),
      );
      expect(deduction(result, 'Medical')).toBe(15_000);
      expect(deduction(result, 'Union Dues')).toBe(4_617);
      expect(result.statement.netPay).toBe(0);
      expect(result.yearToDate.employeeByBenefit).toEqual({ medical: 15_000, union: 4_617 });
      expectBalanced(result);
    });

    it('then cuts pre-tax deductions, the last first, paying the taxes the cut brings back', () => {
      // CA, $200 gross; Medical $150 (all taxes), 401(k) $100 (income tax only).
      // With both: FICA wages $50 → SS $3.10 + Medicare $0.73 = $3.83; income-tax wages 0.
      // Net 200 − 3.83 − 250 = −53.83; no post-tax, so the 401(k) is cut by c.
      // Income-tax wages become x = c − $50, CA tax 6 % × x (federal: x × 26 < 16,100 → 0), FICA unchanged:
      // net = c − 53.83 − round(6 % x) = x − 3.83 − round(6 % x) ≥ 0.
      // x = 4.07 → 6 % = 0.2442 → 0.24 → 4.07 − 3.83 − 0.24 = 0 ✓; x = 4.06 → 0.24 → −0.01 ✗.
      // So c = $54.07, 401(k) $45.93, CA $0.24, net 0.
      const result = computePayStatement(
        regularRun(
          {
            enrollments: [
              benefit('medical', 's125_medical', 'Medical', fixed(15_000)),
              enrollment({ employeeDeduction: fixed(10_000) }),
            ],
          },
          { state: 'CA', incomeUnit: 'hourly', incomeAmount: 1_000, regularHours: 20 },
        ),
      );
      expect(deduction(result, 'Medical')).toBe(15_000);
      expect(deduction(result, '401(k) Plan')).toBe(4_593);
      expect(tax(result, 'CA State Income Tax')).toBe(24);
      expect(tax(result, 'Federal Income Tax')).toBeUndefined();
      expect(result.statement.netPay).toBe(0);
      expect(result.yearToDate.electiveDeferrals).toBe(4_593);
      expectBalanced(result);
    });

    it('never lets pre-tax deductions above gross produce negative wages or taxes', () => {
      // $200 gross, medical $250: cut to $200, no taxable wages, no taxes, net 0.
      const result = computePayStatement(
        regularRun(
          {
            enrollments: [
              benefit('medical', 's125_medical', 'Medical', fixed(25_000)),
            ],
          },
          { incomeUnit: 'hourly', incomeAmount: 1_000, regularHours: 20 },
        ),
      );
      expect(deduction(result, 'Medical')).toBe(20_000);
      expect(result.statement.taxes).toEqual([]);
      expect(result.statement.netPay).toBe(0);
    });
  });

  describe('inputs', () => {
    it('refuses an off-cycle run without earnings', () => {
      expect(() => computePayStatement(regularRun({ kind: 'off_cycle_payroll' }))).toThrow(/needs its earnings/);
    });

    it('refuses malformed dates and amounts', () => {
      expect(() => computePayStatement(regularRun({ payDate: '03/13/2026' }))).toThrow(/YYYY-MM-DD/);
      expect(() => computePayStatement(regularRun({}, { incomeAmount: 12.5 }))).toThrow(/incomeAmount/);
      expect(() =>
        computePayStatement(regularRun({ enrollments: [enrollment({ employeeDeduction: fixed(-1) })] })),
      ).toThrow(/employeeDeduction\.amount/);
    });

    it('does not change the year-to-date totals it was given', () => {
      const given = yearToDate(2026, { employeeByBenefit: { 'benefit-401k': 1_000 }, electiveDeferrals: 1_000 });
      const snapshot = structuredClone(given);
      const enrollments = [enrollment({ employeeDeduction: fixed(500) })];
      computePayStatement(regularRun({ enrollments, yearToDate: given }));
      expect(given).toEqual(snapshot);
    });
  });
});

describe('payPeriodsPerYear', () => {
  it('knows the periods of the common pay frequencies', () => {
    expect(payPeriodsPerYear('weekly')).toBe(52);
    expect(payPeriodsPerYear('bi_weekly')).toBe(26);
    expect(payPeriodsPerYear('semi_monthly')).toBe(24);
    expect(payPeriodsPerYear('monthly')).toBe(12);
  });
});

describe('yearToDateAfterWritten', () => {
  /** $3,000.00 gross, paid as written on 13 Mar 2026. */
  function written(overrides: Partial<WrittenPayStatement> = {}): WrittenPayStatement {
    return { kind: 'regular_payroll', grossPay: 300_000, employeeDeductions: [], employerContributions: [], ...overrides };
  }
  const after = (statement: WrittenPayStatement, enrollments: EnrollmentInForce[] = [], carried: YearToDate | null = null, payDate = '2026-03-13') =>
    yearToDateAfterWritten({ payDate, statement, enrollments, yearToDate: carried });

  it('counts a written deferral against 402(g) and its enrollment, so the next computed statement stops at the limit', () => {
    // $23,900 deferred as written (over any election: it is what was paid); the limit is
    // $24,500, so the next computed $1,000 election takes the $600 left.
    const plan = enrollment({ employeeDeduction: fixed(100_000) });
    const totals = after(written({ employeeDeductions: [{ name: '401(k) Plan', amount: 2_390_000, preTax: true, type: '401k' }] }), [plan]);
    expect(totals).toMatchObject({ year: 2026, electiveDeferrals: 2_390_000, employeeByBenefit: { 'benefit-401k': 2_390_000 } });
    const next = computePayStatement(regularRun({ payDate: '2026-03-27', enrollments: [plan], yearToDate: totals }));
    expect(deduction(next, '401(k) Plan')).toBe(60_000);
    expect(next.yearToDate.electiveDeferrals).toBe(2_450_000);
  });

  it('matches a line to the enrollment of its type and name; other typed lines count against their limit only, untyped ones against none', () => {
    const traditional = enrollment({ benefitId: 'b-trad', description: 'Traditional 401(k)' });
    const second = enrollment({ benefitId: 'b-second', description: 'Second 401(k)' });
    const totals = after(
      written({
        employeeDeductions: [
          { name: 'Second 401(k)', amount: 10_000, preTax: true, type: '401k' },
          { name: 'Old plan', amount: 5_000, preTax: true, type: '403b' },
          { name: 'Union dues', amount: 2_000, preTax: false, type: null },
          { name: 'HSA', amount: 7_000, preTax: true, type: 'hsa_pre' },
        ],
        employerContributions: [
          { name: 'HSA', amount: 3_000, type: 'hsa_pre' },
          { name: 'Match', amount: 4_000, type: '401k' },
        ],
      }),
      [traditional, second],
    );
    expect(totals.employeeByBenefit).toEqual({ 'b-second': 10_000 });
    expect(totals.electiveDeferrals).toBe(15_000);
    // The HSA limit covers employee and employer money together.
    expect(totals.hsaTotal).toBe(10_000);
  });

  it('grows FICA wages by gross less the pre-tax deductions FICA exempts, Social Security up to the wage base', () => {
    // $3,000 gross; Section 125 $200 and an untyped pre-tax $50 are FICA-exempt, the
    // traditional 401(k) $300 is not: FICA wages $2,750. $1,000 of wage base left.
    const totals = after(
      written({
        employeeDeductions: [
          { name: 'Medical', amount: 20_000, preTax: true, type: 's125_medical' },
          { name: 'Parking', amount: 5_000, preTax: true, type: null },
          { name: '401(k) Plan', amount: 30_000, preTax: true, type: '401k' },
          { name: 'Roth', amount: 1_000, preTax: false, type: '401k_roth' },
        ],
      }),
      [],
      yearToDate(2026, { socialSecurityWages: 18_350_000, medicareWages: 18_350_000 }),
    );
    expect(totals.medicareWages).toBe(18_350_000 + 275_000);
    expect(totals.socialSecurityWages).toBe(18_450_000);
  });

  it('takes a monthly deduction for its month on a regular statement, not on an off-cycle one', () => {
    const dental = benefit('b-dental', 's125_dental', 'Dental', fixed(4_000));
    const monthly = { ...dental, frequency: 'monthly' as const };
    const line = { name: 'Dental', amount: 4_000, preTax: true, type: 's125_dental' as const };
    const regular = after(written({ employeeDeductions: [line] }), [monthly]);
    expect(regular.monthlyDeductionMonths).toEqual({ 'b-dental': 3 });
    const sameMonth = computePayStatement(regularRun({ payDate: '2026-03-27', enrollments: [monthly], yearToDate: regular }));
    expect(deduction(sameMonth, 'Dental')).toBeUndefined();
    const offCycle = after(written({ kind: 'off_cycle_payroll', employeeDeductions: [line] }), [monthly]);
    expect(offCycle.monthlyDeductionMonths).toEqual({});
  });

  it('starts a new year from zero, and refuses amounts that are not non-negative integers', () => {
    const december = yearToDate(2025, { electiveDeferrals: 2_350_000, employeeByBenefit: { 'benefit-401k': 2_350_000 } });
    const totals = after(written({ employeeDeductions: [{ name: '401(k) Plan', amount: 1_000, preTax: true, type: '401k' }] }), [enrollment({})], december, '2026-01-09');
    expect(totals).toMatchObject({ year: 2026, electiveDeferrals: 1_000, employeeByBenefit: { 'benefit-401k': 1_000 } });
    expect(() => after(written({ grossPay: -1 }))).toThrow(RangeError);
    expect(() => after(written({ employerContributions: [{ name: 'X', amount: 1.5, type: null }] }))).toThrow(RangeError);
  });
});

describe('a pay period that is not a whole period of the schedule', () => {
  it('pays a yearly income for the days of the period: $78,000 over 10 days is $2,136.99, with 56.99 standard hours', () => {
    // 7,800,000 × 10 / 365 = 213,698.6 → 213,699 cents; 2,080 × 10 / 365 = 56.986 → 56.99 hours.
    const { statement } = computePayStatement(regularRun({}, { periodDays: 10 }));
    expect(statement.earnings).toEqual([expect.objectContaining({ type: 'salary', amount: 213_699, hours: 56.99 })]);
  });

  it('pays one day as a 365th of the year', () => {
    // 7,800,000 / 365 = 21,369.86 → 21,370 cents.
    const { statement } = computePayStatement(regularRun({}, { periodDays: 1 }));
    expect(statement.earnings).toEqual([expect.objectContaining({ type: 'salary', amount: 21_370 })]);
  });

  it('pays hourly workers their standard hours for the days when none are given', () => {
    // $30.00 an hour × 56.99 hours = $1,709.70.
    const { statement } = computePayStatement(regularRun({}, { incomeUnit: 'hourly', incomeAmount: 3_000, periodDays: 10 }));
    expect(statement.earnings).toEqual([expect.objectContaining({ type: 'wage', hours: 56.99, amount: 170_970 })]);
  });

  it.each([0, 367, 1.5])('refuses %p days', (periodDays) => {
    expect(() => computePayStatement(regularRun({}, { periodDays }))).toThrow(/periodDays must be a whole number of days from 1 to 366/);
  });
});
