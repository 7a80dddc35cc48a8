import { Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { Connection } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import {
  Address,
  CompanyRecord,
  EmploymentRecord,
  IndividualRecord,
  PayGroupRecord,
  PayStatementRecord,
} from '../../domain/employer/unified-records';
import { taxTreatmentOf } from '../../domain/payroll/benefit-tax-treatment';
import { EmployerRef, employerRefOf } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, invalidRequest, notFound } from '../../domain/shared/domain-error';
import { SandboxEmployerStore } from '../../infrastructure/providers/sandbox/sandbox-employer.store';
import { addDays, daysBetween, payPeriodOf } from '../../infrastructure/providers/sandbox/sandbox-pay-calendar';
import { generatedHireDefaults } from '../../infrastructure/providers/sandbox/sandbox-employer-generator';
import { isPaidInPeriod } from '../../infrastructure/providers/sandbox/sandbox-pay-run';
import { NewSandboxPerson, SandboxPerson } from '../../infrastructure/providers/sandbox/sandbox-payroll.types';
import { AddressDto, IncomeDto, SANDBOX_CURRENCY } from './dto/sandbox-fields.dto';
import { NewSandboxIndividualDto, UpdateSandboxEmploymentDto, UpdateSandboxIndividualDto } from './dto/sandbox-person.dto';
import { MAX_STATEMENT_CENTS, RunSandboxPaymentDto, SandboxPayStatementDto } from './dto/run-sandbox-payment.dto';
import { UpdateSandboxCompanyDto } from './dto/update-sandbox-company.dto';

/** Problems listed in one error message at most; the rest are counted. */
const MAX_LISTED_PROBLEMS = 20;
/** How far ahead a sandbox pay run may be dated. */
const MAX_DAYS_AHEAD = 365;

type Income = EmploymentRecord['income'];

/** A new individual as `POST /sandbox/directory` returns it: the individual and employment fields in one record. */
export type SandboxPersonRecord = IndividualRecord & Omit<EmploymentRecord, 'id' | 'first_name' | 'middle_name' | 'last_name'>;

/**
 * The sandbox edits: changes a developer makes to their sandbox employer, as if made in the
 * provider's own payroll system. They act on the store directly (no provider latency) and show
 * at once in live reads, which read the same store, and in synced reads once the sync the edit
 * starts completes (SandboxEditSyncs, called by the controller). Only sandbox connections may edit.
 */
