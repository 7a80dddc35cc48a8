import {
  Address,
  CompanyRecord,
  DirectoryEntry,
  EmploymentRecord,
  IndividualRecord,
  PayGroupRecord,
  PaymentRecord,
  PayStatementRecord,
} from '../../../domain/employer/unified-records';
import { taxTreatmentOf } from '../../../domain/payroll/benefit-tax-treatment';
import { BenefitType } from '../../../domain/providers/provider';
import { ProviderBenefit, ProviderEnrollmentConfiguration } from '../../../domain/providers/provider-port';
import { DomainError } from '../../../domain/shared/domain-error';
import {
  GustoAmount,
  GustoCompany,
  GustoCompanyAddress,
  GustoCompanyBenefit,
  GustoCompanyBenefitCreateBody,
  GustoCompanyBenefitUpdateBody,
  GustoCompanyBenefitWithEmployeeBenefits,
  GustoCompensation,
  GustoContributionBody,
  GustoDepartment,
  GustoEmployee,
  GustoEmployeeBenefitCreateBody,
  GustoEmployeeBenefitRead,
  GustoEmployeeBenefitUpdateBody,
  GustoEmployeeCompensation,
  GustoEntityType,
  GustoHomeAddress,
  GustoJob,
  GustoLimitOption,
  GustoLocation,
  GustoPayFrequency,
  GustoPayroll,
  GustoPaySchedule,
} from './gusto-types';

/**
 * Pure mapping between Gusto's objects (gusto-types.ts) and the Unified API's records. No I/O:
 * the adapter fetches, these functions translate. Money is integer cents and percentages are
 * basis points on our side, decimal strings (dollars, percent) on Gusto's; every conversion
 * goes through the decimal text, never through a float product, so no cent drifts.
 *
 * Where Gusto has no equivalent of a unified field the record carries null. The domain types
 * (unified-records.ts) do not admit null there yet; the public contract does. So the records
 * returned here are typed `…FromGusto`: the domain record with those fields nullable.
 */

export const GUSTO_CURRENCY = 'usd';

// ---------------------------------------------------------------------------------------------
// Records as Gusto can fill them

/** An address whose parts Gusto may leave out (the public contract's Location: every part nullable). */
export type AddressFromGusto = { [K in keyof Address]: Address[K] | null };

/** Gusto answers no bank account numbers; name, entity, EIN and contacts may be absent. */
export type CompanyFromGusto = Omit<CompanyRecord, 'legal_name' | 'entity' | 'ein' | 'primary_email' | 'primary_phone_number' | 'locations'> & {
  legal_name: string | null;
  entity: { type: string | null; subtype: string | null };
  ein: string | null;
  primary_email: string | null;
  primary_phone_number: string | null;
  locations: AddressFromGusto[];
};

/** Gusto records no gender, ethnicity or marital status; dob and home address may be absent. */
export type IndividualFromGusto = Omit<IndividualRecord, 'gender' | 'ethnicity' | 'marital_status' | 'dob' | 'residence'> & {
  gender: IndividualRecord['gender'] | null;
  ethnicity: string | null;
  marital_status: string | null;
  dob: string | null;
  residence: AddressFromGusto | null;
};

export type IncomeFromGusto = EmploymentRecord['income'];

/** Title, subtype, start date, work location and income may be absent or have no unified equivalent. */
export type EmploymentFromGusto = Omit<EmploymentRecord, 'title' | 'employment' | 'start_date' | 'location' | 'income'> & {
  title: string | null;
  employment: { type: EmploymentRecord['employment']['type']; subtype: EmploymentRecord['employment']['subtype'] | null };
  start_date: string | null;
  location: AddressFromGusto | null;
  income: IncomeFromGusto | null;
};

/** Historical (imported) payrolls have no payment method. */
export type PayStatementFromGusto = Omit<PayStatementRecord, 'payment_method'> & {
  payment_method: PayStatementRecord['payment_method'] | null;
};

// ---------------------------------------------------------------------------------------------
// Benefit types

/**
 * Unified benefit type → Gusto `benefit_type` (the id of a supported benefit, GET /v1/benefits).
 * Ids from the document's own list of supported benefits (test/fixtures/gusto-openapi.yaml,
 * components.responses.Supported-Benefit-List, example "Supported Benefits"), the answer of
 * https://docs.gusto.com/embedded-payroll/reference/get-v1-benefits.
 */
export const GUSTO_BENEFIT_TYPES = {
  s125_medical: 1, // Medical Insurance (pretax)
  s125_dental: 2, // Dental Insurance (pretax)
  s125_vision: 3, // Vision Insurance (pretax)
  '401k': 5, // 401(k)
  hsa_pre: 6, // Health Savings Account (pretax)
  fsa_medical: 7, // Health FSA
  simple_ira: 8, // SIMPLE IRA
  '403b': 9, // 403(b)
  commuter: 10, // Commuter Benefits (pre-tax)
  fsa_dependent_care: 11, // Dependent Care FSA
  // Gusto's only generic post-tax type; its company contributions are imputed (taxable) income.
  custom_post_tax: 100, // Other (taxable)
  '401k_roth': 105, // Roth 401(k)
  '403b_roth': 110, // Roth 403(b)
} as const satisfies Partial<Record<BenefitType, number>>;

export type GustoMappedBenefitType = keyof typeof GUSTO_BENEFIT_TYPES;

/** Unified types Gusto cannot represent, and why (none of its supported benefits is one). */
export const BENEFIT_TYPES_GUSTO_LACKS: Readonly<Record<Exclude<BenefitType, GustoMappedBenefitType>, string>> = {
  '457': 'Gusto supports no 457(b) plan (no such type in GET /v1/benefits)',
  '457_roth': 'Gusto supports no Roth 457(b) plan',
  '401k_loan': 'Gusto has no 401(k) loan benefit type; loan repayments are garnishments there',
  hsa_post: 'Gusto’s only HSA type (6) is pre-tax',
  simple: 'Gusto supports the SIMPLE IRA (8) but no SIMPLE 401(k)',
  custom_pre_tax: 'Gusto has no generic pre-tax type, only specific ones (medical, FSA, commuter…)',
};

