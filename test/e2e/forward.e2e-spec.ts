import { randomUUID } from 'node:crypto';
import { ManualClock } from '../../src/domain/shared/clock';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, connectEmployer, createApplication } from '../utils/connect';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describeWithPostgres('POST /forward', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let token: string;

  beforeAll(async () => {
    service = await startTestService({ clock: new ManualClock('2026-06-01T12:00:00Z') });
    app = await createApplication(service);
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 12 }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    token = res.body.access_token;
  });
  afterAll(() => service?.close());

  const forward = (body: unknown, headers: Record<string, string> = bearer(token), query = '') =>
    service.request(`/forward${query}`, json(body, headers));

  /** The provider's answer inside a 200 forward response. */
  async function provider(body: Record<string, unknown>, query = '') {
    const res = await forward(body, bearer(token), query);
    expect(res.status).toBe(200);
    return res.body.response as { data: any; headers: Record<string, string>; status_code: number }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  const read = (path: string, body?: unknown) =>
    body === undefined ? service.request(path, { headers: bearer(token) }) : service.request(path, json(body, bearer(token)));

  function expectInvalid(res: TestResponse, fragment: string) {
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error', service_code: 'invalid_request' });
    expect(res.body.message).toContain(fragment);
  }

  describe('the sandbox provider’s own API', () => {
    it('GET /company answers in the provider’s own fields, with its headers', async () => {
      const res = await forward({ method: 'GET', route: '/company' });
      expect(res.status).toBe(200);
      expect(res.body.request).toEqual({ method: 'GET', route: '/company', data: null, headers: null, params: null });
      expect(res.body.response.status_code).toBe(200);
      expect(res.body.response.headers).toMatchObject({
        'content-type': 'application/json; charset=utf-8',
        'x-sandbox-request-id': expect.stringMatching(UUID),
      });
      const company = (await read('/employer/company')).body;
      expect(res.body.response.data).toMatchObject({
        companyId: company.id,
        legalName: company.legal_name,
        taxId: company.ein,
        entityType: company.entity.type.toUpperCase(),
        phone: company.primary_phone_number,
      });
      expect(res.body.response.data.bankAccounts[0].accountNumberLast4).toBe(company.accounts[0].account_number.slice(-4));
      expect(res.body.response.data).not.toHaveProperty('legal_name');
      // The public document's shape at the top level: the status, the headers and the body as text.
      expect(res.body.statusCode).toBe(200);
      expect(res.body.headers).toEqual(res.body.response.headers);
      expect(JSON.parse(res.body.data)).toEqual(res.body.response.data);
    });

    it('GET /employees pages the directory (query in the route or in params)', async () => {
      const directory = (await read('/employer/directory?limit=10000')).body;
      const first = await provider({ method: 'GET', route: '/employees?page=1&per_page=5' });
      expect(first.status_code).toBe(200);
      expect(first.data).toMatchObject({ page: 1, perPage: 5, total: directory.paging.count, totalPages: Math.ceil(directory.paging.count / 5) });
      const employeeIds = (page: { data: { employees: { employeeId: string }[] } }) => page.data.employees.map((e) => e.employeeId);
      const directoryIds = directory.individuals.map((i: { id: string }) => i.id);
      expect(employeeIds(first)).toEqual(directoryIds.slice(0, 5));
      const second = await provider({ method: 'GET', route: '/employees', params: { page: 2, per_page: '5' } });
      expect(employeeIds(second)).toEqual(directoryIds.slice(5, 10));
      const beyond = await provider({ method: 'GET', route: '/employees', params: { page: 99 } });
      expect(beyond.data.employees).toEqual([]);
    });

    it('GET /employees/{employeeId} answers one employee; an unknown one is the provider’s 404', async () => {
      const [entry] = (await read('/employer/directory')).body.individuals;
      const employment = (await read('/employer/employment', { requests: [{ individual_id: entry.id }] })).body.responses[0].body;
      const one = await provider({ method: 'get', route: `/employees/${entry.id}` });
      expect(one.status_code).toBe(200);
      expect(one.data).toMatchObject({
        employeeId: entry.id,
        givenName: employment.first_name,
        familyName: employment.last_name,
        jobTitle: employment.title,
        hireDate: employment.start_date,
        payRate: { unit: employment.income.unit === 'yearly' ? 'YEAR' : 'HOUR', cents: employment.income.amount, currency: 'USD' },
        status: employment.is_active ? 'ACTIVE' : 'TERMINATED',
      });
      const unknown = randomUUID();
      for (const id of [unknown, 'not-a-uuid']) {
        const missing = await provider({ method: 'GET', route: `/employees/${id}` });
        expect(missing.status_code).toBe(404);
        expect(missing.data).toEqual({ error: 'not_found', message: `No employee ${id}` });
      }
    });

    it('GET /payruns, /payruns/{id} and /payruns/{id}/paystubs follow the pay history', async () => {
      const payments = (await read('/employer/payment?start_date=2026-01-01&end_date=2026-06-01')).body;
      expect(payments.length).toBeGreaterThan(0);
      const runs = await provider({ method: 'GET', route: '/payruns', params: { from: '2026-01-01', to: '2026-06-01' } });
      expect(runs.status_code).toBe(200);
      expect(runs.data.payRuns.map((r: { payRunId: string }) => r.payRunId)).toEqual(payments.map((p: { id: string }) => p.id));
      const latest = payments[payments.length - 1];
      const run = await provider({ method: 'GET', route: `/payruns/${latest.id}` });
      expect(run.data).toMatchObject({
        payRunId: latest.id,
        checkDate: latest.pay_date,
        periodStart: latest.pay_period.start_date,
        periodEnd: latest.pay_period.end_date,
        grossCents: latest.gross_pay.amount,
        netCents: latest.net_pay.amount,
        employeeCount: latest.individual_ids.length,
      });
      const stubs = await provider({ method: 'GET', route: `/payruns/${latest.id}/paystubs`, params: { per_page: 100 } });
      expect(stubs.status_code).toBe(200);
      expect(stubs.data.total).toBe(latest.individual_ids.length);
      expect(stubs.data.paystubs.map((s: { employeeId: string }) => s.employeeId).sort()).toEqual([...latest.individual_ids].sort());
      const statements = (await read('/employer/pay-statement', { requests: [{ payment_id: latest.id }] })).body.responses[0].body.pay_statements;
      const statement = statements[0];
      const stub = stubs.data.paystubs.find((s: { employeeId: string }) => s.employeeId === statement.individual_id);
      expect(stub).toMatchObject({ grossCents: statement.gross_pay.amount, netCents: statement.net_pay.amount, hoursWorked: statement.total_hours });
      expect(stub.taxes).toHaveLength(statement.taxes.length);

      for (const route of [`/payruns/${randomUUID()}`, `/payruns/${randomUUID()}/paystubs`]) {
        const missing = await provider({ method: 'GET', route });
        expect(missing.status_code).toBe(404);
        expect(missing.data.error).toBe('not_found');
      }
    });

    it('answers a bad query with the provider’s 400', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ method: 'GET', route: '/employees?per_page=0' }, 'per_page must be an integer from 1 to 100'],
        [{ method: 'GET', route: '/employees', params: { page: 'two' } }, 'page must be an integer'],
        [{ method: 'GET', route: '/employees?page=1&page=2' }, 'page may be given once'],
        [{ method: 'GET', route: '/employees', params: { page: [1, 2] } }, 'page must be a single'],
        [{ method: 'GET', route: '/payruns?from=2026-13-01' }, 'from must be a date YYYY-MM-DD'],
        [{ method: 'GET', route: '/payruns', params: { from: '2026-06-01', to: '2026-01-01' } }, 'must not be after'],
        [{ method: 'GET', route: '/company', params: { verbose: true } }, 'Unknown query parameter verbose'],
      ];
      for (const [request, message] of cases) {
        const answer = await provider(request);
        expect({ request, status: answer.status_code }).toEqual({ request, status: 400 });
        expect(answer.data.error).toBe('bad_request');
        expect(answer.data.message).toContain(message);
      }
    });

    it('answers a route it does not have with its own 404, and a wrong method with 405, inside a 200', async () => {
      const res = await forward({ method: 'GET', route: '/foo' });
      expect(res.status).toBe(200);
      expect(res.body.response).toMatchObject({ status_code: 404, data: { error: 'not_found', message: 'No route GET /foo' } });
      expect(res.body.response.headers['content-type']).toMatch(/^application\/json/);
      const employer = await provider({ method: 'GET', route: '/employer/company' });
      expect(employer.status_code).toBe(404);
      const wrongMethod = await provider({ method: 'delete', route: '/employees', data: { all: true } });
      expect(wrongMethod).toMatchObject({
        status_code: 405,
        data: { error: 'method_not_allowed', message: 'DELETE is not allowed on /employees; allowed: GET' },
        headers: { allow: 'GET' },
      });
    });
  });

  describe('the forward request', () => {
    it('echoes the request with the method in capitals, and never echoes authorization headers', async () => {
      const res = await forward({
        method: 'post',
        route: '/employees',
        data: { givenName: 'Ada' },
        headers: { Authorization: 'Bearer provider-secret', 'X-Trace': 'abc', 'proxy-authorization': 'Basic c2VjcmV0' },
        params: { page: 1 },
      });
      expect(res.status).toBe(200);
      expect(res.body.request).toEqual({
        method: 'POST',
        route: '/employees',
        data: { givenName: 'Ada' },
        headers: { Authorization: '[REDACTED]', 'X-Trace': 'abc', 'proxy-authorization': '[REDACTED]' },
        params: { page: 1 },
      });
      expect(res.text).not.toContain('provider-secret');
      expect(res.text).not.toContain('c2VjcmV0');
      expect(res.body.response.status_code).toBe(405);
    });

    it('reads null headers and params as absent', async () => {
      const res = await forward({ method: 'GET', route: '/company', headers: null, params: null });
      expect(res.status).toBe(200);
      expect(res.body.request).toMatchObject({ method: 'GET', route: '/company', headers: null, params: null });
      expect(res.body.response.status_code).toBe(200);
    });

    it('refuses a missing or invalid method or route with 400 naming the field', async () => {
      expectInvalid(await forward({ route: '/company' }), 'method: method is required and must be one of GET, POST, PUT, PATCH, DELETE');
      expectInvalid(await forward({ method: 'TRACE', route: '/company' }), 'method:');
      expectInvalid(await forward({ method: 42, route: '/company' }), 'method:');
      expectInvalid(await forward({ method: 'GET' }), 'route: route is required');
      expectInvalid(await forward({ method: 'GET', route: 'company' }), 'route: route must be a path starting with a single /');
      expectInvalid(await forward({ method: 'GET', route: '//evil.example/company' }), 'route:');
      expectInvalid(await forward({ method: 'GET', route: '/with space' }), 'route:');
      expectInvalid(await forward({}), 'method:');
    });

    it('refuses bad headers, params and unknown fields', async () => {
      expectInvalid(await forward({ method: 'GET', route: '/company', headers: { 'X-Count': 3 } }), 'headers: headers must be an object');
      expectInvalid(await forward({ method: 'GET', route: '/company', headers: ['x'] }), 'headers:');
      expectInvalid(await forward({ method: 'GET', route: '/company', headers: { 'bad name': 'x' } }), 'headers:');
      expectInvalid(await forward({ method: 'GET', route: '/company', headers: { 'X-Injected': 'a\r\nb' } }), 'headers:');
      expectInvalid(await forward({ method: 'GET', route: '/company', params: ['page'] }), 'params: params must be an object');
      expectInvalid(await forward({ method: 'GET', route: '/company', body: {} }), 'body: unknown field');
      const list = await forward([{ method: 'GET', route: '/company' }]);
      expect(list.status).toBe(400);
    });

    it('needs an access token and the version header', async () => {
      const anonymous = await forward({ method: 'GET', route: '/company' }, { 'service-api-version': '2020-09-17' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toMatchObject({ name: 'authentication_error' });
      const unknown = await forward({ method: 'GET', route: '/company' }, bearer('not-a-token'));
      expect(unknown.status).toBe(401);
      const noVersion = await forward({ method: 'GET', route: '/company' }, { authorization: `Bearer ${token}` });
      expect(noVersion.status).toBe(400);
      expect(noVersion.body).toMatchObject({ name: 'invalid_request_error', service_code: 'missing_version_header' });
      const badVersion = await forward({ method: 'GET', route: '/company' }, bearer(token, { 'service-api-version': '2021-02-30' }));
      expect(badVersion.body.service_code).toBe('invalid_version_header');
    });

    it('answers 401 reauthenticate_user while the connection needs reauthentication', async () => {
      const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 3 }, basic(app)));
      const lapsed = res.body.access_token;
      const reauth = await service.request('/sandbox/connections/accounts', {
        ...json({ connection_status: 'reauth' }, { authorization: `Bearer ${lapsed}` }),
        method: 'PUT',
      });
      expect(reauth.status).toBe(200);
      const call = await forward({ method: 'GET', route: '/company' }, bearer(lapsed));
      expect(call.status).toBe(401);
      expect(call.body).toMatchObject({ name: 'authentication_error', service_code: 'reauthenticate_user' });
    });

    it('reaches the entity named by entity_ids; with two entities it is required', async () => {
      const employer = await connectEmployer(service, app, { entityNames: ['Alpha Co', 'Beta Co'] });
      const [alpha, beta] = employer.entityIds;
      const companyOf = async (entityId: string) => {
        const res = await forward({ method: 'GET', route: '/company' }, bearer(employer.accessToken), `?entity_ids=${entityId}`);
        expect(res.status).toBe(200);
        return res.body.response.data;
      };
      const [alphaCompany, betaCompany] = [await companyOf(alpha), await companyOf(beta)];
      expect(alphaCompany.legalName).toBe('Alpha Co');
      expect(betaCompany.legalName).toBe('Beta Co');
      expect(alphaCompany.companyId).not.toBe(betaCompany.companyId);
      const unscoped = await forward({ method: 'GET', route: '/company' }, bearer(employer.accessToken));
      expectInvalid(unscoped, 'entity_ids is required');
      const foreign = await forward({ method: 'GET', route: '/company' }, bearer(employer.accessToken), `?entity_ids=${randomUUID()}`);
      expect(foreign.status).toBe(403);
      expect(foreign.body.service_code).toBe('entity_not_authorized');
    });
  });
});
