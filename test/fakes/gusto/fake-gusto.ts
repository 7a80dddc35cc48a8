import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { ContractRequest, MatchedOperation, OpenApiContract } from '../../utils/openapi-contract';

/**
 * A stateful fake of Gusto's API for tests, held to Gusto's published OpenAPI document
 * (test/fixtures/gusto-openapi.yaml, version 2026-02-01).
 *
 * Every request it receives is checked against the document, and so is every answer it gives
 * (test/utils/openapi-contract.ts). A request the document does not allow is answered 400 and
 * recorded in `violations`; an answer that does not match its documented status and schema is
 * recorded there too. Tests assert `violations` is empty.
 *
 * Where Gusto's behaviour is documented only outside the OpenAPI document (its guides), or where
 * the document contradicts itself, the fake follows the guide and checks the exchange against
 * the document plus a written-down SUPPLEMENT (below). Such an exchange is not a violation but is
 * recorded, once per kind, in `offDocument`, so a test sees every place it leans on something the
 * document does not say.
 */

export const GUSTO_API_VERSION = '2026-02-01';
const GUSTO_DOCUMENT = path.resolve(__dirname, '../../fixtures/gusto-openapi.yaml');

/** The operations the fake serves: the ones the adapter uses, each checked to be in the document (test/integration/tooling/gusto-contract.int-spec.ts). */
export const SERVED_OPERATIONS = [
  'POST /oauth/token',
  'GET /v1/token_info',
  'GET /v1/companies/{company_id}',
  'GET /v1/companies/{company_id}/employees',
  'GET /v1/employees/{employee_id}',
  'GET /v1/companies/{company_id}/pay_schedules',
  'GET /v1/companies/{company_id}/payrolls',
  'GET /v1/companies/{company_id}/payrolls/{payroll_id}',
  'GET /v1/companies/{company_id}/company_benefits',
  'POST /v1/companies/{company_id}/company_benefits',
  'GET /v1/company_benefits/{company_benefit_id}',
  'PUT /v1/company_benefits/{company_benefit_id}',
  'GET /v1/employees/{employee_id}/employee_benefits',
  'POST /v1/employees/{employee_id}/employee_benefits',
  'GET /v1/employee_benefits/{employee_benefit_id}',
  'PUT /v1/employee_benefits/{employee_benefit_id}',
  'DELETE /v1/employee_benefits/{employee_benefit_id}',
  'GET /v1/company_benefits/{company_benefit_id}/employee_benefits',
  'GET /v1/webhook_subscriptions',
  'POST /v1/webhook_subscriptions',
  'PUT /v1/webhook_subscriptions/{webhook_subscription_uuid}/verify',
  'GET /v1/webhook_subscriptions/{webhook_subscription_uuid}/request_verification_token',
  'GET /v1/events',
] as const;
export type ServedOperation = (typeof SERVED_OPERATIONS)[number];

// ---------------------------------------------------------------------------------------------
// Wire shapes (the fields the fake fills; every one is a property of the document's schema).
// ---------------------------------------------------------------------------------------------

export interface GustoError {
  error_key: string;
  category: string;
  message?: string;
  metadata?: Record<string, unknown>;
  errors?: GustoError[];
}

export interface GustoCompanyAddress {
  street_1: string;
  street_2: string | null;
  city: string;
  state: string;
  zip: string;
  country: string;
  active: boolean;
  inactive: boolean;
}

export interface GustoCompany {
  uuid: string;
  name: string;
  trade_name: string | null;
  ein: string;
  entity_type: 'C-Corporation' | 'S-Corporation' | 'Sole proprietor' | 'LLC' | 'LLP' | 'Limited partnership' | null;
  contractor_only: boolean;
  tier: 'simple' | 'plus' | 'premium' | 'core' | 'complete' | 'concierge' | 'contractor_only' | 'basic' | null;
  is_suspended: boolean;
  company_status: 'Approved' | 'Not Approved' | 'Suspended';
  is_partner_managed: boolean;
  pay_schedule_type: 'single' | 'hourly_salaried' | 'by_employee' | 'by_department' | null;
  join_date: string | null;
  funding_type: 'ach' | 'reverse_wire' | 'wire_in' | 'brex' | null;
  locations: GustoCompanyAddress[];
  primary_payroll_admin: { first_name: string; last_name: string; phone: string | null; email: string };
}

export interface GustoCompensation {
  uuid: string;
  version: string;
  job_uuid: string;
  employee_uuid: string;
  rate: string;
  payment_unit: 'Hour' | 'Week' | 'Month' | 'Year' | 'Paycheck';
  flsa_status: 'Exempt' | 'Salaried Nonexempt' | 'Nonexempt' | 'Owner' | 'Commission Only Exempt' | 'Commission Only Nonexempt';
  effective_date: string;
  adjust_for_minimum_wage: boolean;
}

export interface GustoJob {
  uuid: string;
  version: string;
  employee_uuid: string;
  hire_date: string;
  title: string | null;
  primary: boolean;
  rate: string;
  payment_unit: string | null;
  current_compensation_uuid: string;
  compensations: GustoCompensation[];
}

export interface GustoTermination {
  uuid: string;
  version: string;
  employee_uuid: string;
  active: boolean;
  cancelable: boolean;
  effective_date: string;
  run_termination_payroll: boolean;
}

export interface GustoEmployee {
  uuid: string;
  first_name: string;
  middle_initial: string | null;
  last_name: string;
  preferred_first_name: string | null;
  email: string | null;
  work_email: string | null;
  company_uuid: string;
  manager_uuid: string | null;
  version: string;
  department: string | null;
  department_uuid: string | null;
  terminated: boolean;
  two_percent_shareholder: boolean | null;
  onboarded: boolean;
  onboarding_status: 'onboarding_completed' | 'admin_onboarding_incomplete' | 'self_onboarding_pending_invite' | null;
  jobs: GustoJob[];
  eligible_paid_time_off: never[];
  terminations: GustoTermination[];
  garnishments: never[];
  custom_fields: never[];
  date_of_birth: string | null;
  has_ssn: boolean;
  phone: string | null;
  payment_method: 'Direct Deposit' | 'Check';
  current_employment_status: 'full_time' | 'part_time_under_twenty_hours' | 'part_time_twenty_plus_hours' | 'variable' | 'seasonal' | null;
  historical: boolean;
  title: string;
  hired_at: string;
}

export interface GustoPaySchedule {
  uuid: string;
  version: string;
  frequency: 'Every week' | 'Every other week' | 'Twice per month' | 'Monthly' | 'Quarterly' | 'Annually';
  anchor_pay_date: string;
  anchor_end_of_pay_period: string;
  day_1: number | null;
  day_2: number | null;
  name: string | null;
  custom_name: string;
  auto_payroll: boolean;
  active: boolean;
}

export interface GustoCompanyBenefit {
  uuid: string;
  version: string;
  company_uuid: string;
  benefit_type: number;
  active: boolean;
  description: string;
  source: 'internal' | 'external' | 'partnered';
  partner_name: string | null;
  deletable: boolean;
  supports_percentage_amounts: boolean;
  responsible_for_employer_taxes: boolean;
  responsible_for_employee_w2: boolean;
  catch_up_type: 'elective' | 'deemed' | null;
}

export interface GustoTier {
  rate: string;
  threshold: string;
  threshold_delta?: string;
}

/** As answered. A tiered contribution is `{ tiers: [...] }` in answers but a bare array in requests (the document's two schemas). */
export interface GustoContribution {
  type: 'amount' | 'percentage' | 'tiered';
  value: string | { tiers: GustoTier[] };
}

export interface GustoEmployeeBenefit {
  uuid: string;
  version: string;
  employee_uuid: string;
  company_benefit_uuid: string;
  active: boolean;
  employee_deduction: string;
  deduct_as_percentage: boolean;
  employee_deduction_annual_maximum: string | null;
  contribution: GustoContribution;
  elective: boolean;
  company_contribution_annual_maximum: string | null;
  limit_option: string | null;
  catch_up: boolean | null;
  coverage_amount: string | null;
  coverage_salary_multiplier: string | null;
  deduction_reduces_taxable_income: 'unset' | 'reduces_taxable_income' | 'does_not_reduce_taxable_income' | null;
  company_contribution: string;
  contribute_as_percentage: boolean;
  effective_date: string;
  expiration_date: string | null;
}

export interface GustoPayrollBenefit {
  name: string;
  employee_deduction: number;
  company_contribution: number;
  imputed: boolean;
}

export interface GustoPayrollDeduction {
  name: string;
  amount: number;
  amount_type: 'fixed' | 'percent';
  uuid: string;
}

export interface GustoPayrollTax {
  name: string;
  employer: boolean;
  amount: number;
}

/** One employee's part of a payroll, with everything `include` can add. */
export interface GustoEmployeeCompensation {
  employee_uuid: string;
  excluded: boolean;
  first_name: string | null;
  preferred_first_name: string | null;
  last_name: string | null;
  gross_pay: number | null;
  net_pay: number | null;
  check_amount: number | null;
  payment_method: 'Direct Deposit' | 'Check' | 'Historical' | null;
  memo: string | null;
  fixed_compensations: { name: string; amount: string; job_uuid: string }[];
  hourly_compensations: { name: string; hours: string; amount: string; job_uuid: string; compensation_multiplier: number }[];
  paid_time_off: { name: string; hours: string }[];
  reimbursements: { amount: string; description: string | null }[];
  version: string;
  benefits: GustoPayrollBenefit[];
  deductions: GustoPayrollDeduction[];
  taxes: GustoPayrollTax[];
}

export interface GustoPayrollTotals {
  company_debit: string;
  net_pay_debit: string;
  tax_debit: string;
  reimbursement_debit: string;
  child_support_debit: string;
  reimbursements: string;
  net_pay: string;
  gross_pay: string;
  employee_bonuses: string;
  employee_commissions: string;
  employee_cash_tips: string;
  employee_paycheck_tips: string;
  additional_earnings: string;
  owners_draw: string;
  check_amount: string;
  employer_taxes: string;
  employee_taxes: string;
  benefits: string;
  employee_benefits_deductions: string;
  imputed_pay: string;
  deferred_payroll_taxes: string;
  other_deductions: string;
}

