import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  Address,
  CompanyRecord,
  EmploymentRecord,
  IndividualRecord,
  PaymentRecord,
  PayStatementRecord,
} from '../../../domain/employer/unified-records';
import { EmployerRef, ForwardRequest, ForwardResponse } from '../../../domain/providers/provider-port';
import { SandboxEmployerStore } from './sandbox-employer.store';
import { isIsoDate } from './sandbox-pay-calendar';

/**
 * The sandbox payroll provider's own HTTP API, reached only through `POST /forward`. It speaks
 * the provider's language, not the Unified API's: its own paths (employees, pay runs, paystubs),
 * camelCase field names, money as `…Cents`, upper-case enums. Its answers, errors included,
 * are data inside the forward response: an unknown route is this API's 404, never the service's.
 *
 *   GET /company
 *   GET /employees?page=1&per_page=25          GET /employees/{employeeId}
 *   GET /payruns?from=YYYY-MM-DD&to=YYYY-MM-DD GET /payruns/{payRunId}
 *   GET /payruns/{payRunId}/paystubs?page=1&per_page=25
 */

const DEFAULT_PER_PAGE = 25;
const MAX_PER_PAGE = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Query = Map<string, string>;

interface NativeReply {
  status: number;
  data: unknown;
  headers?: Record<string, string>;
}

interface NativeRoute {
  method: 'GET';
  /** Path segments; `:name` matches one segment and names it. */
  pattern: string[];
  /** Query parameters the route accepts; any other is a 400. */
  query: string[];
  handle(ref: EmployerRef, params: Record<string, string>, query: Query): Promise<NativeReply>;
}

/** The provider's error body: `{ error, message }` with its own codes. */
class NativeError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

@Injectable()
export class SandboxNativeApi {
  private readonly routes: NativeRoute[] = [
    { method: 'GET', pattern: ['company'], query: [], handle: (ref) => this.company(ref) },
    { method: 'GET', pattern: ['employees'], query: ['page', 'per_page'], handle: (ref, _p, query) => this.employees(ref, query) },
    { method: 'GET', pattern: ['employees', ':employeeId'], query: [], handle: (ref, params) => this.employee(ref, params.employeeId) },
    { method: 'GET', pattern: ['payruns'], query: ['from', 'to'], handle: (ref, _p, query) => this.payRuns(ref, query) },
    { method: 'GET', pattern: ['payruns', ':payRunId'], query: [], handle: (ref, params) => this.payRun(ref, params.payRunId) },
    {
      method: 'GET',
      pattern: ['payruns', ':payRunId', 'paystubs'],
      query: ['page', 'per_page'],
      handle: (ref, params, query) => this.paystubs(ref, params.payRunId, query),
    },
  ];

  constructor(private readonly store: SandboxEmployerStore) {}