/** Gusto id → unified type: the reverse of GUSTO_BENEFIT_TYPES, plus Gusto's two other commuter types. */
export const UNIFIED_BENEFIT_TYPES_BY_GUSTO_ID: ReadonlyMap<number, GustoMappedBenefitType> = new Map<number, GustoMappedBenefitType>([
  ...(Object.entries(GUSTO_BENEFIT_TYPES) as [GustoMappedBenefitType, number][]).map(([type, id]) => [id, type] as const),
  [113, 'commuter'], // Commuter Parking
  [114, 'commuter'], // Commuter Transit
]);

/**
 * Gusto's supported benefits without a unified type (same source): read as null, never written.
 * Group-term life and disability are insurance, the rest imputed (taxable) fringe benefits or
 * employer-only plans; none is a deduction type of the contract.
 */
export const GUSTO_BENEFIT_TYPES_WITHOUT_UNIFIED_TYPE: Readonly<Record<number, string>> = {
  106: 'Personal Use of Company Car',
  107: 'Group-Term Life Insurance',
  108: 'SEP-IRA',
  109: 'SARSEP',
  111: '529 College Savings',
  112: 'Student Loan Repayment',
  201: 'Cell Phone (taxable)',
  202: 'Gym & Fitness (taxable)',
  203: 'Housing (taxable)',
  204: 'Wellness (taxable)',
  991: 'Voluntary Short Term Disability (post-tax)',
  992: 'Voluntary Long Term Disability (post-tax)',
  993: 'Voluntary Life (post-tax)',
  996: 'Short Term Disability (pre-tax)',
  997: 'Long Term Disability (pre-tax)',
  998: 'Short Term Disability (post-tax)',
  999: 'Long Term Disability (post-tax)',
};

/** Names of Gusto's supported benefits (same source), for pay-statement lines named after their type. */
const GUSTO_BENEFIT_NAMES: Readonly<Record<number, string>> = {
  1: 'Medical Insurance',
  2: 'Dental Insurance',
  3: 'Vision Insurance',
  5: '401(k)',
  6: 'Health Savings Account',
  7: 'Health FSA',
  8: 'SIMPLE IRA',
  9: '403(b)',
  10: 'Commuter Benefits (pre-tax)',
  11: 'Dependent Care FSA',
  100: 'Other (taxable)',
  105: 'Roth 401(k)',
  110: 'Roth 403(b)',
  113: 'Commuter Parking',
  114: 'Commuter Transit',
};

export function unifiedBenefitTypeOf(gustoBenefitType: number | null | undefined): GustoMappedBenefitType | null {
  return gustoBenefitType == null ? null : (UNIFIED_BENEFIT_TYPES_BY_GUSTO_ID.get(gustoBenefitType) ?? null);
}

/** Gusto's id for a unified type; a type it cannot represent is refused as the contract refuses it (422). */
export function gustoBenefitTypeOf(type: string): number {
  if (Object.hasOwn(GUSTO_BENEFIT_TYPES, type)) return GUSTO_BENEFIT_TYPES[type as GustoMappedBenefitType];
  const reason = (BENEFIT_TYPES_GUSTO_LACKS as Record<string, string>)[type] ?? 'not a benefit type of the contract';
  throw unsupported(`Gusto does not support benefit type ${type}: ${reason}`);
}

/** Pay-statement benefit names → unified type: the company benefits' descriptions (as Gusto prints them) first. */
export function benefitTypesByName(companyBenefits: readonly GustoCompanyBenefit[]): Map<string, GustoMappedBenefitType> {
  const byName = new Map<string, GustoMappedBenefitType>();
  for (const benefit of companyBenefits) {
    const type = unifiedBenefitTypeOf(benefit.benefit_type);
    if (type && benefit.description) byName.set(nameKey(benefit.description), type);
  }
  return byName;
}

// ---------------------------------------------------------------------------------------------
// Money and percentages

/** Dollars (decimal string or JSON number) → integer cents, half up beyond the cent. */
export function centsOf(value: GustoAmount): number {
  return scaledIntegerOf(value, 2, 'amount');
}

/** Percent ("5.0", "5.25") → integer basis points, half up beyond the basis point. */
export function basisPointsOfPercent(value: GustoAmount): number {
  return scaledIntegerOf(value, 2, 'percentage');
}

/** Integer cents → Gusto's decimal dollars: 1250 → "12.50". */
export function dollarsOf(cents: number): string {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`cents must be an integer, not ${cents}`);
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Integer basis points → percent with at least one decimal, as Gusto writes them: 500 → "5.0", 525 → "5.25". */
export function percentOf(basisPoints: number): string {
  if (!Number.isSafeInteger(basisPoints) || basisPoints < 0) throw new RangeError(`basis points must be a whole number ≥ 0, not ${basisPoints}`);
  const fraction = basisPoints % 100;
  const decimals = fraction === 0 ? '0' : fraction % 10 === 0 ? String(fraction / 10) : String(fraction).padStart(2, '0');
  return `${Math.trunc(basisPoints / 100)}.${decimals}`;
}

/** Hours ("40.000") in thousandths: whole numbers, so sums do not drift. */
function thousandthsOfHours(value: GustoAmount | undefined): number {
  return value === undefined ? 0 : scaledIntegerOf(value, 3, 'hours');
}

/**
 * A decimal as written, scaled to an integer of `decimals` places; digits beyond are rounded
 * once, half away from zero. A JSON number is read through its shortest decimal text (0.1 + 0.2
 * is "0.30000000000000004", so 30 cents), never multiplied as a float.
 */
