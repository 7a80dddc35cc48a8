import { taxTreatmentOf } from './benefit-tax-treatment';
import { basisPointsOf, divideRoundingHalfUp, payForHours } from './cents';
import { companyMatchOf } from './company-match';
import { irsLimitsFor, type IrsLimits } from './irs-limits';
import { computePayrollTaxes, type PayrollTaxes, type TaxableWages } from './payroll-taxes';
import type {
  BenefitType,
  ComputedPayStatement,
  EarningLine,
  EnrollmentInForce,
  PayStatementInput,
  PayStatementResult,
  WrittenPayStatement,
  YearToDate,
} from './payroll.types';

/**
 * One employee's pay statement: earnings, employee deductions (capped by annual maximums and
 * IRS limits), taxes, employer contributions and net pay, all in integer cents, each line
 * rounded once (half up). Pure: the year-to-date totals come in and go out as data.
 */
export function computePayStatement(input: PayStatementInput): PayStatementResult {
  assertValidInput(input);
  const { year, month } = calendarDateOf(input.payDate);
  const limits = irsLimitsFor(year);
  // Catch-up eligibility is by the age reached on Dec 31 of the pay year: everyone born in a
  // year has had that birthday by then, so it is a difference of years.
  const ageAtYearEnd = year - calendarDateOf(input.employee.dob).year;
  const before = yearToDateFor(input.yearToDate, year);
  const supplemental = input.kind !== 'regular_payroll';

  const earnings = earningsOf(input);
  const grossPay = sumOf(earnings.map((line) => line.amount));
  const enrollments = input.enrollments.filter((enrollment) => isDue(enrollment, supplemental, month, before));

  const taxesFor = (deductions: readonly number[]): PayrollTaxes =>
    computePayrollTaxes({
      wages: taxableWagesOf(grossPay, enrollments, deductions),
      supplemental,
      year,
      payPeriodsPerYear: input.employee.payPeriodsPerYear,
      state: input.employee.state,
      limits,
      socialSecurityWagesBefore: before.socialSecurityWages,
      medicareWagesBefore: before.medicareWages,
    });

  const capped = cappedEmployeeDeductions(enrollments, grossPay, supplemental, before, limits, ageAtYearEnd);
  const { deductions, taxes } = keepNetPayNonNegative(grossPay, enrollments, capped, taxesFor);
  const contributions = employerContributions(
    enrollments,
    deductions,
    grossPay,
    supplemental,
    before,
    limits,
    ageAtYearEnd,
  );

  const netPay = grossPay - taxes.employeeTotal - sumOf(deductions);
  const statement: ComputedPayStatement = {
    kind: input.kind,
    totalHours: Math.round(sumOf(earnings.map((line) => line.hours ?? 0)) * 100) / 100,
    grossPay,
    netPay,
    earnings,
    taxes: taxes.lines,
    // A deduction or contribution cut to 0 (limit reached) leaves no line.
    employeeDeductions: enrollments
      .map((enrollment, index) => ({
        name: enrollment.description,
        amount: deductions[index],
        preTax: taxTreatmentOf(enrollment.benefitType).preTaxScope !== 'post_tax',
        type: enrollment.benefitType,
      }))
      .filter((line) => line.amount > 0),
    employerContributions: enrollments
      .map((enrollment, index) => ({
        name: enrollment.description,
        amount: contributions[index],
        type: enrollment.benefitType,
      }))
      .filter((line) => line.amount > 0),
  };
  const yearToDate = yearToDateAfter(before, {
    enrollments,
    deductions,
    contributions,
    supplemental,
    month,
    socialSecurityWages: taxes.socialSecurityWages,
    medicareWages: taxableWagesOf(grossPay, enrollments, deductions).fica,
  });
  return { statement, yearToDate };
}

