import {
  BenefitFeaturesAndOperations,
  BenefitType,
  HSA_BENEFIT_TYPES,
  RETIREMENT_BENEFIT_TYPES,
} from '../providers/provider';
import { EnrollmentConfigurationParams } from './benefit-job-params';

/**
 * The `configuration` of one element of an enrollment request (spec "Enrollment
 * configuration"), checked in two steps: its shape for the benefit's group (400
 * invalid_request, the field named), then what the provider supports (422
 * unprocessable_parameters).
 */

/** The spec's groups of benefit types: which configuration fields apply. */
export type BenefitGroup = 'retirement' | 'hsa' | 'basic';

export function benefitGroupOf(type: BenefitType): BenefitGroup {
  if (HSA_BENEFIT_TYPES.includes(type)) return 'hsa';
  if (RETIREMENT_BENEFIT_TYPES.includes(type)) return 'retirement';
  return 'basic';
}

const FIELDS_OF: Record<BenefitGroup, readonly string[]> = {
  basic: ['employee_deduction', 'company_contribution', 'effective_date'],
  retirement: ['employee_deduction', 'company_contribution', 'catch_up', 'annual_maximum', 'effective_date'],
  hsa: ['employee_deduction', 'company_contribution', 'catch_up', 'annual_maximum', 'annual_contribution_limit', 'effective_date'],
};

/** Basis points of 100 %. */
export const MAX_PERCENT_BP = 10_000;
/** Largest amount in cents taken: far beyond any real deduction, and exact in a double. */
export const MAX_FIXED_CENTS = 100_000_000_00;

export type ConfigurationResult =
  | { ok: true; configuration: EnrollmentConfigurationParams; effectiveDate: unknown }
  | { ok: false; problems: string[] };

/**
 * Normalizes a configuration for a benefit of the given group: every field present (absent →
 * null or false), `annual_contribution_limit` renamed to `hsa_contribution_limit`. The raw
 * `effective_date` is handed back for effective-date.ts. Problems are prefixed with `path`.
 */
export function parseConfiguration(raw: unknown, group: BenefitGroup, path = 'configuration'): ConfigurationResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, problems: [`${path}: must be an object`] };
  const input = raw as Record<string, unknown>;
  const problems: string[] = [];
  const allowed = FIELDS_OF[group];
  for (const key of Object.keys(input)) {
    if (!allowed.includes(key)) {
      const known = FIELDS_OF.hsa.includes(key);
      problems.push(
        known
          ? `${path}.${key}: not accepted for a ${groupName(group)} benefit (accepted: ${allowed.join(', ')})`
          : `${path}.${key}: unknown field`,
      );
    }
  }
  const employeeDeduction = amountOf(input.employee_deduction, `${path}.employee_deduction`, problems);
  const companyContribution = amountOf(input.company_contribution, `${path}.company_contribution`, problems);

  let catchUp = false;
  if (input.catch_up !== undefined && input.catch_up !== null) {
    if (typeof input.catch_up !== 'boolean') problems.push(`${path}.catch_up: must be a boolean`);
    else catchUp = input.catch_up;
  }
  let annualMaximum: number | null = null;
  if (input.annual_maximum !== undefined && input.annual_maximum !== null) {
    if (!isWholeNumber(input.annual_maximum) || input.annual_maximum < 0 || input.annual_maximum > MAX_FIXED_CENTS) {
      problems.push(`${path}.annual_maximum: must be a whole number of cents from 0 to ${MAX_FIXED_CENTS}, or null`);
    } else {
      annualMaximum = input.annual_maximum;
    }
  }
  let hsaLimit: 'individual' | 'family' | null = null;
  if (input.annual_contribution_limit !== undefined && input.annual_contribution_limit !== null) {
    if (input.annual_contribution_limit !== 'individual' && input.annual_contribution_limit !== 'family') {
      problems.push(`${path}.annual_contribution_limit: must be one of individual, family, or null`);
    } else {
      hsaLimit = input.annual_contribution_limit;
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    configuration: {
      employee_deduction: employeeDeduction,
      company_contribution: companyContribution,
      annual_maximum: annualMaximum,
      catch_up: catchUp,
      hsa_contribution_limit: hsaLimit,
    },
    effectiveDate: input.effective_date,
  };
}