@Injectable()
export class SandboxPayrollService {
  constructor(
    private readonly store: SandboxEmployerStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async updateCompany(connection: Connection, entity: ConnectionEntity, body: UpdateSandboxCompanyDto): Promise<CompanyRecord> {
    const ref = sandboxRefOf(connection, entity);
    assertSomethingToUpdate(body);
    const patch: Partial<Omit<CompanyRecord, 'id'>> = {};
    if (body.legal_name !== undefined) patch.legal_name = body.legal_name;
    if (body.entity !== undefined) patch.entity = { type: body.entity.type, subtype: body.entity.subtype ?? null };
    if (body.ein !== undefined) patch.ein = body.ein;
    if (body.primary_email !== undefined) patch.primary_email = body.primary_email;
    if (body.primary_phone_number !== undefined) patch.primary_phone_number = body.primary_phone_number;
    if (body.departments !== undefined) {
      patch.departments = body.departments.map((d) => ({ name: d.name, parent: d.parent ? { name: d.parent.name } : null }));
      assertDepartmentTree(patch.departments);
    }
    if (body.locations !== undefined) patch.locations = body.locations.map(addressOf);
    if (body.accounts !== undefined) patch.accounts = body.accounts.map((a) => ({ ...a }));
    return this.store.updateCompany(ref, patch);
  }

  /** Adds employees at the end of the directory, all or none; the store mints their ids (UUID v4). */
  async addIndividuals(connection: Connection, entity: ConnectionEntity, body: NewSandboxIndividualDto[]): Promise<SandboxPersonRecord[]> {
    const ref = sandboxRefOf(connection, entity);
    const today = this.today();
    const company = await this.store.company(ref);
    const departments = new Set(company.departments.map((d) => d.name));
    const managerIds = [...new Set(body.flatMap((p) => (p.manager ? [p.manager.id] : [])))];
    const knownManagers = new Set((await this.store.employments(ref, managerIds)).map((e) => e.id));
    const payGroups = await this.store.payGroups(ref);
    const problems: string[] = [];
    const people = body.map((given, index): NewSandboxPerson => {
      const at = `[${index}]`;
      const person = withGeneratedDefaults(given, `${ref.connectionId}:${ref.entityId}:${index}:${given.first_name}:${given.last_name}`, today);
      problems.push(...datesProblems(at, { dob: person.dob, start: person.start_date, end: person.end_date ?? null, today }));
      if (person.department && !departments.has(person.department.name)) {
        problems.push(unknownDepartment(`${at}.department.name`, person.department.name));
      }
      if (person.manager && !knownManagers.has(person.manager.id)) {
        problems.push(`${at}.manager.id: no individual ${person.manager.id} at this employer`);
      }
      const startDate = person.start_date ?? today;
      const endDate = person.end_date ?? null;
      const location = person.location ? addressOf(person.location) : company.locations.at(0);
      if (!location) problems.push(`${at}.location: required, since the company has no locations`);
      const income = incomeOf(person.income, person.income.effective_date ?? startDate);
      const employment = person.employment ?? { type: 'employee' as const, subtype: 'full_time' as const };
      const emails = person.emails ?? [];
      return {
        individual: {
          first_name: person.first_name,
          middle_name: person.middle_name ?? null,
          last_name: person.last_name,
          preferred_name: person.preferred_name ?? null,
          emails: emails.map((e) => ({ ...e })),
          phone_numbers: (person.phone_numbers ?? []).map((p) => ({ ...p })),
          gender: person.gender ?? 'decline_to_specify',
          ethnicity: person.ethnicity ?? 'decline_to_specify',
          marital_status: person.marital_status ?? 'unknown',
          dob: person.dob,
          // People mostly live where they work; the state of residence decides state income tax.
          // Never stored without a location: throwIfProblems below stops the request first.
          residence: person.residence ? addressOf(person.residence) : location!,
          ssn: person.ssn ?? null,
        },
        employment: {
          title: person.title,
          manager: person.manager ? { id: person.manager.id } : null,
          department: person.department ? { name: person.department.name } : null,
          employment: { type: employment.type, subtype: employment.subtype },
          start_date: startDate,
          end_date: endDate,
          is_active: person.is_active ?? activeWith(endDate, today),
          class_code: person.class_code ?? null,
          location: location!,
          income,
          income_history: [income],
          work_email: emails.find((e) => e.type === 'work')?.data ?? null,
          pay_group_ids: payGroupIdsFor(payGroups, employment.type, income.unit),
        },
      };
    });
    throwIfProblems(problems);
    const added = await this.store.addIndividuals(ref, people);
    return added.map(personRecordOf);
  }

  async updateIndividual(
    connection: Connection,
    entity: ConnectionEntity,
    individualId: string,
    body: UpdateSandboxIndividualDto,
  ): Promise<IndividualRecord> {
    const ref = sandboxRefOf(connection, entity);
    assertIndividualId(individualId);
    assertSomethingToUpdate(body);
    throwIfProblems(body.dob === undefined ? [] : datesProblems('', { dob: body.dob, start: undefined, end: null, today: this.today() }));
    const patch: Partial<Omit<IndividualRecord, 'id'>> = {};
    if (body.first_name !== undefined) patch.first_name = body.first_name;
    if (body.middle_name !== undefined) patch.middle_name = body.middle_name;
    if (body.last_name !== undefined) patch.last_name = body.last_name;
    if (body.preferred_name !== undefined) patch.preferred_name = body.preferred_name;
    if (body.emails !== undefined) patch.emails = body.emails.map((e) => ({ ...e }));
    if (body.phone_numbers !== undefined) patch.phone_numbers = body.phone_numbers.map((p) => ({ ...p }));
    if (body.gender !== undefined) patch.gender = body.gender;
    if (body.ethnicity !== undefined) patch.ethnicity = body.ethnicity;
    if (body.marital_status !== undefined) patch.marital_status = body.marital_status;
    if (body.dob !== undefined) patch.dob = body.dob;
    if (body.residence !== undefined) patch.residence = addressOf(body.residence);
    if (body.ssn !== undefined) patch.ssn = body.ssn;
    const updated = await this.store.updateIndividual(ref, individualId, patch);
    if (!updated) throw individualNotFound(individualId);
    return updated;
  }

  /** A partial update of the employment; terminating is `end_date` with `is_active: false`. */
  async updateEmployment(
    connection: Connection,
    entity: ConnectionEntity,
    individualId: string,
    body: UpdateSandboxEmploymentDto,
  ): Promise<EmploymentRecord> {
    const ref = sandboxRefOf(connection, entity);
    assertIndividualId(individualId);
    assertSomethingToUpdate(body);
    const [current] = await this.store.employments(ref, [individualId]);
    if (!current) throw individualNotFound(individualId);
    const today = this.today();
    const problems: string[] = [];
    const startDate = body.start_date ?? current.start_date;
    const endDate = body.end_date !== undefined ? body.end_date : current.end_date;
    problems.push(...datesProblems('', { dob: undefined, start: startDate, end: endDate, today }));
    if (body.department) {
      const company = await this.store.company(ref);
      const name = body.department.name;
      if (!company.departments.some((d) => d.name === name)) problems.push(unknownDepartment('department.name', name));
    }
    if (body.manager) {
      if (body.manager.id === individualId) problems.push('manager.id: an individual cannot be their own manager');
      else if ((await this.store.employments(ref, [body.manager.id])).length === 0) {
        problems.push(`manager.id: no individual ${body.manager.id} at this employer`);
      }
    }
    if (body.income?.effective_date !== undefined && body.income.effective_date > today) {
      problems.push('income.effective_date: must not be in the future (the sandbox applies income changes at once)');
    }
    throwIfProblems(problems);

    const patch: Partial<Omit<EmploymentRecord, 'id' | 'first_name' | 'middle_name' | 'last_name'>> = {};
    if (body.title !== undefined) patch.title = body.title;
    if (body.department !== undefined) patch.department = body.department ? { name: body.department.name } : null;
    if (body.manager !== undefined) patch.manager = body.manager ? { id: body.manager.id } : null;
    if (body.employment !== undefined) patch.employment = { type: body.employment.type, subtype: body.employment.subtype };
    if (body.start_date !== undefined) patch.start_date = body.start_date;
    if (body.end_date !== undefined) patch.end_date = body.end_date;
    if (body.is_active !== undefined) patch.is_active = body.is_active;
    else if (body.end_date !== undefined) patch.is_active = activeWith(body.end_date, today);
    if (body.class_code !== undefined) patch.class_code = body.class_code;
    if (body.location !== undefined) patch.location = addressOf(body.location);
    if (body.income !== undefined) {
      const income = incomeOf(body.income, body.income.effective_date ?? today);
      patch.income_history = withIncome(current.income_history, income);
      patch.income = patch.income_history[patch.income_history.length - 1];
    }
    if (body.employment !== undefined || body.income !== undefined) {
      const type = patch.employment?.type ?? current.employment.type;
      const unit = patch.income?.unit ?? current.income.unit;
      if (type !== current.employment.type || unit !== current.income.unit) {
        patch.pay_group_ids = payGroupIdsFor(await this.store.payGroups(ref), type, unit);
      }
    }
    const updated = await this.store.updateEmployment(ref, individualId, patch);
    if (!updated) throw individualNotFound(individualId);
    return updated;
  }

  /**
   * Runs one pay period for every employee paid in it, with their enrollments in force. The
   * public body's dates are the pay period, paid on its end date unless `pay_date` says
   * otherwise; its statements are stored as written, and every other employee paid in the period
   * gets a computed one. Everything is checked before anything is written.
   */
  async runPayment(connection: Connection, entity: ConnectionEntity, body: RunSandboxPaymentDto): Promise<{ payment_id: string; pay_date: string }> {
    const ref = sandboxRefOf(connection, entity);
    const problems: string[] = [];
    const period = givenPeriodOf(body, problems);
    // Who is paid, and when, follows from the period: nothing else is checked against a wrong one.
    throwIfProblems(problems);
    // The field the pay date comes from, for messages: with a period and no pay_date, end_date.
    const payDateField = body.pay_date === undefined && period ? 'end_date' : 'pay_date';
    let payDate = body.pay_date ?? period?.end_date;
    if (payDate !== undefined) problems.push(...(await this.payDateProblems(ref, payDateField, payDate)));
    const given = body.pay_statements ?? [];
    let statements: PayStatementRecord[] | undefined;
    if (given.length > 0) {
      // The period decides who may have a statement: resolve the pay date now rather than in the run.
      payDate ??= await this.store.nextPayDate(ref);
      problems.push(...(await this.statementProblems(ref, given, period ?? payPeriodOf(payDate))));
      statements = given.map(payStatementRecordOf);
      problems.push(...statements.flatMap(derivedTotalProblems));
    }
    throwIfProblems(problems);
    const payment = await this.store.runPayPeriod(ref, {
      ...(payDate === undefined ? {} : { payDate }),
      ...(period ? { period } : {}),
      ...(statements ? { statements } : {}),
    });
    return { payment_id: payment.id, pay_date: payment.pay_date };
  }

  /** At most a year ahead; not before the latest pay run. */
  private async payDateProblems(ref: EmployerRef, field: string, payDate: string): Promise<string[]> {
    const onEndDate = field === 'end_date' ? ' (the payment is paid on its end date)' : '';
    const latest = addDays(this.today(), MAX_DAYS_AHEAD);
    if (payDate > latest) return [`${field}: must be at most ${MAX_DAYS_AHEAD} days ahead (on or before ${latest})${onEndDate}`];
    // Year-to-date totals run forward from one pay run to the next: a run dated before a
    // later one would count against limits it never saw.
    const later = await this.store.payments(ref, addDays(payDate, 1), '9999-12-31');
    if (later.length === 0) return [];
    return [`${field}: must not be before the latest pay run (${later[later.length - 1].pay_date})${onEndDate}`];
  }

  /** Each given statement is for an employee paid by payroll in the period, one statement each. */
  private async statementProblems(ref: EmployerRef, given: SandboxPayStatementDto[], period: { start_date: string; end_date: string }): Promise<string[]> {
    const ids = given.map((s) => s.individual_id.toLowerCase());
    const employments = new Map((await this.store.employments(ref, ids)).map((e) => [e.id, e]));
    const first = new Map<string, number>();
    const problems: string[] = [];
    ids.forEach((id, index) => {
      const at = `pay_statements[${index}].individual_id`;
      const employment = employments.get(id);
      if (first.has(id)) problems.push(`${at}: ${id} already has a statement in this payment (pay_statements[${first.get(id)}])`);
      else if (!employment) problems.push(`${at}: no individual ${id} at this employer`);
      else if (employment.employment.type !== 'employee') problems.push(`${at}: ${id} is a contractor, paid outside payroll`);
      else if (!isPaidInPeriod(employment, period)) {
        problems.push(`${at}: ${id} is not an active employee in the pay period ${period.start_date} to ${period.end_date}`);
      }
      if (!first.has(id)) first.set(id, index);
    });
    return problems;
  }

  private today(): string {
    return this.clock.now().toISOString().slice(0, 10);
  }
}

export function sandboxRefOf(connection: Connection, entity: ConnectionEntity): EmployerRef {
  if (!connection.sandbox) {
    throw new DomainError('forbidden_error', 'Sandbox edits work only on sandbox connections; this connection is to a production provider account', {
      serviceCode: 'sandbox_connection_required',
    });
  }
  return employerRefOf(connection, entity);
}

function assertIndividualId(id: string): void {
  if (!isUUID(id)) throw invalidRequest(`Invalid request: individual_id must be a UUID (received ${JSON.stringify(id.slice(0, 60))})`);
}

export const individualNotFound = (id: string) => notFound(`No individual ${id} at this employer`, 'individual_not_found');

function assertSomethingToUpdate(body: object): void {
  if (Object.values(body).every((value) => value === undefined)) {
    throw invalidRequest('Invalid request: the body sets no field; send at least one field to change');
  }
}

function throwIfProblems(problems: string[]): void {
  if (problems.length === 0) return;
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS).join('; ');
  const more = problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : '';
  throw invalidRequest(`Invalid request: ${listed}${more}`);
}