/**
 * The running totals after a statement given as written rather than computed. It is what was
 * paid: nothing in it is capped or refused, but the statements computed after it count it.
 * Each deduction counts against the IRS limit of its type (employer HSA money too); it also
 * counts against the annual maximum of the enrollment in force it matches (same type, and the
 * same name where one has it) and, on a regular statement, takes that enrollment's monthly or
 * one-time deduction. Social Security and Medicare wages grow by gross pay less the pre-tax
 * deductions FICA exempts (a pre-tax deduction without a type is taken as custom pre-tax).
 */
export function yearToDateAfterWritten(input: {
  payDate: string;
  statement: WrittenPayStatement;
  enrollments: readonly EnrollmentInForce[];
  yearToDate: YearToDate | null;
}): YearToDate {
  const { statement } = input;
  assertValidWritten(statement);
  const { year, month } = calendarDateOf(input.payDate);
  const limits = irsLimitsFor(year);
  const before = yearToDateFor(input.yearToDate, year);
  const after = yearToDateFor(before, year);
  const counted = countedFrom(before);
  const unmatched = [...input.enrollments];
  const matchOf = (type: BenefitType, name: string): EnrollmentInForce | undefined => {
    let index = unmatched.findIndex((e) => e.benefitType === type && e.description === name);
    if (index < 0) index = unmatched.findIndex((e) => e.benefitType === type);
    return index < 0 ? undefined : unmatched.splice(index, 1)[0];
  };

  let ficaExempt = 0;
  for (const line of statement.employeeDeductions) {
    if (line.preTax && (line.type === null || taxTreatmentOf(line.type).preTaxScope === 'all_taxes')) ficaExempt += line.amount;
    if (line.type === null) continue;
    const enrollment = matchOf(line.type, line.name);
    if (!enrollment) {
      countAgainstLimit(counted, line.type, line.amount);
      continue;
    }
    count(counted, enrollment, line.amount);
    if (statement.kind !== 'regular_payroll') continue;
    if (enrollment.frequency === 'monthly') after.monthlyDeductionMonths[enrollment.benefitId] = month;
    if (enrollment.frequency === 'one_time' && !after.oneTimeBenefitsTaken.includes(enrollment.benefitId)) {
      after.oneTimeBenefitsTaken.push(enrollment.benefitId);
    }
  }
  for (const line of statement.employerContributions) {
    if (line.type !== null) countAgainstLimit(counted, line.type, 0, line.amount);
  }

  const ficaWages = Math.max(0, statement.grossPay - ficaExempt);
  const socialSecurityWages = Math.min(ficaWages, Math.max(0, limits.socialSecurityWageBase - before.socialSecurityWages));
  return withCounted(after, counted, before.socialSecurityWages + socialSecurityWages, before.medicareWages + ficaWages);
}

/** Running totals of a calendar year with nothing paid yet. */
export function emptyYearToDate(year: number): YearToDate {
  return {
    year,
    employeeByBenefit: {},
    electiveDeferrals: 0,
    simpleDeferrals: 0,
    section457Deferrals: 0,
    hsaTotal: 0,
    socialSecurityWages: 0,
    medicareWages: 0,
    monthlyDeductionMonths: {},
    oneTimeBenefitsTaken: [],
  };
}

/** Pay frequencies of a pay group (`pay_frequencies`) that have a fixed number of periods. */
export type PayFrequency =
  | 'annually'
  | 'semi_annually'
  | 'quarterly'
  | 'monthly'
  | 'semi_monthly'
  | 'bi_weekly'
  | 'weekly'
  | 'daily';

const PAY_PERIODS_PER_YEAR: Readonly<Record<PayFrequency, number>> = {
  annually: 1,
  semi_annually: 2,
  quarterly: 4,
  monthly: 12,
  semi_monthly: 24,
  bi_weekly: 26,
  weekly: 52,
  daily: 260,
};

export function payPeriodsPerYear(frequency: PayFrequency): number {
  return PAY_PERIODS_PER_YEAR[frequency];
}

