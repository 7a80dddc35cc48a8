/**
 * Gusto's objects as its API document (test/fixtures/gusto-openapi.yaml, version 2026-02-01)
 * defines them: only the fields the Gusto adapter reads or writes. Wire shape, so snake_case.
 *
 * Almost every field is optional in the document (only ids are required), so it is optional
 * here. Where the document's examples disagree with its schemas (docs/providers/gusto.md), the
 * type admits both forms: `GustoAmount` is a decimal string or a JSON number.
 */

/** A money or percentage value: the schema says decimal string ("100.00"), examples show numbers. */
export type GustoAmount = string | number;

// ---------------------------------------------------------------------------------------------
// Company (GET /v1/companies/{company_id}, GET /v1/companies/{company_id}/locations)

export type GustoEntityType =
  | 'C-Corporation'
  | 'S-Corporation'
  | 'Sole proprietor'
  | 'LLC'
  | 'LLP'
  | 'Limited partnership'
  | 'Co-ownership'
  | 'Association'
  | 'Trusteeship'
  | 'General partnership'
  | 'Joint venture'
  | 'Non-Profit';

/** Schema `Company-Address` (the company's `locations`). */
export interface GustoCompanyAddress {
  street_1?: string;
  street_2?: string | null;
  city?: string;
  state?: string;
  zip?: string;
  country?: string;
  active?: boolean;
  inactive?: boolean;
}

/** Schema `Location` (company locations, and a job's work location). */
export interface GustoLocation extends GustoCompanyAddress {
  uuid: string;
  company_uuid?: string;
  phone_number?: string;
  mailing_address?: boolean;
  filing_address?: boolean;
}

export interface GustoCompany {
  uuid: string;
  name?: string;
  trade_name?: string | null;
  ein?: string;
  entity_type?: GustoEntityType | null;
  locations?: GustoCompanyAddress[];
  primary_signatory?: { first_name?: string; last_name?: string; phone?: string; email?: string } | null;
  primary_payroll_admin?: { first_name?: string; last_name?: string; phone?: string | null; email?: string };
}

/** Schema `Department` (GET /v1/companies/{company_id}/departments): flat, a title each. */
export interface GustoDepartment {
  uuid?: string;
  title?: string;
}

// ---------------------------------------------------------------------------------------------
// Employee (GET /v1/employees/{employee_id}, GET /v1/companies/{company_id}/employees)

export type GustoPaymentUnit = 'Hour' | 'Week' | 'Month' | 'Year' | 'Paycheck';

export type GustoFlsaStatus = 'Exempt' | 'Salaried Nonexempt' | 'Nonexempt' | 'Owner' | 'Commission Only Exempt' | 'Commission Only Nonexempt';

/** Schema `Compensation`: one effective-dated rate of a job. */
export interface GustoCompensation {
  uuid: string;
  job_uuid?: string;
  employee_uuid?: string;
  /** Dollars per payment unit, e.g. "80000.00". */
  rate?: string;
  payment_unit?: GustoPaymentUnit;
  flsa_status?: GustoFlsaStatus;
  effective_date?: string;
  title?: string;
}

/** Schema `Job`. */
export interface GustoJob {
  uuid: string;
  employee_uuid?: string;
  hire_date?: string;
  title?: string | null;
  primary?: boolean;
  rate?: string;
  payment_unit?: string | null;
  current_compensation_uuid?: string;
  state_wc_class_code?: string | null;
  compensations?: GustoCompensation[];
  location_uuid?: string;
  location?: GustoLocation;
}

/** Schema `Termination`. */
export interface GustoTermination {
  uuid: string;
  employee_uuid?: string;
  active?: boolean;
  cancelable?: boolean;
  /** The employee's last day of work. */
  effective_date?: string;
}

/** Schema `Employee-Home-Address` (`current_home_address`, with `include=current_home_address`). */
export interface GustoHomeAddress {
  street_1?: string | null;
  street_2?: string | null;
  city?: string | null;
  state?: string | null;
  zip?: string | null;
  country?: string | null;
  active?: boolean;
}

export type GustoEmploymentStatus = 'full_time' | 'part_time_under_twenty_hours' | 'part_time_twenty_plus_hours' | 'variable' | 'seasonal';