function scaledIntegerOf(value: GustoAmount, decimals: number, what: string): number {
  const text = typeof value === 'number' ? decimalTextOf(value, what) : String(value).trim();
  const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match || (match[2] === '' && !match[3])) throw new RangeError(`The ${what} ${JSON.stringify(value)} is not a decimal number`);
  const [, sign, whole, fraction = ''] = match;
  let scaled = BigInt(whole || '0') * 10n ** BigInt(decimals) + BigInt(fraction.slice(0, decimals).padEnd(decimals, '0') || '0');
  if (fraction.length > decimals && fraction[decimals] >= '5') scaled += 1n;
  const result = Number(scaled);
  if (!Number.isSafeInteger(result)) throw new RangeError(`The ${what} ${JSON.stringify(value)} is too large`);
  return sign === '-' && result !== 0 ? -result : result;
}

function decimalTextOf(value: number, what: string): string {
  if (!Number.isFinite(value) || Math.abs(value) >= 1e21) throw new RangeError(`The ${what} ${value} is not a decimal number`);
  const text = String(value);
  // Exponent form only for tiny magnitudes here; fixed notation spells them out.
  return /e/i.test(text) ? value.toFixed(20) : text;
}

// ---------------------------------------------------------------------------------------------
// Company, individuals, employments, directory

const ENTITIES: Readonly<Record<GustoEntityType, { type: string | null; subtype: string | null }>> = {
  'C-Corporation': { type: 'corporation', subtype: 'c_corporation' },
  'S-Corporation': { type: 'corporation', subtype: 's_corporation' },
  'Sole proprietor': { type: 'sole_proprietor', subtype: null },
  LLC: { type: 'llc', subtype: null },
  LLP: { type: 'partnership', subtype: null },
  'Limited partnership': { type: 'lp', subtype: null },
  'General partnership': { type: 'partnership', subtype: null },
  // Co-owners and joint venturers are taxed as partnerships.
  'Co-ownership': { type: 'partnership', subtype: null },
  'Joint venture': { type: 'partnership', subtype: null },
  'Non-Profit': { type: 'non_profit', subtype: null },
  // No equivalent in the contract's entity types.
  Association: { type: null, subtype: null },
  Trusteeship: { type: null, subtype: null },
};

/**
 * GET /v1/companies/{id}, with the company's locations (GET …/locations, whose entries carry
 * phone numbers) and departments (GET …/departments) when the adapter has them.
 */
export function companyRecordOf(
  company: GustoCompany,
  locations?: readonly GustoLocation[],
  departments?: readonly GustoDepartment[],
): CompanyFromGusto {
  const places = (locations ?? company.locations ?? []).filter(isActiveAddress);
  const admin = company.primary_payroll_admin;
  const signatory = company.primary_signatory;
  const phones = [admin?.phone, signatory?.phone, ...(locations ?? []).filter(isActiveAddress).map((l) => l.phone_number)];
  return {
    id: company.uuid,
    // `name` is the legal name; `trade_name` is the one it does business as.
    legal_name: nonEmpty(company.name),
    entity: company.entity_type ? { ...ENTITIES[company.entity_type] } : { type: null, subtype: null },
    ein: nonEmpty(company.ein),
    // The contract's "email of the main administrator": Gusto's primary payroll admin, else the signatory.
    primary_email: nonEmpty(admin?.email) ?? nonEmpty(signatory?.email),
    primary_phone_number: phones.map((phone) => e164Of(phone)).find((phone) => phone !== null) ?? null,
    // Gusto's departments are flat.
    departments: (departments ?? []).flatMap((d) => (nonEmpty(d.title) ? [{ name: d.title!.trim(), parent: null }] : [])),
    locations: places.map(addressOf),
    // Gusto answers only masked account numbers (hidden_account_number), which are no account numbers.
    accounts: [],
  };
}

/**
 * GET /v1/employees/{id}. The home address is `current_home_address` (with
 * `include=current_home_address`) or the one given. `ssn` is null: Gusto never answers it
 * (`ssn` is always "", `hidden_ssn` masked); the read layer nulls it anyway unless asked.
 */
export function individualRecordOf(employee: GustoEmployee, homeAddress?: GustoHomeAddress | null): IndividualFromGusto {
  const home = homeAddress ?? employee.current_home_address ?? null;
  const emails: IndividualRecord['emails'] = [];
  if (nonEmpty(employee.work_email)) emails.push({ data: employee.work_email!.trim(), type: 'work' });
  if (nonEmpty(employee.email)) emails.push({ data: employee.email!.trim(), type: 'personal' });
  const phone = nonEmpty(employee.phone);
  return {
    id: employee.uuid,
    first_name: employee.first_name,
    middle_name: nonEmpty(employee.middle_initial),
    last_name: employee.last_name,
    preferred_name: nonEmpty(employee.preferred_first_name),
    emails,
    // Gusto keeps one phone per employee, not said to be work: personal, as the sandbox's.
    phone_numbers: phone ? [{ data: e164Of(phone) ?? phone, type: 'personal' }] : [],
    gender: null,
    ethnicity: null,
    marital_status: null,
    dob: nonEmpty(employee.date_of_birth),
    residence: home && home.active !== false ? addressOf(home) : null,
    ssn: null,
  };
}

