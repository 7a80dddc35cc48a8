import { createHmac } from 'node:crypto';
import { FakeGusto, GUSTO_API_VERSION, GustoCompany, GustoCompanyBenefit, GustoEmployee, GustoEmployeeBenefit, GustoEvent, GustoPayroll, GustoWebhookSubscription } from '../../fakes/gusto/fake-gusto';
import { WebhookReceiver } from '../../utils/webhook-receiver';

/**
 * The fake Gusto (test/fakes/gusto/fake-gusto.ts) over real HTTP: OAuth, reads, benefit writes,
 * webhooks, events, injected faults and the rate limit, every exchange checked against Gusto's
 * document. Each test ends with no violations, and one shows a request the document does not
 * allow is recorded as one.
 */
describe('FakeGusto', () => {
  const REDIRECT = 'https://app.example.com/gusto/callback';
  let fake: FakeGusto;
  let receiver: WebhookReceiver | undefined;

  beforeEach(async () => {
    fake = await new FakeGusto().start();
  });

  afterEach(async () => {
    await fake.stop();
    await receiver?.stop();
    receiver = undefined;
  });

  interface Answer<T> {
    status: number;
    headers: Headers;
    body: T;
  }

  async function call<T = unknown>(method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { 'x-gusto-api-version': GUSTO_API_VERSION, accept: 'application/json', ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(`${fake.url}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : undefined) as T };
  }

  interface TokenAnswer {
    access_token: string;
    refresh_token: string;
    token_type: string;
    expires_in: number;
    created_at: number;
  }

  const tokenRequest = (body: Record<string, unknown>) =>
    call<TokenAnswer & { error?: string }>('POST', '/oauth/token', { body: { client_id: fake.clientId, client_secret: fake.clientSecret, ...body } });

  async function connect(company: GustoCompany): Promise<TokenAnswer> {
    const answer = await tokenRequest({ grant_type: 'authorization_code', code: fake.authorize(company.uuid, REDIRECT), redirect_uri: REDIRECT });
    expect(answer.status).toBe(200);
    return answer.body;
  }

  async function systemToken(): Promise<string> {
    const answer = await tokenRequest({ grant_type: 'system_access' });
    expect(answer.status).toBe(200);
    return answer.body.access_token;
  }

  describe('OAuth', () => {
    it('exchanges an authorization code (from the authorize redirect) for tokens naming the company, once', async () => {
      const company = fake.addCompany();
      const authorize = await fetch(`${fake.url}/oauth/authorize?client_id=${fake.clientId}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&state=xyz`, {
        redirect: 'manual',
      });
      expect(authorize.status).toBe(302);
      const location = new URL(authorize.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      expect(location.searchParams.get('state')).toBe('xyz');
      const code = location.searchParams.get('code') ?? '';

      const tokens = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
      expect(tokens.status).toBe(200);
      expect(tokens.body).toEqual({
        access_token: expect.any(String),
        refresh_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 7200,
        scope: expect.any(String),
        created_at: expect.any(Number),
      });

      const info = await call<{ resource: { type: string; uuid: string } }>('GET', '/v1/token_info', { token: tokens.body.access_token });
      expect(info.status).toBe(200);
      expect(info.body.resource).toEqual({ type: 'Company', uuid: company.uuid });
      expect((await call('GET', `/v1/companies/${company.uuid}`, { token: tokens.body.access_token })).body).toEqual(company);

      // A code is single use; a wrong secret is the client's fault, not the grant's.
      expect((await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT })).body.error).toBe('invalid_grant');
      const wrongSecret = await call<{ error: string }>('POST', '/oauth/token', {
        body: { client_id: fake.clientId, client_secret: 'nope', grant_type: 'authorization_code', code: fake.authorize(company.uuid, REDIRECT), redirect_uri: REDIRECT },
      });
      expect([wrongSecret.status, wrongSecret.body.error]).toEqual([401, 'invalid_client']);
      expect(fake.apiVersions).toEqual([GUSTO_API_VERSION]);
      expect(fake.violations).toEqual([]);
      // The document has no authorization-code grant, no token errors, and a token-answer schema no refresh answer can meet.
      expect(fake.offDocument).toEqual(['POST /oauth/token request', 'POST /oauth/token 200', 'POST /oauth/token 400', 'POST /oauth/token 401']);
    });

    it('makes refresh tokens single use: the used one, and the access token issued with it, stop working', async () => {
      const company = fake.addCompany();
      const first = await connect(company);
      const second = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
      expect(second.status).toBe(200);
      expect(second.body.refresh_token).not.toBe(first.refresh_token);
      expect(fake.refreshCount).toBe(1);

      const reused = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
      expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
      expect((await call('GET', '/v1/token_info', { token: first.access_token })).status).toBe(401);
      expect((await call('GET', '/v1/token_info', { token: second.body.access_token })).status).toBe(200);
      expect(fake.refreshCount).toBe(1);
      expect(fake.violations).toEqual([]);
    });

    it("optionally revokes the old refresh token only on the new access token's first use, as Gusto's reference says", async () => {
      fake.refreshTokenRevocation = 'on-first-use';
      const first = await connect(fake.addCompany());
      const second = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
      // A retry of a refresh whose answer was lost still works...
      const retried = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
      expect([second.status, retried.status]).toEqual([200, 200]);
      // ...until one of the new access tokens is used.
      expect((await call('GET', '/v1/token_info', { token: retried.body.access_token })).status).toBe(200);
      expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token })).status).toBe(400);
      expect(fake.refreshCount).toBe(2);
      expect(fake.violations).toEqual([]);
    });

    it('answers 401 once an access token expires, and a refreshed one works', async () => {
      fake.accessTokenTtlSeconds = 60;
      const company = fake.addCompany();
      const tokens = await connect(company);
      expect(tokens.expires_in).toBe(60);
      expect((await call('GET', `/v1/companies/${company.uuid}`, { token: tokens.access_token })).status).toBe(200);

      fake.advanceTime(61);
      const expired = await call('GET', `/v1/companies/${company.uuid}`, { token: tokens.access_token });
      expect(expired.status).toBe(401);
      expect(expired.headers.get('www-authenticate')).toMatch(/invalid_token/);
      expect(expired.body).toBeUndefined();
      expect((await call('GET', `/v1/companies/${company.uuid}`)).status).toBe(401);

      const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      expect((await call('GET', `/v1/companies/${company.uuid}`, { token: refreshed.body.access_token })).status).toBe(200);
      expect(fake.violations).toEqual([]);
      expect(fake.offDocument).toContain('GET /v1/companies/{company_id} 401');
    });

    it('keeps a token to its company, and company and system tokens to their own operations', async () => {
      const mine = fake.addCompany();
      const theirs = fake.addCompany();
      const [theirEmployee] = fake.addEmployees(theirs.uuid, 1);
      const { access_token } = await connect(mine);
      const notFound = await call<{ errors: { category: string }[] }>('GET', `/v1/companies/${theirs.uuid}`, { token: access_token });
      expect([notFound.status, notFound.body.errors[0].category]).toEqual([404, 'not_found']);
      expect((await call('GET', `/v1/employees/${theirEmployee.uuid}`, { token: access_token })).status).toBe(404);
      expect((await call('GET', '/v1/webhook_subscriptions', { token: access_token })).status).toBe(401);
      expect((await call('GET', `/v1/companies/${mine.uuid}`, { token: await systemToken() })).status).toBe(401);
      expect(fake.violations).toEqual([]);
    });
  });

  describe('reads', () => {
    it('pages 120 employees with page/per and the X-Total-Count family of headers; without them, all', async () => {
      const company = fake.addCompany();
      const seeded = fake.addEmployees(company.uuid, 120);
      const { access_token } = await connect(company);
      const seen: string[] = [];
      for (let page = 1; page <= 3; page++) {
        const answer = await call<GustoEmployee[]>('GET', `/v1/companies/${company.uuid}/employees?page=${page}&per=50`, { token: access_token });
        expect(answer.status).toBe(200);
        expect(answer.body).toHaveLength(page < 3 ? 50 : 20);
        expect([answer.headers.get('x-page'), answer.headers.get('x-per-page'), answer.headers.get('x-total-count'), answer.headers.get('x-total-pages')]).toEqual([String(page), '50', '120', '3']);
        seen.push(...answer.body.map((e) => e.uuid));
      }
      expect(new Set(seen)).toEqual(new Set(seeded.map((e) => e.uuid)));
      const beyond = await call<GustoEmployee[]>('GET', `/v1/companies/${company.uuid}/employees?page=4&per=50`, { token: access_token });
      expect(beyond.body).toEqual([]);

      const all = await call<GustoEmployee[]>('GET', `/v1/companies/${company.uuid}/employees`, { token: access_token });
      expect(all.body).toHaveLength(120);
      expect(all.headers.get('x-total-count')).toBeNull();

      const one = await call<GustoEmployee>('GET', `/v1/employees/${seeded[7].uuid}`, { token: access_token });
      expect(one.body).toEqual(seeded[7]);
      expect(fake.violations).toEqual([]);
    });

    it('filters employees by terminated and uuids', async () => {
      const company = fake.addCompany();
      const active = fake.addEmployees(company.uuid, 3);
      const [gone] = fake.addEmployees(company.uuid, 1, { terminated: true });
      const { access_token } = await connect(company);
      const terminated = await call<GustoEmployee[]>('GET', `/v1/companies/${company.uuid}/employees?terminated=true`, { token: access_token });
      expect(terminated.body.map((e) => e.uuid)).toEqual([gone.uuid]);
      expect(terminated.body[0].terminations).toHaveLength(1);
      const subset = await call<GustoEmployee[]>('GET', `/v1/companies/${company.uuid}/employees?uuids=${active[0].uuid},${active[2].uuid}`, { token: access_token });
      expect(subset.body.map((e) => e.uuid)).toEqual([active[0].uuid, active[2].uuid]);
      expect(fake.violations).toEqual([]);
    });

    it('serves pay schedules and payrolls with the documented filters, and a payroll with benefits, deductions and taxes', async () => {
      const company = fake.addCompany();
      const schedule = fake.addPaySchedule(company.uuid);
      const [ada, grace] = fake.addEmployees(company.uuid, 2);
      const medical = fake.addCompanyBenefit(company.uuid, { description: 'Kaiser Medical', benefit_type: 1 });
      fake.addEmployeeBenefit(ada.uuid, medical.uuid, { employee_deduction: '125.50', contribution: { type: 'amount', value: '300.00' } });
      const recent = fake.addProcessedPayroll(company.uuid, { payScheduleUuid: schedule.uuid });
      const older = fake.addProcessedPayroll(company.uuid, { payScheduleUuid: schedule.uuid, startDate: '2020-01-01', endDate: '2020-01-14', checkDate: '2020-01-17' });
      const pending = fake.addPayroll(company.uuid, { processed: false, payScheduleUuid: schedule.uuid, startDate: '2021-01-01', endDate: '2021-01-14', checkDate: '2021-01-19' });
      const { access_token } = await connect(company);

      const schedules = await call<{ uuid: string }[]>('GET', `/v1/companies/${company.uuid}/pay_schedules`, { token: access_token });
      expect(schedules.body.map((s) => s.uuid)).toEqual([schedule.uuid]);

      const list = (query: string) => call<GustoPayroll[]>('GET', `/v1/companies/${company.uuid}/payrolls${query}`, { token: access_token });
      // By default: processed, regular, the past six months; no totals, no employee compensations.
      const byDefault = await list('');
      expect(byDefault.body.map((p) => p.uuid)).toEqual([recent.uuid]);
      expect(byDefault.body[0].totals).toBeUndefined();
      expect(byDefault.body[0].employee_compensations).toBeUndefined();
      expect((await list('?start_date=2019-12-01&end_date=2020-02-01')).body.map((p) => p.uuid)).toEqual([older.uuid]);
      expect((await list('?processed=false&start_date=2019-01-01')).body.map((p) => p.uuid)).toEqual([pending.uuid]);
      expect((await list('?processing_statuses=processed,unprocessed&start_date=2019-01-01&sort_order=desc')).body.map((p) => p.uuid)).toEqual([
        recent.uuid,
        pending.uuid,
        older.uuid,
      ]);
      expect((await list('?include=totals')).body[0].totals.gross_pay).toBe('4000.00');

      const plain = await call<GustoPayroll>('GET', `/v1/companies/${company.uuid}/payrolls/${recent.uuid}`, { token: access_token });
      expect(plain.body.employee_compensations[0]).not.toHaveProperty('benefits');
      const shown = await call<GustoPayroll>('GET', `/v1/companies/${company.uuid}/payrolls/${recent.uuid}?include=benefits,deductions,taxes`, { token: access_token });
      expect(shown.status).toBe(200);
      const adas = shown.body.employee_compensations.find((c) => c.employee_uuid === ada.uuid);
      expect(adas?.benefits).toEqual([{ name: 'Kaiser Medical', employee_deduction: 125.5, company_contribution: 300, imputed: false }]);
      expect(adas?.taxes.length).toBeGreaterThan(0);
      expect(shown.body.employee_compensations.find((c) => c.employee_uuid === grace.uuid)?.benefits).toEqual([]);
      expect(shown.body.totals.employee_benefits_deductions).toBe('125.50');
      expect(fake.violations).toEqual([]);
    });
  });

  describe('benefit writes', () => {
    it('creates and updates a company benefit, refusing a stale version with 409', async () => {
      const company = fake.addCompany();
      const { access_token } = await connect(company);
      const created = await call<GustoCompanyBenefit>('POST', `/v1/companies/${company.uuid}/company_benefits`, {
        token: access_token,
        body: { description: '401(k) plan', benefit_type: 105, catch_up_type: 'elective' },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ description: '401(k) plan', benefit_type: 105, active: true, company_uuid: company.uuid, version: expect.stringMatching(/^[0-9a-f]{32}$/) });

      const path = `/v1/company_benefits/${created.body.uuid}`;
      const updated = await call<GustoCompanyBenefit>('PUT', path, { token: access_token, body: { version: created.body.version, description: 'Safe harbor 401(k)' } });
      expect(updated.status).toBe(200);
      expect(updated.body.description).toBe('Safe harbor 401(k)');
      expect(updated.body.version).not.toBe(created.body.version);

      const stale = await call<{ errors: { category: string }[] }>('PUT', path, { token: access_token, body: { version: created.body.version, description: 'Lost update' } });
      expect(stale.status).toBe(409);
      expect(stale.body.errors[0].category).toBe('invalid_resource_version');
      expect((await call<GustoCompanyBenefit>('GET', path, { token: access_token })).body.description).toBe('Safe harbor 401(k)');

      const listed = await call<GustoCompanyBenefit[]>('GET', `/v1/companies/${company.uuid}/company_benefits?active=true&enrollment_count=true`, { token: access_token });
      expect(listed.body).toEqual([{ ...updated.body, enrollment_count: 0 }]);
      expect(fake.eventLog().map((e) => e.event_type)).toEqual(['company_benefit.created', 'company_benefit.updated']);
      expect(fake.violations).toEqual([]);
      expect(fake.offDocument).toContain('PUT /v1/company_benefits/{company_benefit_id} 409');
    });

    it('takes an employee benefit through create, read, update (stale → 409) and delete', async () => {
      const company = fake.addCompany();
      const [employee] = fake.addEmployees(company.uuid, 1);
      const companyBenefit = fake.addCompanyBenefit(company.uuid, { description: 'Dental', benefit_type: 2 });
      const { access_token } = await connect(company);

      const created = await call<GustoEmployeeBenefit>('POST', `/v1/employees/${employee.uuid}/employee_benefits`, {
        token: access_token,
        body: { company_benefit_uuid: companyBenefit.uuid, employee_deduction: '25.00', contribution: { type: 'tiered', value: [{ rate: '100', threshold: '3' }, { rate: '50', threshold: '5' }] } },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ employee_uuid: employee.uuid, company_benefit_uuid: companyBenefit.uuid, employee_deduction: '25.00', active: true });
      // Requests send tiers as an array; answers carry them as `{ tiers }` with each tier's delta.
      expect(created.body.contribution).toEqual({
        type: 'tiered',
        value: { tiers: [{ rate: '100', threshold: '3', threshold_delta: '3' }, { rate: '50', threshold: '5', threshold_delta: '2' }] },
      });

      const path = `/v1/employee_benefits/${created.body.uuid}`;
      expect((await call('GET', `/v1/employees/${employee.uuid}/employee_benefits`, { token: access_token })).body).toEqual([created.body]);
      expect((await call('GET', path, { token: access_token })).body).toEqual(created.body);
      const withEmployees = await call<{ employee_benefits: { employee_uuid: string }[] }>('GET', `/v1/company_benefits/${companyBenefit.uuid}?with_employee_benefits=true`, {
        token: access_token,
      });
      expect(withEmployees.body.employee_benefits.map((b) => b.employee_uuid)).toEqual([employee.uuid]);

      const updated = await call<GustoEmployeeBenefit>('PUT', path, { token: access_token, body: { version: created.body.version, employee_deduction: '40.00' } });
      expect([updated.status, updated.body.employee_deduction]).toEqual([200, '40.00']);
      expect(updated.body.version).not.toBe(created.body.version);
      expect((await call('PUT', path, { token: access_token, body: { version: created.body.version, employee_deduction: '1.00' } })).status).toBe(409);

      // A company benefit with someone enrolled cannot be deactivated.
      const deactivate = await call('PUT', `/v1/company_benefits/${companyBenefit.uuid}`, { token: access_token, body: { version: companyBenefit.version, active: false } });
      expect(deactivate.status).toBe(422);

      expect((await call('DELETE', path, { token: access_token })).status).toBe(204);
      expect((await call('GET', path, { token: access_token })).status).toBe(404);
      expect((await call('GET', `/v1/employees/${employee.uuid}/employee_benefits`, { token: access_token })).body).toEqual([]);

      const unknown = await call<{ errors: { error_key: string }[] }>('POST', `/v1/employees/${employee.uuid}/employee_benefits`, {
        token: access_token,
        body: { company_benefit_uuid: 'no-such-benefit' },
      });
      expect([unknown.status, unknown.body.errors[0].error_key]).toEqual([422, 'company_benefit_uuid']);
      expect(fake.eventLog().map((e) => e.event_type)).toEqual(['employee_benefit.created', 'employee_benefit.updated', 'employee_benefit.deleted']);
      expect(fake.violations).toEqual([]);
    });
  });

  describe('webhooks and events', () => {
    it('subscribes, sends the verification token, verifies, and delivers events signed with it', async () => {
      receiver = await new WebhookReceiver().start();
      const company = fake.addCompany();
      const [employee] = fake.addEmployees(company.uuid, 1);
      const system = await systemToken();

      const created = await call<GustoWebhookSubscription>('POST', '/v1/webhook_subscriptions', {
        token: system,
        body: { url: receiver.url, subscription_types: ['EmployeeBenefit', 'Employee'] },
      });
      expect(created.status).toBe(201);
      expect(created.body.status).toBe('pending');
      await fake.idle();
      expect(receiver.received).toHaveLength(1);
      const { verification_token } = JSON.parse(receiver.received[0].body) as { verification_token: string };

      // Not delivered to before it is verified.
      expect(await fake.deliver({ event_type: 'employee.updated', entity_type: 'Employee', entity_uuid: employee.uuid, resource_uuid: company.uuid })).toEqual([]);
      const wrong = await call('PUT', `/v1/webhook_subscriptions/${created.body.uuid}/verify`, { token: system, body: { verification_token: 'guess' } });
      expect(wrong.status).toBe(422);
      const verified = await call<GustoWebhookSubscription>('PUT', `/v1/webhook_subscriptions/${created.body.uuid}/verify`, { token: system, body: { verification_token } });
      expect([verified.status, verified.body.status]).toEqual([200, 'verified']);
      expect((await call<GustoWebhookSubscription[]>('GET', '/v1/webhook_subscriptions', { token: system })).body).toEqual([verified.body]);

      const [delivery] = await fake.deliver({ event_type: 'employee.updated', entity_type: 'Employee', entity_uuid: employee.uuid, resource_uuid: company.uuid });
      expect(delivery.status).toBe(200);
      const received = receiver.received[1];
      const expected = createHmac('sha256', verification_token).update(received.body).digest('hex');
      expect(received.headers['x-gusto-signature']).toBe(expected);
      expect(JSON.parse(received.body)).toMatchObject({ event_type: 'employee.updated', resource_type: 'Company', resource_uuid: company.uuid, entity_uuid: employee.uuid });

      // A write through the API is delivered too, and both are in the events list.
      const { access_token } = await connect(company);
      const companyBenefit = fake.addCompanyBenefit(company.uuid);
      await call('POST', `/v1/employees/${employee.uuid}/employee_benefits`, { token: access_token, body: { company_benefit_uuid: companyBenefit.uuid } });
      await fake.idle();
      expect(receiver.bodies<GustoEvent>().slice(2).map((e) => e.event_type)).toEqual(['employee_benefit.created']);
      const last = receiver.received[2];
      expect(last.headers['x-gusto-signature']).toBe(createHmac('sha256', verification_token).update(last.body).digest('hex'));

      const events = await call<GustoEvent[]>('GET', `/v1/events?resource_uuid=${company.uuid}&event_type=employee*`, { token: system });
      expect(events.body.map((e) => e.event_type)).toEqual(['employee.updated', 'employee.updated', 'employee_benefit.created']);
      const after = await call<GustoEvent[]>('GET', `/v1/events?starting_after_uuid=${events.body[0].uuid}&limit=1`, { token: system });
      expect(after.body.map((e) => e.uuid)).toEqual([events.body[1].uuid]);
      expect((await call<GustoEvent[]>('GET', '/v1/events?event_type=*.created&sort_order=desc', { token: system })).body.map((e) => e.event_type)).toEqual([
        'employee_benefit.created',
      ]);
      expect((await call('GET', '/v1/events?limit=500', { token: system })).status).toBe(422);
      expect(fake.violations).toEqual([]);
    });
  });

  describe('faults', () => {
    it('answers the next n matching requests with an injected 429, 500 or 422', async () => {
      const company = fake.addCompany();
      fake.addEmployees(company.uuid, 2);
      const { access_token } = await connect(company);
      const get = (path: string) => call('GET', path, { token: access_token });

      fake.failNext(1, { status: 429, retryAfterSeconds: 7 });
      const limited = await get(`/v1/companies/${company.uuid}`);
      expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '7']);
      expect((await get(`/v1/companies/${company.uuid}`)).status).toBe(200);

      fake.failNext(2, { status: 500 }, { operation: 'GET /v1/companies/{company_id}/employees' });
      expect((await get(`/v1/companies/${company.uuid}`)).status).toBe(200);
      const failed = await call<{ errors: { category: string }[] }>('GET', `/v1/companies/${company.uuid}/employees`, { token: access_token });
      expect([failed.status, failed.body.errors[0].category]).toEqual([500, 'internal_error']);
      expect((await get(`/v1/companies/${company.uuid}/employees`)).status).toBe(500);
      expect((await get(`/v1/companies/${company.uuid}/employees`)).status).toBe(200);

      const errors = [{ error_key: 'description', category: 'invalid_attribute_value', message: 'Description is taken' }];
      fake.failNext(1, { status: 422, errors }, { method: 'POST', path: /company_benefits$/ });
      const refused = await call<{ errors: unknown[] }>('POST', `/v1/companies/${company.uuid}/company_benefits`, { token: access_token, body: { description: 'Vision' } });
      expect([refused.status, refused.body]).toEqual([422, { errors }]);
      expect((await call('POST', `/v1/companies/${company.uuid}/company_benefits`, { token: access_token, body: { description: 'Vision' } })).status).toBe(201);

      expect(fake.requests.filter((r) => r.status >= 400).map((r) => `${r.operation} ${r.status}`)).toEqual([
        'GET /v1/companies/{company_id} 429',
        'GET /v1/companies/{company_id}/employees 500',
        'GET /v1/companies/{company_id}/employees 500',
        'POST /v1/companies/{company_id}/company_benefits 422',
      ]);
      expect(fake.violations).toEqual([]);
    });

    it('rate-limits per OAuth grant over a rolling minute, with Retry-After', async () => {
      fake.rateLimit = { perMinute: 5 };
      const company = fake.addCompany();
      const tokens = await connect(company);
      const other = await connect(company);
      const get = (token: string) => call('GET', `/v1/companies/${company.uuid}`, { token });

      for (let i = 0; i < 5; i++) expect((await get(tokens.access_token)).status).toBe(200);
      const limited = await get(tokens.access_token);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
      expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
      // Another grant has its own window; a refreshed token stays in its grant's.
      expect((await get(other.access_token)).status).toBe(200);
      const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      expect((await get(refreshed.body.access_token)).status).toBe(429);

      fake.advanceTime(61);
      expect((await get(refreshed.body.access_token)).status).toBe(200);
      expect(fake.violations).toEqual([]);
      expect(fake.offDocument).toContain('GET /v1/companies/{company_id} 429');
    });
  });

  describe('the contract check', () => {
    it('records, and answers 400 to, a request the document does not allow', async () => {
      const company = fake.addCompany();
      const { access_token } = await connect(company);
      const missing = await call<{ errors: { message: string }[] }>('POST', `/v1/companies/${company.uuid}/company_benefits`, { token: access_token, body: { benefit_type: 105 } });
      expect(missing.status).toBe(400);
      expect(missing.body.errors[0].message).toMatch(/body must have required property 'description'/);
      expect((await call('GET', `/v1/companies/${company.uuid}/company_benefits`, { token: access_token })).body).toEqual([]);

      const oldVersion = await call('GET', `/v1/companies/${company.uuid}`, { token: access_token, headers: { 'x-gusto-api-version': '2024-04-01' } });
      expect(oldVersion.status).toBe(400);
      // The document's token endpoint takes JSON only.
      const form = await call('POST', '/oauth/token', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `client_id=${fake.clientId}&client_secret=${fake.clientSecret}&grant_type=system_access`,
      });
      expect(form.status).toBe(400);
      // An answer the document does not allow for the operation is caught too: no 422 on this read.
      fake.failNext(1, { status: 422 });
      expect((await call('GET', `/v1/companies/${company.uuid}`, { token: access_token })).status).toBe(422);

      expect(fake.violations).toEqual([
        expect.stringMatching(/^POST \/v1\/companies\/\{company_id\}\/company_benefits request: body must have required property 'description'/),
        expect.stringMatching(/^GET \/v1\/companies\/\{company_id\} request: header parameter X-Gusto-API-Version must be equal to one of the allowed values/),
        'POST /oauth/token request: POST /oauth/token takes no application/x-www-form-urlencoded body (documented: application/json)',
        'GET /v1/companies/{company_id} 422: GET /v1/companies/{company_id} does not document status 422 (documented: 200, 404)',
      ]);
      expect(fake.apiVersions).toEqual([GUSTO_API_VERSION, '2024-04-01']);
    });
  });
});