export interface GustoEmployee {
  uuid: string;
  first_name: string;
  middle_initial?: string | null;
  last_name: string;
  preferred_first_name?: string | null;
  /** Personal email. */
  email?: string | null;
  work_email?: string | null;
  phone?: string | null;
  date_of_birth?: string | null;
  /** Deprecated by Gusto: always "". */
  ssn?: string;
  has_ssn?: boolean;
  company_uuid?: string;
  manager_uuid?: string | null;
  department?: string | null;
  department_uuid?: string | null;
  terminated?: boolean;
  current_employment_status?: GustoEmploymentStatus | null;
  payment_method?: 'Direct Deposit' | 'Check';
  title?: string;
  hired_at?: string;
  flsa_status?: GustoFlsaStatus;
  jobs?: GustoJob[];
  terminations?: GustoTermination[];
  current_home_address?: GustoHomeAddress;
}

// ---------------------------------------------------------------------------------------------
// Pay schedules and payrolls

export type GustoPayFrequency = 'Every week' | 'Every other week' | 'Twice per month' | 'Monthly' | 'Quarterly' | 'Annually';

/** Schema `Pay-Schedule-Show` (the list answer's `Pay-Schedule` declares no properties). */
export interface GustoPaySchedule {
  uuid: string;
  frequency?: GustoPayFrequency;
  anchor_pay_date?: string;
  anchor_end_of_pay_period?: string;
  /** `hourly`, `salaried`, a department's name, or null (all employees). */
  name?: string | null;
  custom_name?: string;
  active?: boolean;
}

export interface GustoPayrollTax {
  name: string;
  employer: boolean;
  amount: GustoAmount;
}

/** One line of `benefits` in an employee compensation (with `include=benefits`). */
export interface GustoPayrollBenefit {
  name?: string;
  employee_deduction?: GustoAmount;
  company_contribution?: GustoAmount;
  /** Imputed: the company's part is taxable income to the employee. */
  imputed?: boolean;
}

/** One line of `deductions` (garnishments and other post-tax deductions; with `include=deductions`). */
export interface GustoPayrollDeduction {
  name?: string;
  amount?: GustoAmount;
  amount_type?: 'fixed' | 'percent';
  uuid?: string;
}

/** An item of `employee_compensations` of a payroll. */
export interface GustoEmployeeCompensation {
  employee_uuid?: string;
  excluded?: boolean;
  first_name?: string | null;
  last_name?: string | null;
  gross_pay?: GustoAmount | null;
  net_pay?: GustoAmount | null;
  check_amount?: GustoAmount | null;
  payment_method?: 'Direct Deposit' | 'Check' | 'Historical' | null;
  fixed_compensations?: { name?: string; amount?: GustoAmount; job_uuid?: string }[];
  hourly_compensations?: {
    name?: string;
    hours?: GustoAmount;
    amount?: GustoAmount;
    job_uuid?: string;
    compensation_multiplier?: number;
    flsa_status?: string;
  }[];
  paid_time_off?: { name?: string; hours?: GustoAmount }[];
  reimbursements?: { amount: GustoAmount; description: string | null }[];
  taxes?: GustoPayrollTax[];
  benefits?: GustoPayrollBenefit[];
  deductions?: GustoPayrollDeduction[];
}

/** Schema `Payroll-Payroll-Totals-Type`: dollars as decimal strings. */
export interface GustoPayrollTotals {
  company_debit?: GustoAmount;
  net_pay?: GustoAmount;
  gross_pay?: GustoAmount;
  employer_taxes?: GustoAmount;
  employee_taxes?: GustoAmount;
  benefits?: GustoAmount;
  employee_benefits_deductions?: GustoAmount;
  reimbursements?: GustoAmount;
}

export type GustoOffCycleReason =
  | 'Adhoc'
  | 'Benefit reversal'
  | 'Bonus'
  | 'Correction'
  | 'Dismissed employee'
  | 'Hired employee'
  | 'Wage correction'
  | 'Tax reconciliation'
  | 'Reversal'
  | 'Disability insurance distribution'
  | 'Transition from old pay schedule';

/** Schema `Payroll-Show` (GET /v1/companies/{company_id}/payrolls/{payroll_id}). */
export interface GustoPayroll {
  uuid?: string;
  payroll_uuid?: string;
  company_uuid?: string;
  check_date?: string;
  processed?: boolean;
  processed_date?: string | null;
  payroll_deadline?: string;
  off_cycle?: boolean;
  off_cycle_reason?: GustoOffCycleReason | null;
  external?: boolean;
  /** The schedule an off-cycle payroll withholds by. */
  withholding_pay_period?: GustoPayFrequency | 'Semiannually';
  pay_period?: { start_date?: string; end_date?: string; pay_schedule_uuid?: string | null };
  payroll_status_meta?: { expected_debit_time?: string; initial_debit_cutoff_time?: string };
  totals?: GustoPayrollTotals;
  employee_compensations?: GustoEmployeeCompensation[];
}