/** GET /v1/employees/{id}, with the pay groups (pay schedule assignments) the adapter found for them. */
export function employmentRecordOf(employee: GustoEmployee, payGroupIds: readonly string[] = []): EmploymentFromGusto {
  const job = primaryJobOf(employee);
  const compensations = job ? compensationsOf(job) : [];
  const history = compensations.map(incomeOf).filter((income): income is IncomeFromGusto => income !== null);
  const current = job ? currentCompensationOf(job, compensations) : undefined;
  return {
    id: employee.uuid,
    first_name: employee.first_name,
    middle_name: nonEmpty(employee.middle_initial),
    last_name: employee.last_name,
    title: nonEmpty(job?.title) ?? nonEmpty(current?.title) ?? nonEmpty(employee.title),
    manager: employee.manager_uuid ? { id: employee.manager_uuid } : null,
    department: nonEmpty(employee.department) ? { name: employee.department!.trim() } : null,
    // Gusto's employees are employees: contractors are another resource (/v1/contractors).
    employment: { type: 'employee', subtype: subtypeOf(employee.current_employment_status) },
    start_date: startDateOf(employee),
    end_date: endDateOf(employee),
    is_active: employee.terminated !== true,
    // Washington's workers' compensation risk class: Gusto's only class code.
    class_code: nonEmpty(job?.state_wc_class_code),
    location: job?.location && isActiveAddress(job.location) ? addressOf(job.location) : null,
    income: current ? incomeOf(current) : null,
    income_history: history,
    work_email: nonEmpty(employee.work_email),
    pay_group_ids: [...payGroupIds],
  };
}

export function directoryEntryOf(employee: GustoEmployee): DirectoryEntry {
  return {
    id: employee.uuid,
    first_name: employee.first_name,
    middle_name: nonEmpty(employee.middle_initial),
    last_name: employee.last_name,
    manager: employee.manager_uuid ? { id: employee.manager_uuid } : null,
    department: nonEmpty(employee.department) ? { name: employee.department!.trim() } : null,
    is_active: employee.terminated !== true,
  };
}

function subtypeOf(status: GustoEmployee['current_employment_status']): EmploymentRecord['employment']['subtype'] | null {
  switch (status) {
    case 'full_time':
      return 'full_time';
    case 'part_time_under_twenty_hours':
    case 'part_time_twenty_plus_hours':
      return 'part_time';
    case 'seasonal':
      return 'seasonal';
    default:
      // `variable` hours have no unified subtype; null when Gusto has none.
      return null;
  }
}

function primaryJobOf(employee: GustoEmployee): GustoJob | undefined {
  const jobs = employee.jobs ?? [];
  return jobs.find((job) => job.primary === true) ?? jobs[0];
}

/** The job's compensations oldest first; a job answered without them has its current rate on the job. */
function compensationsOf(job: GustoJob): GustoCompensation[] {
  const listed = [...(job.compensations ?? [])].sort((a, b) => (a.effective_date ?? '').localeCompare(b.effective_date ?? ''));
  if (listed.length > 0 || job.rate === undefined) return listed;
  return [
    {
      uuid: job.current_compensation_uuid ?? job.uuid,
      rate: job.rate,
      payment_unit: (job.payment_unit ?? undefined) as GustoCompensation['payment_unit'],
      effective_date: job.hire_date,
    },
  ];
}

function currentCompensationOf(job: GustoJob, compensations: GustoCompensation[]): GustoCompensation | undefined {
  return compensations.find((c) => c.uuid === job.current_compensation_uuid) ?? compensations[compensations.length - 1];
}

/**
 * A Gusto rate as unified income: hourly stays hourly, a yearly salary yearly; weekly and monthly
 * salaries become yearly (× 52, × 12: exact in cents). A rate per paycheck depends on the pay
 * schedule and an owner's draw is no salary: null.
 */
function incomeOf(compensation: GustoCompensation): IncomeFromGusto | null {
  if (compensation.rate === undefined || compensation.effective_date === undefined) return null;
  const cents = centsOf(compensation.rate);
  const perYear = { Year: 1, Month: 12, Week: 52 } as const;
  const effective_date = compensation.effective_date;
  if (compensation.payment_unit === 'Hour') return { unit: 'hourly', amount: cents, currency: GUSTO_CURRENCY, effective_date };
  if (compensation.payment_unit === 'Year' || compensation.payment_unit === 'Month' || compensation.payment_unit === 'Week') {
    return { unit: 'yearly', amount: cents * perYear[compensation.payment_unit], currency: GUSTO_CURRENCY, effective_date };
  }
  return null;
}

/** The first hire: `hired_at`, else the earliest job's hire date. */
function startDateOf(employee: GustoEmployee): string | null {
  const hires = (employee.jobs ?? []).map((job) => job.hire_date).filter((date): date is string => !!date).sort();
  return nonEmpty(employee.hired_at) ?? hires[0] ?? null;
}

/** The latest termination's last day, unless a hire came after it (a rehire). */
function endDateOf(employee: GustoEmployee): string | null {
  const lastDay = (employee.terminations ?? []).map((t) => t.effective_date).filter((date): date is string => !!date).sort().pop();
  if (!lastDay) return null;
  const latestHire = (employee.jobs ?? []).map((job) => job.hire_date).filter((date): date is string => !!date).sort().pop();
  return latestHire !== undefined && latestHire > lastDay ? null : lastDay;
}

// ---------------------------------------------------------------------------------------------
// Pay groups, payments, pay statements

const PAY_FREQUENCIES: Readonly<Record<GustoPayFrequency | 'Semiannually', string>> = {
  'Every week': 'weekly',
  'Every other week': 'bi_weekly',
  'Twice per month': 'semi_monthly',
  Monthly: 'monthly',
  Quarterly: 'quarterly',
  Semiannually: 'semi_annually',
  Annually: 'annually',
};

/** Gusto's pay frequency as the public contract's PayFrequency; null when unknown. */
export function payFrequencyOf(frequency: string | null | undefined): string | null {
  return frequency ? ((PAY_FREQUENCIES as Record<string, string>)[frequency] ?? null) : null;
}