type Amount = { type: 'fixed' | 'percent'; amount: number };

/** `{type, amount}`: cents ≥ 0 when fixed, basis points 0–10,000 when percent; null/absent → null. */
function amountOf(value: unknown, path: string, problems: string[]): Amount | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push(`${path}: must be an object with type and amount`);
    return null;
  }
  const { type, amount, ...rest } = value as Record<string, unknown>;
  for (const key of Object.keys(rest)) problems.push(`${path}.${key}: unknown field`);
  if (type !== 'fixed' && type !== 'percent') {
    problems.push(`${path}.type: must be one of fixed, percent`);
    return null;
  }
  if (type === 'percent' && (!isWholeNumber(amount) || amount < 0 || amount > MAX_PERCENT_BP)) {
    problems.push(`${path}.amount: a percent amount must be a whole number of basis points from 0 to ${MAX_PERCENT_BP}`);
    return null;
  }
  if (type === 'fixed' && (!isWholeNumber(amount) || amount < 0 || amount > MAX_FIXED_CENTS)) {
    problems.push(`${path}.amount: a fixed amount must be a whole number of cents from 0 to ${MAX_FIXED_CENTS}`);
    return null;
  }
  return { type, amount: amount as number };
}

const isWholeNumber = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

function groupName(group: BenefitGroup): string {
  return group === 'basic' ? 'Section 125, FSA, commuter, loan or custom' : group === 'hsa' ? 'HSA' : 'retirement';
}

/**
 * What the provider's catalogue entry for the benefit's type does not support in this
 * configuration, one sentence each (empty: all supported). `support` null: the provider does
 * not run the type at all.
 */
export function unsupportedFeatures(
  configuration: EnrollmentConfigurationParams,
  support: BenefitFeaturesAndOperations | null,
  type: BenefitType,
  providerName: string,
): string[] {
  if (support === null) return [`${providerName} does not support ${type} benefits`];
  const features = support.supported_features;
  const problems: string[] = [];
  const { employee_deduction: deduction, company_contribution: contribution } = configuration;
  if (deduction !== null && !(features.employee_deduction ?? []).includes(deduction.type)) {
    problems.push(`${providerName} does not support ${deduction.type} employee deductions for ${type}`);
  }
  if (contribution !== null && !(features.company_contribution ?? []).includes(contribution.type)) {
    problems.push(`${providerName} does not support ${contribution.type} company contributions for ${type}`);
  }
  if (configuration.catch_up && features.catch_up !== true) problems.push(`${providerName} does not support catch_up for ${type}`);
  if (configuration.annual_maximum !== null && features.annual_maximum !== true) {
    problems.push(`${providerName} does not support annual_maximum for ${type}`);
  }
  const limit = configuration.hsa_contribution_limit;
  if (limit !== null && !(features.hsa_contribution_limit ?? []).includes(limit)) {
    problems.push(`${providerName} does not support the ${limit} annual_contribution_limit for ${type}`);
  }
  return problems;
}

/**
 * A normalized configuration back in the enroll body's terms, only the fields the benefit group
 * takes (`hsa_contribution_limit` as `annual_contribution_limit`): what parseConfiguration reads.
 */
export function enrollBodyConfigurationOf(configuration: EnrollmentConfigurationParams, group: BenefitGroup): Record<string, unknown> {
  const all: Record<string, unknown> = {
    employee_deduction: configuration.employee_deduction,
    company_contribution: configuration.company_contribution,
    catch_up: configuration.catch_up,
    annual_maximum: configuration.annual_maximum,
    annual_contribution_limit: configuration.hsa_contribution_limit,
  };
  return Object.fromEntries(FIELDS_OF[group].filter((field) => field !== 'effective_date').map((field) => [field, all[field]]));
}