// ---------------------------------------------------------------------------------------------
// Company benefits (GET/POST /v1/companies/{company_id}/company_benefits, GET/PUT /v1/company_benefits/{id})

export type GustoCatchUpType = 'elective' | 'deemed';

/** Schema `Company-Benefit`. */
export interface GustoCompanyBenefit {
  uuid: string;
  version?: string;
  company_uuid?: string;
  /** Id of a supported benefit (GET /v1/benefits). */
  benefit_type?: number;
  active?: boolean;
  description?: string;
  source?: 'internal' | 'external' | 'partnered';
  deletable?: boolean;
  supports_percentage_amounts?: boolean;
  catch_up_type?: GustoCatchUpType | null;
}

/** Schema `Company-Benefit-With-Employee-Benefits` (`with_employee_benefits=true`). */
export interface GustoCompanyBenefitWithEmployeeBenefits extends GustoCompanyBenefit {
  employee_benefits?: GustoEmployeeBenefitRead[];
}

/** POST /v1/companies/{company_id}/company_benefits body. */
export interface GustoCompanyBenefitCreateBody {
  benefit_type: number;
  active: boolean;
  description: string;
  catch_up_type?: GustoCatchUpType | null;
}

/** PUT /v1/company_benefits/{company_benefit_id} body. */
export interface GustoCompanyBenefitUpdateBody {
  version: string;
  description: string;
}

// ---------------------------------------------------------------------------------------------
// Employee benefits (GET/POST /v1/employees/{employee_id}/employee_benefits, GET/PUT/DELETE /v1/employee_benefits/{id})

/** A tier as requests write it: percentages as decimal strings ("100.0" of the deduction up to "3.0" of pay). */
export interface GustoContributionTier {
  rate: string;
  threshold: string;
}

/** `contribution` of a request body: tiers as a bare array. */
export type GustoContributionBody =
  | { type: 'amount' | 'percentage'; value: string }
  | { type: 'tiered'; value: GustoContributionTier[] };

/** `contribution` as answers show it: tiers inside `{ tiers }` (with `threshold_delta`); amounts may be numbers. */
export interface GustoContributionRead {
  type?: string;
  value?: GustoAmount | { tiers?: { rate?: GustoAmount; threshold?: GustoAmount; threshold_delta?: GustoAmount }[] } | GustoContributionTier[];
}

export type GustoLimitOption = 'Family' | 'Individual' | 'Joint Filing or Single' | 'Married and Filing Separately';

/** The fields the mapping reads of an employee benefit (schema `Employee-Benefit`, and the items of `employee_benefits`). */
export interface GustoEmployeeBenefitRead {
  uuid?: string;
  version?: string;
  employee_uuid?: string;
  company_benefit_uuid?: string;
  active?: boolean;
  employee_deduction?: GustoAmount;
  deduct_as_percentage?: boolean;
  employee_deduction_annual_maximum?: GustoAmount | null;
  contribution?: GustoContributionRead;
  elective?: boolean;
  company_contribution_annual_maximum?: GustoAmount | null;
  limit_option?: string | null;
  catch_up?: boolean | null;
  /** Deprecated by Gusto in favour of `contribution`; read only when `contribution` is absent. */
  company_contribution?: GustoAmount;
  contribute_as_percentage?: boolean;
  effective_date?: string;
  expiration_date?: string | null;
}

/** Schema `Employee-Benefit`: an answer of Gusto. */
export interface GustoEmployeeBenefit extends GustoEmployeeBenefitRead {
  uuid: string;
}

/** The fields both writes of an employee benefit take. */
interface GustoEmployeeBenefitFields {
  active: boolean;
  employee_deduction: string;
  deduct_as_percentage: boolean;
  employee_deduction_annual_maximum: string | null;
  contribution: GustoContributionBody;
  elective: boolean;
  catch_up: boolean;
  limit_option?: GustoLimitOption | null;
  effective_date: string;
  expiration_date?: string | null;
}

/** POST /v1/employees/{employee_id}/employee_benefits body. */
export interface GustoEmployeeBenefitCreateBody extends GustoEmployeeBenefitFields {
  company_benefit_uuid: string;
}

/** PUT /v1/employee_benefits/{employee_benefit_id} body. */
export interface GustoEmployeeBenefitUpdateBody extends GustoEmployeeBenefitFields {
  version: string;
}