/** A pay schedule is a pay group; who is on it comes from Gusto's pay schedule assignments. */
export function payGroupRecordOf(paySchedule: GustoPaySchedule, employeeIds: readonly string[]): PayGroupRecord {
  const frequency = payFrequencyOf(paySchedule.frequency);
  return {
    id: paySchedule.uuid,
    // custom_name is always set (Gusto generates one, e.g. "every 1st and 15th of the month").
    name: nonEmpty(paySchedule.custom_name) ?? nonEmpty(paySchedule.name) ?? paySchedule.frequency ?? paySchedule.uuid,
    pay_frequencies: frequency ? [frequency] : [],
    individual_ids: [...employeeIds],
  };
}

/**
 * A processed payroll as a payment. Totals are Gusto's (`include=totals`), else summed from the
 * statements. The pay frequency is the pay schedule's (pass the schedules); off-cycle runs
 * follow none: `other`, as the sandbox says.
 */
export function paymentRecordOf(payroll: GustoPayroll, paySchedules: readonly GustoPaySchedule[] = []): PaymentRecord {
  const id = payrollIdOf(payroll);
  const { start_date, end_date } = payroll.pay_period ?? {};
  if (!payroll.check_date || !start_date || !end_date) throw new RangeError(`Payroll ${id} has no check date or pay period: not a processed payroll`);
  const statements = payStatementRecordsOf(payroll);
  const sum = (pick: (s: PayStatementFromGusto) => number) => statements.reduce((total, s) => total + pick(s), 0);
  const taxes = (employer: boolean) => sum((s) => s.taxes.filter((t) => t.employer === employer).reduce((t, x) => t + x.amount, 0));
  const totals = payroll.totals ?? {};
  const gross = totals.gross_pay !== undefined ? centsOf(totals.gross_pay) : sum((s) => s.gross_pay.amount);
  const net = totals.net_pay !== undefined ? centsOf(totals.net_pay) : sum((s) => s.net_pay.amount);
  const employerTaxes = totals.employer_taxes !== undefined ? centsOf(totals.employer_taxes) : taxes(true);
  const employeeTaxes = totals.employee_taxes !== undefined ? centsOf(totals.employee_taxes) : taxes(false);
  const contributions = sum((s) => s.employer_contributions.reduce((t, c) => t + c.amount, 0));
  const scheduleId = payroll.pay_period?.pay_schedule_uuid ?? null;
  const frequency = payFrequencyOf(paySchedules.find((schedule) => schedule.uuid === scheduleId)?.frequency);
  const money = (amount: number) => ({ amount, currency: GUSTO_CURRENCY });
  return {
    id,
    pay_date: payroll.check_date,
    debit_date: debitDateOf(payroll),
    pay_period: { start_date, end_date },
    // Without Gusto's total: what leaves the company's account, as the sandbox counts it.
    company_debit: money(totals.company_debit !== undefined ? centsOf(totals.company_debit) : gross + employerTaxes + contributions),
    gross_pay: money(gross),
    net_pay: money(net),
    employer_taxes: money(employerTaxes),
    employee_taxes: money(employeeTaxes),
    individual_ids: statements.map((s) => s.individual_id).sort(),
    pay_group_ids: scheduleId ? [scheduleId] : [],
    pay_frequencies: payroll.off_cycle ? ['other'] : frequency ? [frequency] : [],
  };
}

/**
 * One statement per employee paid by a processed payroll (excluded employees are not paid).
 * Read with `include=benefits,deductions,taxes`: otherwise those lists are empty. A benefit line
 * names its company benefit; its type comes from `benefitTypes` (benefitTypesByName of the
 * company benefits), else from Gusto's own benefit names, else null.
 */
export function payStatementRecordsOf(payroll: GustoPayroll, benefitTypes: ReadonlyMap<string, BenefitType> = new Map()): PayStatementFromGusto[] {
  if (payroll.processed === false) throw new RangeError(`Payroll ${payrollIdOf(payroll)} is not processed: it has no pay statements yet`);
  const type: PayStatementRecord['type'] = payroll.off_cycle ? 'off_cycle_payroll' : 'regular_payroll';
  return (payroll.employee_compensations ?? [])
    .filter((compensation) => compensation.excluded !== true && !!compensation.employee_uuid)
    .map((compensation) => payStatementOf(compensation, type, benefitTypes));
}

function payStatementOf(
  compensation: GustoEmployeeCompensation,
  type: PayStatementRecord['type'],
  benefitTypes: ReadonlyMap<string, BenefitType>,
): PayStatementFromGusto {
  const earnings = earningsOf(compensation);
  const taxes: PayStatementRecord['taxes'] = (compensation.taxes ?? []).map((tax) => ({
    type: taxTypeOf(tax.name),
    name: tax.name,
    employer: tax.employer,
    amount: centsOf(tax.amount),
    currency: GUSTO_CURRENCY,
  }));
  const employeeDeductions: PayStatementRecord['employee_deductions'] = [];
  const employerContributions: PayStatementRecord['employer_contributions'] = [];
  for (const benefit of compensation.benefits ?? []) {
    const name = benefit.name ?? '';
    const benefitType = benefitTypeNamed(name, benefitTypes);
    const deduction = benefit.employee_deduction === undefined ? 0 : centsOf(benefit.employee_deduction);
    const contribution = benefit.company_contribution === undefined ? 0 : centsOf(benefit.company_contribution);
    // An unknown type is not claimed to be pre-tax.
    const preTax = benefitType !== null && taxTreatmentOf(benefitType).preTaxScope !== 'post_tax';
    if (deduction !== 0) employeeDeductions.push({ name, amount: deduction, currency: GUSTO_CURRENCY, pre_tax: preTax, type: benefitType });
    if (contribution !== 0) employerContributions.push({ name, amount: contribution, currency: GUSTO_CURRENCY, type: benefitType });
  }
  // Garnishments and other deductions: after tax, of no benefit type.
  for (const deduction of compensation.deductions ?? []) {
    const amount = deduction.amount === undefined ? 0 : centsOf(deduction.amount);
    if (amount !== 0) employeeDeductions.push({ name: deduction.name ?? '', amount, currency: GUSTO_CURRENCY, pre_tax: false, type: null });
  }
  const employeeTaxes = taxes.filter((t) => !t.employer).reduce((total, t) => total + t.amount, 0);
  // Gusto's gross excludes reimbursements; so does the fallback.
  const gross =
    compensation.gross_pay != null ? centsOf(compensation.gross_pay) : earnings.filter((e) => e.type !== 'reimbursement').reduce((t, e) => t + e.amount, 0);
  const net = compensation.net_pay != null ? centsOf(compensation.net_pay) : gross - employeeTaxes - employeeDeductions.reduce((t, d) => t + d.amount, 0);
  const thousandths = (compensation.hourly_compensations ?? []).reduce((total, line) => total + thousandthsOfHours(line.hours), 0);
  return {
    individual_id: compensation.employee_uuid!,
    type,
    payment_method: compensation.payment_method === 'Direct Deposit' ? 'direct_deposit' : compensation.payment_method === 'Check' ? 'check' : null,
    total_hours: thousandths / 1000,
    gross_pay: { amount: gross, currency: GUSTO_CURRENCY },
    net_pay: { amount: net, currency: GUSTO_CURRENCY },
    earnings,
    taxes,
    employee_deductions: employeeDeductions,
    employer_contributions: employerContributions,
  };
}

