/**
 * What a payroll provider can do, in the public shape of `GET /providers` (the one clients of
 * this API family already parse, hence the snake_case field names in the domain). The
 * catalogue (provider-catalogue.data.ts) is the single truth of these capabilities: handlers
 * and the sandbox simulation read them from here instead of branching on provider ids.
 */

export type ProviderId = string;

export const PRODUCTS = ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement', 'benefits'] as const;
export type Product = (typeof PRODUCTS)[number];

/** The spec's Benefit `type` enum (without its null). */
export const BENEFIT_TYPES = [
  '457',
  '401k',
  '401k_roth',
  '401k_loan',
  '403b',
  '403b_roth',
  '457_roth',
  'commuter',
  'custom_post_tax',
  'custom_pre_tax',
  'fsa_dependent_care',
  'fsa_medical',
  'hsa_post',
  'hsa_pre',
  's125_dental',
  's125_medical',
  's125_vision',
  'simple',
  'simple_ira',
] as const;
export type BenefitType = (typeof BENEFIT_TYPES)[number];

/**
 * Types whose enrollments take `catch_up` and `annual_maximum` (the spec's retirement group;
 * `simple` is a SIMPLE 401(k), so it is one too). A 401(k) loan repayment is a plain deduction.
 */
export const RETIREMENT_BENEFIT_TYPES: readonly BenefitType[] = [
  '401k',
  '401k_roth',
  '403b',
  '403b_roth',
  '457',
  '457_roth',
  'simple',
  'simple_ira',
];
/** Types whose enrollments also take `hsa_contribution_limit`. */
export const HSA_BENEFIT_TYPES: readonly BenefitType[] = ['hsa_pre', 'hsa_post'];

export const BENEFIT_FREQUENCIES = ['every_paycheck', 'monthly', 'one_time'] as const;
export type BenefitFrequency = (typeof BENEFIT_FREQUENCIES)[number];

export const AUTHENTICATION_TYPES = ['credential', 'api_token', 'oauth', 'assisted'] as const;
export type AuthenticationType = (typeof AUTHENTICATION_TYPES)[number];

export type CompanyContributionType = 'match' | 'fixed' | 'percent';
export type EmployeeDeductionType = 'fixed' | 'percent';
export type HsaContributionLimit = 'individual' | 'family';

/**
 * Configuration a provider accepts for one benefit type. Arrays list the accepted values (empty:
 * the provider accepts none); null means the feature does not apply to the type (e.g.
 * `catch_up` on a dental plan, `hsa_contribution_limit` outside HSA).
 */
export interface SupportedFeatures {
  description: string | null;
  frequencies: BenefitFrequency[];
  annual_maximum: boolean | null;
  catch_up: boolean | null;
  /** `match`: tiered match at benefit creation; `fixed`/`percent`: per-enrollment contribution. */
  company_contribution: CompanyContributionType[] | null;
  employee_deduction: EmployeeDeductionType[] | null;
  hsa_contribution_limit: HsaContributionLimit[] | null;
}

export type OperationSupport = 'supported' | 'not_supported_by_provider';

/**
 * Field names as in the public shape. For `individual_benefits`: `create` is enroll, `update`
 * re-enrolls with a new configuration (overwrite), `delete` is unenroll.
 */
export interface OperationSupportMatrix {
  create: OperationSupport;
  read: OperationSupport;
  update: OperationSupport;
  delete: OperationSupport;
}

export interface SupportedOperations {
  company_benefits: OperationSupportMatrix;
  individual_benefits: OperationSupportMatrix;
}

export interface BenefitFeaturesAndOperations {
  supported_features: SupportedFeatures;
  supported_operations: SupportedOperations;
}

/** Every benefit type, mapped to its support, or null when the provider does not support it. */
export type BenefitsSupport = Record<BenefitType, BenefitFeaturesAndOperations | null>;

export interface AuthenticationMethod {
  type: AuthenticationType;
  /** Products reachable through this method (a subset of the provider's). */
  products: Product[];
  benefits_support: BenefitsSupport;
}

export interface ProviderDescriptor {
  id: ProviderId;
  display_name: string;
  products: Product[];
  /** true: an Assisted provider (every method is fulfilled by people, on a 2 business day SLA). */
  manual: boolean;
  mfa_required: boolean;
  beta: boolean;
  /** Hex colour, `#rrggbb`. */
  primary_color: string;
  authentication_methods: AuthenticationMethod[];
  /** The provider's support through its first (default) authentication method. */
  benefits_support: BenefitsSupport;
  /**
   * Why a benefit type is null in `benefits_support`, where the provider's own API says why
   * (an addition to the public shape; a type left out has no reason given).
   */
  benefits_not_supported: Partial<Record<BenefitType, string>>;
  /** How long a live call to this provider takes; the sandbox simulation waits within it. */
  live_latency_ms: { min: number; max: number };
}

/** Assisted when the provider is manual or the connection authenticated through `assisted`. */
export function isAssisted(provider: ProviderDescriptor, authenticationType: string): boolean {
  return provider.manual || authenticationType === 'assisted';
}

/**
 * The provider's support for one benefit type, or null when unsupported. With an
 * authentication type, the support through that method (null when the provider lacks it).
 */
export function benefitSupportOf(
  provider: ProviderDescriptor,
  type: BenefitType,
  authenticationType?: string,
): BenefitFeaturesAndOperations | null {
  if (authenticationType === undefined) return provider.benefits_support[type] ?? null;
  const method = provider.authentication_methods.find((m) => m.type === authenticationType);
  return method?.benefits_support[type] ?? null;
}

export function supportsBenefitType(provider: ProviderDescriptor, type: BenefitType, authenticationType?: string): boolean {
  return benefitSupportOf(provider, type, authenticationType) !== null;
}

export const isBenefitType = (value: unknown): value is BenefitType =>
  typeof value === 'string' && (BENEFIT_TYPES as readonly string[]).includes(value);

export const isProduct = (value: unknown): value is Product =>
  typeof value === 'string' && (PRODUCTS as readonly string[]).includes(value);