export interface GustoPayroll {
  uuid: string;
  payroll_uuid: string;
  company_uuid: string;
  processed: boolean;
  processed_date: string | null;
  check_date: string;
  payroll_deadline: string;
  calculated_at: string | null;
  created_at: string;
  off_cycle: boolean;
  off_cycle_reason: string | null;
  auto_payroll: boolean;
  external: boolean;
  final_termination_payroll: boolean;
  withholding_pay_period: 'Every week' | 'Every other week' | 'Twice per month' | 'Monthly' | 'Quarterly' | 'Semiannually' | 'Annually';
  skip_regular_deductions: boolean | null;
  fixed_withholding_rate: boolean | null;
  pay_period: { start_date: string; end_date: string; pay_schedule_uuid: string | null };
  totals: GustoPayrollTotals;
  employee_compensations: GustoEmployeeCompensation[];
}

export interface GustoWebhookSubscription {
  uuid: string;
  url: string;
  status: 'pending' | 'verified' | 'removed' | 'unreachable';
  subscription_types: string[];
}

export interface GustoEvent {
  uuid: string;
  event_type: string;
  resource_type: 'Company';
  resource_uuid: string;
  entity_type: string;
  entity_uuid: string;
  timestamp: number;
}

// ---------------------------------------------------------------------------------------------
// Options, faults, records.
// ---------------------------------------------------------------------------------------------

export interface FakeGustoOptions {
  clientId?: string;
  clientSecret?: string;
  /** Lifetime of access tokens (Gusto: 7200 s, "Company Access Tokens" guide). */
  accessTokenTtlSeconds?: number;
  /**
   * Gusto's limit is 200 requests per rolling 60 s per OAuth grant; off unless set. `windowMs`
   * (default 60,000) shortens the window for a benchmark that scales time down; `perMinute` is then per window.
   */
  rateLimit?: { perMinute: number; windowMs?: number };
  /**
   * When a used refresh token (and the access token issued with it) stops working:
   * - 'on-refresh' (default): at once; refresh tokens are strictly single-use.
   * - 'on-first-use': when the new access token is first used, as Gusto's API reference for
   *   POST /oauth/token says ("The previous refresh_token will be revoked on the first usage of
   *   the new access_token", https://docs.gusto.com/app-integrations/v2024-04-01/reference/refresh-access-token).
   */
  refreshTokenRevocation?: 'on-refresh' | 'on-first-use';
}

export type GustoFault =
  | { status: 429; retryAfterSeconds?: number }
  | { status: 500 }
  | { status: 422; errors?: GustoError[] }
  | { status: 409 };

export interface RequestSummary {
  method: string;
  path: string;
  /** `METHOD /template` of the document, when the request matched one. */
  operation?: string;
}

export type FaultMatcher = { method?: string; path?: string | RegExp; operation?: string } | ((request: RequestSummary) => boolean);

export interface RecordedRequest extends RequestSummary {
  status: number;
  apiVersion?: string;
}

export interface WebhookDelivery {
  subscriptionUuid: string;
  url: string;
  body: string;
  /** The X-Gusto-Signature sent, or undefined for the verification-token POST (Gusto documents no signature on it). */
  signature?: string;
  status?: number;
  error?: string;
}

export interface EventInput {
  event_type: string;
  entity_type: string;
  entity_uuid: string;
  /** The company (events' `resource_type` is always Company in the document). */
  resource_uuid: string;
  timestamp?: number;
}

export interface PayrollSeed {
  processed?: boolean;
  offCycle?: boolean;
  payScheduleUuid?: string;
  startDate?: string;
  endDate?: string;
  checkDate?: string;
  /** Default: every employee of the company not terminated, paid 2000.00 gross. */
  employees?: {
    employeeUuid: string;
    grossPay?: number;
    /** Default: from the employee's active employee benefits. */
    benefits?: GustoPayrollBenefit[];
    deductions?: Omit<GustoPayrollDeduction, 'uuid'>[];
    taxes?: GustoPayrollTax[];
  }[];
}

export interface IssuedTokens {
  access_token: string;
  refresh_token: string;
}

// ---------------------------------------------------------------------------------------------
// The document, and the supplement where Gusto's guides say what it does not.
// ---------------------------------------------------------------------------------------------

interface OperationShape {
  security?: Record<string, unknown>[];
  requestBody?: { content: Record<string, { schema: { oneOf?: unknown[] } }> };
  responses: Record<string, unknown>;
}
interface DocumentShape {
  security?: Record<string, unknown>[];
  paths: Record<string, Record<string, OperationShape | undefined>>;
  components: { schemas: Record<string, { oneOf?: unknown[]; anyOf?: unknown[] }> };
}

const ERROR_ENVELOPE = { $ref: '#/components/schemas/Unprocessable-Entity-Error-Object' };
const OAUTH_ERROR = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string', enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type'] },
    error_description: { type: 'string' },
  },
};
const jsonResponse = (description: string, schema: unknown) => ({ description, content: { 'application/json': { schema } } });

/**
 * SUPPLEMENT: what the fake needs beyond the document, each item with its source.
 *
 * 1. Token answers: `Authentication` is `oneOf: [Create-Token-Authentication,
 *    Refresh-Token-Authentication]`, but the second is the first plus optional fields, so every
 *    answer that carries a refresh token (or omits `refresh_token`) matches both and fails
 *    `oneOf`; the schema's own `x-examples` fail it. Read as `anyOf`.
 * 2. The authorization-code grant: the document's POST /oauth/token lists only the refresh and
 *    system-access grants, yet Gusto's OAuth2 guide has apps exchange the code there
 *    (https://docs.gusto.com/app-integrations/docs/oauth2): a third body form, grant_type
 *    `authorization_code` with `code` and `redirect_uri`.
 * 3. Token errors: the document gives POST /oauth/token only a 200. The fake answers a bad,
 *    used or expired code or refresh token 400 `invalid_grant` and bad client credentials 401
 *    `invalid_client`, with the OAuth 2.0 error body (RFC 6749 §5.2).
 * 4. 401 on every bearer operation: "If an access token is expired you will receive 401
 *    Unauthorized errors" (https://docs.gusto.com/embedded-payroll/docs/company-access-tokens);
 *    category `invalid_token`, no body shown (https://docs.gusto.com/embedded-payroll/docs/error-categories).
 *    Body-less, like the document's only 401 (POST /v1/partner_managed_companies).
 * 5. 409 on the two PUTs that take a `version`: Gusto's `invalid_resource_version` category,
 *    409 Conflict (error-categories guide); the document has it on other versioned PUTs but not
 *    these two. Body: the document's error envelope.
 * 6. 429 on every operation (https://docs.gusto.com/app-integrations/docs/rate-limits; no body
 *    documented, so none) and 500 on every operation (`internal_error`, error-categories guide,
 *    with the error envelope).
 */
function supplement(source: unknown): DocumentShape {
  const doc = structuredClone(source) as DocumentShape;
  const authentication = doc.components.schemas['Authentication'];
  authentication.anyOf = authentication.oneOf;
  delete authentication.oneOf;
  const token = operationOf(doc, 'POST /oauth/token');
  token.requestBody?.content['application/json'].schema.oneOf?.push({
    type: 'object',
    title: 'Authorization Code Request',
    required: ['client_id', 'client_secret', 'grant_type', 'code', 'redirect_uri'],
    properties: {
      client_id: { type: 'string' },
      client_secret: { type: 'string' },
      grant_type: { type: 'string', enum: ['authorization_code'] },
      code: { type: 'string' },
      redirect_uri: { type: 'string' },
    },
  });
  token.responses['400'] = jsonResponse('OAuth error (RFC 6749 §5.2)', OAUTH_ERROR);
  token.responses['401'] = jsonResponse('OAuth error: client authentication failed (RFC 6749 §5.2)', OAUTH_ERROR);
  for (const name of SERVED_OPERATIONS) {
    const operation = operationOf(doc, name);
    if (name !== 'POST /oauth/token') operation.responses['401'] ??= { description: 'invalid_token: the token is invalid, expired, or missing' };
    operation.responses['429'] ??= { description: 'Too Many Requests' };
    operation.responses['500'] ??= jsonResponse('internal_error', ERROR_ENVELOPE);
  }
  operationOf(doc, 'PUT /v1/company_benefits/{company_benefit_id}').responses['409'] ??= jsonResponse('invalid_resource_version', ERROR_ENVELOPE);
  operationOf(doc, 'PUT /v1/employee_benefits/{employee_benefit_id}').responses['409'] ??= jsonResponse('invalid_resource_version', ERROR_ENVELOPE);
  return doc;
}

function operationOf(doc: DocumentShape, name: string): OperationShape {
  const [method, template] = name.split(' ');
  const operation = doc.paths[template]?.[method.toLowerCase()];
  if (!operation) throw new Error(`the Gusto document has no ${name}`);
  return operation;
}

/** Loaded once a process: the document is 1.3 MB and its validators compile on first use. */
let loaded: { document: OpenApiContract; supplemented: OpenApiContract } | undefined;
function gustoContracts(): { document: OpenApiContract; supplemented: OpenApiContract } {
  if (!loaded) {
    const document = OpenApiContract.fromFile(GUSTO_DOCUMENT, 'gusto');
    loaded = { document, supplemented: new OpenApiContract(supplement(document.document), 'gusto-supplemented') };
  }
  return loaded;
}

// ---------------------------------------------------------------------------------------------
// Internal records.
// ---------------------------------------------------------------------------------------------

