import {
  AuthenticationType,
  BENEFIT_FREQUENCIES,
  BENEFIT_TYPES,
  BenefitFeaturesAndOperations,
  BenefitFrequency,
  BenefitsSupport,
  BenefitType,
  CompanyContributionType,
  EmployeeDeductionType,
  HSA_BENEFIT_TYPES,
  HsaContributionLimit,
  OperationSupportMatrix,
  PRODUCTS,
  Product,
  ProviderDescriptor,
  RETIREMENT_BENEFIT_TYPES,
} from './provider';

/**
 * The provider catalogue: every provider `GET /providers` lists, what each supports, and so
 * what the sandbox simulation of each accepts. Capabilities are modelled on what these payroll
 * systems publish (types offered, flat vs percentage deductions, match, catch-up, HSA limits),
 * simplified; change a provider's behaviour here, never with an `if` on its id.
 *
 * Each benefit line below is a plan applied to a group of types; types not listed are
 * unsupported (null). Features that do not apply to a type are filled in as null by `line()`.
 */

interface Plan {
  employee_deduction: EmployeeDeductionType[];
  company_contribution: CompanyContributionType[];
  /** Retirement and HSA types only. */
  catch_up?: boolean;
  /** Retirement and HSA types only. */
  annual_maximum?: boolean;
  /** HSA types only. */
  hsa_contribution_limit?: HsaContributionLimit[];
  frequencies?: BenefitFrequency[];
  company_benefits?: Partial<OperationSupportMatrix>;
  individual_benefits?: Partial<OperationSupportMatrix>;
}

interface ProviderEntry {
  id: string;
  display_name: string;
  products: Product[];
  manual?: boolean;
  mfa_required?: boolean;
  beta?: boolean;
  primary_color: string;
  /** The first is the default method of a new connection. */
  methods: AuthenticationType[];
  latency_ms: [min: number, max: number];
  benefits: Partial<BenefitsSupport>;
  /** Why types left out of `benefits` are, where known. */
  not_supported?: Partial<Record<BenefitType, string>>;
}

const ALL: OperationSupportMatrix = { create: 'supported', read: 'supported', update: 'supported', delete: 'supported' };
const NOT_SUPPORTED = 'not_supported_by_provider';
const ALL_PRODUCTS: Product[] = [...PRODUCTS];
const HR_ONLY: Product[] = ['company', 'directory', 'individual', 'employment'];

function line(types: BenefitType[], plan: Plan): Partial<BenefitsSupport> {
  const support: Partial<BenefitsSupport> = {};
  for (const type of types) {
    const hsa = HSA_BENEFIT_TYPES.includes(type);
    const limited = hsa || RETIREMENT_BENEFIT_TYPES.includes(type);
    const entry: BenefitFeaturesAndOperations = {
      supported_features: {
        description: null,
        frequencies: [...(plan.frequencies ?? BENEFIT_FREQUENCIES)],
        annual_maximum: limited ? (plan.annual_maximum ?? false) : null,
        catch_up: limited ? (plan.catch_up ?? false) : null,
        company_contribution: [...plan.company_contribution],
        employee_deduction: [...plan.employee_deduction],
        hsa_contribution_limit: hsa ? [...(plan.hsa_contribution_limit ?? [])] : null,
      },
      supported_operations: {
        company_benefits: { ...ALL, ...plan.company_benefits },
        individual_benefits: { ...ALL, ...plan.individual_benefits },
      },
    };
    support[type] = entry;
  }
  return support;
}

function descriptor(entry: ProviderEntry): ProviderDescriptor {
  const benefits = Object.fromEntries(BENEFIT_TYPES.map((type) => [type, null])) as BenefitsSupport;
  Object.assign(benefits, entry.benefits);
  return {
    id: entry.id,
    display_name: entry.display_name,
    products: [...entry.products],
    manual: entry.manual ?? false,
    mfa_required: entry.mfa_required ?? false,
    beta: entry.beta ?? false,
    primary_color: entry.primary_color,
    authentication_methods: entry.methods.map((type) => ({
      type,
      products: [...entry.products],
      benefits_support: structuredClone(benefits),
    })),
    benefits_support: benefits,
    benefits_not_supported: { ...entry.not_supported },
    live_latency_ms: { min: entry.latency_ms[0], max: entry.latency_ms[1] },
  };
}

