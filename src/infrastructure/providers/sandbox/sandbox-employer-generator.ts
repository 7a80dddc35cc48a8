import { Address, CompanyRecord, EmploymentRecord, IndividualRecord } from '../../../domain/employer/unified-records';
import { BenefitType, MatchTier } from '../../../domain/payroll/payroll.types';
import { benefitSupportOf, BenefitFeaturesAndOperations, ProviderDescriptor } from '../../../domain/providers/provider';
import {
  BANKS,
  CITIES,
  City,
  COMPANY_ENTITIES,
  DEPARTMENTS,
  EIN_PREFIXES,
  ETHNICITIES,
  EXECUTIVE_DEPARTMENT,
  FEMALE_FIRST_NAMES,
  HOURLY_DEPARTMENTS,
  LAST_NAMES,
  MALE_FIRST_NAMES,
  MARITAL_STATUSES,
  NEUTRAL_FIRST_NAMES,
  STAFF_TITLES,
  STREET_NAMES,
} from './sandbox-employer.data';
import { addDays, addMonths, addYears, daysBetween, regularPayDatesBetween, yearsBetween } from './sandbox-pay-calendar';
import { SandboxBenefit, SandboxEnrollment, SandboxEnrollmentConfiguration, SandboxPerson } from './sandbox-payroll.types';
import { SeededRandom } from './seeded-random';

/**
 * Generates a sandbox employer: company, people with their employment, pay groups, the
 * deductions the provider already runs and who is enrolled, and the plan of its pay history.
 * Pure and deterministic: the same input gives deep-equal output, ids included (UUID v4
 * format, minted from a PRNG seeded with `seed`). Each employee draws from their own stream,
 * so employee #n is the same person whatever the size (their place in the org chart may differ).
 */

export const MAX_EMPLOYEE_SIZE = 10_000;

export interface SandboxEmployerSpec {
  /** The connection entity's id: one entity is one employer. */
  seed: string;
  employeeSize: number;
  /**
   * The company's id. The store passes the entity id: a connection's `company_id` is its first
   * entity's id, so introspect and `GET /employer/company` name the same company.
   */
  companyId: string;
  /** The entity's name. */
  legalName: string;
  /** Generation date, `YYYY-MM-DD`: ages, start dates and pay history are relative to it. */
  today: string;
  provider: ProviderDescriptor;
  authenticationType: string;
}

export interface PlannedPayRun {
  paymentId: string;
  payDate: string;
  kind: 'regular_payroll' | 'off_cycle_payroll';
}

export interface GeneratedPayGroup {
  id: string;
  name: string;
  pay_frequencies: string[];
}

export interface GeneratedEmployer {
  company: CompanyRecord;
  /** In directory order: the CEO, department heads, then staff. Managers precede their reports. */
  people: SandboxPerson[];
  payGroups: GeneratedPayGroup[];
  benefits: SandboxBenefit[];
  enrollments: SandboxEnrollment[];
  /** Regular bi-weekly runs of the six months up to `today`, plus one off-cycle bonus run; by date. */
  payRuns: PlannedPayRun[];
}

/** Whether the provider pays people (an HR-only system has no pay runs or deductions). */
export function runsPayroll(provider: ProviderDescriptor): boolean {
  return provider.products.includes('payment') || provider.products.includes('pay_statement');
}

export function generateSandboxEmployer(spec: SandboxEmployerSpec): GeneratedEmployer {
  if (!Number.isInteger(spec.employeeSize) || spec.employeeSize < 0 || spec.employeeSize > MAX_EMPLOYEE_SIZE) {
    throw new RangeError(`employeeSize must be a whole number from 0 to ${MAX_EMPLOYEE_SIZE}`);
  }
  const random = SeededRandom.derive(spec.seed, 'company');
  const company = generateCompany(random, spec);
  const payGroups: GeneratedPayGroup[] = [
    { id: random.uuid(), name: 'Bi-weekly salaried', pay_frequencies: ['bi_weekly'] },
    { id: random.uuid(), name: 'Bi-weekly hourly', pay_frequencies: ['bi_weekly'] },
  ];
  const people = generatePeople(spec, company, { salaried: payGroups[0].id, hourly: payGroups[1].id });
  const payroll = runsPayroll(spec.provider);
  const benefits = payroll ? generateBenefits(random, spec) : [];
  const enrollments = generateEnrollments(spec, people, benefits);
  const payRuns = payroll ? planPayHistory(random, spec.today) : [];
  return { company, people, payGroups, benefits, enrollments, payRuns };
}