interface AccessTokenRecord {
  token: string;
  kind: 'company' | 'system';
  companyUuid?: string;
  /** One authorization: the rate limit is per grant, and refreshing stays within it. */
  grantId: string;
  createdAt: number;
  expiresAt: number;
  revoked: boolean;
  used: boolean;
  /** The refresh token this one was obtained with, revoked on first use in 'on-first-use' mode. */
  predecessor?: RefreshTokenRecord;
}

interface RefreshTokenRecord {
  token: string;
  grantId: string;
  companyUuid: string;
  accessToken: AccessTokenRecord;
  revoked: boolean;
}

interface AuthorizationCode {
  companyUuid: string;
  redirectUri: string;
  expiresAt: number;
  used: boolean;
}

interface QueuedFault {
  remaining: number;
  fault: GustoFault;
  matcher?: FaultMatcher;
}

interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  query: URLSearchParams;
  operation?: MatchedOperation;
  body?: unknown;
  apiVersion?: string;
  token?: AccessTokenRecord;
  /** Sent with whatever answer this exchange gets (rate-limit headers). */
  headers: Record<string, string>;
}

type Json = Record<string, unknown>;

const SCOPE = 'companies:read employees:read payrolls:read pay_schedules:read company_benefits:read company_benefits:write employee_benefits:read employee_benefits:write';
const NOT_FOUND: { errors: GustoError[] } = { errors: [{ error_key: 'request', category: 'not_found', message: 'The requested resource was not found.' }] };
const INTERNAL_ERROR: { errors: GustoError[] } = { errors: [{ error_key: 'request', category: 'internal_error', message: 'An unexpected error has occurred.' }] };
const STALE_VERSION: { errors: GustoError[] } = {
  errors: [{ error_key: 'base', category: 'invalid_resource_version', message: 'You are attempting to update a resource using an out-of-date version.' }],
};
const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Margaret', 'Ken'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Backus', 'Hamilton', 'Thompson'];
const DAY = 86_400_000;

// ---------------------------------------------------------------------------------------------
// The fake.
// ---------------------------------------------------------------------------------------------

export class FakeGusto {
  readonly clientId: string;
  readonly clientSecret: string;
  accessTokenTtlSeconds: number;
  rateLimit: FakeGustoOptions['rateLimit'];
  refreshTokenRevocation: 'on-refresh' | 'on-first-use';

  /** What the document does not allow, in requests received or answers given. */
  readonly violations: string[] = [];
  /** Each kind of exchange allowed only by the SUPPLEMENT (`METHOD /template request|status`), once. */
  readonly offDocument: string[] = [];
  readonly requests: RecordedRequest[] = [];
  /** Distinct X-Gusto-API-Version values received, in order. */
  readonly apiVersions: string[] = [];
  readonly webhookDeliveries: WebhookDelivery[] = [];
  refreshCount = 0;

  private readonly contracts = gustoContracts();
  private server: Server | undefined;
  private port = 0;
  private clockOffsetMs = 0;

  private readonly companies = new Map<string, GustoCompany>();
  private readonly employees = new Map<string, GustoEmployee>();
  private readonly paySchedules = new Map<string, { companyUuid: string; schedule: GustoPaySchedule }>();
  private readonly payrolls = new Map<string, GustoPayroll>();
  private handshakesToLose = 0;
  private readonly companyBenefits = new Map<string, GustoCompanyBenefit>();
  private readonly employeeBenefits = new Map<string, GustoEmployeeBenefit>();
  private readonly subscriptions = new Map<string, { subscription: GustoWebhookSubscription; verificationToken: string }>();
  private readonly events: GustoEvent[] = [];

  private readonly codes = new Map<string, AuthorizationCode>();
  private readonly accessTokens = new Map<string, AccessTokenRecord>();
  private readonly refreshTokens = new Map<string, RefreshTokenRecord>();
  private readonly hits = new Map<string, number[]>();
  private readonly faults: QueuedFault[] = [];
  private readonly outbound = new Set<Promise<void>>();

  constructor(options: FakeGustoOptions = {}) {
    this.clientId = options.clientId ?? 'fake-gusto-client-id';
    this.clientSecret = options.clientSecret ?? 'fake-gusto-client-secret';
    this.accessTokenTtlSeconds = options.accessTokenTtlSeconds ?? 7200;
    this.rateLimit = options.rateLimit;
    this.refreshTokenRevocation = options.refreshTokenRevocation ?? 'on-refresh';
  }

  // --- lifecycle ------------------------------------------------------------------------------

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    if (!this.server) throw new Error('FakeGusto is not started');
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    await this.idle();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Waits for every outbound POST (verification tokens, webhook deliveries) to finish. */
  async idle(): Promise<void> {
    while (this.outbound.size > 0) await Promise.allSettled([...this.outbound]);
  }

  /** The fake's clock (ms): Date.now() moved by advanceTime(). Token expiry, rate limit and dates use it. */
  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  advanceTime(seconds: number): void {
    this.clockOffsetMs += seconds * 1000;
  }

  // --- seeding --------------------------------------------------------------------------------

  addCompany(overrides: Partial<GustoCompany> = {}): GustoCompany {
    const uuid = overrides.uuid ?? randomUUID();
    const company: GustoCompany = {
      uuid,
      name: `Fake Company ${this.companies.size + 1}`,
      trade_name: null,
      ein: `12-${String(3456789 + this.companies.size).padStart(7, '0')}`,
      entity_type: 'LLC',
      contractor_only: false,
      tier: 'complete',
      is_suspended: false,
      company_status: 'Approved',
      is_partner_managed: false,
      pay_schedule_type: 'single',
      join_date: this.date(-365),
      funding_type: 'ach',
      locations: [{ street_1: '525 20th St', street_2: null, city: 'San Francisco', state: 'CA', zip: '94107', country: 'USA', active: true, inactive: false }],
      primary_payroll_admin: { first_name: 'Pat', last_name: 'Admin', phone: null, email: 'admin@example.com' },
      ...overrides,
    };
    this.companies.set(uuid, company);
    return structuredClone(company);
  }

  addEmployees(companyUuid: string, n: number, overrides: Partial<GustoEmployee> | ((index: number) => Partial<GustoEmployee>) = {}): GustoEmployee[] {
    this.requireCompany(companyUuid);
    const created: GustoEmployee[] = [];
    for (let i = 0; i < n; i++) {
      const ordinal = this.employees.size + 1;
      const uuid = randomUUID();
      const jobUuid = randomUUID();
      const compensationUuid = randomUUID();
      const first = FIRST_NAMES[ordinal % FIRST_NAMES.length];
      const last = `${LAST_NAMES[Math.floor(ordinal / FIRST_NAMES.length) % LAST_NAMES.length]}${ordinal}`;
      const hired = this.date(-400);
      const employee: GustoEmployee = {
        uuid,
        first_name: first,
        middle_initial: null,
        last_name: last,
        preferred_first_name: null,
        email: `${first}.${last}@example.com`.toLowerCase(),
        work_email: null,
        company_uuid: companyUuid,
        manager_uuid: null,
        version: newVersion(),
        department: null,
        department_uuid: null,
        terminated: false,
        two_percent_shareholder: false,
        onboarded: true,
        onboarding_status: 'onboarding_completed',
        jobs: [
          {
            uuid: jobUuid,
            version: newVersion(),
            employee_uuid: uuid,
            hire_date: hired,
            title: 'Engineer',
            primary: true,
            rate: '52000.00',
            payment_unit: 'Year',
            current_compensation_uuid: compensationUuid,
            compensations: [
              {
                uuid: compensationUuid,
                version: newVersion(),
                job_uuid: jobUuid,
                employee_uuid: uuid,
                rate: '52000.00',
                payment_unit: 'Year',
                flsa_status: 'Exempt',
                effective_date: hired,
                adjust_for_minimum_wage: false,
              },
            ],
          },
        ],
        eligible_paid_time_off: [],
        terminations: [],
        garnishments: [],
        custom_fields: [],
        date_of_birth: '1990-01-01',
        has_ssn: true,
        phone: null,
        payment_method: 'Direct Deposit',
        current_employment_status: 'full_time',
        historical: false,
        title: 'Engineer',
        hired_at: hired,
        ...(typeof overrides === 'function' ? overrides(i) : overrides),
      };
      if (employee.terminated && employee.terminations.length === 0) {
        employee.terminations = [
          { uuid: randomUUID(), version: newVersion(), employee_uuid: uuid, active: true, cancelable: false, effective_date: this.date(-1), run_termination_payroll: false },
        ];
      }
      this.employees.set(employee.uuid, employee);
      created.push(structuredClone(employee));
    }
    return created;
  }

  addPaySchedule(companyUuid: string, overrides: Partial<GustoPaySchedule> = {}): GustoPaySchedule {
    this.requireCompany(companyUuid);
    const schedule: GustoPaySchedule = {
      uuid: randomUUID(),
      version: newVersion(),
      frequency: 'Every other week',
      anchor_pay_date: this.date(0),
      anchor_end_of_pay_period: this.date(-5),
      day_1: null,
      day_2: null,
      name: null,
      custom_name: 'Every other Friday',
      auto_payroll: false,
      active: true,
      ...overrides,
    };
    this.paySchedules.set(schedule.uuid, { companyUuid, schedule });
    return structuredClone(schedule);
  }

  addCompanyBenefit(companyUuid: string, overrides: Partial<GustoCompanyBenefit> = {}): GustoCompanyBenefit {
    this.requireCompany(companyUuid);
    const benefit: GustoCompanyBenefit = {
      uuid: randomUUID(),
      version: newVersion(),
      company_uuid: companyUuid,
      benefit_type: 1,
      active: true,
      description: 'Medical',
      source: 'internal',
      partner_name: null,
      deletable: true,
      supports_percentage_amounts: true,
      responsible_for_employer_taxes: false,
      responsible_for_employee_w2: false,
      catch_up_type: null,
      ...overrides,
    };
    this.companyBenefits.set(benefit.uuid, benefit);
    return structuredClone(benefit);
  }