const unknownDepartment = (path: string, name: string) =>
  `${path}: no department ${JSON.stringify(name)} at this company (add it with PUT /sandbox/company)`;

/** Field path prefix + name: `[2].dob`, or `dob` for a single record. */
const pathOf = (at: string, field: string) => (at === '' ? field : `${at}.${field}`);

function datesProblems(
  at: string,
  { dob, start, end, today }: { dob: string | undefined; start: string | undefined; end: string | null; today: string },
): string[] {
  const problems: string[] = [];
  if (dob !== undefined && dob >= today) problems.push(`${pathOf(at, 'dob')}: must be in the past`);
  if (dob !== undefined && start !== undefined && start <= dob) problems.push(`${pathOf(at, 'start_date')}: must be after dob`);
  if (start !== undefined && end !== null && end < start) problems.push(`${pathOf(at, 'end_date')}: must not be before start_date (${start})`);
  return problems;
}

/** Department names are unique, and each parent is another department of the list, without cycles. */
function assertDepartmentTree(departments: CompanyRecord['departments']): void {
  const problems: string[] = [];
  const parentOf = new Map<string, string | null>();
  departments.forEach((d, index) => {
    if (parentOf.has(d.name)) problems.push(`departments[${index}].name: ${JSON.stringify(d.name)} is listed twice`);
    parentOf.set(d.name, d.parent?.name ?? null);
  });
  departments.forEach((d, index) => {
    if (d.parent && !parentOf.has(d.parent.name)) {
      problems.push(`departments[${index}].parent.name: ${JSON.stringify(d.parent.name)} is not one of the departments`);
      return;
    }
    const seen = new Set<string>([d.name]);
    for (let parent = parentOf.get(d.name); parent != null; parent = parentOf.get(parent)) {
      if (seen.has(parent)) {
        problems.push(`departments[${index}].parent: ${JSON.stringify(d.name)} would be its own ancestor`);
        break;
      }
      seen.add(parent);
    }
  });
  throwIfProblems(problems);
}