/** A full-time year: 52 weeks of 40 hours. Bi-weekly: 80 hours a period. */
const STANDARD_HOURS_PER_YEAR = 2080;

const DAYS_PER_YEAR = 365;

function standardHoursPerPeriod(payPeriodsPerYear: number, periodDays?: number): number {
  if (periodDays !== undefined) return Math.round((STANDARD_HOURS_PER_YEAR * 100 * periodDays) / DAYS_PER_YEAR) / 100;
  return Math.round((STANDARD_HOURS_PER_YEAR * 100) / payPeriodsPerYear) / 100;
}

/**
 * Regular runs earn from the employee: a yearly income is one salary line of annual / periods
 * (annual × days / 365 for a period that is not a whole one of the schedule);
 * an hourly one is a wage line (rate × regular hours, default the standard hours) plus overtime
 * at 1.5 ×. Given `earnings` replace them (off-cycle bonuses, one-time payments).
 */
function earningsOf(input: PayStatementInput): EarningLine[] {
  if (input.earnings) return input.earnings.map((line) => ({ ...line }));
  if (input.kind !== 'regular_payroll') {
    throw new RangeError(
      `a ${input.kind} statement needs its earnings; only regular runs earn from the employee's income`,
    );
  }
  const { employee } = input;
  const standardHours = standardHoursPerPeriod(employee.payPeriodsPerYear, employee.periodDays);
  if (employee.incomeUnit === 'yearly') {
    const salary =
      employee.periodDays === undefined
        ? divideRoundingHalfUp(BigInt(employee.incomeAmount), BigInt(employee.payPeriodsPerYear))
        : divideRoundingHalfUp(BigInt(employee.incomeAmount) * BigInt(employee.periodDays), BigInt(DAYS_PER_YEAR));
    return [{ type: 'salary', name: 'Salary', amount: salary, hours: standardHours }];
  }
  const regularHours = employee.regularHours ?? standardHours;
  const overtimeHours = employee.overtimeHours ?? 0;
  const lines: EarningLine[] = [
    {
      type: 'wage',
      name: 'Regular Wages',
      amount: payForHours(employee.incomeAmount, regularHours),
      hours: regularHours,
    },
  ];
  if (overtimeHours > 0) {
    lines.push({
      type: 'overtime',
      name: 'Overtime',
      amount: payForHours(employee.incomeAmount, overtimeHours, 3, 2),
      hours: overtimeHours,
    });
  }
  return lines;
}

/**
 * Whether an enrollment takes part in this statement. Regular runs: every_paycheck (or no
 * frequency) always, monthly on the first regular statement of each calendar month, one_time
 * once. Off-cycle and one-time runs: only every-paycheck retirement and HSA elections, since
 * a bonus defers like pay does; monthly and one-time deductions belong to regular runs.
 */
export function isDue(enrollment: EnrollmentInForce, supplemental: boolean, month: number, before: YearToDate): boolean {
  const frequency = enrollment.frequency ?? 'every_paycheck';
  if (supplemental) {
    return frequency === 'every_paycheck' && taxTreatmentOf(enrollment.benefitType).appliesToSupplementalPay;
  }
  switch (frequency) {
    case 'every_paycheck':
      return true;
    case 'monthly':
      return before.monthlyDeductionMonths[enrollment.benefitId] !== month;
    case 'one_time':
      return !before.oneTimeBenefitsTaken.includes(enrollment.benefitId);
  }
}

/** Percent elections are basis points of gross; fixed ones are cents, on regular runs only. */
export function requestedEmployeeDeduction(enrollment: EnrollmentInForce, grossPay: number, supplemental: boolean): number {
  const election = enrollment.employeeDeduction;
  if (!election) return 0;
  if (election.type === 'percent') return basisPointsOf(grossPay, election.amount);
  return supplemental ? 0 : election.amount;
}