  addEmployeeBenefit(employeeUuid: string, companyBenefitUuid: string, overrides: Partial<GustoEmployeeBenefit> = {}): GustoEmployeeBenefit {
    if (!this.employees.has(employeeUuid)) throw new Error(`no employee ${employeeUuid}`);
    if (!this.companyBenefits.has(companyBenefitUuid)) throw new Error(`no company benefit ${companyBenefitUuid}`);
    const benefit = { ...this.newEmployeeBenefit(employeeUuid, companyBenefitUuid), ...overrides };
    this.employeeBenefits.set(benefit.uuid, benefit);
    return structuredClone(benefit);
  }

  /** A payroll with employee compensations derived from the employees and their benefits. */
  addPayroll(companyUuid: string, seed: PayrollSeed = {}): GustoPayroll {
    this.requireCompany(companyUuid);
    const processed = seed.processed ?? true;
    const endDate = seed.endDate ?? this.date(-3);
    const startDate = seed.startDate ?? addDays(endDate, -13);
    const checkDate = seed.checkDate ?? addDays(endDate, 2);
    const people =
      seed.employees ?? [...this.employees.values()].filter((e) => e.company_uuid === companyUuid && !e.terminated).map((e) => ({ employeeUuid: e.uuid }));
    const compensations = people.map((person) => this.compensationFor(person));
    const sum = (pick: (c: GustoEmployeeCompensation) => number) => round(compensations.reduce((total, c) => total + pick(c), 0));
    const employerTaxes = sum((c) => c.taxes.filter((t) => t.employer).reduce((s, t) => s + t.amount, 0));
    const employeeTaxes = sum((c) => c.taxes.filter((t) => !t.employer).reduce((s, t) => s + t.amount, 0));
    const benefitDeductions = sum((c) => c.benefits.reduce((s, b) => s + b.employee_deduction, 0));
    const benefitContributions = sum((c) => c.benefits.reduce((s, b) => s + b.company_contribution, 0));
    const otherDeductions = sum((c) => c.deductions.reduce((s, d) => s + d.amount, 0));
    const gross = sum((c) => c.gross_pay ?? 0);
    const net = sum((c) => c.net_pay ?? 0);
    const uuid = randomUUID();
    const payroll: GustoPayroll = {
      uuid,
      payroll_uuid: uuid,
      company_uuid: companyUuid,
      processed,
      processed_date: processed ? addDays(checkDate, -2) : null,
      check_date: checkDate,
      payroll_deadline: `${addDays(checkDate, -2)}T23:00:00Z`,
      calculated_at: processed ? `${addDays(checkDate, -3)}T12:00:00Z` : null,
      created_at: `${addDays(startDate, 0)}T09:00:00Z`,
      off_cycle: seed.offCycle ?? false,
      off_cycle_reason: seed.offCycle ? 'Bonus' : null,
      auto_payroll: false,
      external: false,
      final_termination_payroll: false,
      withholding_pay_period: 'Every other week',
      skip_regular_deductions: null,
      fixed_withholding_rate: null,
      pay_period: { start_date: startDate, end_date: endDate, pay_schedule_uuid: seed.payScheduleUuid ?? null },
      totals: {
        company_debit: money(net + employerTaxes + employeeTaxes + benefitContributions),
        net_pay_debit: money(net),
        tax_debit: money(employerTaxes + employeeTaxes),
        reimbursement_debit: money(0),
        child_support_debit: money(0),
        reimbursements: money(0),
        net_pay: money(net),
        gross_pay: money(gross),
        employee_bonuses: money(0),
        employee_commissions: money(0),
        employee_cash_tips: money(0),
        employee_paycheck_tips: money(0),
        additional_earnings: money(0),
        owners_draw: money(0),
        check_amount: money(net),
        employer_taxes: money(employerTaxes),
        employee_taxes: money(employeeTaxes),
        benefits: money(benefitContributions),
        employee_benefits_deductions: money(benefitDeductions),
        imputed_pay: money(0),
        deferred_payroll_taxes: money(0),
        other_deductions: money(otherDeductions),
      },
      employee_compensations: compensations,
    };
    this.payrolls.set(uuid, payroll);
    return structuredClone(payroll);
  }

  addProcessedPayroll(companyUuid: string, seed: Omit<PayrollSeed, 'processed'> = {}): GustoPayroll {
    return this.addPayroll(companyUuid, { ...seed, processed: true });
  }

  /** An authorization code for a company, as Gusto's authorize page would redirect with (single use, 10 minutes). */
  authorize(companyUuid: string, redirectUri = 'http://127.0.0.1/callback'): string {
    this.requireCompany(companyUuid);
    const code = opaqueToken();
    this.codes.set(code, { companyUuid, redirectUri, expiresAt: this.now() + 600_000, used: false });
    return code;
  }

  /** Company tokens without the OAuth dance, for tests about something else. */
  issueTokens(companyUuid: string): IssuedTokens {
    this.requireCompany(companyUuid);
    const issued = this.issueCompanyTokens(companyUuid, randomUUID());
    return { access_token: issued.access_token, refresh_token: issued.refresh_token };
  }

  /** A system access token (what webhook subscriptions and events take). */
  issueSystemToken(): string {
    return this.issueSystemAccessToken().access_token;
  }

  /**
   * Answers the next `n` requests that match (any, without a matcher) with `fault`: after the
   * request is checked against the document, before authentication and the rate limit.
   */
  failNext(n: number, fault: GustoFault, matcher?: FaultMatcher): void {
    this.faults.push({ remaining: n, fault, matcher });
  }

  /**
   * Records an event (GET /v1/events) and POSTs it to every verified subscription whose types
   * include its `entity_type`, signed as Gusto signs: X-Gusto-Signature is the hex HMAC-SHA256
   * of the raw body keyed by the subscription's verification token. Gusto's webhook guide: "Gusto
   * computes a hash message authenticate code (HMAC) of the event payload using the
   * verification_code as the secret and SHA256 as the hash function. Webhook Events include a
   * x_gusto_signature header, which is set to the computed HMAC"
   * (https://docs.gusto.com/app-integrations/docs/webhooks; `x_gusto_signature` is the Rack
   * spelling of the X-Gusto-Signature header). The guide shows no encoding beyond that; hex is
   * what its example computes and what integrations verify.
   */
  async deliver(input: EventInput): Promise<WebhookDelivery[]> {
    const event = this.recordEvent(input);
    return Promise.all(this.pushEvent(event));
  }

  // --- state, for assertions -------------------------------------------------------------------

  company(uuid: string): GustoCompany | undefined {
    return clone(this.companies.get(uuid));
  }

  companyBenefit(uuid: string): GustoCompanyBenefit | undefined {
    return clone(this.companyBenefits.get(uuid));
  }

  employeeBenefit(uuid: string): GustoEmployeeBenefit | undefined {
    return clone(this.employeeBenefits.get(uuid));
  }

  /** The next `n` handshake POSTs (of a subscription created, or of a token asked for again) are lost on the way. */
  loseHandshakes(n: number): void {
    this.handshakesToLose += n;
  }

  webhookSubscriptions(): (GustoWebhookSubscription & { verification_token: string })[] {
    return [...this.subscriptions.values()].map(({ subscription, verificationToken }) => ({ ...structuredClone(subscription), verification_token: verificationToken }));
  }

  eventLog(): GustoEvent[] {
    return structuredClone(this.events);
  }