function addressOf(address: AddressDto): Address {
  return {
    line1: address.line1,
    line2: address.line2 ?? null,
    city: address.city,
    state: address.state,
    postal_code: address.postal_code,
    country: address.country,
  };
}

function incomeOf(income: IncomeDto, effectiveDate: string): Income {
  return { unit: income.unit, amount: income.amount, currency: SANDBOX_CURRENCY, effective_date: effectiveDate };
}

/** The history with `income` in date order; an entry of the same date is replaced. */
function withIncome(history: Income[], income: Income): Income[] {
  return [...history.filter((h) => h.effective_date !== income.effective_date), income].sort((a, b) =>
    a.effective_date.localeCompare(b.effective_date),
  );
}

/** Active unless the end date has passed (an end date ahead is a notice period). */
function activeWith(endDate: string | null, today: string): boolean {
  return endDate === null || endDate >= today;
}

/**
 * The pay group a person belongs in, as the generator assigns them: contractors are paid
 * outside payroll; employees go to the hourly or the salaried bi-weekly group.
 */
function payGroupIdsFor(groups: PayGroupRecord[], type: 'employee' | 'contractor', unit: 'yearly' | 'hourly'): string[] {
  if (type === 'contractor' || groups.length === 0) return [];
  const hourly = groups.find((g) => /hourly/i.test(g.name));
  const salaried = groups.find((g) => g !== hourly);
  const group = unit === 'hourly' ? (hourly ?? salaried) : (salaried ?? hourly);
  return group ? [group.id] : [];
}