/** Amounts counted against annual maximums and IRS limits, this statement's included so far. */
export interface CountedContributions {
  byBenefit: Record<string, number>;
  electiveDeferrals: number;
  simpleDeferrals: number;
  section457Deferrals: number;
  hsaTotal: number;
}

export function countedFrom(before: YearToDate): CountedContributions {
  return {
    byBenefit: { ...before.employeeByBenefit },
    electiveDeferrals: before.electiveDeferrals,
    simpleDeferrals: before.simpleDeferrals,
    section457Deferrals: before.section457Deferrals,
    hsaTotal: before.hsaTotal,
  };
}

export function count(counted: CountedContributions, enrollment: EnrollmentInForce, employee: number, employer = 0): void {
  counted.byBenefit[enrollment.benefitId] = (counted.byBenefit[enrollment.benefitId] ?? 0) + employee;
  countAgainstLimit(counted, enrollment.benefitType, employee, employer);
}

export function countAgainstLimit(counted: CountedContributions, type: BenefitType, employee: number, employer = 0): void {
  switch (taxTreatmentOf(type).limit) {
    case 'elective_deferral':
      counted.electiveDeferrals += employee;
      break;
    case 'simple':
      // SIMPLE deferrals are elective deferrals too: they count against 402(g) as well.
      counted.electiveDeferrals += employee;
      counted.simpleDeferrals += employee;
      break;
    case 'section_457':
      counted.section457Deferrals += employee;
      break;
    case 'hsa':
      counted.hsaTotal += employee + employer;
      break;
    case null:
      break;
  }
}

/**
 * Catch-up room of the year: none without the enrollment's `catchUp` or before 50; the SECURE
 * 2.0 amount for ages 60–63 where the year has one (from 2025), else the age-50 amount.
 */
function catchUpOf(enrollment: EnrollmentInForce, age: number, age50: number, ages60To63: number | null): number {
  if (!enrollment.catchUp || age < 50) return 0;
  if (age >= 60 && age <= 63 && ages60To63 !== null) return ages60To63;
  return age50;
}

/** HSA limit of the enrollment's coverage (self-only when not given) plus the catch-up at 55. */
export function hsaLimitOf(enrollment: EnrollmentInForce, limits: IrsLimits, age: number): number {
  const coverage = enrollment.hsaContributionLimit === 'family' ? limits.hsaFamily : limits.hsaSelfOnly;
  return coverage + (enrollment.catchUp && age >= 55 ? limits.hsaCatchUpAge55 : 0);
}

/** What is left of the enrollment's annual maximum and its IRS limit (employee side). */
export function employeeRoomOf(
  enrollment: EnrollmentInForce,
  counted: CountedContributions,
  limits: IrsLimits,
  age: number,
): number {
  const rooms: number[] = [];
  if (enrollment.annualMaximum !== null) {
    rooms.push(enrollment.annualMaximum - (counted.byBenefit[enrollment.benefitId] ?? 0));
  }
  const electiveRoom = (): number =>
    limits.electiveDeferral +
    catchUpOf(enrollment, age, limits.catchUpAge50, limits.catchUpAges60To63) -
    counted.electiveDeferrals;
  switch (taxTreatmentOf(enrollment.benefitType).limit) {
    case 'elective_deferral':
      rooms.push(electiveRoom());
      break;
    case 'simple':
      rooms.push(
        electiveRoom(),
        limits.simpleDeferral +
          catchUpOf(enrollment, age, limits.simpleCatchUpAge50, limits.simpleCatchUpAges60To63) -
          counted.simpleDeferrals,
      );
      break;
    case 'section_457':
      // Governmental 457(b) plans have the same age-based catch-ups as 402(g).
      rooms.push(
        limits.section457Deferral +
          catchUpOf(enrollment, age, limits.catchUpAge50, limits.catchUpAges60To63) -
          counted.section457Deferrals,
      );
      break;
    case 'hsa':
      rooms.push(hsaLimitOf(enrollment, limits, age) - counted.hsaTotal);
      break;
    case null:
      break;
  }
  return Math.max(0, Math.min(Number.MAX_SAFE_INTEGER, ...rooms));
}