  // --- HTTP -----------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake-gusto');
    const ex: Exchange = { req, res, method: (req.method ?? 'GET').toUpperCase(), path: url.pathname, query: url.searchParams, headers: {} };
    try {
      // Not in the document (it is a page the user sees, not an API): served outside the check.
      if (ex.method === 'GET' && ex.path === '/oauth/authorize') return this.authorizePage(ex);
      const apiVersion = headerOf(req, 'x-gusto-api-version');
      if (apiVersion !== undefined) {
        ex.apiVersion = apiVersion;
        if (!this.apiVersions.includes(apiVersion)) this.apiVersions.push(apiVersion);
      }
      const contentType = headerOf(req, 'content-type');
      if (raw.length > 0) {
        if (/json/i.test(contentType ?? 'application/json')) {
          try {
            ex.body = JSON.parse(raw);
          } catch {
            return this.refuse(ex, [`${ex.method} ${ex.path}: the body is not JSON`]);
          }
        } else if (/x-www-form-urlencoded/i.test(contentType ?? '')) ex.body = Object.fromEntries(new URLSearchParams(raw));
        else ex.body = raw;
      }
      ex.operation = this.contracts.document.match(ex.method, ex.path);
      const problems = this.checkRequest(ex, contentType);
      if (problems.length > 0) return this.refuse(ex, problems);
      const operation = ex.operation;
      if (!operation || !(SERVED_OPERATIONS as readonly string[]).includes(operation.name)) {
        return this.refuse(ex, [`${operation?.name ?? ex.path} is an operation of the document the fake does not serve`], 501);
      }
      const fault = this.takeFault(ex);
      if (fault) return this.sendFault(ex, fault);
      if (operation.name === 'POST /oauth/token') return this.token(ex);
      const token = this.authenticate(ex, operation.name);
      if (!token) return this.send(ex, 401, undefined, { 'www-authenticate': 'Bearer realm="Gusto", error="invalid_token"' });
      ex.token = token;
      if (!this.admit(ex, token)) return;
      this.route(ex, operation);
    } catch (error) {
      this.violations.push(`${ex.method} ${ex.path}: the fake failed: ${error instanceof Error ? error.stack : String(error)}`);
      if (!res.headersSent) this.send(ex, 500, INTERNAL_ERROR);
    }
  }

  /** Against the document, then the supplemented document: the second only notes, the first only refuses. */
  private checkRequest(ex: Exchange, contentType: string | undefined): string[] {
    const request: ContractRequest = { method: ex.method, path: ex.path, query: queryRecord(ex.query), headers: ex.req.headers, body: ex.body, contentType };
    const problems = this.contracts.document.checkRequest(request);
    if (problems.length === 0) return [];
    if (ex.operation && this.contracts.supplemented.checkRequest(request).length === 0) {
      this.noteOffDocument(`${ex.operation.name} request`);
      return [];
    }
    return problems.map((problem) => `${ex.operation?.name ?? `${ex.method} ${ex.path}`} request: ${problem}`);
  }

  /** A request the document does not allow: a violation, answered 400 with a JSON error (not Gusto's; the fake's). */
  private refuse(ex: Exchange, problems: string[], status = 400): void {
    this.violations.push(...problems);
    const body = JSON.stringify({ errors: problems.map((message) => ({ error_key: 'request', category: 'fake_gusto_contract_violation', message })) });
    ex.res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(body);
    this.requests.push({ method: ex.method, path: ex.path, operation: ex.operation?.name, status, apiVersion: ex.apiVersion });
  }

  private send(ex: Exchange, status: number, body?: unknown, headers: Record<string, string> = {}): void {
    const name = ex.operation?.name;
    if (name) {
      const problems = this.contracts.document.checkResponse(name, status, body);
      if (problems.length > 0) {
        const supplemented = this.contracts.supplemented.checkResponse(name, status, body);
        if (supplemented.length === 0) this.noteOffDocument(`${name} ${status}`);
        else {
          // The supplement's own findings add to the document's when it knows the status (a 409 body, say).
          const more = supplemented.filter((problem) => !problem.includes('does not document status'));
          this.violations.push(...new Set([...problems, ...more].map((problem) => `${name} ${status}: ${problem}`)));
        }
      }
    }
    const allHeaders: Record<string, string> = { ...ex.headers, ...headers };
    if (body !== undefined) allHeaders['content-type'] = 'application/json; charset=utf-8';
    ex.res.writeHead(status, allHeaders).end(body === undefined ? undefined : JSON.stringify(body));
    this.requests.push({ method: ex.method, path: ex.path, operation: name, status, apiVersion: ex.apiVersion });
  }

  private noteOffDocument(entry: string): void {
    if (!this.offDocument.includes(entry)) this.offDocument.push(entry);
  }

  private notFound(ex: Exchange): void {
    // Most of these operations document a 404 with no body; three document Not-Found-Error-Object.
    const needsBody = ex.operation !== undefined && this.contracts.document.checkResponse(ex.operation.name, 404, undefined).length > 0;
    this.send(ex, 404, needsBody ? NOT_FOUND : undefined);
  }

  private unprocessable(ex: Exchange, errors: GustoError[]): void {
    this.send(ex, 422, { errors });
  }

  private takeFault(ex: Exchange): GustoFault | undefined {
    const summary: RequestSummary = { method: ex.method, path: ex.path, operation: ex.operation?.name };
    const queued = this.faults.find((f) => f.remaining > 0 && matches(f.matcher, summary));
    if (!queued) return undefined;
    queued.remaining--;
    if (queued.remaining === 0) this.faults.splice(this.faults.indexOf(queued), 1);
    return queued.fault;
  }

  private sendFault(ex: Exchange, fault: GustoFault): void {
    switch (fault.status) {
      case 429:
        return this.send(ex, 429, undefined, { 'retry-after': String(fault.retryAfterSeconds ?? 1) });
      case 500:
        return this.send(ex, 500, INTERNAL_ERROR);
      case 409:
        return this.send(ex, 409, STALE_VERSION);
      case 422:
        return this.unprocessable(ex, fault.errors ?? [{ error_key: 'base', category: 'invalid_operation', message: 'The request could not be processed (injected).' }]);
    }
  }

  /** Which token the operation takes, by its `security` (the document's default: company tokens). */
  private authenticate(ex: Exchange, operationName: string): AccessTokenRecord | undefined {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(headerOf(ex.req, 'authorization') ?? '');
    const token = match ? this.accessTokens.get(match[1]) : undefined;
    if (!token || token.revoked || token.expiresAt <= this.now()) return undefined;
    const doc = this.contracts.document.document as DocumentShape;
    const security = operationOf(doc, operationName).security ?? doc.security ?? [];
    const wanted = security.some((s) => 'SystemAccessAuth' in s) ? 'system' : 'company';
    if (token.kind !== wanted) return undefined;
    if (!token.used) {
      token.used = true;
      if (this.refreshTokenRevocation === 'on-first-use' && token.predecessor) this.revoke(token.predecessor);
    }
    return token;
  }

  /** Gusto: 200 requests per rolling 60 s window per OAuth grant (https://docs.gusto.com/app-integrations/docs/rate-limits). */
  private admit(ex: Exchange, token: AccessTokenRecord): boolean {
    if (!this.rateLimit) return true;
    const now = this.now();
    const limit = this.rateLimit.perMinute;
    const windowMs = this.rateLimit.windowMs ?? 60_000;
    const recent = (this.hits.get(token.grantId) ?? []).filter((at) => at > now - windowMs);
    this.hits.set(token.grantId, recent);
    ex.headers['x-ratelimit-limit'] = String(limit);
    if (recent.length >= limit) {
      ex.headers['x-ratelimit-remaining'] = '0';
      const retryAfter = Math.max(1, Math.ceil((recent[0] + windowMs - now) / 1000));
      this.send(ex, 429, undefined, { 'retry-after': String(retryAfter) });
      return false;
    }
    recent.push(now);
    ex.headers['x-ratelimit-remaining'] = String(limit - recent.length);
    return true;
  }

  private route(ex: Exchange, operation: MatchedOperation): void {
    const p = operation.pathParams;
    switch (operation.name as ServedOperation) {
      case 'GET /v1/token_info':
        return this.tokenInfo(ex);
      case 'GET /v1/companies/{company_id}':
        return this.withCompany(ex, p.company_id, (company) => this.send(ex, 200, company));
      case 'GET /v1/companies/{company_id}/employees':
        return this.withCompany(ex, p.company_id, (company) => this.listEmployees(ex, company.uuid));
      case 'GET /v1/employees/{employee_id}':
        return this.withEmployee(ex, p.employee_id, (employee) => this.send(ex, 200, employee));
      case 'GET /v1/companies/{company_id}/pay_schedules':
        return this.withCompany(ex, p.company_id, (company) => {
          const schedules = [...this.paySchedules.values()].filter((s) => s.companyUuid === company.uuid).map((s) => s.schedule);
          const page = this.page(ex, schedules);
          this.send(ex, 200, page.items, page.headers);
        });
      case 'GET /v1/companies/{company_id}/payrolls':
        return this.withCompany(ex, p.company_id, (company) => this.listPayrolls(ex, company.uuid));
      case 'GET /v1/companies/{company_id}/payrolls/{payroll_id}':
        return this.withCompany(ex, p.company_id, (company) => this.showPayroll(ex, company.uuid, p.payroll_id));
      case 'GET /v1/companies/{company_id}/company_benefits':
        return this.withCompany(ex, p.company_id, (company) => this.listCompanyBenefits(ex, company.uuid));
      case 'POST /v1/companies/{company_id}/company_benefits':
        return this.withCompany(ex, p.company_id, (company) => this.createCompanyBenefit(ex, company.uuid));
      case 'GET /v1/company_benefits/{company_benefit_id}':
        return this.withCompanyBenefit(ex, p.company_benefit_id, (benefit) => this.showCompanyBenefit(ex, benefit));
      case 'PUT /v1/company_benefits/{company_benefit_id}':
        return this.withCompanyBenefit(ex, p.company_benefit_id, (benefit) => this.updateCompanyBenefit(ex, benefit));
      case 'GET /v1/employees/{employee_id}/employee_benefits':
        return this.withEmployee(ex, p.employee_id, (employee) => {
          const benefits = [...this.employeeBenefits.values()].filter((b) => b.employee_uuid === employee.uuid);
          const page = this.page(ex, benefits);
          this.send(ex, 200, page.items, page.headers);
        });
      case 'GET /v1/company_benefits/{company_benefit_id}/employee_benefits':
        // Gusto answers each employee's current window unless include=all_benefits; the fake
        // keeps no dated history of its own, so it answers every record, as all_benefits asks.
        return this.withCompanyBenefit(ex, p.company_benefit_id, (benefit) => {
          const enrolled = [...this.employeeBenefits.values()].filter((b) => b.company_benefit_uuid === benefit.uuid);
          const page = this.page(ex, enrolled);
          this.send(ex, 200, page.items, page.headers);
        });
      case 'POST /v1/employees/{employee_id}/employee_benefits':
        return this.withEmployee(ex, p.employee_id, (employee) => this.createEmployeeBenefit(ex, employee));
      case 'GET /v1/employee_benefits/{employee_benefit_id}':
        return this.withEmployeeBenefit(ex, p.employee_benefit_id, (benefit) => this.send(ex, 200, benefit));
      case 'PUT /v1/employee_benefits/{employee_benefit_id}':
        return this.withEmployeeBenefit(ex, p.employee_benefit_id, (benefit) => this.updateEmployeeBenefit(ex, benefit));
      case 'DELETE /v1/employee_benefits/{employee_benefit_id}':
        return this.withEmployeeBenefit(ex, p.employee_benefit_id, (benefit) => {
          this.employeeBenefits.delete(benefit.uuid);
          this.emit('employee_benefit.deleted', 'EmployeeBenefit', benefit.uuid, this.companyOfEmployee(benefit.employee_uuid));
          this.send(ex, 204);
        });
      case 'GET /v1/webhook_subscriptions':
        return this.send(ex, 200, [...this.subscriptions.values()].map((s) => s.subscription));
      case 'POST /v1/webhook_subscriptions':
        return this.createSubscription(ex);
      case 'PUT /v1/webhook_subscriptions/{webhook_subscription_uuid}/verify':
        return this.verifySubscription(ex, p.webhook_subscription_uuid);
      case 'GET /v1/webhook_subscriptions/{webhook_subscription_uuid}/request_verification_token':
        return this.resendVerificationToken(ex, p.webhook_subscription_uuid);
      case 'GET /v1/events':
        return this.listEvents(ex);
      case 'POST /oauth/token':
        return this.token(ex);
    }
  }

  // --- OAuth ----------------------------------------------------------------------------------

  /**
   * Stands in for Gusto's consent page: redirects to `redirect_uri` with a code for the company
   * named by `company_uuid` (a fake-only parameter; Gusto asks the user) or the only company.
   */
  private authorizePage(ex: Exchange): void {
    const redirectUri = ex.query.get('redirect_uri');
    const companyUuid = ex.query.get('company_uuid') ?? (this.companies.size === 1 ? [...this.companies.keys()][0] : undefined);
    const problem =
      ex.query.get('client_id') !== this.clientId
        ? 'unknown client_id'
        : ex.query.get('response_type') !== 'code'
          ? 'response_type must be code'
          : !redirectUri
            ? 'redirect_uri is required'
            : !companyUuid || !this.companies.has(companyUuid)
              ? 'no company to authorize (seed one, or pass company_uuid)'
              : undefined;
    if (problem || !redirectUri || !companyUuid) {
      ex.res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>Fake Gusto</title><p>${escapeHtml(problem ?? 'bad request')}</p>`);
      this.requests.push({ method: ex.method, path: ex.path, status: 400 });
      return;
    }
    const target = new URL(redirectUri);
    target.searchParams.set('code', this.authorize(companyUuid, redirectUri));
    const state = ex.query.get('state');
    if (state !== null) target.searchParams.set('state', state);
    ex.res.writeHead(302, { location: target.toString(), 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><a href="${escapeHtml(target.toString())}">Continue</a>`);
    this.requests.push({ method: ex.method, path: ex.path, status: 302 });
  }

  private token(ex: Exchange): void {
    const body = ex.body as Json;
    if (body.client_id !== this.clientId || body.client_secret !== this.clientSecret) {
      return this.send(ex, 401, { error: 'invalid_client', error_description: 'Client authentication failed due to unknown client or wrong credentials.' });
    }
    const invalidGrant = (why: string) => this.send(ex, 400, { error: 'invalid_grant', error_description: why });
    switch (body.grant_type) {
      case 'authorization_code': {
        const code = this.codes.get(String(body.code));
        if (!code || code.used || code.expiresAt <= this.now()) return invalidGrant('The authorization code is invalid, expired or already used.');
        if (code.redirectUri !== body.redirect_uri) return invalidGrant('The redirect_uri does not match the one the code was issued to.');
        code.used = true;
        return this.send(ex, 200, this.issueCompanyTokens(code.companyUuid, randomUUID()));
      }
      case 'refresh_token': {
        const refresh = this.refreshTokens.get(String(body.refresh_token));
        if (!refresh || refresh.revoked) return invalidGrant('The refresh token is invalid, revoked or already used.');
        this.refreshCount++;
        const issued = this.issueCompanyTokens(refresh.companyUuid, refresh.grantId, refresh);
        if (this.refreshTokenRevocation === 'on-refresh') this.revoke(refresh);
        return this.send(ex, 200, issued);
      }
      case 'system_access':
        return this.send(ex, 200, this.issueSystemAccessToken());
      default:
        return this.send(ex, 400, { error: 'unsupported_grant_type', error_description: `grant_type ${String(body.grant_type)} is not supported` });
    }
  }

  private issueCompanyTokens(companyUuid: string, grantId: string, predecessor?: RefreshTokenRecord) {
    const now = this.now();
    const access: AccessTokenRecord = {
      token: opaqueToken(),
      kind: 'company',
      companyUuid,
      grantId,
      createdAt: now,
      expiresAt: now + this.accessTokenTtlSeconds * 1000,
      revoked: false,
      used: false,
      predecessor,
    };
    const refresh: RefreshTokenRecord = { token: opaqueToken(), grantId, companyUuid, accessToken: access, revoked: false };
    this.accessTokens.set(access.token, access);
    this.refreshTokens.set(refresh.token, refresh);
    return {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: this.accessTokenTtlSeconds,
      refresh_token: refresh.token,
      scope: SCOPE,
      created_at: Math.floor(now / 1000),
    };
  }

  /** No refresh token: "Only present when refresh token is provided" (Create-Token-Authentication). */
  private issueSystemAccessToken() {
    const now = this.now();
    const access: AccessTokenRecord = {
      token: opaqueToken(),
      kind: 'system',
      grantId: randomUUID(),
      createdAt: now,
      expiresAt: now + this.accessTokenTtlSeconds * 1000,
      revoked: false,
      used: false,
    };
    this.accessTokens.set(access.token, access);
    return { access_token: access.token, token_type: 'Bearer', expires_in: this.accessTokenTtlSeconds, created_at: Math.floor(now / 1000) };
  }

  /** A refresh token and the access token issued with it stop working together. */
  private revoke(refresh: RefreshTokenRecord): void {
    refresh.revoked = true;
    refresh.accessToken.revoked = true;
  }

  private tokenInfo(ex: Exchange): void {
    const token = ex.token as AccessTokenRecord;
    const company = token.companyUuid ? this.companies.get(token.companyUuid) : undefined;
    this.send(ex, 200, {
      scope: SCOPE,
      resource: { type: 'Company', uuid: token.companyUuid },
      resource_owner: company ? { type: 'CompanyAdmin', uuid: adminUuidOf(company.uuid) } : null,
    });
  }

  // --- reads ----------------------------------------------------------------------------------

  /** Strict access (a token reaches one company): anything of another company is not found. */
  private withCompany(ex: Exchange, companyUuid: string, then: (company: GustoCompany) => void): void {
    const company = this.companies.get(companyUuid);
    if (!company || company.uuid !== ex.token?.companyUuid) return this.notFound(ex);
    then(company);
  }

  private withEmployee(ex: Exchange, employeeUuid: string, then: (employee: GustoEmployee) => void): void {
    const employee = this.employees.get(employeeUuid);
    if (!employee || employee.company_uuid !== ex.token?.companyUuid) return this.notFound(ex);
    then(employee);
  }

  private withCompanyBenefit(ex: Exchange, uuid: string, then: (benefit: GustoCompanyBenefit) => void): void {
    const benefit = this.companyBenefits.get(uuid);
    if (!benefit || benefit.company_uuid !== ex.token?.companyUuid) return this.notFound(ex);
    then(benefit);
  }

  private withEmployeeBenefit(ex: Exchange, uuid: string, then: (benefit: GustoEmployeeBenefit) => void): void {
    const benefit = this.employeeBenefits.get(uuid);
    if (!benefit || this.companyOfEmployee(benefit.employee_uuid) !== ex.token?.companyUuid) return this.notFound(ex);
    then(benefit);
  }

  /**
   * Gusto's pagination guide: `page` and `per` (default 25); when either is given, the answer
   * carries X-Page, X-Per-Page, X-Total-Count and X-Total-Pages
   * (https://docs.gusto.com/embedded-payroll/docs/pagination). Without them, the document's
   * `page` parameter says: "When unspecified, will load all objects".
   */
  private page<T>(ex: Exchange, items: T[], maxPer = Infinity): { items: T[]; headers: Record<string, string> } {
    const pageParam = ex.query.get('page');
    const perParam = ex.query.get('per');
    if (pageParam === null && perParam === null) return { items, headers: {} };
    const per = Math.min(maxPer, Math.max(1, Number(perParam ?? 25) || 25));
    const page = Math.max(1, Number(pageParam ?? 1) || 1);
    return {
      items: items.slice((page - 1) * per, page * per),
      headers: { 'x-page': String(page), 'x-per-page': String(per), 'x-total-count': String(items.length), 'x-total-pages': String(Math.ceil(items.length / per)) },
    };
  }

  private listEmployees(ex: Exchange, companyUuid: string): void {
    const q = ex.query;
    const flag = (name: string) => (q.get(name) === null ? undefined : q.get(name) === 'true');
    const terminated = flag('terminated');
    const onboarded = flag('onboarded');
    const uuids = q.get('uuids')?.split(',');
    const search = q.get('search_term')?.toLowerCase();
    const employees = [...this.employees.values()].filter(
      (e) =>
        e.company_uuid === companyUuid &&
        (terminated === undefined || e.terminated === terminated) &&
        (onboarded === undefined || e.onboarded === onboarded) &&
        (!uuids || uuids.includes(e.uuid)) &&
        (!search || `${e.first_name} ${e.last_name}`.toLowerCase().includes(search)),
    );
    const page = this.page(ex, employees);
    this.send(ex, 200, page.items, page.headers);
  }

  /**
   * The document's filters: processing_statuses (default processed), payroll_types (default
   * regular; include_off_cycle adds off_cycle), processed (overrides processing_statuses),
   * start_date/end_date on the pay period (or the check date with date_filter_by=check_date;
   * end_date defaults to today, the window to the past 6 months), sort_order, page/per. Totals
   * only with include=totals ("In v2023-04-01 totals are no longer included by default").
   */
  private listPayrolls(ex: Exchange, companyUuid: string): void {
    const q = ex.query;
    let statuses = q.get('processing_statuses')?.split(',') ?? ['processed'];
    if (q.get('processed') !== null) statuses = [q.get('processed') === 'true' ? 'processed' : 'unprocessed'];
    const types = q.get('payroll_types')?.split(',') ?? ['regular'];
    if (q.get('include_off_cycle') === 'true' && !types.includes('off_cycle')) types.push('off_cycle');
    const end = q.get('end_date') ?? this.date(0);
    const start = q.get('start_date') ?? sixMonthsBefore(this.date(0));
    const byCheckDate = q.get('date_filter_by') === 'check_date';
    const include = q.get('include')?.split(',') ?? [];
    const payrolls = [...this.payrolls.values()]
      .filter(
        (payroll) =>
          payroll.company_uuid === companyUuid &&
          statuses.includes(payroll.processed ? 'processed' : 'unprocessed') &&
          types.includes(payroll.external ? 'external' : payroll.off_cycle ? 'off_cycle' : 'regular') &&
          (byCheckDate ? payroll.check_date >= start && payroll.check_date <= end : payroll.pay_period.start_date >= start && payroll.pay_period.end_date <= end),
      )
      .sort((a, b) => a.check_date.localeCompare(b.check_date));
    if (q.get('sort_order') === 'desc') payrolls.reverse();
    const page = this.page(ex, payrolls);
    const items = page.items.map((payroll) => {
      const { employee_compensations: _compensations, totals, ...rest } = payroll;
      return include.includes('totals') ? { ...rest, totals } : rest;
    });
    this.send(ex, 200, items, page.headers);
  }

  /** Employee compensations paginated (at most 100 a page, as the document says), `include` adding benefits, deductions, taxes. */
  private showPayroll(ex: Exchange, companyUuid: string, payrollUuid: string): void {
    const payroll = this.payrolls.get(payrollUuid);
    if (!payroll || payroll.company_uuid !== companyUuid) return this.notFound(ex);
    const include = ex.query.get('include')?.split(',') ?? [];
    let compensations = [...payroll.employee_compensations];
    const sortBy = ex.query.get('sort_by');
    if (sortBy === 'first_name' || sortBy === 'last_name') compensations.sort((a, b) => (a[sortBy] ?? '').localeCompare(b[sortBy] ?? ''));
    const page = this.page(ex, compensations, 100);
    compensations = page.items;
    const { employee_compensations: _all, ...rest } = payroll;
    const shown = compensations.map(({ benefits, deductions, taxes, ...base }) => ({
      ...base,
      ...(include.includes('benefits') ? { benefits } : {}),
      ...(include.includes('deductions') ? { deductions } : {}),
      ...(include.includes('taxes') ? { taxes } : {}),
    }));
    this.send(ex, 200, { ...rest, employee_compensations: shown }, page.headers);
  }

  // --- company benefits -----------------------------------------------------------------------

  private companyBenefitOut(benefit: GustoCompanyBenefit, withCount: boolean): Json {
    const enrolled = [...this.employeeBenefits.values()].filter((b) => b.company_benefit_uuid === benefit.uuid);
    return { ...benefit, deletable: enrolled.length === 0, ...(withCount ? { enrollment_count: enrolled.filter((b) => b.active).length } : {}) };
  }

  private listCompanyBenefits(ex: Exchange, companyUuid: string): void {
    const active = ex.query.get('active');
    const types = ex.query.get('benefit_type')?.split(',').map(Number);
    const withCount = ex.query.get('enrollment_count') === 'true';
    const benefits = [...this.companyBenefits.values()]
      .filter((b) => b.company_uuid === companyUuid && (active === null || b.active === (active === 'true')) && (!types || types.includes(b.benefit_type)))
      .map((b) => this.companyBenefitOut(b, withCount));
    this.send(ex, 200, benefits);
  }

  private showCompanyBenefit(ex: Exchange, benefit: GustoCompanyBenefit): void {
    const out = this.companyBenefitOut(benefit, false);
    if (ex.query.get('with_employee_benefits') !== 'true') return this.send(ex, 200, out);
    // This schema's nested employee benefit has a non-null expiration_date: left out when there is none.
    const employeeBenefits = [...this.employeeBenefits.values()]
      .filter((b) => b.company_benefit_uuid === benefit.uuid)
      .map((b) => ({
        employee_uuid: b.employee_uuid,
        company_benefit_uuid: b.company_benefit_uuid,
        active: b.active,
        deduct_as_percentage: b.deduct_as_percentage,
        employee_deduction: b.employee_deduction,
        company_contribution: b.company_contribution,
        effective_date: b.effective_date,
        ...(b.expiration_date ? { expiration_date: b.expiration_date } : {}),
        contribution: b.contribution,
      }));
    this.send(ex, 200, { ...out, employee_benefits: employeeBenefits });
  }

  private createCompanyBenefit(ex: Exchange, companyUuid: string): void {
    const body = ex.body as Json;
    if (typeof body.description === 'string' && body.description.trim() === '') {
      return this.unprocessable(ex, [{ error_key: 'description', category: 'invalid_attribute_value', message: "Description can't be blank" }]);
    }
    const benefit = this.addCompanyBenefit(companyUuid, pick<GustoCompanyBenefit>(body, ['benefit_type', 'active', 'description', 'responsible_for_employer_taxes', 'responsible_for_employee_w2', 'catch_up_type']));
    this.emit('company_benefit.created', 'CompanyBenefit', benefit.uuid, companyUuid);
    this.send(ex, 201, this.companyBenefitOut(this.companyBenefits.get(benefit.uuid) as GustoCompanyBenefit, false));
  }

  private updateCompanyBenefit(ex: Exchange, benefit: GustoCompanyBenefit): void {
    const body = ex.body as Json;
    if (body.version !== benefit.version) return this.send(ex, 409, STALE_VERSION);
    // "Company benefits may only be deactivated if no employees are actively participating" (the PUT's `active`).
    if (body.active === false && [...this.employeeBenefits.values()].some((b) => b.company_benefit_uuid === benefit.uuid && b.active)) {
      return this.unprocessable(ex, [{ error_key: 'active', category: 'invalid_operation', message: 'Company benefit cannot be deactivated while employees are enrolled.' }]);
    }
    Object.assign(benefit, pick<GustoCompanyBenefit>(body, ['active', 'description', 'responsible_for_employer_taxes', 'responsible_for_employee_w2', 'catch_up_type']), { version: newVersion() });
    this.emit('company_benefit.updated', 'CompanyBenefit', benefit.uuid, benefit.company_uuid);
    this.send(ex, 200, this.companyBenefitOut(benefit, false));
  }

  // --- employee benefits ----------------------------------------------------------------------

  private newEmployeeBenefit(employeeUuid: string, companyBenefitUuid: string): GustoEmployeeBenefit {
    return {
      uuid: randomUUID(),
      version: newVersion(),
      employee_uuid: employeeUuid,
      company_benefit_uuid: companyBenefitUuid,
      active: true,
      employee_deduction: '0.00',
      deduct_as_percentage: false,
      employee_deduction_annual_maximum: null,
      contribution: { type: 'amount', value: '0.00' },
      elective: false,
      company_contribution_annual_maximum: null,
      limit_option: null,
      catch_up: false,
      coverage_amount: null,
      coverage_salary_multiplier: '0.00',
      deduction_reduces_taxable_income: 'unset',
      company_contribution: '0.00',
      contribute_as_percentage: false,
      effective_date: '1970-01-01',
      expiration_date: null,
    };
  }

  /** Fields a request may set, with a tiered contribution's array turned into the answer's `{ tiers }`. */
  private employeeBenefitFields(body: Json): Partial<GustoEmployeeBenefit> {
    const fields = pick<GustoEmployeeBenefit>(body, [
      'active',
      'employee_deduction',
      'deduct_as_percentage',
      'employee_deduction_annual_maximum',
      'elective',
      'company_contribution_annual_maximum',
      'limit_option',
      'catch_up',
      'coverage_amount',
      'coverage_salary_multiplier',
      'deduction_reduces_taxable_income',
      'company_contribution',
      'contribute_as_percentage',
      'effective_date',
      'expiration_date',
    ]);
    const contribution = body.contribution as { type?: GustoContribution['type']; value?: string | GustoTier[] } | undefined;
    if (contribution) {
      const value = Array.isArray(contribution.value)
        ? {
            tiers: contribution.value.map((tier, i, all) => ({
              rate: tier.rate,
              threshold: tier.threshold,
              threshold_delta: String(Number(tier.threshold) - (i === 0 ? 0 : Number(all[i - 1].threshold))),
            })),
          }
        : (contribution.value ?? '0.00');
      fields.contribution = { type: contribution.type ?? 'amount', value };
    }
    return fields;
  }

  private createEmployeeBenefit(ex: Exchange, employee: GustoEmployee): void {
    const body = ex.body as Json;
    const companyBenefit = this.companyBenefits.get(String(body.company_benefit_uuid));
    if (!companyBenefit || companyBenefit.company_uuid !== employee.company_uuid) {
      return this.unprocessable(ex, [{ error_key: 'company_benefit_uuid', category: 'invalid_attribute_value', message: 'Company benefit not found' }]);
    }
    if (!companyBenefit.active) {
      return this.unprocessable(ex, [{ error_key: 'company_benefit_uuid', category: 'invalid_operation', message: 'Company benefit is not active' }]);
    }
    const benefit: GustoEmployeeBenefit = { ...this.newEmployeeBenefit(employee.uuid, companyBenefit.uuid), ...this.employeeBenefitFields(body) };
    this.employeeBenefits.set(benefit.uuid, benefit);
    this.emit('employee_benefit.created', 'EmployeeBenefit', benefit.uuid, employee.company_uuid);
    this.send(ex, 201, benefit);
  }

  private updateEmployeeBenefit(ex: Exchange, benefit: GustoEmployeeBenefit): void {
    const body = ex.body as Json;
    if (body.version !== benefit.version) return this.send(ex, 409, STALE_VERSION);
    Object.assign(benefit, this.employeeBenefitFields(body), { version: newVersion() });
    this.emit('employee_benefit.updated', 'EmployeeBenefit', benefit.uuid, this.companyOfEmployee(benefit.employee_uuid));
    this.send(ex, 200, benefit);
  }

  // --- webhooks and events --------------------------------------------------------------------

  /** Created pending; Gusto then POSTs `{"verification_token": ...}` to the URL (webhook guide). */
  private createSubscription(ex: Exchange): void {
    const body = ex.body as { url: string; subscription_types: string[] };
    let target: URL | undefined;
    try {
      target = new URL(body.url);
    } catch {
      target = undefined;
    }
    if (!target || !/^https?:$/.test(target.protocol)) return this.unprocessable(ex, [{ error_key: 'url', category: 'invalid_attribute_value', message: 'Url is invalid' }]);
    const subscription: GustoWebhookSubscription = { uuid: randomUUID(), url: body.url, status: 'pending', subscription_types: [...body.subscription_types] };
    const verificationToken = randomUUID();
    this.subscriptions.set(subscription.uuid, { subscription, verificationToken });
    this.send(ex, 201, subscription);
    if (this.handshakesToLose > 0) {
      this.handshakesToLose--;
      return;
    }
    void this.post(subscription, JSON.stringify({ verification_token: verificationToken }), undefined);
  }

  /** The token POSTed to the subscription's URL again; answered 200 with no body. */
  private resendVerificationToken(ex: Exchange, uuid: string): void {
    const entry = this.subscriptions.get(uuid);
    if (!entry) return this.notFound(ex);
    this.send(ex, 200);
    if (this.handshakesToLose > 0) {
      this.handshakesToLose--;
      return;
    }
    void this.post(entry.subscription, JSON.stringify({ verification_token: entry.verificationToken }), undefined);
  }

  private verifySubscription(ex: Exchange, uuid: string): void {
    const entry = this.subscriptions.get(uuid);
    if (!entry) return this.notFound(ex);
    if ((ex.body as { verification_token: string }).verification_token !== entry.verificationToken) {
      return this.unprocessable(ex, [{ error_key: 'verification_token', category: 'invalid_attribute_value', message: 'Verification token is invalid' }]);
    }
    entry.subscription.status = 'verified';
    this.send(ex, 200, entry.subscription);
  }

  /** starting_after_uuid (a cursor, exclusive), resource_uuid, event_type (exact or with `*` wildcards), limit (1–100, default 25), sort_order by timestamp. */
  private listEvents(ex: Exchange): void {
    const q = ex.query;
    const limitText = q.get('limit');
    const limit = limitText === null ? 25 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      return this.unprocessable(ex, [{ error_key: 'limit', category: 'invalid_attribute_value', message: 'Limit must be between 1 and 100' }]);
    }
    const eventType = q.get('event_type');
    const pattern = eventType === null ? undefined : new RegExp(`^${eventType.split('*').map(escapeRegExp).join('.*')}$`);
    const resource = q.get('resource_uuid');
    let events = this.events
      .map((event, index) => ({ event, index }))
      .sort((a, b) => a.event.timestamp - b.event.timestamp || a.index - b.index)
      .map(({ event }) => event);
    if (q.get('sort_order') === 'desc') events.reverse();
    events = events.filter((e) => (!resource || e.resource_uuid === resource) && (!pattern || pattern.test(e.event_type)));
    const after = q.get('starting_after_uuid');
    if (after !== null) {
      const at = events.findIndex((e) => e.uuid === after);
      events = at < 0 ? [] : events.slice(at + 1);
    }
    this.send(ex, 200, events.slice(0, limit));
  }

  private recordEvent(input: EventInput): GustoEvent {
    const event: GustoEvent = {
      uuid: randomUUID(),
      event_type: input.event_type,
      resource_type: 'Company',
      resource_uuid: input.resource_uuid,
      entity_type: input.entity_type,
      entity_uuid: input.entity_uuid,
      timestamp: input.timestamp ?? Math.floor(this.now() / 1000),
    };
    this.events.push(event);
    return event;
  }

  /** Writes through the API raise the events Gusto raises for them, delivered in the background (see idle()). */
  private emit(eventType: string, entityType: string, entityUuid: string, companyUuid: string): void {
    this.pushEvent(this.recordEvent({ event_type: eventType, entity_type: entityType, entity_uuid: entityUuid, resource_uuid: companyUuid }));
  }

  private pushEvent(event: GustoEvent): Promise<WebhookDelivery>[] {
    const body = JSON.stringify(event);
    return [...this.subscriptions.values()]
      .filter(({ subscription }) => subscription.status === 'verified' && subscription.subscription_types.includes(event.entity_type))
      .map(({ subscription, verificationToken }) => this.post(subscription, body, createHmac('sha256', verificationToken).update(body).digest('hex')));
  }

  private post(subscription: GustoWebhookSubscription, body: string, signature: string | undefined): Promise<WebhookDelivery> {
    const delivery: WebhookDelivery = { subscriptionUuid: subscription.uuid, url: subscription.url, body, signature };
    this.webhookDeliveries.push(delivery);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signature !== undefined) headers['x-gusto-signature'] = signature;
    const sending = fetch(subscription.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) })
      .then(async (response) => {
        delivery.status = response.status;
        await response.arrayBuffer();
      })
      .catch((error: unknown) => {
        delivery.error = error instanceof Error ? error.message : String(error);
      });
    const tracked = sending.finally(() => this.outbound.delete(tracked));
    this.outbound.add(tracked);
    return tracked.then(() => delivery);
  }

  // --- helpers --------------------------------------------------------------------------------

  private compensationFor(person: NonNullable<PayrollSeed['employees']>[number]): GustoEmployeeCompensation {
    const employee = this.employees.get(person.employeeUuid);
    if (!employee) throw new Error(`no employee ${person.employeeUuid}`);
    const gross = round(person.grossPay ?? 2000);
    const benefits =
      person.benefits ??
      [...this.employeeBenefits.values()]
        .filter((b) => b.employee_uuid === employee.uuid && b.active)
        .map((b) => {
          const companyBenefit = this.companyBenefits.get(b.company_benefit_uuid);
          const deduction = b.deduct_as_percentage ? (gross * Number(b.employee_deduction)) / 100 : Number(b.employee_deduction);
          const value = typeof b.contribution.value === 'string' ? Number(b.contribution.value) : 0;
          const contribution = b.contribution.type === 'percentage' ? (gross * value) / 100 : b.contribution.type === 'amount' ? value : 0;
          return { name: companyBenefit?.description ?? 'Benefit', employee_deduction: round(deduction), company_contribution: round(contribution), imputed: false };
        });
    const deductions = (person.deductions ?? []).map((d) => ({ ...d, uuid: randomUUID() }));
    const pretax = benefits.reduce((s, b) => s + b.employee_deduction, 0);
    const taxable = Math.max(0, gross - pretax);
    const taxes = person.taxes ?? [
      { name: 'Federal Income Tax', employer: false, amount: round(taxable * 0.1) },
      { name: 'Social Security', employer: false, amount: round(taxable * 0.062) },
      { name: 'Medicare', employer: false, amount: round(taxable * 0.0145) },
      { name: 'Social Security', employer: true, amount: round(taxable * 0.062) },
      { name: 'Medicare', employer: true, amount: round(taxable * 0.0145) },
    ];
    const employeeTaxes = taxes.filter((t) => !t.employer).reduce((s, t) => s + t.amount, 0);
    const net = round(gross - pretax - employeeTaxes - deductions.reduce((s, d) => s + d.amount, 0));
    const jobUuid = employee.jobs[0]?.uuid ?? randomUUID();
    return {
      employee_uuid: employee.uuid,
      excluded: false,
      first_name: employee.first_name,
      preferred_first_name: employee.preferred_first_name,
      last_name: employee.last_name,
      gross_pay: gross,
      net_pay: net,
      check_amount: net,
      payment_method: employee.payment_method,
      memo: null,
      fixed_compensations: [{ name: 'Bonus', amount: money(0), job_uuid: jobUuid }],
      hourly_compensations: [{ name: 'Regular Hours', hours: '80.000', amount: money(gross), job_uuid: jobUuid, compensation_multiplier: 1 }],
      paid_time_off: [],
      reimbursements: [],
      version: newVersion(),
      benefits,
      deductions,
      taxes,
    };
  }

  private requireCompany(companyUuid: string): GustoCompany {
    const company = this.companies.get(companyUuid);
    if (!company) throw new Error(`no company ${companyUuid}: addCompany() first`);
    return company;
  }

  private companyOfEmployee(employeeUuid: string): string {
    return this.employees.get(employeeUuid)?.company_uuid ?? '';
  }

  /** A date (YYYY-MM-DD) `days` from today on the fake's clock. */
  private date(days: number): string {
    return new Date(this.now() + days * DAY).toISOString().slice(0, 10);
  }
}

