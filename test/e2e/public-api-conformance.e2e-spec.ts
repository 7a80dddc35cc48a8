import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { addDays } from '../../src/infrastructure/providers/sandbox/sandbox-pay-calendar';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { ConnectSessionsService } from '../../src/modules/auth/connect-sessions.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, createApplication, REDIRECT_URI } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { Deviation, DEVIATIONS, eachSchema, publicValidatorWith } from '../utils/public-api-deviations';
import { loadPublicDocument, operationsOf, PublicResponseValidator, toJsonSchema } from '../utils/public-openapi';
import { startTestService, TestResponse, TestService } from '../utils/test-app';

/**
 * Wire compatibility with the public API of this family: the responses of every operation
 * offered, recorded over a whole flow, validate against the public OpenAPI document its
 * official client SDKs are generated from (test/fixtures/public-openapi.json).
 *
 * Where the contract (unified-api.md, DECISIONS.md) decides otherwise, the difference is a
 * DEVIATION (test/utils/public-api-deviations.ts): a named, reasoned edit of the public document, applied before validating.
 * Anything else that differs fails, and so does a deviation nothing needs any more. An entry
 * marked `pending` is a difference nothing decides that waits on work elsewhere.
 *
 * A body is checked against the schema of the status it came with. A success status the
 * operation does not document fails; an error status it does not document (most operations
 * list none of 401, 403, 404 or 429) is checked against the document's generic `Error`.
 */

/**
 * The operations of the public document this service offers: the ones the contract names
 * (unified-api.md "Endpoints" and "Other operations", DECISIONS.md), and the pay-statement-item
 * and pay-group reads it offers beside them.
 */
const OFFERED = [
  'POST /connect/sessions',
  'POST /connect/sessions/reauthenticate',
  'POST /auth/token',
  'GET /introspect',
  'POST /disconnect',
  'POST /disconnect-entity',
  'GET /providers',
  'POST /forward',
  'GET /employer/company',
  'GET /employer/directory',
  'POST /employer/individual',
  'POST /employer/employment',
  'GET /employer/payment',
  'POST /employer/pay-statement',
  'GET /employer/pay-statement-item',
  'GET /employer/pay-statement-item/rule',
  'POST /employer/pay-statement-item/rule',
  'PUT /employer/pay-statement-item/rule/{rule_id}',
  'DELETE /employer/pay-statement-item/rule/{rule_id}',
  'GET /employer/pay-groups',
  'GET /employer/pay-groups/{pay_group_id}',
  'GET /employer/benefits',
  'POST /employer/benefits',
  'POST /employer/benefits/register',
  'GET /employer/benefits/meta',
  'GET /employer/benefits/{benefit_id}',
  'POST /employer/benefits/{benefit_id}',
  'GET /employer/benefits/{benefit_id}/enrolled',
  'GET /employer/benefits/{benefit_id}/individuals',
  'POST /employer/benefits/{benefit_id}/individuals',
  'DELETE /employer/benefits/{benefit_id}/individuals',
  'GET /jobs/automated',
  'POST /jobs/automated',
  'GET /jobs/automated/{job_id}',
  'GET /jobs/manual/{job_id}',
  'POST /sandbox/connections',
  'POST /sandbox/connections/accounts',
  'PUT /sandbox/connections/accounts',
  'PUT /sandbox/company',
  'POST /sandbox/directory',
  'PUT /sandbox/individual/{individual_id}',
  'PUT /sandbox/employment/{individual_id}',
  'POST /sandbox/payment',
  'POST /sandbox/jobs',
  'GET /sandbox/jobs/configuration',
  'PUT /sandbox/jobs/configuration',
];

/** Operations of the public document this service does not offer (README, "Using an existing client SDK"). */
const NOT_OFFERED = [
  'GET /employer/documents',
  'GET /employer/documents/{document_id}',
  'POST /employer/ledger-items',
  'GET /employer/plans',
  'GET /employer/plans/{plan_id}',
  'GET /employer/plans-enrollments',
  'POST /employer/plans-enrollments',
  'GET /employer/plans-dependents',
  'POST /employer/plans-dependents',
];