function personRecordOf(person: SandboxPerson): SandboxPersonRecord {
  // The employment repeats id and names; the individual's are the same values.
  const { id: _id, first_name: _first, middle_name: _middle, last_name: _last, ...employment } = person.employment;
  return { ...person.individual, ...employment };
}

/** Longest wait from a given period's end to its pay date. */
const MAX_PAY_DAYS_AFTER_PERIOD = 31;
/** A two-week period's last day, counted from its first. */
const TWO_WEEKS_LATER = 13;
/** The longest pay period one run pays: a leap year. */
const MAX_PERIOD_DAYS = 366;

/** The pay period the body gives, checked; undefined without start_date and end_date. */
function givenPeriodOf(body: RunSandboxPaymentDto, problems: string[]): { start_date: string; end_date: string } | undefined {
  if (body.start_date === undefined && body.end_date === undefined) return undefined;
  const period = {
    start_date: body.start_date ?? addDays(body.end_date!, -TWO_WEEKS_LATER),
    end_date: body.end_date ?? addDays(body.start_date!, TWO_WEEKS_LATER),
  };
  // Any period is paid: one of a frequency's shape as a whole period of it, any other for its
  // days (store: a share of the year's pay). A year at most: longer is not one pay run.
  const days = daysBetween(period.start_date, period.end_date) + 1;
  if (period.end_date < period.start_date) problems.push(`end_date: must not be before start_date (${period.start_date})`);
  else if (days > MAX_PERIOD_DAYS) {
    problems.push(`end_date: a pay period is at most ${MAX_PERIOD_DAYS} days (received ${period.start_date} to ${period.end_date}, ${days} days)`);
  }
  if (body.pay_date !== undefined) {
    const last = addDays(period.end_date, MAX_PAY_DAYS_AFTER_PERIOD);
    if (body.pay_date < period.start_date || body.pay_date > last) {
      problems.push(`pay_date: must be from start_date (${period.start_date}) to ${MAX_PAY_DAYS_AFTER_PERIOD} days after end_date (${last})`);
    }
  }
  return period;
}

