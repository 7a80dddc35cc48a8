import { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import { BenefitGroup, MAX_FIXED_CENTS, MAX_PERCENT_BP, parseConfiguration } from '../benefits/enrollment-configuration';

/**
 * Auto-enrollment of new hires: per entity and benefit, what an `EmployeeHired` individual is
 * enrolled with, after how many days, and whether the employee deduction rises every year.
 */

/** An enroll body's configuration, normalized, without `effective_date` (the hire date decides it). */
export type PolicyConfiguration = EnrollmentConfigurationParams;

/**
 * Yearly auto-escalation of the employee deduction: `increase` each anniversary up to `cap`, in
 * the deduction's unit (basis points for percent, cents for fixed).
 */
export interface PolicyEscalation {
  increase: number;
  cap: number;
}

export interface AutoEnrollmentPolicy {
  id: string;
  connectionId: string;
  entityId: string;
  benefitId: string;
  configuration: PolicyConfiguration;
  waitingPeriodDays: number;
  escalation: PolicyEscalation | null;
  active: boolean;
}

/** One enrollment of a new hire's schedule: the configuration in force from `effectiveDate` on. */
export interface ScheduledEnrollment {
  /** `YYYY-MM-DD`. */
  effectiveDate: string;
  configuration: PolicyConfiguration;
}

/** The longest waiting period accepted (ten years; the table checks the same bound). */
export const MAX_WAITING_PERIOD_DAYS = 3_650;
/** Escalation steps scheduled at most: fifty years outlast any employment, and bound the work. */
export const MAX_ESCALATION_STEPS = 50;

/**
 * A new hire's enrollments under the policy: the first from `startDate` + the waiting period (or
 * `today` when that is already past, as an enroll request would do); then, with escalation, one
 * per anniversary of that first date, the employee deduction raised by `increase` until it
 * reaches `cap` (the last step lands exactly on the cap). Dates are `YYYY-MM-DD`.
 */
export function newHireSchedule(
  policy: Pick<AutoEnrollmentPolicy, 'configuration' | 'waitingPeriodDays' | 'escalation'>,
  startDate: string,
  today: string,
): ScheduledEnrollment[] {
  const { configuration, waitingPeriodDays, escalation } = policy;
  if (!Number.isSafeInteger(waitingPeriodDays) || waitingPeriodDays < 0) {
    throw new RangeError(`waiting period must be a whole number of days ≥ 0, got ${waitingPeriodDays}`);
  }
  const eligible = addDays(startDate, waitingPeriodDays);
  parseDate(today);
  // Dates in this format compare as strings.
  const first = eligible < today ? today : eligible;
  const schedule: ScheduledEnrollment[] = [{ effectiveDate: first, configuration: copyOf(configuration) }];

  const deduction = configuration.employee_deduction;
  if (escalation === null || deduction === null || !(escalation.increase > 0)) return schedule;
  let amount = deduction.amount;
  for (let year = 1; year <= MAX_ESCALATION_STEPS && amount < escalation.cap; year++) {
    amount = Math.min(amount + escalation.increase, escalation.cap);
    schedule.push({
      effectiveDate: anniversary(first, year),
      configuration: { ...copyOf(configuration), employee_deduction: { type: deduction.type, amount } },
    });
  }
  return schedule;
}

export type PolicyConfigurationResult = { ok: true; configuration: PolicyConfiguration } | { ok: false; problems: string[] };

/**
 * A policy's configuration: the enroll body's rules for the benefit's group (enrollment-
 * configuration.ts), except `effective_date`, which the start date and waiting period decide.
 */
export function parsePolicyConfiguration(raw: unknown, group: BenefitGroup, path = 'configuration'): PolicyConfigurationResult {
  const problems: string[] = [];
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && 'effective_date' in raw) {
    problems.push(`${path}.effective_date: not accepted in a policy (a new hire's enrollment starts on the start date plus waiting_period_days)`);
  }
  const parsed = parseConfiguration(raw, group, path);
  if (!parsed.ok) problems.push(...parsed.problems);
  if (problems.length > 0 || !parsed.ok) return { ok: false, problems };
  return { ok: true, configuration: parsed.configuration };
}

/**
 * What is wrong with an escalation for this configuration, one message per problem; empty when
 * valid. It raises the employee deduction, so it needs one; `increase` and `cap` are in that
 * deduction's unit and within its limits, and the cap is above the starting amount (a cap at or
 * below it would never raise anything).
 */
export function escalationProblems(escalation: PolicyEscalation, configuration: PolicyConfiguration, path = 'escalation'): string[] {
  const deduction = configuration.employee_deduction;
  if (deduction === null) {
    return [`${path}: escalation raises the employee deduction, and the configuration has no employee_deduction`];
  }
  const max = deduction.type === 'percent' ? MAX_PERCENT_BP : MAX_FIXED_CENTS;
  const unit = deduction.type === 'percent' ? 'basis points' : 'cents';
  const problems: string[] = [];
  const { increase, cap } = escalation;
  if (!isWholeNumber(increase) || increase < 1 || increase > max) {
    problems.push(`${path}.increase: must be a whole number of ${unit} from 1 to ${max} (the employee deduction is ${deduction.type})`);
  }
  if (!isWholeNumber(cap) || cap > max) {
    problems.push(`${path}.cap: must be a whole number of ${unit} up to ${max} (the employee deduction is ${deduction.type})`);
  } else if (cap <= deduction.amount) {
    problems.push(`${path}.cap: must be above the employee deduction's amount (${deduction.amount} ${unit}), or there is nothing to escalate`);
  }
  return problems;
}

const isWholeNumber = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 24 * 60 * 60 * 1000;

function parseDate(date: string): number {
  const match = DATE.exec(date);
  if (!match) throw new RangeError(`expected a YYYY-MM-DD date, got ${JSON.stringify(date)}`);
  const time = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  if (formatDate(time) !== date) throw new RangeError(`${date} is not a calendar date`);
  return time;
}

function formatDate(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

function addDays(date: string, days: number): string {
  return formatDate(parseDate(date) + days * DAY_MS);
}

/** The same day `years` later; February 29th falls on February 28th in a common year. */
function anniversary(date: string, years: number): string {
  const [year, month, day] = date.split('-').map(Number);
  const target = year + years;
  const leap = (target % 4 === 0 && target % 100 !== 0) || target % 400 === 0;
  const targetDay = month === 2 && day === 29 && !leap ? 28 : day;
  return formatDate(Date.UTC(target, month - 1, targetDay));
}

function copyOf(configuration: PolicyConfiguration): PolicyConfiguration {
  return {
    employee_deduction: configuration.employee_deduction && { ...configuration.employee_deduction },
    company_contribution: configuration.company_contribution && { ...configuration.company_contribution },
    annual_maximum: configuration.annual_maximum,
    catch_up: configuration.catch_up,
    hsa_contribution_limit: configuration.hsa_contribution_limit,
  };
}