type Earning = PayStatementRecord['earnings'][number];

/**
 * Hourly and fixed compensations, and reimbursements. Paid time off is left out: Gusto gives its
 * hours but no amount. Lines with neither amount nor hours (Gusto lists them on unprocessed runs) too.
 */
function earningsOf(compensation: GustoEmployeeCompensation): Earning[] {
  const earnings: Earning[] = [];
  for (const line of compensation.hourly_compensations ?? []) {
    const amount = line.amount === undefined ? 0 : centsOf(line.amount);
    const hours = thousandthsOfHours(line.hours) / 1000;
    if (amount === 0 && hours === 0) continue;
    const name = line.name ?? '';
    earnings.push({ type: hourlyEarningTypeOf(name, line.flsa_status), name, amount, currency: GUSTO_CURRENCY, hours });
  }
  for (const line of compensation.fixed_compensations ?? []) {
    const amount = line.amount === undefined ? 0 : centsOf(line.amount);
    if (amount === 0) continue;
    const name = line.name ?? '';
    earnings.push({ type: FIXED_EARNING_TYPES[nameKey(name)] ?? 'other', name, amount, currency: GUSTO_CURRENCY, hours: null });
  }
  for (const line of compensation.reimbursements ?? []) {
    const amount = centsOf(line.amount);
    if (amount !== 0) earnings.push({ type: 'reimbursement', name: line.description ?? 'Reimbursement', amount, currency: GUSTO_CURRENCY, hours: null });
  }
  return earnings;
}

/** Gusto's hourly compensation names (the company's `compensations.hourly`); salaried "Regular Hours" are salary. */
function hourlyEarningTypeOf(name: string, flsaStatus: string | undefined): string {
  const key = nameKey(name);
  if (key === 'regular' || key === 'regularhours') return SALARIED.has(flsaStatus ?? '') ? 'salary' : 'wage';
  return HOURLY_EARNING_TYPES[key] ?? 'other';
}

const SALARIED: ReadonlySet<string> = new Set(['Exempt', 'Salaried Nonexempt', 'Owner']);

const HOURLY_EARNING_TYPES: Readonly<Record<string, string>> = {
  overtime: 'overtime',
  doubleovertime: 'double_overtime',
  holiday: 'pto',
  outstandingvacation: 'pto',
  emergencysickselfcare: 'sick',
  emergencysickcaringforothers: 'sick',
};

/** Gusto's fixed compensation names (the company's `compensations.fixed`); others (custom ones) are `other`. */
const FIXED_EARNING_TYPES: Readonly<Record<string, string>> = {
  bonus: 'bonus',
  commission: 'commission',
  paychecktips: 'tips',
  cashtips: 'tips',
  severance: 'severance',
  reimbursement: 'reimbursement',
  regularwages: 'salary',
};

/**
 * Gusto names taxes, it does not type them: Social Security and Medicare are FICA, federal ones
 * say so (or are FUTA), local ones name a city, county or school district, and the rest of
 * Gusto's taxes start with a state's code ("CA SDI"). Anything else is taken as local, the
 * family of the many small named taxes.
 */
export function taxTypeOf(name: string): PayStatementRecord['taxes'][number]['type'] {
  if (/social security|medicare/i.test(name)) return 'fica';
  if (/\bfederal\b|\bfuta\b/i.test(name)) return 'federal';
  if (/\b(local|city|county|school district|municipal|borough|township|village)\b/i.test(name)) return 'local';
  if (/^[A-Z]{2}\b/.test(name.trim())) return 'state';
  return 'local';
}

function benefitTypeNamed(name: string, benefitTypes: ReadonlyMap<string, BenefitType>): BenefitType | null {
  const key = nameKey(name);
  for (const [known, type] of benefitTypes) if (nameKey(known) === key) return type;
  for (const [id, gustoName] of Object.entries(GUSTO_BENEFIT_NAMES)) {
    if (nameKey(gustoName) === key) return unifiedBenefitTypeOf(Number(id));
  }
  return null;
}

function payrollIdOf(payroll: GustoPayroll): string {
  const id = payroll.payroll_uuid ?? payroll.uuid;
  if (!id) throw new RangeError('A Gusto payroll without a uuid');
  return id;
}