  /** Answers one raw request the way the provider's server would; never throws for a bad request. */
  async handle(ref: EmployerRef, request: ForwardRequest): Promise<ForwardResponse> {
    const method = request.method.toUpperCase();
    let reply: NativeReply;
    try {
      reply = await this.dispatch(ref, method, request);
    } catch (error) {
      if (!(error instanceof NativeError)) throw error;
      reply = { status: error.status, data: { error: error.code, message: error.message }, headers: error.headers };
    }
    return {
      data: reply.data,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'x-sandbox-request-id': randomUUID(),
        ...reply.headers,
      },
      status_code: reply.status,
    };
  }

  private async dispatch(ref: EmployerRef, method: string, request: ForwardRequest): Promise<NativeReply> {
    const { path, query: routeQuery } = splitRoute(request.route);
    const segments = segmentsOf(path);
    const matching = this.routes
      .map((route) => ({ route, params: match(route.pattern, segments) }))
      .filter((m): m is { route: NativeRoute; params: Record<string, string> } => m.params !== undefined);
    if (matching.length === 0) throw new NativeError(404, 'not_found', `No route ${method} ${path}`);
    const found = matching.find((m) => m.route.method === method);
    if (!found) {
      const allowed = [...new Set(matching.map((m) => m.route.method))].join(', ');
      throw new NativeError(405, 'method_not_allowed', `${method} is not allowed on ${path}; allowed: ${allowed}`, { allow: allowed });
    }
    const query = mergeQuery(routeQuery, request.params);
    const unknown = [...query.keys()].filter((name) => !found.route.query.includes(name));
    if (unknown.length > 0) {
      const accepted = found.route.query.length === 0 ? 'none' : found.route.query.join(', ');
      throw new NativeError(400, 'bad_request', `Unknown query parameter ${unknown.join(', ')} (accepted: ${accepted})`);
    }
    return found.route.handle(ref, found.params, query);
  }

  private async company(ref: EmployerRef): Promise<NativeReply> {
    return ok(nativeCompanyOf(await this.store.company(ref)));
  }

  private async employees(ref: EmployerRef, query: Query): Promise<NativeReply> {
    const { page, perPage } = pagingOf(query);
    const directory = await this.store.directory(ref, { limit: perPage, offset: (page - 1) * perPage });
    const ids = directory.items.map((entry) => entry.id);
    const [individuals, employments] = await Promise.all([this.store.individuals(ref, ids), this.store.employments(ref, ids)]);
    const individualById = new Map(individuals.map((i) => [i.id, i]));
    const employmentById = new Map(employments.map((e) => [e.id, e]));
    const employees = ids.flatMap((id) => {
      const individual = individualById.get(id);
      const employment = employmentById.get(id);
      return individual && employment ? [nativeEmployeeOf(individual, employment)] : [];
    });
    return ok({ employees, page, perPage, total: directory.count, totalPages: Math.ceil(directory.count / perPage) });
  }

  private async employee(ref: EmployerRef, employeeId: string): Promise<NativeReply> {
    const noSuchEmployee = new NativeError(404, 'not_found', `No employee ${employeeId}`);
    if (!UUID.test(employeeId)) throw noSuchEmployee;
    const [[individual], [employment]] = await Promise.all([this.store.individuals(ref, [employeeId]), this.store.employments(ref, [employeeId])]);
    if (!individual || !employment) throw noSuchEmployee;
    return ok(nativeEmployeeOf(individual, employment));
  }

  private async payRuns(ref: EmployerRef, query: Query): Promise<NativeReply> {
    const from = dateParam(query, 'from') ?? '0001-01-01';
    const to = dateParam(query, 'to') ?? '9999-12-31';
    if (from > to) throw new NativeError(400, 'bad_request', `from (${from}) must not be after to (${to})`);
    const payments = await this.store.payments(ref, from, to);
    return ok({ payRuns: payments.map(nativePayRunOf) });
  }

  private async payRun(ref: EmployerRef, payRunId: string): Promise<NativeReply> {
    const payment = UUID.test(payRunId) ? await this.store.payment(ref, payRunId) : undefined;
    if (!payment) throw new NativeError(404, 'not_found', `No pay run ${payRunId}`);
    return ok(nativePayRunOf(payment));
  }

  private async paystubs(ref: EmployerRef, payRunId: string, query: Query): Promise<NativeReply> {
    const { page, perPage } = pagingOf(query);
    const statements = UUID.test(payRunId)
      ? await this.store.payStatements(ref, payRunId, { limit: perPage, offset: (page - 1) * perPage })
      : undefined;
    if (!statements) throw new NativeError(404, 'not_found', `No pay run ${payRunId}`);
    return ok({
      payRunId,
      paystubs: statements.items.map(nativePaystubOf),
      page,
      perPage,
      total: statements.count,
      totalPages: Math.ceil(statements.count / perPage),
    });
  }
}

const ok = (data: unknown): NativeReply => ({ status: 200, data });

function splitRoute(route: string): { path: string; query: string } {
  const withoutFragment = route.split('#', 1)[0];
  const at = withoutFragment.indexOf('?');
  const path = at === -1 ? withoutFragment : withoutFragment.slice(0, at);
  return { path: path.length > 1 ? path.replace(/\/+$/, '') : path, query: at === -1 ? '' : withoutFragment.slice(at + 1) };
}

function segmentsOf(path: string): string[] {
  try {
    return path
      .split('/')
      .slice(1)
      .map((segment) => decodeURIComponent(segment));
  } catch {
    throw new NativeError(400, 'bad_request', `Malformed path ${path}`);
  }
}

function match(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i].startsWith(':')) params[pattern[i].slice(1)] = segments[i];
    else if (pattern[i] !== segments[i]) return undefined;
  }
  return params;
}

/** The route's own query string, then `params` (which win). A parameter may appear once. */
function mergeQuery(routeQuery: string, params: Record<string, unknown> | undefined): Query {
  const query: Query = new Map();
  const search = new URLSearchParams(routeQuery);
  for (const name of new Set(search.keys())) {
    const values = search.getAll(name);
    if (values.length > 1) throw new NativeError(400, 'bad_request', `Query parameter ${name} may be given once`);
    query.set(name, values[0]);
  }
  for (const [name, value] of Object.entries(params ?? {})) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new NativeError(400, 'bad_request', `Query parameter ${name} must be a single string, number or boolean`);
    }
    query.set(name, String(value));
  }
  return query;
}

function pagingOf(query: Query): { page: number; perPage: number } {
  return {
    page: integerParam(query, 'page', { min: 1, max: 1_000_000, fallback: 1 }),
    perPage: integerParam(query, 'per_page', { min: 1, max: MAX_PER_PAGE, fallback: DEFAULT_PER_PAGE }),
  };
}

function integerParam(query: Query, name: string, { min, max, fallback }: { min: number; max: number; fallback: number }): number {
  const raw = query.get(name);
  if (raw === undefined) return fallback;
  const value = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw new NativeError(400, 'bad_request', `${name} must be an integer from ${min} to ${max}`);
  return value;
}

function dateParam(query: Query, name: string): string | undefined {
  const raw = query.get(name);
  if (raw === undefined) return undefined;
  if (!isIsoDate(raw)) throw new NativeError(400, 'bad_request', `${name} must be a date YYYY-MM-DD`);
  return raw;
}