/** A given statement as stored: its fields as written, the defaults of the public document, totals derived from the lines when missing. */
function payStatementRecordOf(given: SandboxPayStatementDto): PayStatementRecord {
  const currency = SANDBOX_CURRENCY;
  const earnings = (given.earnings ?? []).map((e) => ({ type: e.type, name: e.name, amount: e.amount, currency, hours: e.hours ?? null }));
  const taxes = (given.taxes ?? []).map((t) => ({ type: t.type, name: t.name, employer: t.employer ?? false, amount: t.amount, currency }));
  const employeeDeductions = (given.employee_deductions ?? []).map((d) => ({
    name: d.name,
    amount: d.amount,
    currency,
    pre_tax: d.pre_tax ?? (d.type ? taxTreatmentOf(d.type).preTaxScope !== 'post_tax' : false),
    type: d.type ?? null,
  }));
  const employerContributions = (given.employer_contributions ?? []).map((c) => ({ name: c.name, amount: c.amount, currency, type: c.type ?? null }));
  const gross = given.gross_pay ?? sumOf(earnings.map((e) => e.amount));
  const net =
    given.net_pay ?? gross - sumOf(taxes.filter((t) => !t.employer).map((t) => t.amount)) - sumOf(employeeDeductions.map((d) => d.amount));
  return {
    individual_id: given.individual_id.toLowerCase(),
    type: given.type ?? 'regular_payroll',
    payment_method: given.payment_method ?? 'direct_deposit',
    total_hours: given.total_hours ?? Math.round(sumOf(earnings.map((e) => e.hours ?? 0)) * 100) / 100,
    gross_pay: { amount: gross, currency },
    net_pay: { amount: net, currency },
    earnings,
    taxes,
    employee_deductions: employeeDeductions,
    employer_contributions: employerContributions,
  };
}

/** Derived totals must be what a given one could be; each list's sum stays within the bound of one amount. */
function derivedTotalProblems(statement: PayStatementRecord, index: number): string[] {
  const at = `pay_statements[${index}]`;
  const problems: string[] = [];
  if (statement.gross_pay.amount < 1) problems.push(`${at}.gross_pay: required when the earnings do not add up to more than 0`);
  if (statement.net_pay.amount < 0) {
    problems.push(`${at}.net_pay: required when employee taxes and deductions are more than gross pay (${statement.net_pay.amount} cents left)`);
  }
  const lists = {
    earnings: statement.earnings,
    taxes: statement.taxes,
    employee_deductions: statement.employee_deductions,
    employer_contributions: statement.employer_contributions,
  };
  for (const [name, lines] of Object.entries(lists)) {
    if (sumOf(lines.map((line) => line.amount)) > MAX_STATEMENT_CENTS) problems.push(`${at}.${name}: amounts add up to more than ${MAX_STATEMENT_CENTS} cents`);
  }
  return problems;
}

const sumOf = (amounts: number[]) => amounts.reduce((total, amount) => total + amount, 0);

/**
 * The person as given, with what the sandbox generator would have drawn for a staff member in
 * place of a missing `dob`, `title` or `income` (a yearly salary from the start date).
 */
function withGeneratedDefaults(
  person: NewSandboxIndividualDto,
  seed: string,
  today: string,
): NewSandboxIndividualDto & { dob: string; title: string; income: IncomeDto } {
  const startDate = person.start_date ?? today;
  const drawn = generatedHireDefaults(seed, startDate, person.department?.name ?? null);
  return {
    ...person,
    dob: person.dob ?? drawn.dob,
    title: person.title ?? drawn.title,
    income: person.income ?? { unit: 'yearly', amount: drawn.yearlySalary, currency: SANDBOX_CURRENCY, effective_date: startDate },
  };
}