/**
 * Employee deductions in enrollment order, each cut to what is left of its annual maximum,
 * then of its IRS limit (possibly 0). Enrollments sharing a limit use it up in order.
 */
function cappedEmployeeDeductions(
  enrollments: readonly EnrollmentInForce[],
  grossPay: number,
  supplemental: boolean,
  before: YearToDate,
  limits: IrsLimits,
  age: number,
): number[] {
  const counted = countedFrom(before);
  return enrollments.map((enrollment) => {
    const requested = requestedEmployeeDeduction(enrollment, grossPay, supplemental);
    const amount = Math.min(requested, employeeRoomOf(enrollment, counted, limits, age));
    count(counted, enrollment, amount);
    return amount;
  });
}

/**
 * Traditional retirement deferrals reduce income-tax wages only; Section 125, pre-tax HSA,
 * FSA, commuter and custom pre-tax deductions reduce FICA wages too.
 */
function taxableWagesOf(
  grossPay: number,
  enrollments: readonly EnrollmentInForce[],
  deductions: readonly number[],
): TaxableWages {
  let incomeTaxExempt = 0;
  let ficaExempt = 0;
  enrollments.forEach((enrollment, index) => {
    const scope = taxTreatmentOf(enrollment.benefitType).preTaxScope;
    if (scope !== 'post_tax') incomeTaxExempt += deductions[index];
    if (scope === 'all_taxes') ficaExempt += deductions[index];
  });
  // Deductions above gross leave no taxable wages (net pay is then cut back to 0 below).
  const incomeTaxWages = Math.max(0, grossPay - incomeTaxExempt);
  return { federal: incomeTaxWages, state: incomeTaxWages, fica: Math.max(0, grossPay - ficaExempt) };
}

/**
 * Net pay never goes below 0. When deductions would take it there, post-tax deductions are
 * cut first, the last enrollment first: they do not change taxes, so the cut is exact. If
 * that is not enough, pre-tax deductions are cut the same way; every cent given back is taxed
 * again, so the cut is found by bisection over whole cents (with no deductions at all net
 * pay is positive: taxes never take all of gross).
 */
function keepNetPayNonNegative(
  grossPay: number,
  enrollments: readonly EnrollmentInForce[],
  capped: readonly number[],
  taxesFor: (deductions: readonly number[]) => PayrollTaxes,
): { deductions: number[]; taxes: PayrollTaxes } {
  const netOf = (deductions: readonly number[], taxes: PayrollTaxes): number =>
    grossPay - taxes.employeeTotal - sumOf(deductions);
  const isPostTax = (index: number): boolean =>
    taxTreatmentOf(enrollments[index].benefitType).preTaxScope === 'post_tax';

  let deductions = [...capped];
  let taxes = taxesFor(deductions);
  if (netOf(deductions, taxes) >= 0) return { deductions, taxes };

  deductions = cutFromLast(deductions, isPostTax, -netOf(deductions, taxes));
  if (netOf(deductions, taxes) >= 0) return { deductions, taxes };

  const withPreTaxCut = (cut: number): number[] => cutFromLast(deductions, (index) => !isPostTax(index), cut);
  let tooSmall = 0; // net pay is still negative with this cut
  let enough = sumOf(deductions); // only pre-tax deductions are left: cutting them all
  if (netOf(withPreTaxCut(enough), taxesFor(withPreTaxCut(enough))) < 0) {
    throw new Error('net pay is negative even without deductions');
  }
  while (enough - tooSmall > 1) {
    const cut = Math.floor((tooSmall + enough) / 2);
    const trial = withPreTaxCut(cut);
    if (netOf(trial, taxesFor(trial)) >= 0) enough = cut;
    else tooSmall = cut;
  }
  deductions = withPreTaxCut(enough);
  taxes = taxesFor(deductions);
  return { deductions, taxes };
}