// ---------------------------------------------------------------------------------------------

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[value.length - 1] : value;
}

function queryRecord(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(query.keys())) {
    const all = query.getAll(key);
    out[key] = all.length > 1 ? all : all[0];
  }
  return out;
}

function matches(matcher: FaultMatcher | undefined, request: RequestSummary): boolean {
  if (!matcher) return true;
  if (typeof matcher === 'function') return matcher(request);
  if (matcher.method && matcher.method.toUpperCase() !== request.method) return false;
  if (matcher.operation && matcher.operation !== request.operation) return false;
  if (matcher.path instanceof RegExp ? !matcher.path.test(request.path) : matcher.path !== undefined && matcher.path !== request.path) return false;
  return true;
}

function pick<T>(body: Json, keys: (keyof T & string)[]): Partial<T> {
  const out: Partial<T> = {};
  for (const key of keys) if (key in body) (out as Json)[key] = body[key];
  return out;
}

function clone<T>(value: T | undefined): T | undefined {
  return value === undefined ? undefined : structuredClone(value);
}

/** Gusto's versions are 32 hex digits. */
function newVersion(): string {
  return randomBytes(16).toString('hex');
}

/** "URL-safe base64 encoding is used when generating the access_token and refresh_token" (Company Access Tokens guide). */
function opaqueToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A stable admin uuid per company, for token_info's resource_owner. */
function adminUuidOf(companyUuid: string): string {
  const hex = createHmac('sha256', 'fake-gusto-admin').update(companyUuid).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function money(n: number): string {
  return round(n).toFixed(2);
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
}

function sixMonthsBefore(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() - 6);
  return d.toISOString().slice(0, 10);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
