import type { FastifyInstance } from 'fastify';

/** Real ids and credentials of one sandbox employer, for valid-ish requests. */
export interface EmployerTargets {
  token: string;
  connectionId: string;
  entityId: string;
  companyId: string;
  individualIds: string[];
  benefitIds: string[];
  /** Automated jobs for an Automated employer, manual jobs for an Assisted one. */
  jobIds: string[];
  ruleIds: string[];
  payGroupIds: string[];
  paymentIds: string[];
}

/** What a route's valid request may draw on: the case's employer and the service-wide ids. */
export interface FuzzTargets {
  employer: EmployerTargets;
  application: { clientId: string; clientSecret: string };
  connect: { sessionId: string; providerFlow: string; signInFlow: string; consentFlow: string; entityName: string };
  ops: {
    taskIds: string[];
    sagaIds: string[];
    jobIds: string[];
    deadLetterIds: string[];
    connectionIds: string[];
    policyIds: string[];
    /** Open deduction discrepancies of the two employers (fixture rows), to read, acknowledge and re-apply. */
    discrepancyIds: string[];
  };
  webhooks: {
    endpointIds: string[];
    /** Endpoints made to be deleted, so DELETE's valid cases leave the others in place. */
    deletableEndpointIds: string[];
    deliveryIds: string[];
  };
}

/** none: public; bearer: an employer's access token; application: client id and secret (Basic); ops: the ops credentials (Basic). */
export type RouteAuth = 'none' | 'bearer' | 'application' | 'ops';

export interface FuzzRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Fastify's template, e.g. /employer/benefits/:benefit_id */
  path: string;
  auth: RouteAuth;
  /** Service-API-Version is required. */
  version?: true;
  /** What body the route reads; absent: none. */
  body?: 'json' | 'form';
  /** The hosted connect page answers people with HTML error pages instead of the error object. */
  errors?: 'html';
  /**
   * Acts on a connection in ways that end its use (disconnect, reauth, sync outcomes), so it
   * runs on a disposable connection, replaced whenever it stops answering as connected.
   */
  disposable?: true;
  /** Real values for each path parameter, by name. */
  ids?: Record<string, (t: FuzzTargets) => string[]>;
  query?: (t: FuzzTargets) => [string, string][];
  valid?: (t: FuzzTargets) => unknown;
}

const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }] };
const first = (ids: string[]) => ids.slice(0, 1);
const percent = (amount: number) => ({ type: 'percent', amount });

const person = () => ({
  first_name: 'Ada',
  last_name: 'Lovelace',
  dob: '1985-12-10',
  title: 'Analyst',
  income: { unit: 'yearly', amount: 9_000_000 },
  start_date: '2024-01-02',
  is_active: true,
});

const hired = (t: FuzzTargets) => ({
  id: '9b4f1c1e-6a53-4e0a-9d7b-3f0f7a1b2c3d',
  type: 'EmployeeHired',
  version: 1,
  occurred_at: '2026-01-05T12:00:00Z',
  connection_id: t.employer.connectionId,
  entity_id: t.employer.entityId,
  data: { individual_id: t.employer.individualIds[0], start_date: '2026-01-05' },
});