/** Takes `amount` off the selected deductions, starting from the last one. */
function cutFromLast(deductions: readonly number[], selected: (index: number) => boolean, amount: number): number[] {
  const result = [...deductions];
  let left = amount;
  for (let index = result.length - 1; index >= 0 && left > 0; index--) {
    if (!selected(index)) continue;
    const cut = Math.min(result[index], left);
    result[index] -= cut;
    left -= cut;
  }
  return result;
}

/**
 * Employer contributions: the enrollment's own `companyContribution` (fixed cents on regular
 * runs; percent = bp of gross), else the benefit's match tiers on the deferral actually taken
 * (after caps). Employer HSA money counts in the HSA limit together with the employee's: the
 * employee's election is taken first and the employer's share is cut to what is left.
 */
function employerContributions(
  enrollments: readonly EnrollmentInForce[],
  deductions: readonly number[],
  grossPay: number,
  supplemental: boolean,
  before: YearToDate,
  limits: IrsLimits,
  age: number,
): number[] {
  const counted = countedFrom(before);
  enrollments.forEach((enrollment, index) => count(counted, enrollment, deductions[index]));
  return enrollments.map((enrollment, index) => {
    let amount = requestedEmployerContribution(enrollment, deductions[index], grossPay, supplemental);
    if (taxTreatmentOf(enrollment.benefitType).limit === 'hsa') {
      amount = Math.min(amount, Math.max(0, hsaLimitOf(enrollment, limits, age) - counted.hsaTotal));
      counted.hsaTotal += amount;
    }
    return amount;
  });
}

export function requestedEmployerContribution(
  enrollment: EnrollmentInForce,
  deferral: number,
  grossPay: number,
  supplemental: boolean,
): number {
  const contribution = enrollment.companyContribution;
  if (contribution) {
    if (contribution.type === 'percent') return basisPointsOf(grossPay, contribution.amount);
    return supplemental ? 0 : contribution.amount;
  }
  if (enrollment.companyMatchTiers && enrollment.companyMatchTiers.length > 0) {
    return companyMatchOf(deferral, grossPay, enrollment.companyMatchTiers);
  }
  return 0;
}

/** The totals to carry in: the same year's as given, otherwise a fresh year. */
export function yearToDateFor(carried: YearToDate | null, year: number): YearToDate {
  if (carried && carried.year === year) {
    return {
      ...carried,
      employeeByBenefit: { ...carried.employeeByBenefit },
      monthlyDeductionMonths: { ...carried.monthlyDeductionMonths },
      oneTimeBenefitsTaken: [...carried.oneTimeBenefitsTaken],
    };
  }
  // A new year starts every total from zero; which one-time deductions were taken stays.
  return { ...emptyYearToDate(year), oneTimeBenefitsTaken: [...(carried?.oneTimeBenefitsTaken ?? [])] };
}

function yearToDateAfter(
  before: YearToDate,
  paid: {
    enrollments: readonly EnrollmentInForce[];
    deductions: readonly number[];
    contributions: readonly number[];
    supplemental: boolean;
    month: number;
    socialSecurityWages: number;
    medicareWages: number;
  },
): YearToDate {
  const counted = countedFrom(before);
  const after = yearToDateFor(before, before.year);
  paid.enrollments.forEach((enrollment, index) => {
    count(counted, enrollment, paid.deductions[index], paid.contributions[index]);
    // A monthly or one-time deduction that was due is spent for its month (or for good), even
    // when a limit cut it to 0.
    if (paid.supplemental) return;
    if (enrollment.frequency === 'monthly') after.monthlyDeductionMonths[enrollment.benefitId] = paid.month;
    if (enrollment.frequency === 'one_time' && !after.oneTimeBenefitsTaken.includes(enrollment.benefitId)) {
      after.oneTimeBenefitsTaken.push(enrollment.benefitId);
    }
  });
  return withCounted(after, counted, before.socialSecurityWages + paid.socialSecurityWages, before.medicareWages + paid.medicareWages);
}

