import type { BenefitType } from './payroll.types';

/**
 * How each benefit type is taxed and which IRS limit it counts against.
 * - `income_tax_only`: traditional retirement deferrals reduce federal and state taxable wages
 *   but are still FICA wages.
 * - `all_taxes`: Section 125 (cafeteria) benefits, pre-tax HSA, FSA, commuter and custom pre-tax
 *   deductions reduce federal, state and FICA wages.
 * - `post_tax`: Roth deferrals, loan repayments, post-tax HSA and custom post-tax deductions.
 */
export type PreTaxScope = 'income_tax_only' | 'all_taxes' | 'post_tax';

/**
 * - `elective_deferral`: 402(g), shared by 401(k), 403(b) and their Roth kinds.
 * - `simple`: SIMPLE 401(k) and SIMPLE IRA: their own lower limit, and also 402(g).
 * - `section_457`: 457(b) and its Roth kind, a limit of its own.
 * - `hsa`: employee and employer HSA contributions together.
 */
export type ContributionLimitKind = 'elective_deferral' | 'simple' | 'section_457' | 'hsa';

interface BenefitTaxTreatment {
  preTaxScope: PreTaxScope;
  limit: ContributionLimitKind | null;
  /** Retirement deferrals and HSA: a percent election also applies to bonuses and off-cycle pay. */
  appliesToSupplementalPay: boolean;
}

const TREATMENT: Readonly<Record<BenefitType, BenefitTaxTreatment>> = {
  '401k': { preTaxScope: 'income_tax_only', limit: 'elective_deferral', appliesToSupplementalPay: true },
  '403b': { preTaxScope: 'income_tax_only', limit: 'elective_deferral', appliesToSupplementalPay: true },
  '457': { preTaxScope: 'income_tax_only', limit: 'section_457', appliesToSupplementalPay: true },
  simple: { preTaxScope: 'income_tax_only', limit: 'simple', appliesToSupplementalPay: true },
  simple_ira: { preTaxScope: 'income_tax_only', limit: 'simple', appliesToSupplementalPay: true },
  '401k_roth': { preTaxScope: 'post_tax', limit: 'elective_deferral', appliesToSupplementalPay: true },
  '403b_roth': { preTaxScope: 'post_tax', limit: 'elective_deferral', appliesToSupplementalPay: true },
  '457_roth': { preTaxScope: 'post_tax', limit: 'section_457', appliesToSupplementalPay: true },
  // A loan repayment is not a deferral: no IRS limit, and not taken from bonuses.
  '401k_loan': { preTaxScope: 'post_tax', limit: null, appliesToSupplementalPay: false },
  hsa_pre: { preTaxScope: 'all_taxes', limit: 'hsa', appliesToSupplementalPay: true },
  hsa_post: { preTaxScope: 'post_tax', limit: 'hsa', appliesToSupplementalPay: true },
  s125_medical: { preTaxScope: 'all_taxes', limit: null, appliesToSupplementalPay: false },
  s125_dental: { preTaxScope: 'all_taxes', limit: null, appliesToSupplementalPay: false },
  s125_vision: { preTaxScope: 'all_taxes', limit: null, appliesToSupplementalPay: false },
  fsa_medical: { preTaxScope: 'all_taxes', limit: null, appliesToSupplementalPay: false },
  fsa_dependent_care: { preTaxScope: 'all_taxes', limit: null, appliesToSupplementalPay: false },
  commuter: { preTaxScope: 'all_taxes', limit: null, appliesToSupplementalPay: false },
  custom_pre_tax: { preTaxScope: 'all_taxes', limit: null, appliesToSupplementalPay: false },
  custom_post_tax: { preTaxScope: 'post_tax', limit: null, appliesToSupplementalPay: false },
};

export function taxTreatmentOf(type: BenefitType): BenefitTaxTreatment {
  return TREATMENT[type];
}