// ---------------------------------------------------------------------------------------------
// The provider's own record shapes

function nativeAddressOf(address: Address) {
  return {
    street1: address.line1,
    street2: address.line2,
    city: address.city,
    region: address.state,
    postalCode: address.postal_code,
    countryCode: address.country,
  };
}

const upper = (value: string) => value.toUpperCase();

function nativeCompanyOf(company: CompanyRecord) {
  return {
    companyId: company.id,
    legalName: company.legal_name,
    taxId: company.ein,
    entityType: upper(company.entity.type),
    entitySubtype: company.entity.subtype === null ? null : upper(company.entity.subtype),
    adminEmail: company.primary_email,
    phone: company.primary_phone_number,
    departments: company.departments.map((d) => ({ name: d.name, parentName: d.parent?.name ?? null })),
    workLocations: company.locations.map(nativeAddressOf),
    // Like real payroll providers, the API never shows a full account number.
    bankAccounts: company.accounts.map((a) => ({
      routingNumber: a.routing_number,
      nickname: a.account_name,
      bankName: a.institution_name,
      accountType: upper(a.account_type),
      accountNumberLast4: a.account_number.slice(-4),
    })),
  };
}

function nativeEmployeeOf(individual: IndividualRecord, employment: EmploymentRecord) {
  return {
    employeeId: individual.id,
    givenName: individual.first_name,
    middleName: individual.middle_name,
    familyName: individual.last_name,
    preferredName: individual.preferred_name,
    birthDate: individual.dob,
    gender: upper(individual.gender),
    ethnicity: upper(individual.ethnicity),
    maritalStatus: upper(individual.marital_status),
    workEmail: individual.emails.find((e) => e.type === 'work')?.data ?? employment.work_email,
    personalEmail: individual.emails.find((e) => e.type === 'personal')?.data ?? null,
    phone: individual.phone_numbers[0]?.data ?? null,
    homeAddress: nativeAddressOf(individual.residence),
    ssnLast4: individual.ssn === null ? null : individual.ssn.slice(-4),
    jobTitle: employment.title,
    departmentName: employment.department?.name ?? null,
    managerId: employment.manager?.id ?? null,
    workerType: upper(employment.employment.type),
    employmentType: upper(employment.employment.subtype),
    hireDate: employment.start_date,
    terminationDate: employment.end_date,
    status: employment.is_active ? 'ACTIVE' : 'TERMINATED',
    classCode: employment.class_code,
    workLocation: nativeAddressOf(employment.location),
    payRate: {
      unit: employment.income.unit === 'yearly' ? 'YEAR' : 'HOUR',
      cents: employment.income.amount,
      currency: upper(employment.income.currency),
      effectiveDate: employment.income.effective_date,
    },
    payGroupIds: employment.pay_group_ids,
  };
}

function nativePayRunOf(payment: PaymentRecord) {
  return {
    payRunId: payment.id,
    checkDate: payment.pay_date,
    debitDate: payment.debit_date,
    periodStart: payment.pay_period.start_date,
    periodEnd: payment.pay_period.end_date,
    grossCents: payment.gross_pay.amount,
    netCents: payment.net_pay.amount,
    employeeTaxCents: payment.employee_taxes.amount,
    employerTaxCents: payment.employer_taxes.amount,
    companyDebitCents: payment.company_debit.amount,
    currency: upper(payment.gross_pay.currency),
    employeeCount: payment.individual_ids.length,
    employeeIds: payment.individual_ids,
    payGroupIds: payment.pay_group_ids,
    payFrequencies: payment.pay_frequencies.map(upper),
  };
}

const RUN_TYPES: Record<PayStatementRecord['type'], string> = {
  regular_payroll: 'REGULAR',
  off_cycle_payroll: 'OFF_CYCLE',
  one_time_payment: 'ONE_TIME',
};

function nativePaystubOf(statement: PayStatementRecord) {
  return {
    employeeId: statement.individual_id,
    runType: RUN_TYPES[statement.type],
    paymentMethod: upper(statement.payment_method),
    hoursWorked: statement.total_hours,
    grossCents: statement.gross_pay.amount,
    netCents: statement.net_pay.amount,
    currency: upper(statement.gross_pay.currency),
    earnings: statement.earnings.map((e) => ({ code: upper(e.type), label: e.name, cents: e.amount, hours: e.hours })),
    taxes: statement.taxes.map((t) => ({ code: upper(t.type), label: t.name, paidBy: t.employer ? 'EMPLOYER' : 'EMPLOYEE', cents: t.amount })),
    deductions: statement.employee_deductions.map((d) => ({
      code: d.type === null ? null : upper(d.type),
      label: d.name,
      cents: d.amount,
      preTax: d.pre_tax,
    })),
    employerContributions: statement.employer_contributions.map((c) => ({
      code: c.type === null ? null : upper(c.type),
      label: c.name,
      cents: c.amount,
    })),
  };
}