/** The day Gusto debits the company: its expected debit time, else the deadline, else the check date. */
function debitDateOf(payroll: GustoPayroll): string {
  const time = payroll.payroll_status_meta?.expected_debit_time ?? payroll.payroll_deadline;
  return time && /^\d{4}-\d{2}-\d{2}/.test(time) ? time.slice(0, 10) : payroll.check_date!;
}

// ---------------------------------------------------------------------------------------------
// Company benefits

/** POST /v1/companies/{company_id}/company_benefits: create. With the benefit's version, PUT /v1/company_benefits/{id}: update. */
export function companyBenefitBodyOf(benefit: ProviderBenefit): GustoCompanyBenefitCreateBody;
export function companyBenefitBodyOf(benefit: Pick<ProviderBenefit, 'description'>, version: string): GustoCompanyBenefitUpdateBody;
export function companyBenefitBodyOf(
  benefit: ProviderBenefit | Pick<ProviderBenefit, 'description'>,
  version?: string,
): GustoCompanyBenefitCreateBody | GustoCompanyBenefitUpdateBody {
  // Only the description changes after creation (the contract's update); Gusto keeps the type.
  if (version !== undefined) return { version, description: benefit.description };
  const created = benefit as ProviderBenefit;
  // Gusto deducts per pay period only.
  if (created.frequency !== null && created.frequency !== 'every_paycheck') {
    throw unsupported(`Gusto deducts every paycheck only, not ${created.frequency}`);
  }
  // The match (company_contribution) has no place on Gusto's company benefit: it is set on each
  // employee benefit (employeeBenefitBodyOf). The sick-pay fields (responsible_for_*) do not apply.
  return { benefit_type: gustoBenefitTypeOf(created.type), active: true, description: created.description };
}

/**
 * A Gusto company benefit as the provider's benefit under the service's id. Gusto keeps no match
 * on it: pass the one the service created it with, else it is read from a tiered employee
 * benefit (`with_employee_benefits=true`), else null. Null for a Gusto type without a unified one.
 */
export function providerBenefitOf(
  companyBenefit: GustoCompanyBenefit | GustoCompanyBenefitWithEmployeeBenefits,
  benefitId: string,
  companyContribution?: ProviderBenefit['company_contribution'],
): ProviderBenefit | null {
  const type = unifiedBenefitTypeOf(companyBenefit.benefit_type);
  if (type === null) return null;
  const employeeBenefits = 'employee_benefits' in companyBenefit ? (companyBenefit.employee_benefits ?? []) : [];
  const match = companyContribution !== undefined ? companyContribution : (employeeBenefits.map(matchOf).find((m) => m !== null) ?? null);
  return {
    benefit_id: benefitId,
    type,
    description: companyBenefit.description ?? '',
    frequency: 'every_paycheck',
    company_contribution: match,
  };
}

// ---------------------------------------------------------------------------------------------
// Employee benefits

export interface GustoEffectiveDates {
  /** `YYYY-MM-DD` */
  effective_date: string;
  /** `YYYY-MM-DD`, or null for no end; left out, the benefit keeps the one it has. */
  expiration_date?: string | null;
}

const LIMIT_OPTIONS: Readonly<Record<NonNullable<ProviderEnrollmentConfiguration['hsa_contribution_limit']>, GustoLimitOption>> = {
  individual: 'Individual',
  family: 'Family',
};

/**
 * An enrollment as Gusto's employee benefit: with `{ company_benefit_uuid }` the body of POST
 * /v1/employees/{id}/employee_benefits, with `{ version }` the body of PUT /v1/employee_benefits/{id}.
 * Every amount is written, zero included, so an update replaces the whole configuration (the
 * contract's overwrite). The company's part: the individual's own contribution if any, else the
 * benefit's match as tiers, else none ($0).
 */
export function employeeBenefitBodyOf(
  configuration: ProviderEnrollmentConfiguration,
  effective: GustoEffectiveDates,
  target: { company_benefit_uuid: string },
  match?: ProviderBenefit['company_contribution'],
): GustoEmployeeBenefitCreateBody;
export function employeeBenefitBodyOf(
  configuration: ProviderEnrollmentConfiguration,
  effective: GustoEffectiveDates,
  target: { version: string },
  match?: ProviderBenefit['company_contribution'],
): GustoEmployeeBenefitUpdateBody;
export function employeeBenefitBodyOf(
  configuration: ProviderEnrollmentConfiguration,
  effective: GustoEffectiveDates,
  target: { company_benefit_uuid: string } | { version: string },
  match: ProviderBenefit['company_contribution'] = null,
): GustoEmployeeBenefitCreateBody | GustoEmployeeBenefitUpdateBody {
  const deduction = configuration.employee_deduction;
  const contribution = contributionOf(configuration.company_contribution, match);
  const fields = {
    active: true,
    employee_deduction: deduction === null ? '0.00' : deduction.type === 'percent' ? percentOf(deduction.amount) : dollarsOf(deduction.amount),
    deduct_as_percentage: deduction?.type === 'percent',
    employee_deduction_annual_maximum: configuration.annual_maximum === null ? null : dollarsOf(configuration.annual_maximum),
    contribution,
    // Tiers are a match by nature (Gusto assumes elective for them); a fixed or percent contribution is not.
    elective: contribution.type === 'tiered',
    catch_up: configuration.catch_up,
    // Only HSAs take Family/Individual; left out otherwise, so a dependent-care FSA keeps its filing status.
    ...(configuration.hsa_contribution_limit ? { limit_option: LIMIT_OPTIONS[configuration.hsa_contribution_limit] } : {}),
    effective_date: effective.effective_date,
    ...(effective.expiration_date !== undefined ? { expiration_date: effective.expiration_date } : {}),
  };
  return 'version' in target ? { version: target.version, ...fields } : { company_benefit_uuid: target.company_benefit_uuid, ...fields };
}