interface Recorded {
  operation: string;
  status: number;
  body: unknown;
}

const OPS = { authorization: `Basic ${Buffer.from('ops:ops-password-for-tests').toString('base64')}` };

describeWithPostgres('wire compatibility with the public OpenAPI document', () => {
  const publicDocument = loadPublicDocument();
  let service: TestService;
  let app: IssuedCredentials;
  let validator: PublicResponseValidator;
  const recorded: Recorded[] = [];

  const validatorWith = (deviations: Deviation[]) => publicValidatorWith(publicDocument, deviations);

  beforeAll(async () => {
    validator = validatorWith(DEVIATIONS);
    service = await startTestService({ env: { OPS_SIGN_IN_MAX_FAILURES: '1000' } });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  /** The headers an official client SDK sends: the bearer token and its own version header name. */
  const sdk = (token: string) => ({ authorization: `Bearer ${token}`, 'finch-api-version': '2020-09-17' });

  async function call(operation: string, path: string, token: string | Record<string, string> | null, body?: unknown): Promise<TestResponse> {
    const [method] = operation.split(' ');
    const headers: Record<string, string> = token === null ? {} : typeof token === 'string' ? sdk(token) : token;
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      init.headers = { ...headers, 'content-type': 'application/json' };
      init.body = JSON.stringify(body);
    }
    const res = await service.request(path, init);
    recorded.push({ operation, status: res.status, body: res.body });
    return res;
  }

  /** Calls, expects the status, and expects the body to conform. */
  async function conforming(operation: string, path: string, token: string | Record<string, string> | null, status: number, body?: unknown) {
    const res = await call(operation, path, token, body);
    expect({ operation, status: res.status, body: res.status === status ? undefined : res.body }).toEqual({ operation, status, body: undefined });
    const check = validator.check(operation, res.status, res.body);
    expect({ operation, status, errors: check.errors, body: check.errors.length > 0 ? res.body : undefined }).toEqual({ operation, status, errors: [], body: undefined });
    return res;
  }

  /** What the public document's request schema says of a body an SDK would send. */
  function publicRequestErrors(operation: string, body: unknown): string[] {
    const [method, path] = operation.split(' ');
    const document = toJsonSchema(publicDocument);
    // The request schemas mark exclusive bounds the OpenAPI 3.0 way (`minimum` + `exclusiveMinimum: true`).
    eachSchema(document, (schema) => {
      for (const [exclusive, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']]) {
        if (schema[exclusive] !== true) continue;
        schema[exclusive] = schema[bound];
        delete schema[bound];
      }
    });
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    ajv.addSchema(document, 'public');
    const pointer = `public#/paths/${path.replace(/\//g, '~1')}/${method.toLowerCase()}/requestBody/content/application~1json/schema`;
    const validate = ajv.compile({ $ref: pointer });
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  }

  async function sandboxConnection(providerId: string, extra: Record<string, unknown> = {}) {
    const res = await conforming('POST /sandbox/connections', '/sandbox/connections', basic(app), 200, { provider_id: providerId, employee_size: 6, ...extra });
    return res.body as { access_token: string; connection_id: string; entity_id: string; company_id: string };
  }

  async function automatedJobCompletes(token: string, jobId: string) {
    return expectEventually(async () => {
      const res = await call('GET /jobs/automated/{job_id}', `/jobs/automated/${jobId}`, token);
      expect(res.body.status).toBe('complete');
      return res.body;
    }, { timeoutMs: 20_000 });
  }

  it('checks only operations the public document has, and lists the ones it does not offer', () => {
    const documented = operationsOf(publicDocument);
    expect(OFFERED.filter((op) => !documented.includes(op))).toEqual([]);
    expect(documented.filter((op) => !OFFERED.includes(op) && !NOT_OFFERED.includes(op))).toEqual([]);
  });

  describe('connect flow and management', () => {
    it('connect sessions, token exchange, introspect, providers', async () => {
      const customerId = `customer-${randomUUID()}`;
      const session = await conforming('POST /connect/sessions', '/connect/sessions', basic(app), 201, {
        customer_id: customerId,
        customer_name: 'Acme Corp',
        products: ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement', 'benefits'],
        redirect_uri: REDIRECT_URI,
      });
      const flow = await service.app.get(ConnectSessionsService).complete(session.body.session_id, {
        providerId: 'sandbox_automated',
        authenticationType: 'credential',
        manual: false,
        entityNames: ['Acme Corp'],
      });
      const token = await conforming('POST /auth/token', '/auth/token', null, 200, {
        client_id: app.client_id,
        client_secret: app.client_secret,
        code: flow.code,
        redirect_uri: REDIRECT_URI,
      });
      const accessToken = token.body.access_token;

      const exists = await conforming('POST /connect/sessions', '/connect/sessions', basic(app), 400, {
        customer_id: customerId,
        customer_name: 'Acme Corp',
        products: ['company'],
      });
      expect(exists.body).toMatchObject({ service_code: 'connection_already_exists', context: { customer_id: customerId } });
      await conforming('POST /connect/sessions', '/connect/sessions', { authorization: `Basic ${Buffer.from('nobody:wrong').toString('base64')}` }, 401, {
        customer_id: customerId,
        customer_name: 'Acme Corp',
        products: ['company'],
      });
      await conforming('POST /connect/sessions/reauthenticate', '/connect/sessions/reauthenticate', basic(app), 201, {
        connection_id: token.body.connection_id,
      });
      // The public document answers an unknown connection with 400 `connection_not_found`.
      const unknownConnection = await conforming('POST /connect/sessions/reauthenticate', '/connect/sessions/reauthenticate', basic(app), 400, { connection_id: randomUUID() });
      expect(unknownConnection.body).toMatchObject({ service_code: 'connection_not_found' });

      const introspect = await conforming('GET /introspect', '/introspect', accessToken, 200);
      expect(introspect.body).toMatchObject({
        connection_id: token.body.connection_id,
        client_type: 'sandbox',
        provider_id: 'sandbox_automated',
        authentication_methods: [{ type: 'credential', connection_status: { status: 'connected' } }],
      });
      expect(introspect.body.id).toEqual(expect.any(String));
      await conforming('GET /providers', '/providers', null, 200);
    });

    it('disconnect-entity and disconnect', async () => {
      const customerId = `customer-${randomUUID()}`;
      const session = await conforming('POST /connect/sessions', '/connect/sessions', basic(app), 201, {
        customer_id: customerId,
        customer_name: 'Two Entities',
        products: ['company', 'directory'],
        redirect_uri: REDIRECT_URI,
      });
      const flow = await service.app.get(ConnectSessionsService).complete(session.body.session_id, {
        providerId: 'sandbox_automated',
        authenticationType: 'credential',
        manual: false,
        entityNames: ['North', 'South'],
      });
      const token = await conforming('POST /auth/token', '/auth/token', null, 200, {
        client_id: app.client_id,
        client_secret: app.client_secret,
        code: flow.code,
        redirect_uri: REDIRECT_URI,
      });
      await conforming('POST /disconnect-entity', '/disconnect-entity', token.body.access_token, 200, { entity_ids: [token.body.entity_ids[1]] });
      await conforming('POST /disconnect-entity', '/disconnect-entity', token.body.access_token, 400, { entity_ids: [] });
      await conforming('POST /disconnect', '/disconnect', token.body.access_token, 200, {});
    });
  });

  describe('sandbox', () => {
    it('connections, accounts, jobs and their configuration', async () => {
      const automated = await sandboxConnection('sandbox_automated');
      await sandboxConnection('sandbox_assisted');
      await conforming('POST /sandbox/connections/accounts', '/sandbox/connections/accounts', basic(app), 200, {
        company_id: automated.company_id,
        provider_id: 'sandbox_automated',
      });
      const throwaway = await sandboxConnection('sandbox_automated', { employee_size: 1 });
      await conforming('PUT /sandbox/connections/accounts', '/sandbox/connections/accounts', throwaway.access_token, 200, { connection_status: 'reauth' });

      await conforming('GET /sandbox/jobs/configuration', '/sandbox/jobs/configuration', automated.access_token, 200);
      await conforming('PUT /sandbox/jobs/configuration', '/sandbox/jobs/configuration', automated.access_token, 200, {
        type: 'data_sync_all',
        completion_status: 'complete',
      });
      const job = await conforming('POST /sandbox/jobs', '/sandbox/jobs', automated.access_token, 200, { type: 'data_sync_all' });
      await automatedJobCompletes(automated.access_token, job.body.job_id);
    });

    it('payroll edits: company, directory, individual, employment, payment (its public body too)', async () => {
      const employer = await sandboxConnection('sandbox_automated');
      const token = employer.access_token;
      await conforming('PUT /sandbox/company', '/sandbox/company', token, 200, { legal_name: 'Renamed Corp' });
      const added = await conforming('POST /sandbox/directory', '/sandbox/directory', token, 200, [
        { first_name: 'Ada', last_name: 'Lovelace', dob: '1985-12-10', title: 'Analyst', income: { unit: 'yearly', amount: 9_000_000 } },
      ]);
      const id = added.body[0].id ?? added.body[0].individual_id;
      await conforming('PUT /sandbox/individual/{individual_id}', `/sandbox/individual/${id}`, token, 200, { preferred_name: 'Countess' });
      await conforming('PUT /sandbox/employment/{individual_id}', `/sandbox/employment/${id}`, token, 200, { title: 'Lead Analyst' });
      const next = await conforming('POST /sandbox/payment', '/sandbox/payment', token, 200, {});
      // The public body, as an official SDK sends it: the pay period after that run, Ada's statement as written.
      const period = { start_date: addDays(next.body.pay_date, 1), end_date: addDays(next.body.pay_date, 14) };
      const publicBody = {
        ...period,
        pay_statements: [
          {
            individual_id: id,
            type: 'regular_payroll',
            payment_method: 'direct_deposit',
            total_hours: 80,
            gross_pay: 346_154,
            net_pay: 261_154,
            earnings: [{ type: 'salary', name: 'Salary', amount: 346_154, hours: 80 }],
            taxes: [{ type: 'federal', name: 'Federal Income Tax', employer: false, amount: 50_000 }],
            employee_deductions: [{ type: '401k', name: '401(k)', amount: 35_000, pre_tax: true }],
            employer_contributions: [{ type: '401k', name: '401(k) Match', amount: 17_500 }],
          },
        ],
      };
      expect(publicRequestErrors('POST /sandbox/payment', publicBody)).toEqual([]);
      expect(publicRequestErrors('POST /sandbox/payment', { pay_statements: [{ gross_pay: 0 }] })).toEqual([
        "/pay_statements/0 must have required property 'individual_id'",
        '/pay_statements/0/gross_pay must be > 0',
      ]);
      const paid = await conforming('POST /sandbox/payment', '/sandbox/payment', token, 200, publicBody);
      expect(paid.body.pay_date).toBe(period.end_date);
      // The least the public document allows: a person with names alone, and a period of one day.
      const named = { first_name: 'Only', last_name: 'Names' };
      expect(publicRequestErrors('POST /sandbox/directory', [named])).toEqual([]);
      await conforming('POST /sandbox/directory', '/sandbox/directory', token, 200, [named]);
      const oneDay = { start_date: addDays(period.end_date, 1), end_date: addDays(period.end_date, 1) };
      expect(publicRequestErrors('POST /sandbox/payment', oneDay)).toEqual([]);
      expect((await conforming('POST /sandbox/payment', '/sandbox/payment', token, 200, oneDay)).body.pay_date).toBe(oneDay.end_date);
      // The person added with defaults, as the employer reads see them.
      await conforming('POST /employer/individual', '/employer/individual', token, 200, { requests: [{ individual_id: id }] });
      await conforming('POST /employer/employment', '/employer/employment', token, 200, { requests: [{ individual_id: id }] });
    });
  });

  describe('employer reads', () => {
    let token: string;
    let individualIds: string[];

    beforeAll(async () => {
      token = (await sandboxConnection('sandbox_automated')).access_token;
    });

    it('company, directory, individual, employment', async () => {
      await conforming('GET /employer/company', '/employer/company', token, 200);
      const directory = await conforming('GET /employer/directory', '/employer/directory', token, 200);
      individualIds = directory.body.individuals.map((i: { id: string }) => i.id);
      await conforming('POST /employer/individual', '/employer/individual', token, 200, {
        requests: [...individualIds.map((individual_id) => ({ individual_id })), { individual_id: randomUUID() }],
        options: { include: ['ssn'] },
      });
      const employment = await conforming('POST /employer/employment', '/employer/employment', token, 200, {
        requests: [...individualIds.map((individual_id) => ({ individual_id })), { individual_id: randomUUID() }],
      });
      expect(employment.body.responses[0].body).toHaveProperty('latest_rehire_date');
    });

    it('payments, pay statements, pay-statement items and pay groups', async () => {
      const payments = await conforming('GET /employer/payment', '/employer/payment?start_date=2000-01-01&end_date=2100-12-31', token, 200);
      expect(payments.body.length).toBeGreaterThan(0);
      await conforming('POST /employer/pay-statement', '/employer/pay-statement', token, 200, {
        requests: [{ payment_id: payments.body[0].id, limit: 3 }, { payment_id: randomUUID() }],
      });
      await conforming('GET /employer/pay-statement-item', '/employer/pay-statement-item?start_date=2000-01-01&end_date=2100-12-31', token, 200);
      const groups = await conforming('GET /employer/pay-groups', '/employer/pay-groups', token, 200);
      await conforming('GET /employer/pay-groups/{pay_group_id}', `/employer/pay-groups/${groups.body[0].id}`, token, 200);
    });

    it('pay-statement item rules', async () => {
      const body = {
        conditions: [{ field: 'type', operator: 'equals', value: '401k' }],
        attributes: { metadata: { gl_code: '4010' } },
        effective_start_date: '2026-01-01',
        entity_type: 'pay_statement_item',
      };
      const created = await conforming('POST /employer/pay-statement-item/rule', '/employer/pay-statement-item/rule', token, 201, body);
      await conforming('POST /employer/pay-statement-item/rule', '/employer/pay-statement-item/rule', token, 400, { ...body, conditions: [] });
      await conforming('GET /employer/pay-statement-item/rule', '/employer/pay-statement-item/rule', token, 200);
      const ruleId = created.body.id;
      await conforming('PUT /employer/pay-statement-item/rule/{rule_id}', `/employer/pay-statement-item/rule/${ruleId}`, token, 200, { ...body, attributes: { metadata: { gl_code: '4011' } } });
      await conforming('DELETE /employer/pay-statement-item/rule/{rule_id}', `/employer/pay-statement-item/rule/${ruleId}`, token, 200);
    });

    it('forward and data-sync jobs', async () => {
      await conforming('POST /forward', '/forward', token, 200, { method: 'GET', route: '/company' });
      const job = await conforming('POST /jobs/automated', '/jobs/automated', token, 201, { type: 'data_sync_all' });
      await automatedJobCompletes(token, job.body.job_id);
      await conforming('GET /jobs/automated', '/jobs/automated', token, 200);
      await conforming('GET /jobs/automated/{job_id}', `/jobs/automated/${job.body.job_id}`, token, 200);
      await conforming('GET /jobs/automated/{job_id}', `/jobs/automated/${randomUUID()}`, token, 404);
      await conforming('GET /jobs/automated', '/jobs/automated', 'not-a-token', 401);
      await conforming('POST /jobs/automated', '/jobs/automated', 'not-a-token', 401, { type: 'data_sync_all' });
      const assisted = await sandboxConnection('sandbox_assisted');
      await conforming('POST /jobs/automated', '/jobs/automated', assisted.access_token, 400, { type: 'data_sync_all' });
    });
  });

  describe('deductions', () => {
    it('on an Automated provider: create, read, update, enroll, unenroll, meta', async () => {
      const employer = await sandboxConnection('sandbox_automated');
      const token = employer.access_token;
      const directory = await call('GET /employer/directory', '/employer/directory', token);
      const [first, second] = directory.body.individuals.map((i: { id: string }) => i.id);

      const created = await conforming('POST /employer/benefits', '/employer/benefits', token, 200, {
        type: '401k',
        description: 'Retirement',
        frequency: 'every_paycheck',
        company_contribution: { type: 'match', tiers: [{ match: 10_000, threshold: 300 }] },
      });
      const benefitId = created.body.benefit_id;
      await automatedJobCompletes(token, created.body.job_id);
      const tiered = await conforming('POST /employer/benefits', '/employer/benefits', token, 200, {
        type: '403b',
        description: 'Retirement (tiered)',
        frequency: 'every_paycheck',
        company_contribution: { type: 'tiered', tiers: [{ match: 10_000, threshold: 300 }, { match: 5_000, threshold: 500 }] },
      });
      await automatedJobCompletes(token, tiered.body.job_id);
      const gusto = await sandboxConnection('gusto');
      await conforming('POST /employer/benefits', '/employer/benefits', gusto.access_token, 422, { type: '457', description: 'Unsupported' });
      await conforming('POST /employer/benefits', '/employer/benefits', token, 400, { type: '401k' });

      await conforming('GET /employer/benefits', '/employer/benefits', token, 200);
      await conforming('GET /employer/benefits/{benefit_id}', `/employer/benefits/${benefitId}`, token, 200);
      await conforming('GET /employer/benefits/{benefit_id}', `/employer/benefits/${tiered.body.benefit_id}`, token, 200);
      await conforming('GET /employer/benefits/{benefit_id}', `/employer/benefits/${randomUUID()}`, token, 404);
      await conforming('GET /employer/benefits/meta', '/employer/benefits/meta', token, 200);
      const updated = await conforming('POST /employer/benefits/{benefit_id}', `/employer/benefits/${benefitId}`, token, 200, { description: 'Retirement plan' });
      await automatedJobCompletes(token, updated.body.job_id);
      await conforming('POST /employer/benefits/register', '/employer/benefits/register', token, 400, {
        type: '401k',
        description: 'Registered',
        frequency: 'every_paycheck',
      });

      const enroll = await conforming('POST /employer/benefits/{benefit_id}/individuals', `/employer/benefits/${benefitId}/individuals`, token, 200, [
        { individual_id: first, configuration: { employee_deduction: { type: 'percent', amount: 500 }, company_contribution: { type: 'percent', amount: 300 } } },
        { individual_id: second, configuration: { employee_deduction: { type: 'fixed', amount: 10_000 } } },
      ]);
      await automatedJobCompletes(token, enroll.body.job_id);
      await conforming('POST /employer/benefits/{benefit_id}/individuals', `/employer/benefits/${benefitId}/individuals`, token, 400, {
        individual_id: first,
      });
      await conforming('POST /employer/benefits/{benefit_id}/individuals', `/employer/benefits/${randomUUID()}/individuals`, token, 404, [
        { individual_id: first, configuration: { employee_deduction: { type: 'fixed', amount: 100 } } },
      ]);
      await conforming('GET /employer/benefits/{benefit_id}/enrolled', `/employer/benefits/${benefitId}/enrolled`, token, 200);
      await conforming('GET /employer/benefits/{benefit_id}/enrolled', `/employer/benefits/${randomUUID()}/enrolled`, token, 404);
      await conforming('GET /employer/benefits/{benefit_id}/individuals', `/employer/benefits/${benefitId}/individuals`, token, 200);
      await conforming('GET /employer/benefits/{benefit_id}/individuals', `/employer/benefits/${randomUUID()}/individuals`, token, 404);
      const unenroll = await conforming('DELETE /employer/benefits/{benefit_id}/individuals', `/employer/benefits/${benefitId}/individuals`, token, 200, {
        individual_ids: [second],
      });
      await automatedJobCompletes(token, unenroll.body.job_id);
      await conforming('DELETE /employer/benefits/{benefit_id}/individuals', `/employer/benefits/${randomUUID()}/individuals`, token, 404, {
        individual_ids: [second],
      });
    });

    it('on an Assisted provider: register, manual jobs pending and complete', async () => {
      const employer = await sandboxConnection('sandbox_assisted');
      const token = employer.access_token;
      const registered = await conforming('POST /employer/benefits/register', '/employer/benefits/register', token, 200, {
        type: '401k',
        description: 'Registered plan',
        frequency: 'every_paycheck',
      });
      const pending = await conforming('GET /jobs/manual/{job_id}', `/jobs/manual/${registered.body.job_id}`, token, 200);
      expect(pending.body.status).toBe('pending');
      const tasks = await service.request(`/ops/api/tasks?status=open&connection_id=${employer.connection_id}`, { headers: OPS });
      const task = tasks.body.data.find((t: { job_id: string }) => t.job_id === registered.body.job_id);
      expect((await service.request(`/ops/api/tasks/${task.task_id}/complete`, { method: 'POST', headers: { ...OPS, 'content-type': 'application/json' }, body: '{}' })).status).toBe(200);
      const complete = await expectEventually(async () => {
        const res = await conforming('GET /jobs/manual/{job_id}', `/jobs/manual/${registered.body.job_id}`, token, 200);
        expect(res.body.status).toBe('complete');
        return res;
      });
      expect(Array.isArray(complete.body.body)).toBe(true);
      await conforming('GET /jobs/manual/{job_id}', `/jobs/manual/${randomUUID()}`, token, 404);
      await conforming('GET /jobs/manual/{job_id}', '/jobs/manual/not-a-job', token, 400);
    });
  });

  describe('the operations it does not offer', () => {
    it('answer 404 not_found_error', async () => {
      const token = (await sandboxConnection('sandbox_automated', { employee_size: 1 })).access_token;
      for (const operation of NOT_OFFERED) {
        const [method, path] = operation.split(' ');
        const res = await service.request(path.replace(/\{\w+\}/g, randomUUID()), { method, headers: sdk(token) });
        expect({ operation, status: res.status, name: res.body?.name }).toEqual({ operation, status: 404, name: 'not_found_error' });
      }
    });
  });

  describe('the deviation list', () => {
    it('is checked by a validator that refuses what the document refuses', async () => {
      const introspect = recorded.find((r) => r.operation === 'GET /introspect' && r.status === 200)!;
      const { id: _id, ...withoutId } = introspect.body as Record<string, unknown>;
      expect(validator.check('GET /introspect', 200, withoutId).errors).toEqual([expect.stringContaining("must have required property 'id'")]);
      expect(validator.check('POST /employer/benefits', 204, {}).errors).toEqual([expect.stringContaining('status 204 is not documented')]);
    });

    it('lets every recorded response through, polls included', () => {
      const failing = recorded.map((r) => ({ ...r, errors: validator.check(r.operation, r.status, r.body).errors })).filter((r) => r.errors.length > 0);
      expect(failing).toEqual([]);
    });

    it('covers every operation offered, each checked at least once', () => {
      const seen = new Set(recorded.map((r) => r.operation));
      expect(OFFERED.filter((op) => !seen.has(op))).toEqual([]);
    });

    it('holds only what the contract decides, each with its rule; anything else is marked pending with its reason', () => {
      const undecided = DEVIATIONS.filter((d) => d.pending === undefined && !/(unified-api|DECISIONS)\.md/.test(d.rule));
      expect(undecided.map((d) => d.id)).toEqual([]);
      expect(DEVIATIONS.filter((d) => d.pending !== undefined).map((d) => d.id)).toEqual([]);
    });

    it('has no stale entry: each deviation is needed by a recorded response', () => {
      const stale = DEVIATIONS.filter((deviation) => {
        const without = validatorWith(DEVIATIONS.filter((d) => d !== deviation));
        return recorded.every((r) => without.check(r.operation, r.status, r.body).errors.length === 0);
      });
      expect(stale.map((d) => d.id)).toEqual([]);
    });
  });
});
