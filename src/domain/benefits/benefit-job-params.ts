import { CompanyMatch } from './benefit';

/**
 * What each benefit job asks of the provider: the `params` of its row in `jobs`, and the payload
 * of the ops task an Assisted provider's job opens (the task applies the same change by hand).
 * Configurations are normalized (ProviderEnrollmentConfiguration): amounts in cents or basis
 * points, every field present.
 */
export const BENEFIT_JOB_TYPES = ['benefit_create', 'benefit_register', 'benefit_update', 'benefit_enroll', 'benefit_unenroll'] as const;
export type BenefitJobType = (typeof BENEFIT_JOB_TYPES)[number];

export interface EnrollmentConfigurationParams {
  employee_deduction: { type: 'fixed' | 'percent'; amount: number } | null;
  company_contribution: { type: 'fixed' | 'percent'; amount: number } | null;
  annual_maximum: number | null;
  catch_up: boolean;
  hsa_contribution_limit: 'individual' | 'family' | null;
}

export interface BenefitCreateParams {
  benefit_id: string;
  type: string;
  description: string;
  frequency: 'every_paycheck' | 'monthly' | 'one_time' | null;
  company_contribution: CompanyMatch | null;
}

export interface BenefitUpdateParams {
  benefit_id: string;
  description: string;
}

export interface EnrollmentGroupParams {
  /** `YYYY-MM-DD`. */
  effective_date: string;
  items: { individual_id: string; configuration: EnrollmentConfigurationParams }[];
}

export interface BenefitEnrollParams {
  benefit_id: string;
  groups: EnrollmentGroupParams[];
}

export interface BenefitUnenrollParams {
  benefit_id: string;
  /** `YYYY-MM-DD`: the enrollments end from this date on. */
  effective_date: string;
  individual_ids: string[];
}

export type BenefitJobParams =
  | { type: 'benefit_create' | 'benefit_register'; params: BenefitCreateParams }
  | { type: 'benefit_update'; params: BenefitUpdateParams }
  | { type: 'benefit_enroll'; params: BenefitEnrollParams }
  | { type: 'benefit_unenroll'; params: BenefitUnenrollParams };