function contributionOf(
  own: ProviderEnrollmentConfiguration['company_contribution'],
  match: ProviderBenefit['company_contribution'],
): GustoContributionBody {
  if (own) return own.type === 'percent' ? { type: 'percentage', value: percentOf(own.amount) } : { type: 'amount', value: dollarsOf(own.amount) };
  if (match && match.tiers.length > 0) {
    // Same semantics on both sides: cumulative bands of pay, each matched at its rate.
    const tiers = [...match.tiers].sort((a, b) => a.threshold - b.threshold);
    return { type: 'tiered', value: tiers.map((tier) => ({ rate: percentOf(tier.match), threshold: percentOf(tier.threshold) })) };
  }
  return { type: 'amount', value: '0.00' };
}

/**
 * A Gusto employee benefit (an answer, or an item of a company benefit's `employee_benefits`) as
 * the enrollment's configuration. Amounts are read as strings or numbers. A zero fixed amount
 * is no deduction or contribution (Gusto cannot tell them apart: its default is "0.00"); a
 * tiered contribution is the benefit's match (matchOf), not the individual's.
 */
export function enrollmentConfigurationOf(employeeBenefit: GustoEmployeeBenefitRead): ProviderEnrollmentConfiguration {
  const deductionAmount = employeeBenefit.employee_deduction ?? '0';
  const employee_deduction = employeeBenefit.deduct_as_percentage
    ? { type: 'percent' as const, amount: basisPointsOfPercent(deductionAmount) }
    : centsOf(deductionAmount) === 0
      ? null
      : { type: 'fixed' as const, amount: centsOf(deductionAmount) };
  const limit = employeeBenefit.limit_option;
  return {
    employee_deduction,
    company_contribution: ownContributionOf(employeeBenefit),
    annual_maximum: employeeBenefit.employee_deduction_annual_maximum == null ? null : centsOf(employeeBenefit.employee_deduction_annual_maximum),
    catch_up: employeeBenefit.catch_up === true,
    hsa_contribution_limit: limit === 'Family' ? 'family' : limit === 'Individual' ? 'individual' : null,
  };
}

function ownContributionOf(employeeBenefit: GustoEmployeeBenefitRead): ProviderEnrollmentConfiguration['company_contribution'] {
  const contribution = employeeBenefit.contribution;
  if (contribution?.type === 'tiered') return null;
  const fixedOrPercent = (value: GustoAmount, percent: boolean) =>
    percent ? { type: 'percent' as const, amount: basisPointsOfPercent(value) } : centsOf(value) === 0 ? null : { type: 'fixed' as const, amount: centsOf(value) };
  if (contribution?.type === 'amount' || contribution?.type === 'percentage') {
    const value = contribution.value;
    if (typeof value !== 'string' && typeof value !== 'number') return null;
    return fixedOrPercent(value, contribution.type === 'percentage');
  }
  // Older answers carry only the deprecated pair.
  if (employeeBenefit.company_contribution !== undefined) return fixedOrPercent(employeeBenefit.company_contribution, employeeBenefit.contribute_as_percentage === true);
  return null;
}

/** The match of a tiered employee benefit (tiers as an array in requests, in `{ tiers }` in answers); null otherwise. */
export function matchOf(employeeBenefit: GustoEmployeeBenefitRead): ProviderBenefit['company_contribution'] {
  const contribution = employeeBenefit.contribution;
  if (contribution?.type !== 'tiered') return null;
  const value = contribution.value;
  const tiers = Array.isArray(value) ? value : typeof value === 'object' && value !== null ? (value.tiers ?? []) : [];
  const read = tiers
    .filter((tier) => tier.rate !== undefined && tier.threshold !== undefined)
    .map((tier) => ({ match: basisPointsOfPercent(tier.rate!), threshold: basisPointsOfPercent(tier.threshold!) }));
  return read.length > 0 ? { type: 'match', tiers: read } : null;
}

// ---------------------------------------------------------------------------------------------
// Small readers

function unsupported(message: string): DomainError {
  return new DomainError('unprocessable_request_error', message, { serviceCode: 'unsupported_paramters' });
}

/** A trimmed string, or null for absent, null or blank (Gusto writes "" for "none" in places). */
function nonEmpty(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

/** Case, spaces and punctuation aside: "401K" is "401(k)", "Regular Hours" is "regular hours". */
function nameKey(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

function isActiveAddress(address: GustoCompanyAddress): boolean {
  return address.active !== false && address.inactive !== true;
}

function addressOf(address: GustoCompanyAddress | GustoHomeAddress): AddressFromGusto {
  return {
    line1: nonEmpty(address.street_1),
    line2: nonEmpty(address.street_2),
    city: nonEmpty(address.city),
    state: nonEmpty(address.state),
    postal_code: nonEmpty(address.zip),
    country: countryOf(address.country),
  };
}

/** ISO 3166 two letters, as the contract has them; Gusto writes "USA" (its default). */
function countryOf(country: string | null | undefined): string | null {
  const value = nonEmpty(country)?.toUpperCase() ?? null;
  return value === 'USA' || value === 'UNITED STATES' ? 'US' : value;
}

/**
 * A US phone number in E.164 (`+14155550100`, with ` x123` for an extension, as the contract
 * writes it). Gusto stores them as typed ("1-565-710-7559", "4160000000"). Null when it is not
 * one: no guess at foreign numbers.
 */
function e164Of(phone: string | null | undefined): string | null {
  const text = nonEmpty(phone);
  if (!text) return null;
  const [, number, extension] = /^(.*?)(?:\s*(?:x|ext\.?|extension)\s*(\d+))?$/i.exec(text) ?? [];
  const digits = (number ?? '').replace(/\D/g, '');
  const national = digits.length === 11 && digits.startsWith('1') ? digits.slice(1) : digits.length === 10 && !number.trim().startsWith('+') ? digits : null;
  if (!national) return null;
  return `+1${national}${extension ? ` x${extension}` : ''}`;
}