/** Every route of the service, with a valid-ish request to spoil. */
export const ROUTES: FuzzRoute[] = [
  // Public
  { method: 'GET', path: '/', auth: 'none' },
  { method: 'GET', path: '/providers', auth: 'none' },
  { method: 'GET', path: '/health/live', auth: 'none' },
  { method: 'GET', path: '/health/ready', auth: 'none' },
  { method: 'GET', path: '/metrics', auth: 'none' },
  { method: 'GET', path: '/docs', auth: 'none' },
  { method: 'GET', path: '/docs/', auth: 'none' },
  { method: 'GET', path: '/docs/index.html', auth: 'none' },
  { method: 'GET', path: '/docs/swagger-ui-init.js', auth: 'none' },
  { method: 'GET', path: '/docs/docs/swagger-ui-init.js', auth: 'none' },
  { method: 'GET', path: '/docs/LICENSE', auth: 'none' },
  { method: 'GET', path: '/docs/openapi.json', auth: 'none' },
  { method: 'GET', path: '/docs-yaml', auth: 'none' },
  { method: 'GET', path: '/docs/*', auth: 'none', ids: { '*': () => ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'] } },

  // Connect sessions, tokens and the hosted connect page
  {
    method: 'POST',
    path: '/connect/sessions',
    auth: 'application',
    body: 'json',
    valid: () => ({ customer_id: 'fuzz-customer', customer_name: 'Fuzz Corp', products: ['company', 'directory'], redirect_uri: 'http://127.0.0.1:9/callback' }),
  },
  {
    method: 'POST',
    path: '/connect/sessions/reauthenticate',
    auth: 'application',
    body: 'json',
    valid: (t) => ({ connection_id: t.employer.connectionId, products: ['company'], minutes_to_expire: 60 }),
  },
  {
    method: 'POST',
    path: '/auth/token',
    auth: 'none',
    body: 'json',
    valid: (t) => ({ client_id: t.application.clientId, client_secret: t.application.clientSecret, code: 'fuzz-code', redirect_uri: 'http://127.0.0.1:9/callback' }),
  },
  { method: 'GET', path: '/connect', auth: 'none', errors: 'html', query: (t) => [['session', t.connect.sessionId], ['state', 'fuzz']] },
  { method: 'POST', path: '/connect/provider', auth: 'none', errors: 'html', body: 'form', valid: (t) => ({ flow: t.connect.providerFlow, provider: 'sandbox_automated' }) },
  { method: 'GET', path: '/connect/oauth/gusto/callback', auth: 'none', errors: 'html', query: () => [['code', 'fuzz-code'], ['state', 'fuzz']] },
  // Authentic by its signature, not a token: unsigned deliveries must be refused, never a 500.
  { method: 'POST', path: '/providers/gusto/webhooks', auth: 'none', body: 'json', valid: () => ({ verification_token: 'fuzz-verification-token' }) },
  { method: 'POST', path: '/connect/sign-in', auth: 'none', errors: 'html', body: 'form', valid: (t) => ({ flow: t.connect.signInFlow, username: 'good_user', password: 'good_pass' }) },
  { method: 'POST', path: '/connect/consent', auth: 'none', errors: 'html', body: 'form', valid: (t) => ({ flow: t.connect.consentFlow, decision: 'allow', entity: t.connect.entityName }) },
  ...(['/connect/authorize', '/authorize'] as const).map(
    (path): FuzzRoute => ({
      method: 'GET',
      path,
      auth: 'none',
      errors: 'html',
      query: (t) => [['client_id', t.application.clientId], ['redirect_uri', 'http://127.0.0.1:9/callback'], ['products', 'company directory'], ['sandbox', 'finch'], ['state', 'fuzz']],
    }),
  ),

  // Connections
  { method: 'GET', path: '/introspect', auth: 'bearer' },
  { method: 'POST', path: '/disconnect', auth: 'bearer', version: true, disposable: true },
  { method: 'POST', path: '/disconnect-entity', auth: 'bearer', version: true, disposable: true, body: 'json', valid: (t) => ({ entity_ids: [t.employer.entityId] }) },

  // Sandbox
  { method: 'POST', path: '/sandbox/connections', auth: 'application', body: 'json', valid: () => ({ provider_id: 'sandbox_automated', employee_size: 2, products: ['company', 'directory'] }) },
  { method: 'POST', path: '/sandbox/connections/accounts', auth: 'application', body: 'json', valid: (t) => ({ company_id: t.employer.companyId, provider_id: 'sandbox_automated' }) },
  { method: 'PUT', path: '/sandbox/connections/accounts', auth: 'bearer', disposable: true, body: 'json', valid: () => ({ connection_status: 'connected' }) },
  { method: 'PUT', path: '/sandbox/company', auth: 'bearer', body: 'json', valid: () => ({ legal_name: 'Fuzz Co', ein: '12-3456789' }) },
  { method: 'POST', path: '/sandbox/directory', auth: 'bearer', body: 'json', valid: () => [person()] },
  { method: 'PUT', path: '/sandbox/individual/:individual_id', auth: 'bearer', body: 'json', ids: { individual_id: (t) => t.employer.individualIds }, valid: () => ({ first_name: 'Grace', dob: null }) },
  { method: 'PUT', path: '/sandbox/employment/:individual_id', auth: 'bearer', body: 'json', ids: { individual_id: (t) => t.employer.individualIds }, valid: () => ({ title: 'Engineer' }) },
  {
    method: 'POST',
    path: '/sandbox/payment',
    auth: 'bearer',
    body: 'json',
    // The public body without dates (the next regular run), so mutations reach the nested statement.
    valid: (t) => ({
      pay_statements: first(t.employer.individualIds).map((id) => ({
        individual_id: id,
        payment_method: 'check',
        earnings: [{ type: 'bonus', name: 'Bonus', amount: 10_000, hours: null }],
        taxes: [{ type: 'federal', name: 'Federal Income Tax', employer: false, amount: 2_200 }],
        employee_deductions: [{ type: '401k', name: '401(k)', amount: 500, pre_tax: true }],
        employer_contributions: [{ type: '401k', name: 'Match', amount: 250 }],
      })),
    }),
  },
  // Payroll faults: a payroll admin's enrollment edit, and adjustments of the next regular pay run.
  {
    method: 'PUT',
    path: '/sandbox/benefits/:benefit_id/individuals/:individual_id',
    auth: 'bearer',
    body: 'json',
    ids: { benefit_id: (t) => t.employer.benefitIds, individual_id: (t) => t.employer.individualIds },
    valid: () => ({ configuration: { employee_deduction: percent(300), company_contribution: { type: 'fixed', amount: 1_000 } } }),
  },
  {
    method: 'DELETE',
    path: '/sandbox/benefits/:benefit_id/individuals/:individual_id',
    auth: 'bearer',
    ids: { benefit_id: (t) => t.employer.benefitIds, individual_id: (t) => t.employer.individualIds },
  },
  {
    method: 'POST',
    path: '/sandbox/payroll/adjustments',
    auth: 'bearer',
    body: 'json',
    valid: (t) => ({
      adjustments: [
        { individual_id: t.employer.individualIds[0], benefit_id: t.employer.benefitIds[0], action: 'change', employee_amount: 1_500, employer_amount: 0 },
        { individual_id: t.employer.individualIds[1], benefit_id: t.employer.benefitIds[0], action: 'skip' },
      ],
    }),
  },
  { method: 'GET', path: '/sandbox/payroll/adjustments', auth: 'bearer' },
  { method: 'DELETE', path: '/sandbox/payroll/adjustments', auth: 'bearer' },
  { method: 'POST', path: '/sandbox/jobs', auth: 'bearer', disposable: true, body: 'json', valid: () => ({ type: 'data_sync_all' }) },
  { method: 'GET', path: '/sandbox/jobs/configuration', auth: 'bearer' },
  { method: 'PUT', path: '/sandbox/jobs/configuration', auth: 'bearer', disposable: true, body: 'json', valid: () => ({ type: 'data_sync_all', completion_status: 'complete' }) },

  // Forward and jobs
  { method: 'POST', path: '/forward', auth: 'bearer', version: true, body: 'json', valid: () => ({ method: 'GET', route: '/company', params: { page: 1 }, headers: { accept: 'application/json' } }) },
  { method: 'POST', path: '/jobs/automated', auth: 'bearer', version: true, disposable: true, body: 'json', valid: () => ({ type: 'data_sync_all' }) },
  { method: 'GET', path: '/jobs/automated', auth: 'bearer', version: true, query: () => [['limit', '10'], ['offset', '0']] },
  { method: 'GET', path: '/jobs/automated/:job_id', auth: 'bearer', version: true, ids: { job_id: (t) => t.employer.jobIds } },
  { method: 'GET', path: '/jobs/manual/:job_id', auth: 'bearer', version: true, ids: { job_id: (t) => t.employer.jobIds } },

  // Employer reads
  { method: 'GET', path: '/employer/company', auth: 'bearer', version: true, query: (t) => [['entity_ids', t.employer.entityId]] },
  { method: 'GET', path: '/employer/directory', auth: 'bearer', version: true, query: () => [['limit', '5'], ['offset', '1']] },
  {
    method: 'POST',
    path: '/employer/individual',
    auth: 'bearer',
    version: true,
    body: 'json',
    valid: (t) => ({ requests: first(t.employer.individualIds).map((individual_id) => ({ individual_id })), options: { include: ['ssn'] } }),
  },
  { method: 'POST', path: '/employer/employment', auth: 'bearer', version: true, body: 'json', valid: (t) => ({ requests: first(t.employer.individualIds).map((individual_id) => ({ individual_id })) }) },
  { method: 'GET', path: '/employer/payment', auth: 'bearer', version: true, query: () => [['start_date', '2020-01-01'], ['end_date', '2030-12-31']] },
  {
    method: 'POST',
    path: '/employer/pay-statement',
    auth: 'bearer',
    version: true,
    body: 'json',
    valid: (t) => ({ requests: first(t.employer.paymentIds).map((payment_id) => ({ payment_id, limit: 10, offset: 0 })) }),
  },
  { method: 'GET', path: '/employer/pay-groups', auth: 'bearer', version: true, query: (t) => [['individual_id', t.employer.individualIds[0]], ['pay_frequencies', 'semi_monthly,bi_weekly']] },
  { method: 'GET', path: '/employer/pay-groups/:pay_group_id', auth: 'bearer', version: true, ids: { pay_group_id: (t) => t.employer.payGroupIds } },

  // Pay-statement items and their rules
  {
    method: 'GET',
    path: '/employer/pay-statement-item',
    auth: 'bearer',
    version: true,
    query: () => [['categories[]', 'earnings'], ['start_date', '2020-01-01'], ['end_date', '2030-12-31'], ['name', 'Salary']],
  },
  { method: 'GET', path: '/employer/pay-statement-item/rule', auth: 'bearer', version: true },
  {
    method: 'POST',
    path: '/employer/pay-statement-item/rule',
    auth: 'bearer',
    version: true,
    body: 'json',
    valid: () => ({
      conditions: [{ field: 'type', operator: 'equals', value: '401k' }],
      attributes: { metadata: { gl_code: '4010', plan: { provider: 'Acme 401(k)', match: true } } },
      effective_start_date: '2026-01-01',
    }),
  },
  {
    method: 'PUT',
    path: '/employer/pay-statement-item/rule/:rule_id',
    auth: 'bearer',
    version: true,
    body: 'json',
    ids: { rule_id: (t) => t.employer.ruleIds },
    valid: () => ({ attributes: { metadata: { gl_code: '4011' } } }),
  },
  { method: 'DELETE', path: '/employer/pay-statement-item/rule/:rule_id', auth: 'bearer', version: true, ids: { rule_id: (t) => t.employer.ruleIds } },

  // Benefits and enrollments
  { method: 'GET', path: '/employer/benefits', auth: 'bearer', version: true },
  { method: 'GET', path: '/employer/benefits/meta', auth: 'bearer', version: true },
  {
    method: 'POST',
    path: '/employer/benefits',
    auth: 'bearer',
    version: true,
    body: 'json',
    valid: () => ({ type: '401k', description: 'Fuzz 401(k)', frequency: 'every_paycheck', company_contribution: MATCH }),
  },
  { method: 'POST', path: '/employer/benefits/register', auth: 'bearer', version: true, body: 'json', valid: () => ({ type: 's125_medical', description: 'Fuzz medical', frequency: 'every_paycheck' }) },
  { method: 'GET', path: '/employer/benefits/:benefit_id', auth: 'bearer', version: true, ids: { benefit_id: (t) => t.employer.benefitIds } },
  { method: 'POST', path: '/employer/benefits/:benefit_id', auth: 'bearer', version: true, body: 'json', ids: { benefit_id: (t) => t.employer.benefitIds }, valid: () => ({ description: 'Fuzz 401(k) plan' }) },
  {
    method: 'POST',
    path: '/employer/benefits/:benefit_id/individuals',
    auth: 'bearer',
    version: true,
    body: 'json',
    ids: { benefit_id: (t) => t.employer.benefitIds },
    valid: (t) => first(t.employer.individualIds).map((individual_id) => ({ individual_id, configuration: { employee_deduction: percent(300), effective_date: '2026-09-01' } })),
  },
  {
    method: 'DELETE',
    path: '/employer/benefits/:benefit_id/individuals',
    auth: 'bearer',
    version: true,
    body: 'json',
    ids: { benefit_id: (t) => t.employer.benefitIds },
    valid: (t) => ({ individual_ids: t.employer.individualIds.slice(1, 2) }),
  },
  {
    method: 'GET',
    path: '/employer/benefits/:benefit_id/individuals',
    auth: 'bearer',
    version: true,
    ids: { benefit_id: (t) => t.employer.benefitIds },
    query: (t) => [['individual_ids', t.employer.individualIds.slice(0, 2).join(',')]],
  },
  { method: 'GET', path: '/employer/benefits/:benefit_id/enrolled', auth: 'bearer', version: true, ids: { benefit_id: (t) => t.employer.benefitIds } },

  // Reconciliation reads (what the reconciliation job wrote; discrepancy ids: none known, the nil UUID)
  {
    method: 'GET',
    path: '/reconciliation/discrepancies',
    auth: 'bearer',
    version: true,
    query: (t) => [
      ...first(t.employer.benefitIds).map((id): [string, string] => ['benefit_id', id]),
      ...first(t.employer.paymentIds).map((id): [string, string] => ['payment_id', id]),
      ['kind', 'missing,amount_mismatch'],
      ['status', 'open'],
      ['limit', '5'],
      ['offset', '0'],
    ],
  },
  { method: 'GET', path: '/reconciliation/discrepancies/:discrepancy_id', auth: 'bearer', version: true, ids: { discrepancy_id: () => [] } },
  {
    method: 'GET',
    path: '/reconciliation/payments/:payment_id/results',
    auth: 'bearer',
    version: true,
    ids: { payment_id: (t) => t.employer.paymentIds },
    query: (t) => [...first(t.employer.individualIds).map((id): [string, string] => ['individual_id', id]), ['result', 'matched,missing'], ['limit', '5']],
  },
  {
    method: 'GET',
    path: '/reconciliation/payments/:payment_id/contributions',
    auth: 'bearer',
    version: true,
    ids: { payment_id: (t) => t.employer.paymentIds },
    query: (t) => [...first(t.employer.benefitIds).map((id): [string, string] => ['benefit_id', id]), ['format', 'csv']],
  },
  { method: 'GET', path: '/reconciliation/status', auth: 'bearer', version: true, query: (t) => [['entity_ids', t.employer.entityId]] },

  // HRIS events
  { method: 'POST', path: '/hris/events', auth: 'application', body: 'json', valid: hired },

  // Webhooks
  { method: 'GET', path: '/webhooks/event-types', auth: 'application' },
  { method: 'POST', path: '/webhooks/endpoints', auth: 'application', body: 'json', valid: () => ({ url: 'http://127.0.0.1:9/fuzz', event_types: ['account.updated'], max_concurrency: 2 }) },
  { method: 'GET', path: '/webhooks/endpoints', auth: 'application' },
  { method: 'GET', path: '/webhooks/endpoints/:endpoint_id', auth: 'application', ids: { endpoint_id: (t) => t.webhooks.endpointIds } },
  {
    method: 'PATCH',
    path: '/webhooks/endpoints/:endpoint_id',
    auth: 'application',
    body: 'json',
    ids: { endpoint_id: (t) => t.webhooks.endpointIds },
    valid: () => ({ description: 'fuzzed', ordered_by_connection: true, max_concurrency: 3 }),
  },
  { method: 'DELETE', path: '/webhooks/endpoints/:endpoint_id', auth: 'application', ids: { endpoint_id: (t) => t.webhooks.deletableEndpointIds } },
  { method: 'POST', path: '/webhooks/endpoints/:endpoint_id/rotate-secret', auth: 'application', ids: { endpoint_id: (t) => t.webhooks.endpointIds } },
  {
    method: 'GET',
    path: '/webhooks/endpoints/:endpoint_id/deliveries',
    auth: 'application',
    ids: { endpoint_id: (t) => t.webhooks.endpointIds },
    query: () => [['status', 'pending'], ['limit', '5'], ['offset', '0']],
  },
  { method: 'GET', path: '/webhooks/deliveries/:delivery_id', auth: 'application', ids: { delivery_id: (t) => t.webhooks.deliveryIds } },
  { method: 'POST', path: '/webhooks/deliveries/:delivery_id/resend', auth: 'application', ids: { delivery_id: (t) => t.webhooks.deliveryIds } },

  // Ops dashboard and API
  { method: 'GET', path: '/ops', auth: 'none' },
  // Sent on to /ops (308).
  { method: 'GET', path: '/ops/', auth: 'none' },
  { method: 'GET', path: '/ops/assets/dashboard.js', auth: 'none' },
  { method: 'GET', path: '/ops/assets/dashboard.css', auth: 'none' },
  { method: 'POST', path: '/ops/session', auth: 'ops' },
  { method: 'GET', path: '/ops/api/overview', auth: 'ops', query: () => [['minutes', '30']] },
  { method: 'GET', path: '/ops/api/tasks', auth: 'ops', query: (t) => [['status', 'open'], ['sla', 'on_time'], ['connection_id', t.employer.connectionId], ['limit', '5']] },
  { method: 'GET', path: '/ops/api/tasks/:task_id', auth: 'ops', ids: { task_id: (t) => t.ops.taskIds } },
  { method: 'POST', path: '/ops/api/tasks/:task_id/complete', auth: 'ops', body: 'json', ids: { task_id: (t) => t.ops.taskIds }, valid: () => ({ note: 'done at the provider' }) },
  { method: 'POST', path: '/ops/api/tasks/:task_id/fail', auth: 'ops', body: 'json', ids: { task_id: (t) => t.ops.taskIds }, valid: () => ({ note: 'the provider refused' }) },
  { method: 'GET', path: '/ops/api/sagas', auth: 'ops', query: (t) => [['type', 'new_hire'], ['state', 'completed'], ['connection_id', t.employer.connectionId], ['older_than', '15m'], ['offset', '0']] },
  { method: 'GET', path: '/ops/api/sagas/:saga_id', auth: 'ops', ids: { saga_id: (t) => t.ops.sagaIds } },
  { method: 'GET', path: '/ops/api/jobs', auth: 'ops', query: (t) => [['status', 'complete'], ['kind', 'automated'], ['type', 'data_sync_all'], ['connection_id', t.employer.connectionId], ['limit', '5']] },
  { method: 'GET', path: '/ops/api/jobs/:job_id', auth: 'ops', ids: { job_id: (t) => t.ops.jobIds } },
  { method: 'POST', path: '/ops/api/jobs/:job_id/retry', auth: 'ops', ids: { job_id: (t) => t.ops.jobIds } },
  { method: 'GET', path: '/ops/api/dead-letters', auth: 'ops', query: () => [['status', 'open'], ['topic', 'hris.events'], ['consumer', 'hris-sagas'], ['limit', '5']] },
  { method: 'POST', path: '/ops/api/dead-letters/replay', auth: 'ops', body: 'json', valid: (t) => ({ ids: first(t.ops.deadLetterIds), note: 'fixed upstream' }) },
  { method: 'GET', path: '/ops/api/dead-letters/:dead_letter_id', auth: 'ops', ids: { dead_letter_id: (t) => t.ops.deadLetterIds } },
  { method: 'POST', path: '/ops/api/dead-letters/:dead_letter_id/discard', auth: 'ops', body: 'json', ids: { dead_letter_id: (t) => t.ops.deadLetterIds }, valid: () => ({ note: 'cannot apply' }) },
  { method: 'GET', path: '/ops/api/connections', auth: 'ops', query: () => [['status', 'connected'], ['provider_id', 'sandbox_automated'], ['limit', '5']] },
  { method: 'GET', path: '/ops/api/connections/:connection_id', auth: 'ops', ids: { connection_id: (t) => t.ops.connectionIds } },
  {
    method: 'GET',
    path: '/ops/api/discrepancies',
    auth: 'ops',
    query: (t) => [['connection_id', t.employer.connectionId], ['kind', 'missing,unexpected'], ['status', 'open,acknowledged'], ['include', 'individual_names'], ['limit', '5']],
  },
  { method: 'GET', path: '/ops/api/discrepancies/:discrepancy_id', auth: 'ops', ids: { discrepancy_id: (t) => t.ops.discrepancyIds }, query: () => [['include', 'individual_names']] },
  {
    method: 'POST',
    path: '/ops/api/discrepancies/:discrepancy_id/acknowledge',
    auth: 'ops',
    body: 'json',
    ids: { discrepancy_id: (t) => t.ops.discrepancyIds },
    valid: () => ({ note: 'payroll fixes it from the next run' }),
  },
  { method: 'POST', path: '/ops/api/discrepancies/:discrepancy_id/reapply', auth: 'ops', ids: { discrepancy_id: (t) => t.ops.discrepancyIds } },
  { method: 'GET', path: '/ops/api/webhooks/endpoints', auth: 'ops' },
  {
    method: 'GET',
    path: '/ops/api/webhooks/deliveries',
    auth: 'ops',
    query: (t) => [['status', 'failed'], ['endpoint_id', t.webhooks.endpointIds[0]], ['application_id', t.application.clientId], ['limit', '5']],
  },
  { method: 'GET', path: '/ops/api/webhooks/deliveries/:delivery_id', auth: 'ops', ids: { delivery_id: (t) => t.webhooks.deliveryIds } },
  { method: 'POST', path: '/ops/api/webhooks/deliveries/:delivery_id/resend', auth: 'ops', ids: { delivery_id: (t) => t.webhooks.deliveryIds } },
  { method: 'GET', path: '/ops/api/audit', auth: 'ops', query: (t) => [['target_type', 'task'], ['target_id', t.ops.taskIds[0] ?? 'x'], ['actor', 'ops'], ['action', 'task.complete']] },
  {
    method: 'POST',
    path: '/ops/api/policies',
    auth: 'ops',
    body: 'json',
    valid: (t) => ({
      connection_id: t.employer.connectionId,
      entity_id: t.employer.entityId,
      benefit_id: t.employer.benefitIds[0],
      configuration: { employee_deduction: percent(300) },
      waiting_period_days: 30,
      escalation: { increase: 100, cap: 600 },
    }),
  },
  { method: 'GET', path: '/ops/api/policies', auth: 'ops', query: (t) => [['connection_id', t.employer.connectionId], ['entity_id', t.employer.entityId], ['active', 'true']] },
  { method: 'GET', path: '/ops/api/policies/:policy_id', auth: 'ops', ids: { policy_id: (t) => t.ops.policyIds } },
  {
    method: 'POST',
    path: '/ops/api/policies/:policy_id',
    auth: 'ops',
    body: 'json',
    ids: { policy_id: (t) => t.ops.policyIds },
    valid: () => ({ waiting_period_days: 60, escalation: null, configuration: { employee_deduction: percent(400) }, active: true }),
  },
  { method: 'DELETE', path: '/ops/api/policies/:policy_id', auth: 'ops', ids: { policy_id: (t) => t.ops.policyIds } },
];

export const routeName = (route: { method: string; path: string }) => `${route.method} ${route.path}`;

/** The names of a template's path parameters, in order (`*` for a wildcard). */
export const paramNames = (path: string): string[] => [...path.matchAll(/:([A-Za-z0-9_]+)|\*/g)].map((m) => m[1] ?? '*');

/**
 * Every route the running service registers, read from Fastify's route tree (printRoutes), so
 * routes registered outside Nest (the docs page, static files) count too. HEAD routes that
 * Fastify adds for each GET are left out: the GET's entry covers them.
 */
export function registeredRoutes(fastify: FastifyInstance): { method: string; path: string }[] {
  const tree = fastify.printRoutes({ commonPrefix: false });
  const found: { method: string; path: string }[] = [];
  const prefixes: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    const path = `${prefixes[depth - 1] ?? ''}${match[2]}`;
    prefixes[depth] = path;
    prefixes.length = depth + 1;
    const methods = (match[3] ?? '').split(',').map((m) => m.trim()).filter((m) => m !== '');
    for (const method of methods) found.push({ method, path });
  }
  const gets = new Set(found.filter((r) => r.method === 'GET').map((r) => r.path));
  return found.filter((r) => !(r.method === 'HEAD' && gets.has(r.path)));
}