// Plans shared by several providers.
const RETIREMENT_FULL: Plan = {
  employee_deduction: ['fixed', 'percent'],
  company_contribution: ['match', 'fixed', 'percent'],
  catch_up: true,
  annual_maximum: true,
};
const HSA_FULL: Plan = {
  employee_deduction: ['fixed', 'percent'],
  company_contribution: ['fixed', 'percent'],
  catch_up: true,
  annual_maximum: true,
  hsa_contribution_limit: ['individual', 'family'],
};
const HEALTH: Plan = { employee_deduction: ['fixed', 'percent'], company_contribution: ['fixed', 'percent'] };
const FLAT_HEALTH: Plan = { employee_deduction: ['fixed'], company_contribution: ['fixed'] };
const LOAN: Plan = { employee_deduction: ['fixed'], company_contribution: [] };

const S125: BenefitType[] = ['s125_medical', 's125_dental', 's125_vision'];
const FSA: BenefitType[] = ['fsa_medical', 'fsa_dependent_care'];
const HSA: BenefitType[] = ['hsa_pre', 'hsa_post'];
const CUSTOM: BenefitType[] = ['custom_pre_tax', 'custom_post_tax'];

const ENTRIES: ProviderEntry[] = [
  {
    id: 'adp_workforce_now',
    display_name: 'ADP Workforce Now',
    products: ALL_PRODUCTS,
    mfa_required: true,
    primary_color: '#d0271d',
    methods: ['credential', 'assisted'],
    latency_ms: [3_000, 90_000],
    benefits: {
      ...line(['401k', '401k_roth', '403b', '403b_roth', '457', '457_roth'], RETIREMENT_FULL),
      ...line(['401k_loan'], LOAN),
      ...line(HSA, HSA_FULL),
      ...line([...S125, ...FSA], FLAT_HEALTH),
      ...line(['commuter', ...CUSTOM], HEALTH),
    },
  },
  {
    // An HR system without payroll: no payments, pay statements or deductions.
    id: 'bamboo_hr',
    display_name: 'BambooHR',
    products: HR_ONLY,
    primary_color: '#73c41d',
    methods: ['api_token'],
    latency_ms: [1_000, 15_000],
    benefits: {},
  },
  {
    id: 'gusto',
    display_name: 'Gusto',
    products: ALL_PRODUCTS,
    primary_color: '#f45d48',
    methods: ['oauth'],
    latency_ms: [1_000, 20_000],
    // What the Gusto adapter really drives (docs/providers/gusto.md, "Benefit types"): Gusto's
    // benefit types, deducted every paycheck; the simulation holds sandbox connections to the same.
    benefits: {
      ...line(['401k', '401k_roth', '403b', '403b_roth', 'simple_ira'], { ...RETIREMENT_FULL, frequencies: ['every_paycheck'] }),
      ...line(['hsa_pre'], { ...HSA_FULL, frequencies: ['every_paycheck'] }),
      ...line([...S125, ...FSA, 'commuter', 'custom_post_tax'], { ...HEALTH, frequencies: ['every_paycheck'] }),
    },
    not_supported: {
      '457': 'Gusto has no 457 plan benefit type',
      '457_roth': 'Gusto has no 457 plan benefit type',
      '401k_loan': 'Gusto has no loan repayment benefit type',
      simple: 'Gusto offers the SIMPLE IRA only',
      hsa_post: 'Gusto’s Health Savings Account is pre-tax only',
      custom_pre_tax: 'Gusto has no generic pre-tax benefit type',
    },
  },
  {
    // Flat-amount deductions only, paid every paycheck.
    id: 'justworks',
    display_name: 'Justworks',
    products: ALL_PRODUCTS,
    mfa_required: true,
    primary_color: '#0f6fff',
    methods: ['credential'],
    latency_ms: [2_000, 45_000],
    benefits: {
      ...line(['401k', '401k_roth'], {
        employee_deduction: ['fixed'],
        company_contribution: ['fixed'],
        catch_up: true,
        annual_maximum: false,
        frequencies: ['every_paycheck'],
      }),
      ...line(['hsa_pre'], {
        employee_deduction: ['fixed'],
        company_contribution: ['fixed'],
        catch_up: true,
        annual_maximum: false,
        hsa_contribution_limit: ['individual', 'family'],
        frequencies: ['every_paycheck'],
      }),
      ...line([...FSA, 'commuter', ...CUSTOM], { ...FLAT_HEALTH, frequencies: ['every_paycheck'] }),
    },
  },
  {
    // No HSA; deductions through the API token, or by the assisted team.
    id: 'namely',
    display_name: 'Namely',
    products: ALL_PRODUCTS,
    beta: true,
    primary_color: '#ff5a4f',
    methods: ['api_token', 'assisted'],
    latency_ms: [2_000, 30_000],
    benefits: {
      ...line(['401k', '401k_roth', '403b'], { ...RETIREMENT_FULL, company_contribution: ['match', 'percent'] }),
      ...line([...S125, 'fsa_medical', ...CUSTOM], HEALTH),
    },
  },
  {
    // HSA limits for individuals only; enrollments cannot be removed, only set to zero.
    id: 'paychex_flex',
    display_name: 'Paychex Flex',
    products: ALL_PRODUCTS,
    mfa_required: true,
    primary_color: '#004b8d',
    methods: ['credential', 'assisted'],
    latency_ms: [5_000, 120_000],
    benefits: {
      ...line(['401k', '401k_roth', 'simple', 'simple_ira'], {
        ...RETIREMENT_FULL,
        individual_benefits: { delete: NOT_SUPPORTED },
      }),
      ...line(['401k_loan'], { ...LOAN, individual_benefits: { delete: NOT_SUPPORTED } }),
      ...line(['hsa_pre'], {
        ...HSA_FULL,
        hsa_contribution_limit: ['individual'],
        individual_benefits: { delete: NOT_SUPPORTED },
      }),
      ...line([...S125, 'fsa_medical', ...CUSTOM], { ...HEALTH, individual_benefits: { delete: NOT_SUPPORTED } }),
    },
  },
  {
    id: 'paycom',
    display_name: 'Paycom',
    products: ALL_PRODUCTS,
    mfa_required: true,
    primary_color: '#1f9a48',
    methods: ['credential'],
    latency_ms: [3_000, 60_000],
    benefits: {
      ...line(['401k', '401k_roth', '403b', '403b_roth', '457'], RETIREMENT_FULL),
      ...line(['401k_loan'], LOAN),
      ...line(HSA, HSA_FULL),
      ...line([...S125, ...FSA, ...CUSTOM], HEALTH),
    },
  },
  {
    // No catch-up contributions; company deductions cannot be deleted.
    id: 'paylocity',
    display_name: 'Paylocity',
    products: ALL_PRODUCTS,
    primary_color: '#f26c21',
    methods: ['api_token', 'credential'],
    latency_ms: [2_000, 60_000],
    benefits: {
      ...line(['401k', '401k_roth', '403b', '457'], {
        ...RETIREMENT_FULL,
        catch_up: false,
        company_benefits: { delete: NOT_SUPPORTED },
      }),
      ...line(HSA, { ...HSA_FULL, catch_up: false, company_benefits: { delete: NOT_SUPPORTED } }),
      ...line([...S125, ...FSA, ...CUSTOM], { ...HEALTH, company_benefits: { delete: NOT_SUPPORTED } }),
    },
  },
  {
    // No company match: contributions are a flat amount or a percentage per enrollment.
    id: 'quickbooks_payroll',
    display_name: 'QuickBooks Payroll',
    products: ALL_PRODUCTS,
    primary_color: '#2ca01c',
    methods: ['oauth'],
    latency_ms: [1_000, 30_000],
    benefits: {
      ...line(['401k', '401k_roth', 'simple_ira'], { ...RETIREMENT_FULL, company_contribution: ['fixed', 'percent'] }),
      ...line(['hsa_pre'], HSA_FULL),
      ...line([...S125, ...CUSTOM], HEALTH),
    },
  },
  {
    id: 'rippling',
    display_name: 'Rippling',
    products: ALL_PRODUCTS,
    primary_color: '#502d3c',
    methods: ['oauth'],
    latency_ms: [1_000, 20_000],
    benefits: {
      ...line(['401k', '401k_roth', '403b', '403b_roth', '457', '457_roth', 'simple_ira'], {
        ...RETIREMENT_FULL,
        company_benefits: { delete: NOT_SUPPORTED },
      }),
      ...line(['401k_loan'], { ...LOAN, company_benefits: { delete: NOT_SUPPORTED } }),
      ...line(HSA, { ...HSA_FULL, company_benefits: { delete: NOT_SUPPORTED } }),
      ...line([...S125, ...FSA, 'commuter', ...CUSTOM], { ...HEALTH, company_benefits: { delete: NOT_SUPPORTED } }),
    },
  },
  {
    // Small-business ADP: no match, no annual maximum.
    id: 'adp_run',
    display_name: 'RUN Powered by ADP',
    products: ALL_PRODUCTS,
    mfa_required: true,
    primary_color: '#d0271d',
    methods: ['credential'],
    latency_ms: [3_000, 60_000],
    benefits: {
      ...line(['401k', '401k_roth', 'simple_ira'], {
        employee_deduction: ['fixed', 'percent'],
        company_contribution: ['fixed', 'percent'],
        catch_up: true,
        annual_maximum: false,
      }),
      ...line(['hsa_pre'], { ...HSA_FULL, annual_maximum: false }),
      ...line([...S125, ...CUSTOM], FLAT_HEALTH),
    },
  },
  {
    // A PEO: health plans and HSAs are run by the PEO itself, so only payroll deductions here.
    id: 'trinet',
    display_name: 'TriNet',
    products: ALL_PRODUCTS,
    manual: true,
    primary_color: '#00857c',
    methods: ['assisted'],
    latency_ms: [5_000, 120_000],
    benefits: {
      ...line(['401k', '401k_roth'], {
        ...RETIREMENT_FULL,
        company_contribution: ['match', 'fixed'],
        frequencies: ['every_paycheck', 'one_time'],
      }),
      ...line(['401k_loan'], { ...LOAN, frequencies: ['every_paycheck'] }),
      ...line(['commuter', ...CUSTOM], { ...FLAT_HEALTH, frequencies: ['every_paycheck', 'one_time'] }),
    },
  },
  {
    id: 'workday',
    display_name: 'Workday',
    products: ALL_PRODUCTS,
    manual: true,
    mfa_required: true,
    primary_color: '#f38b00',
    methods: ['assisted'],
    latency_ms: [10_000, 180_000],
    benefits: {
      ...line(['401k', '401k_roth', '403b', '403b_roth', '457', '457_roth'], RETIREMENT_FULL),
      ...line(['401k_loan'], LOAN),
      ...line(HSA, HSA_FULL),
      ...line([...S125, ...FSA, 'commuter', ...CUSTOM], HEALTH),
    },
  },
  {
    // The service's own simulated payroll: every product, type, feature and operation.
    id: 'sandbox_automated',
    display_name: 'Sandbox Payroll (Automated)',
    products: ALL_PRODUCTS,
    primary_color: '#4f46e5',
    methods: ['credential', 'api_token', 'oauth'],
    latency_ms: [50, 500],
    benefits: {
      ...line(RETIREMENT_BENEFIT_TYPES.slice(), RETIREMENT_FULL),
      ...line(['401k_loan'], LOAN),
      ...line(HSA, HSA_FULL),
      ...line([...S125, ...FSA, 'commuter', ...CUSTOM], HEALTH),
    },
  },
  {
    // The same simulated payroll, fulfilled by the (simulated) assisted team.
    id: 'sandbox_assisted',
    display_name: 'Sandbox Payroll (Assisted)',
    products: ALL_PRODUCTS,
    manual: true,
    primary_color: '#0d9488',
    methods: ['assisted'],
    latency_ms: [50, 500],
    benefits: {
      ...line(RETIREMENT_BENEFIT_TYPES.slice(), RETIREMENT_FULL),
      ...line(['401k_loan'], LOAN),
      ...line(HSA, HSA_FULL),
      ...line([...S125, ...FSA, 'commuter', ...CUSTOM], HEALTH),
    },
  },
];

export const PROVIDER_CATALOGUE: readonly ProviderDescriptor[] = ENTRIES.map(descriptor);