/** The year to date after a statement: what was counted against the limits, and the FICA wages. */
function withCounted(after: YearToDate, counted: CountedContributions, socialSecurityWages: number, medicareWages: number): YearToDate {
  return {
    ...after,
    employeeByBenefit: Object.fromEntries(Object.entries(counted.byBenefit).filter(([, amount]) => amount > 0)),
    electiveDeferrals: counted.electiveDeferrals,
    simpleDeferrals: counted.simpleDeferrals,
    section457Deferrals: counted.section457Deferrals,
    hsaTotal: counted.hsaTotal,
    socialSecurityWages,
    medicareWages,
  };
}

function sumOf(amounts: readonly number[]): number {
  return amounts.reduce((total, amount) => total + amount, 0);
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function calendarDateOf(date: string): { year: number; month: number } {
  const match = ISO_DATE.exec(date);
  if (!match) throw new RangeError(`expected a YYYY-MM-DD date, got "${date}"`);
  return { year: Number(match[1]), month: Number(match[2]) };
}

function assertValidWritten(statement: WrittenPayStatement): void {
  const lines = [...statement.employeeDeductions, ...statement.employerContributions];
  for (const amount of [statement.grossPay, ...lines.map((line) => line.amount)]) {
    if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`amounts must be non-negative integers, got ${amount}`);
  }
}

/**
 * The calculator is fed by the sandbox, not by HTTP; a malformed input is a programming error
 * and fails loudly here rather than as NaN cents on a statement.
 */
function assertValidInput(input: PayStatementInput): void {
  const cents = (value: number, what: string): void => {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`${what} must be a non-negative integer, got ${value}`);
    }
  };
  calendarDateOf(input.payDate);
  calendarDateOf(input.employee.dob);
  cents(input.employee.incomeAmount, 'employee.incomeAmount');
  if (!Number.isSafeInteger(input.employee.payPeriodsPerYear) || input.employee.payPeriodsPerYear < 1) {
    throw new RangeError(
      `employee.payPeriodsPerYear must be a positive integer, got ${input.employee.payPeriodsPerYear}`,
    );
  }
  const days = input.employee.periodDays;
  if (days !== undefined && !(Number.isSafeInteger(days) && days >= 1 && days <= DAYS_PER_YEAR + 1)) {
    throw new RangeError(`employee.periodDays must be a whole number of days from 1 to 366, got ${days}`);
  }
  for (const hours of [input.employee.regularHours, input.employee.overtimeHours]) {
    if (hours !== undefined && !(Number.isFinite(hours) && hours >= 0)) {
      throw new RangeError(`hours must be a non-negative number, got ${hours}`);
    }
  }
  input.earnings?.forEach((line, index) => cents(line.amount, `earnings[${index}].amount`));
  input.enrollments.forEach((enrollment, index) => {
    if (enrollment.employeeDeduction) {
      cents(enrollment.employeeDeduction.amount, `enrollments[${index}].employeeDeduction.amount`);
    }
    if (enrollment.companyContribution) {
      cents(enrollment.companyContribution.amount, `enrollments[${index}].companyContribution.amount`);
    }
    if (enrollment.annualMaximum !== null) cents(enrollment.annualMaximum, `enrollments[${index}].annualMaximum`);
    enrollment.companyMatchTiers?.forEach((tier, tierIndex) => {
      cents(tier.match, `enrollments[${index}].companyMatchTiers[${tierIndex}].match`);
      cents(tier.threshold, `enrollments[${index}].companyMatchTiers[${tierIndex}].threshold`);
    });
  });
}