// ---------------------------------------------------------------------------------------------
// Company

function generateCompany(random: SeededRandom, spec: SandboxEmployerSpec): CompanyRecord {
  const domain = emailDomainOf(spec.legalName, spec.seed);
  const headquarters = random.pick(CITIES);
  const locationCount = spec.employeeSize < 50 ? random.int(1, 2) : random.int(2, 3);
  const cities = [headquarters, ...distinctCities(random, locationCount - 1, [headquarters])];
  const departments: CompanyRecord['departments'] = [{ name: EXECUTIVE_DEPARTMENT, parent: null }];
  for (const department of DEPARTMENTS) {
    departments.push({ name: department.name, parent: null });
    for (const child of department.children) departments.push({ name: child, parent: { name: department.name } });
  }
  const bank = random.pick(BANKS);
  return {
    id: spec.companyId,
    legal_name: spec.legalName,
    entity: { ...random.weighted(COMPANY_ENTITIES) },
    ein: `${random.pick(EIN_PREFIXES)}-${random.digits(7)}`,
    primary_email: `payroll-admin@${domain}`,
    primary_phone_number: phoneNumber(random, headquarters),
    departments,
    locations: cities.map((city) => address(random, city, random.chance(0.5) ? `Suite ${random.int(100, 950)}` : null)),
    accounts: [
      {
        routing_number: routingNumber(random),
        account_name: 'Payroll',
        institution_name: bank,
        account_type: 'checking',
        account_number: random.digits(random.int(9, 12)),
      },
      {
        routing_number: routingNumber(random),
        account_name: 'Operating reserve',
        institution_name: bank,
        account_type: 'savings',
        account_number: random.digits(random.int(9, 12)),
      },
    ],
  };
}

function distinctCities(random: SeededRandom, count: number, taken: City[]): City[] {
  const chosen: City[] = [];
  while (chosen.length < count) {
    const city = random.pick(CITIES);
    if (!taken.includes(city) && !chosen.includes(city)) chosen.push(city);
  }
  return chosen;
}

