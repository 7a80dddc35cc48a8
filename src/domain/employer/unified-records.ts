/**
 * The employer data of the Unified API, in its wire shape (snake_case). These are contracts,
 * like Kafka message contracts: providers produce them, syncs store them, reads return them
 * as they are. Mapping them to camelCase and back would add two copies of every field and
 * nothing else. Money is integer cents; dates are `YYYY-MM-DD`.
 */

export interface Address {
  line1: string;
  line2: string | null;
  city: string;
  state: string;
  postal_code: string;
  country: string;
}

export interface CompanyRecord {
  id: string;
  legal_name: string;
  entity: { type: string; subtype: string | null };
  ein: string;
  primary_email: string;
  primary_phone_number: string;
  departments: { name: string; parent: { name: string } | null }[];
  locations: Address[];
  accounts: {
    routing_number: string;
    account_name: string;
    institution_name: string;
    account_type: 'checking' | 'savings';
    account_number: string;
  }[];
}

export interface IndividualRecord {
  id: string;
  first_name: string;
  middle_name: string | null;
  last_name: string;
  preferred_name: string | null;
  emails: { data: string; type: 'work' | 'personal' }[];
  phone_numbers: { data: string; type: 'work' | 'personal' }[];
  gender: 'female' | 'male' | 'other' | 'decline_to_specify';
  ethnicity: string;
  marital_status: string;
  dob: string;
  residence: Address;
  /** Null unless a read asks for it with `options.include: ["ssn"]`. */
  ssn: string | null;
}

export interface EmploymentRecord {
  id: string;
  first_name: string;
  middle_name: string | null;
  last_name: string;
  title: string;
  manager: { id: string } | null;
  department: { name: string } | null;
  employment: { type: 'employee' | 'contractor'; subtype: 'full_time' | 'part_time' | 'intern' | 'temp' | 'seasonal' | 'individual_contractor' };
  start_date: string;
  end_date: string | null;
  is_active: boolean;
  class_code: string | null;
  location: Address;
  /** Current income: `unit` yearly (salary) or hourly (wage), `amount` cents. */
  income: { unit: 'yearly' | 'hourly'; amount: number; currency: string; effective_date: string };
  income_history: { unit: 'yearly' | 'hourly'; amount: number; currency: string; effective_date: string }[];
  work_email: string | null;
  pay_group_ids: string[];
}

/**
 * Fields of the public document's Employment that no provider here reports (it requires them,
 * nullable). A record may carry them; what it lacks is null, except `employment_status`, which
 * follows from `is_active` and `end_date`. Records stored by earlier syncs lack them all.
 */
export interface EmploymentDetails {
  latest_rehire_date: string | null;
  employment_status: 'active' | 'deceased' | 'leave' | 'onboarding' | 'prehire' | 'retired' | 'terminated' | null;
  flsa_status: 'exempt' | 'non_exempt' | 'unknown' | null;
  union_code: string | null;
  union_local: string | null;
  highly_compensated_employee: boolean | null;
  key_employee: boolean | null;
}

/** An employment as `POST /employer/employment` answers it. */
export type EmploymentView = EmploymentRecord & EmploymentDetails;

export function employmentViewOf(record: EmploymentRecord & Partial<EmploymentDetails>): EmploymentView {
  return {
    ...record,
    latest_rehire_date: record.latest_rehire_date ?? null,
    employment_status: record.employment_status ?? (record.is_active ? 'active' : record.end_date !== null ? 'terminated' : null),
    flsa_status: record.flsa_status ?? null,
    union_code: record.union_code ?? null,
    union_local: record.union_local ?? null,
    highly_compensated_employee: record.highly_compensated_employee ?? null,
    key_employee: record.key_employee ?? null,
  };
}

/** `GET /employer/directory` entry (DECISIONS.md). */
export interface DirectoryEntry {
  id: string;
  first_name: string;
  middle_name: string | null;
  last_name: string;
  manager: { id: string } | null;
  department: { name: string } | null;
  is_active: boolean;
}

/** The directory entry of a person: a projection of their employment record. */
export function directoryEntryOf(employment: EmploymentRecord): DirectoryEntry {
  return {
    id: employment.id,
    first_name: employment.first_name,
    middle_name: employment.middle_name,
    last_name: employment.last_name,
    manager: employment.manager,
    department: employment.department,
    is_active: employment.is_active,
  };
}

export interface Money {
  amount: number;
  currency: string;
}

export interface PaymentRecord {
  id: string;
  pay_date: string;
  debit_date: string;
  pay_period: { start_date: string; end_date: string };
  company_debit: Money;
  gross_pay: Money;
  net_pay: Money;
  employer_taxes: Money;
  employee_taxes: Money;
  individual_ids: string[];
  pay_group_ids: string[];
  pay_frequencies: string[];
}

export type PayStatementType = 'regular_payroll' | 'off_cycle_payroll' | 'one_time_payment';

export interface PayStatementRecord {
  individual_id: string;
  type: PayStatementType;
  payment_method: 'check' | 'direct_deposit';
  total_hours: number;
  gross_pay: Money;
  net_pay: Money;
  earnings: { type: string; name: string; amount: number; currency: string; hours: number | null }[];
  taxes: { type: 'state' | 'federal' | 'local' | 'fica'; name: string; employer: boolean; amount: number; currency: string }[];
  employee_deductions: { name: string; amount: number; currency: string; pre_tax: boolean; type: string | null }[];
  employer_contributions: { name: string; amount: number; currency: string; type: string | null }[];
}

export interface PayGroupRecord {
  id: string;
  name: string;
  pay_frequencies: string[];
  individual_ids: string[];
}