/** `.example` is reserved (RFC 2606): generated addresses can never reach anyone. */
function emailDomainOf(legalName: string, seed: string): string {
  const slug = legalName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${slug || `employer-${seed.slice(0, 8)}`}.example`;
}

function address(random: SeededRandom, city: City, line2: string | null): Address {
  return {
    line1: `${random.int(1, 9899)} ${random.pick(STREET_NAMES)}`,
    line2,
    city: city.city,
    state: city.state,
    postal_code: city.postalCode,
    country: 'US',
  };
}

/** E.164 in the city's area code; exchange 555 avoided (reserved for fiction, but looks fake). */
function phoneNumber(random: SeededRandom, city: City): string {
  let exchange = random.int(201, 989);
  if (exchange === 555) exchange = 556;
  return `+1${city.areaCode}${exchange}${random.digits(4)}`;
}

/** Nine digits with a valid ABA checksum. */
function routingNumber(random: SeededRandom): string {
  const digits = [random.int(0, 1), random.int(0, 9), ...[0, 0, 0, 0, 0, 0].map(() => random.int(0, 9))];
  const weights = [3, 7, 1, 3, 7, 1, 3, 7];
  const sum = digits.reduce((total, digit, i) => total + digit * weights[i], 0);
  return [...digits, (10 - (sum % 10)) % 10].join('');
}

// ---------------------------------------------------------------------------------------------
// People

type Role = 'ceo' | 'head' | 'manager' | 'staff';

interface Slot {
  role: Role;
  department: string;
  /** Position of the manager in `people`; null for the CEO. */
  managerIndex: number | null;
  title: string | null;
}

/** Who reports to whom: CEO → department heads → team managers → staff (managers come first). */
function orgChart(spec: SandboxEmployerSpec): Slot[] {
  const size = spec.employeeSize;
  const random = SeededRandom.derive(spec.seed, 'org-chart');
  const slots: Slot[] = [];
  if (size === 0) return slots;
  slots.push({ role: 'ceo', department: EXECUTIVE_DEPARTMENT, managerIndex: null, title: 'Chief Executive Officer' });
  const headCount = Math.min(DEPARTMENTS.length, size - 1, Math.max(1, Math.ceil(size / 6)));
  const staffed = DEPARTMENTS.slice(0, headCount);
  const heads = new Map<string, number>();
  for (const department of staffed) {
    heads.set(department.name, slots.length);
    slots.push({ role: 'head', department: department.name, managerIndex: 0, title: `Head of ${department.name}` });
  }
  // Teams of about eight: every ninth person of a department (when it is big enough) manages the next ones.
  const teams = new Map<string, { managerIndex: number | null; members: number }>();
  const large = size >= 60;
  while (slots.length < size) {
    const parent = random.weighted(staffed.map((d) => [d, d.weight] as const));
    const department = parent.children.length > 0 && random.chance(0.7) ? random.pick(parent.children) : parent.name;
    const team = teams.get(department) ?? { managerIndex: null, members: 0 };
    teams.set(department, team);
    const headIndex = heads.get(parent.name)!;
    if (large && team.members % 9 === 0) {
      team.managerIndex = slots.length;
      slots.push({ role: 'manager', department, managerIndex: headIndex, title: `${department} Manager` });
    } else {
      slots.push({ role: 'staff', department, managerIndex: team.managerIndex ?? headIndex, title: null });
    }
    team.members++;
  }
  return slots;
}

function generatePeople(spec: SandboxEmployerSpec, company: CompanyRecord, payGroups: { salaried: string; hourly: string }): SandboxPerson[] {
  const slots = orgChart(spec);
  const ids = slots.map((_, index) => SeededRandom.derive(spec.seed, `person:${index}`).uuid());
  const workDomain = company.primary_email.split('@')[1];
  const workEmails = new Set<string>();
  return slots.map((slot, index) => {
    // The id was drawn first from this stream; the rest of the person follows it.
    const random = SeededRandom.derive(spec.seed, `person:${index}`);
    const id = random.uuid();
    const gender = random.weighted([
      ['female', 48],
      ['male', 48],
      ['other', 2],
      ['decline_to_specify', 2],
    ] as const);
    const firstName =
      gender === 'female' ? random.pick(FEMALE_FIRST_NAMES) : gender === 'male' ? random.pick(MALE_FIRST_NAMES) : random.pick(NEUTRAL_FIRST_NAMES);
    const middleName = random.chance(0.6)
      ? random.pick(random.chance(0.5) ? FEMALE_FIRST_NAMES : MALE_FIRST_NAMES)
      : null;
    const lastName = random.pick(LAST_NAMES);
    const preferredName = random.chance(0.1) ? random.pick(NEUTRAL_FIRST_NAMES) : firstName;
    const workEmail = uniqueEmail(`${emailPart(firstName)}.${emailPart(lastName)}`, workDomain, workEmails);
    const location = company.locations[random.chance(0.6) ? 0 : random.int(0, company.locations.length - 1)];
    const homeCity = random.chance(0.75)
      ? (CITIES.find((c) => c.city === location.city && c.state === location.state) ?? random.pick(CITIES))
      : random.pick(CITIES);
    const dob = dateOfBirth(random, spec.today);
    const individual: IndividualRecord = {
      id,
      first_name: firstName,
      middle_name: middleName,
      last_name: lastName,
      preferred_name: preferredName,
      emails: [
        { data: workEmail, type: 'work' },
        { data: `${emailPart(firstName)}${emailPart(lastName)}${random.int(1, 99)}@${random.pick(['example.com', 'example.net', 'example.org'])}`, type: 'personal' },
      ],
      phone_numbers: [{ data: phoneNumber(random, homeCity), type: 'personal' }],
      gender,
      ethnicity: random.weighted(ETHNICITIES),
      marital_status: random.weighted(MARITAL_STATUSES),
      dob,
      residence: address(random, homeCity, random.chance(0.25) ? `Apt ${random.int(1, 40)}${random.pick(['A', 'B', 'C', ''])}` : null),
      ssn: socialSecurityNumber(random),
    };
    const employment = generateEmployment(random, spec, slot, {
      id,
      names: { first_name: firstName, middle_name: middleName, last_name: lastName },
      managerId: slot.managerIndex === null ? null : ids[slot.managerIndex],
      location,
      workEmail,
      dob,
      payGroups,
    });
    return { individual, employment, paymentMethod: random.chance(0.9) ? 'direct_deposit' : 'check' };
  });
}

function emailPart(name: string): string {
  return name.toLowerCase().replace(/[^a-z]/g, '');
}

function uniqueEmail(local: string, domain: string, taken: Set<string>): string {
  let email = `${local}@${domain}`;
  for (let n = 2; taken.has(email); n++) email = `${local}${n}@${domain}`;
  taken.add(email);
  return email;
}

/** Ages 20 to 70 on `today`, most between 25 and 55. */
function dateOfBirth(random: SeededRandom, today: string): string {
  const age = random.weighted([
    [random.int(20, 24), 10],
    [random.int(25, 39), 45],
    [random.int(40, 54), 30],
    [random.int(55, 70), 15],
  ] as const);
  // Born between (age + 1) years and age years ago: the age on `today` is exactly `age`.
  const latest = addYears(today, -age);
  const earliest = addDays(addYears(today, -(age + 1)), 1);
  const span = Math.max(0, daysBetween(earliest, latest));
  return addDays(earliest, random.int(0, span));
}

/** Area 001–899 except 666 (never 000, 666 or 9xx), group 01–99, serial 0001–9999. */
function socialSecurityNumber(random: SeededRandom): string {
  let area = random.int(1, 898);
  if (area >= 666) area++;
  return `${String(area).padStart(3, '0')}-${String(random.int(1, 99)).padStart(2, '0')}-${String(random.int(1, 9999)).padStart(4, '0')}`;
}

interface EmploymentContext {
  id: string;
  names: Pick<EmploymentRecord, 'first_name' | 'middle_name' | 'last_name'>;
  managerId: string | null;
  location: Address;
  workEmail: string;
  dob: string;
  payGroups: { salaried: string; hourly: string };
}

function generateEmployment(random: SeededRandom, spec: SandboxEmployerSpec, slot: Slot, context: EmploymentContext): EmploymentRecord {
  const staff = slot.role === 'staff';
  const kind: EmploymentRecord['employment'] = !staff
    ? { type: 'employee', subtype: 'full_time' }
    : random.weighted([
        [{ type: 'employee', subtype: 'full_time' }, 86],
        [{ type: 'employee', subtype: 'part_time' }, 7],
        [{ type: 'employee', subtype: 'intern' }, 2],
        [{ type: 'contractor', subtype: 'individual_contractor' }, 5],
      ] as const);
  const hourly =
    kind.type === 'contractor' ||
    kind.subtype === 'part_time' ||
    kind.subtype === 'intern' ||
    (staff && HOURLY_DEPARTMENTS.has(slot.department) && random.chance(0.5));
  // Nobody starts before turning 18.
  const earliestStart = addYears(context.dob, 18);
  const yearsAgo = { ceo: [4, 12], head: [1, 8], manager: [1, 7], staff: [0, 8] }[slot.role];
  let startDate = addDays(spec.today, -random.int(yearsAgo[0] * 365, yearsAgo[1] * 365));
  // Some recent hires, so the pay history shows people joining.
  if (staff && random.chance(0.08)) startDate = addDays(spec.today, -random.int(0, 180));
  if (startDate < earliestStart) startDate = earliestStart;
  if (startDate > spec.today) startDate = spec.today;
  // A few people have left: some of them within the pay history, so earlier runs paid them.
  let endDate: string | null = null;
  if (staff && random.chance(0.06)) {
    const candidate = addDays(spec.today, -random.int(7, 540));
    endDate = candidate > startDate ? candidate : null;
  }
  const income = hourly ? hourlyWage(random, slot) : yearlySalary(random, slot);
  const raisedOn = addYears(startDate, 1) <= spec.today ? addDays(addYears(startDate, 1), random.int(0, 60)) : null;
  const incomeHistory: EmploymentRecord['income_history'] = [];
  if (raisedOn && raisedOn <= (endDate ?? spec.today)) {
    const before = roundTo(Math.round(income / (1 + random.int(3, 9) / 100)), hourly ? 25 : 50_000);
    incomeHistory.push({ unit: hourly ? 'hourly' : 'yearly', amount: before, currency: 'usd', effective_date: startDate });
    incomeHistory.push({ unit: hourly ? 'hourly' : 'yearly', amount: income, currency: 'usd', effective_date: raisedOn });
  } else {
    incomeHistory.push({ unit: hourly ? 'hourly' : 'yearly', amount: income, currency: 'usd', effective_date: startDate });
  }
  return {
    id: context.id,
    ...context.names,
    title: slot.title ?? random.pick(STAFF_TITLES[slot.department] ?? ['Associate']),
    manager: context.managerId === null ? null : { id: context.managerId },
    department: { name: slot.department },
    employment: kind,
    start_date: startDate,
    end_date: endDate,
    is_active: endDate === null,
    class_code: null,
    location: context.location,
    income: incomeHistory[incomeHistory.length - 1],
    income_history: incomeHistory,
    work_email: context.workEmail,
    // Contractors are paid outside payroll.
    pay_group_ids: kind.type === 'contractor' ? [] : [hourly ? context.payGroups.hourly : context.payGroups.salaried],
  };
}

/** What the generator gives a staff member it makes itself: filled in for a person added without them. */
export interface GeneratedHireDefaults {
  dob: string;
  title: string;
  /** Cents a year. */
  yearlySalary: number;
}

/**
 * A date of birth (20 to 70 years old on `startDate`), a title of the department (`Associate`
 * without one) and a staff salary, drawn as the generator draws them; the same `seed` gives
 * the same answer, so a request sent again adds the same person.
 */
export function generatedHireDefaults(seed: string, startDate: string, department: string | null): GeneratedHireDefaults {
  const random = new SeededRandom(seed);
  const slot: Slot = { role: 'staff', department: department ?? '', managerIndex: null, title: null };
  return {
    dob: dateOfBirth(random, startDate),
    title: random.pick(STAFF_TITLES[slot.department] ?? ['Associate']),
    yearlySalary: yearlySalary(random, slot),
  };
}

/** Cents per year, rounded to $500. */
function yearlySalary(random: SeededRandom, slot: Slot): number {
  const [low, high] = { ceo: [220_000, 360_000], head: [160_000, 260_000], manager: [120_000, 195_000], staff: [52_000, 175_000] }[slot.role];
  return roundTo(random.int(low, high) * 100, 50_000);
}

/** Cents per hour, rounded to a quarter. */
function hourlyWage(random: SeededRandom, slot: Slot): number {
  return roundTo(random.int(1_700, slot.department === 'Engineering' ? 9_500 : 4_800), 25);
}

function roundTo(value: number, step: number): number {
  return Math.max(step, Math.round(value / step) * step);
}

// ---------------------------------------------------------------------------------------------
// Benefits and enrollments

interface BenefitPlan {
  /** The first type the provider supports is used. */
  types: BenefitType[];
  description: string;
}

const BENEFIT_PLANS: BenefitPlan[] = [
  { types: ['401k', '403b', 'simple_ira', '457'], description: 'Retirement Plan' },
  { types: ['s125_medical'], description: 'Medical Insurance' },
  { types: ['s125_dental'], description: 'Dental Insurance' },
  { types: ['hsa_pre'], description: 'Health Savings Account' },
  { types: ['fsa_medical'], description: 'Medical FSA' },
];

/** 100% of deferrals up to 3% of pay, then 50% of deferrals up to 5%. */
const RETIREMENT_MATCH: MatchTier[] = [
  { match: 10_000, threshold: 300 },
  { match: 5_000, threshold: 500 },
];

function supportOf(spec: SandboxEmployerSpec, type: BenefitType): BenefitFeaturesAndOperations | null {
  return benefitSupportOf(spec.provider, type, spec.authenticationType);
}

/** The deductions the employer already runs, limited to what the provider supports. */
function generateBenefits(random: SeededRandom, spec: SandboxEmployerSpec): SandboxBenefit[] {
  const benefits: SandboxBenefit[] = [];
  for (const plan of BENEFIT_PLANS) {
    const type = plan.types.find((t) => supportOf(spec, t) !== null);
    if (!type) continue;
    const features = supportOf(spec, type)!.supported_features;
    if (!features.frequencies.includes('every_paycheck')) continue;
    const match = features.company_contribution?.includes('match') && plan === BENEFIT_PLANS[0];
    benefits.push({
      benefit_id: random.uuid(),
      type,
      description: type === '401k' ? '401(k) Retirement Plan' : type === '403b' ? '403(b) Retirement Plan' : plan.description,
      frequency: 'every_paycheck',
      company_contribution: match ? { type: 'match', tiers: RETIREMENT_MATCH.map((t) => ({ ...t })) } : null,
    });
  }
  return benefits;
}

function generateEnrollments(spec: SandboxEmployerSpec, people: SandboxPerson[], benefits: SandboxBenefit[]): SandboxEnrollment[] {
  const enrollments: SandboxEnrollment[] = [];
  const find = (...types: BenefitType[]) => benefits.find((b) => types.includes(b.type));
  const retirement = find('401k', '403b', 'simple_ira', '457');
  const medical = find('s125_medical');
  const dental = find('s125_dental');
  const hsa = find('hsa_pre');
  const fsa = find('fsa_medical');
  people.forEach(({ employment, individual }, index) => {
    if (employment.employment.type !== 'employee' || employment.employment.subtype === 'intern') return;
    const random = SeededRandom.derive(spec.seed, `enrollments:${index}`);
    const age = yearsBetween(individual.dob, spec.today);
    // Most enrolled when they joined (or a year ago); some only recently, inside the pay history.
    const since = employment.start_date > addYears(spec.today, -1) ? employment.start_date : addYears(spec.today, -1);
    const recently = addDays(spec.today, -random.int(20, 150));
    const effectiveDate = random.chance(0.85) || recently < since ? since : recently;
    const endedOn = employment.end_date === null ? null : addDays(employment.end_date, 1);
    if (endedOn !== null && endedOn <= effectiveDate) return;
    const add = (benefit: SandboxBenefit, configuration: SandboxEnrollmentConfiguration) =>
      enrollments.push({
        benefit_id: benefit.benefit_id,
        individual_id: individual.id,
        effective_date: effectiveDate,
        configuration,
        ended_on: endedOn,
      });
    if (retirement && random.chance(0.65)) add(retirement, retirementConfiguration(random, spec, retirement, age));
    const fullTime = employment.employment.subtype === 'full_time';
    let onMedical = false;
    if (medical && fullTime && random.chance(0.7)) {
      onMedical = true;
      add(medical, healthConfiguration(random, spec, medical, [6_500, 24_000], [20_000, 45_000]));
    }
    if (dental && fullTime && random.chance(0.6)) add(dental, healthConfiguration(random, spec, dental, [1_000, 3_500], [500, 2_000]));
    if (hsa && onMedical && random.chance(0.3)) add(hsa, hsaConfiguration(random, spec, hsa, age));
    else if (fsa && onMedical && random.chance(0.12)) add(fsa, healthConfiguration(random, spec, fsa, [4_000, 12_000], null));
  });
  return enrollments;
}

function retirementConfiguration(
  random: SeededRandom,
  spec: SandboxEmployerSpec,
  benefit: SandboxBenefit,
  age: number,
): SandboxEnrollmentConfiguration {
  const features = supportOf(spec, benefit.type)!.supported_features;
  // Some save hard enough for the annual limit to matter within the year.
  const highSaver = random.chance(0.15);
  const employeeDeduction = features.employee_deduction?.includes('percent')
    ? { type: 'percent' as const, amount: highSaver ? random.pick([2_000, 2_500, 3_000]) : random.pick([300, 400, 500, 600, 800, 1_000]) }
    : { type: 'fixed' as const, amount: highSaver ? random.int(80, 120) * 1_000 : random.int(5, 40) * 1_000 };
  // Without a company-wide match, a per-employee contribution where the provider takes one.
  const contributionTypes = features.company_contribution ?? [];
  const companyContribution =
    benefit.company_contribution !== null
      ? null
      : contributionTypes.includes('percent')
        ? { type: 'percent' as const, amount: 300 }
        : contributionTypes.includes('fixed')
          ? { type: 'fixed' as const, amount: 5_000 }
          : null;
  return {
    employee_deduction: employeeDeduction,
    company_contribution: companyContribution,
    annual_maximum: features.annual_maximum && (highSaver || random.chance(0.1)) ? random.int(8, 20) * 100_000 : null,
    catch_up: features.catch_up === true && age >= 50 && random.chance(0.6),
    hsa_contribution_limit: null,
  };
}

function healthConfiguration(
  random: SeededRandom,
  spec: SandboxEmployerSpec,
  benefit: SandboxBenefit,
  employeeCents: [number, number],
  companyCents: [number, number] | null,
): SandboxEnrollmentConfiguration {
  const features = supportOf(spec, benefit.type)!.supported_features;
  const employeeDeduction = features.employee_deduction?.includes('fixed')
    ? { type: 'fixed' as const, amount: roundTo(random.int(...employeeCents), 100) }
    : { type: 'percent' as const, amount: random.int(100, 300) };
  const companyContribution =
    companyCents && features.company_contribution?.includes('fixed')
      ? { type: 'fixed' as const, amount: roundTo(random.int(...companyCents), 100) }
      : null;
  return { employee_deduction: employeeDeduction, company_contribution: companyContribution, annual_maximum: null, catch_up: false, hsa_contribution_limit: null };
}

function hsaConfiguration(random: SeededRandom, spec: SandboxEmployerSpec, benefit: SandboxBenefit, age: number): SandboxEnrollmentConfiguration {
  const features = supportOf(spec, benefit.type)!.supported_features;
  const limits = features.hsa_contribution_limit ?? [];
  const employeeDeduction = features.employee_deduction?.includes('fixed')
    ? { type: 'fixed' as const, amount: roundTo(random.int(5_000, 30_000), 500) }
    : { type: 'percent' as const, amount: random.int(100, 400) };
  const companyContribution = features.company_contribution?.includes('fixed') ? { type: 'fixed' as const, amount: random.pick([2_500, 5_000]) } : null;
  return {
    employee_deduction: employeeDeduction,
    company_contribution: companyContribution,
    annual_maximum: features.annual_maximum && random.chance(0.1) ? random.int(20, 40) * 10_000 : null,
    catch_up: features.catch_up === true && age >= 55 && random.chance(0.7),
    hsa_contribution_limit: limits.length === 0 ? null : random.pick(limits),
  };
}

// ---------------------------------------------------------------------------------------------
// Pay history

/** Every regular pay date of the six months up to `today`, and one off-cycle bonus run midway. */
export function planPayHistory(random: SeededRandom, today: string): PlannedPayRun[] {
  const regular = regularPayDatesBetween(addMonths(today, -6), today);
  const runs: PlannedPayRun[] = regular.map((payDate) => ({ paymentId: '', payDate, kind: 'regular_payroll' as const }));
  if (regular.length > 0) {
    // The Wednesday after a mid-history payday.
    const bonusDate = addDays(regular[Math.floor(regular.length / 2)], 5);
    if (bonusDate <= today) runs.push({ paymentId: '', payDate: bonusDate, kind: 'off_cycle_payroll' });
  }
  runs.sort((a, b) => (a.payDate < b.payDate ? -1 : a.payDate > b.payDate ? 1 : 0));
  for (const run of runs) run.paymentId = random.uuid();
  return runs;
}
