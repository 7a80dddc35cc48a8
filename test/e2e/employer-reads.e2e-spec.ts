import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ManualClock } from '../../src/domain/shared/clock';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, connectEmployer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

const ALL_PRODUCTS = ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement'];
const WHOLE_HISTORY = 'start_date=2000-01-01&end_date=2100-12-31';
const UNKNOWN_PERSON = randomUUID();
const UNKNOWN_PAYMENT = randomUUID();

interface SandboxEmployer {
  token: string;
  connectionId: string;
  entityId: string;
}

/** Every read of this suite: method, path, body and the product it needs. */
const READS: { name: string; method: 'GET' | 'POST'; path: string; body?: unknown; product: string }[] = [
  { name: 'company', method: 'GET', path: '/employer/company', product: 'company' },
  { name: 'directory', method: 'GET', path: '/employer/directory', product: 'directory' },
  {
    name: 'individual',
    method: 'POST',
    path: '/employer/individual',
    body: { requests: [{ individual_id: randomUUID() }] },
    product: 'individual',
  },
  {
    name: 'employment',
    method: 'POST',
    path: '/employer/employment',
    body: { requests: [{ individual_id: randomUUID() }] },
    product: 'employment',
  },
  { name: 'payment', method: 'GET', path: `/employer/payment?${WHOLE_HISTORY}`, product: 'payment' },
  {
    name: 'pay-statement',
    method: 'POST',
    path: '/employer/pay-statement',
    body: { requests: [{ payment_id: randomUUID() }] },
    product: 'pay_statement',
  },
  { name: 'pay-groups', method: 'GET', path: '/employer/pay-groups', product: 'payment' },
  { name: 'pay-group', method: 'GET', path: `/employer/pay-groups/${randomUUID()}`, product: 'payment' },
];

describeWithPostgres('employer reads', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let employer: SandboxEmployer;

  const clock = new ManualClock('2026-06-01T12:00:00Z');

  beforeAll(async () => {
    service = await startTestService({ clock });
    app = await createApplication(service);
    employer = await sandboxEmployer();
  });
  afterAll(() => service?.close());

  async function sandboxEmployer(products = ALL_PRODUCTS, employeeSize = 25): Promise<SandboxEmployer> {
    const res = await service.request(
      '/sandbox/connections',
      json({ provider_id: 'sandbox_automated', employee_size: employeeSize, products }, basic(app)),
    );
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  function call(
    token: string,
    read: { method: 'GET' | 'POST'; path: string; body?: unknown },
    query = '',
    headers: Record<string, string> = bearer(token),
  ) {
    const path = query === '' ? read.path : `${read.path}${read.path.includes('?') ? '&' : '?'}${query}`;
    return read.method === 'GET' ? service.request(path, { headers }) : service.request(path, json(read.body, headers));
  }

  const get = (path: string, token = employer.token) => service.request(path, { headers: bearer(token) });
  const post = (path: string, body: unknown, token = employer.token) => service.request(path, json(body, bearer(token)));

  /** Runs a data sync over HTTP and waits for it to complete. */
  async function syncNow(token: string): Promise<void> {
    const started = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
    expect([201, 202]).toContain(started.status);
    await expectEventually(
      async () => {
        const job = await get(`/jobs/automated/${started.body.job_id}`, token);
        expect(job.body.status).toBe('complete');
      },
      { timeoutMs: 60_000 },
    );
  }

  describe('access', () => {
    it.each(READS)('$name: 401 without a token, 400 without the version header', async (read) => {
      const anonymous = await call(employer.token, read, '', { 'service-api-version': '2020-09-17' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toMatchObject({ code: 401, name: 'authentication_error' });
      const unversioned = await call(employer.token, read, '', { authorization: `Bearer ${employer.token}` });
      expect(unversioned.status).toBe(400);
      expect(unversioned.body).toMatchObject({ name: 'invalid_request_error', service_code: 'missing_version_header' });
    });

    it.each(READS)('$name: 403 product_not_granted without its product', async (read) => {
      const others = ALL_PRODUCTS.filter((p) => p !== read.product);
      const limited = await sandboxEmployer(others, 3);
      const res = await call(limited.token, read);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 403, name: 'forbidden_error', service_code: 'product_not_granted' });
    });

    it.each(READS)('$name: scoped to one entity of the token’s connection', async (read) => {
      const twoEntities = await connectEmployer(service, app, { entityNames: ['A', 'B'] });
      const stranger = await sandboxEmployer(ALL_PRODUCTS, 3);
      const unscoped = await call(twoEntities.accessToken, read);
      expect(unscoped.status).toBe(400);
      expect(unscoped.body.message).toMatch(/entity_ids is required/);
      const foreign = await call(twoEntities.accessToken, read, `entity_ids=${stranger.entityId}`);
      expect(foreign.status).toBe(403);
      expect(foreign.body).toMatchObject({ name: 'forbidden_error', service_code: 'entity_not_authorized' });
      const own = await call(twoEntities.accessToken, read, `entity_ids[]=${twoEntities.entityIds[1]}`);
      expect(own.status).toBe(read.name === 'pay-group' ? 404 : 200);
    });
  });

  describe('live from the provider, before the first sync', () => {
    it('reads the company', async () => {
      const res = await get('/employer/company');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: expect.any(String),
        legal_name: expect.any(String),
        ein: expect.any(String),
        entity: { type: expect.any(String) },
        departments: expect.any(Array),
        locations: expect.any(Array),
        accounts: expect.any(Array),
      });
      expect(res.body.primary_phone_number).toMatch(/^\+\d{11}/);
    });

    it('pages the directory with the total in paging.count', async () => {
      const first = await get('/employer/directory?limit=10');
      expect(first.status).toBe(200);
      expect(first.body.paging).toEqual({ count: 25, offset: 0 });
      expect(first.body.individuals).toHaveLength(10);
      expect(Object.keys(first.body.individuals[0]).sort()).toEqual(
        ['department', 'first_name', 'id', 'is_active', 'last_name', 'manager', 'middle_name'].sort(),
      );
      const last = await get('/employer/directory?limit=10&offset=20');
      expect(last.body.paging).toEqual({ count: 25, offset: 20 });
      expect(last.body.individuals).toHaveLength(5);
      const all = await get('/employer/directory');
      expect(all.body.individuals).toHaveLength(25);
      expect(all.body.individuals.slice(20).map((i: { id: string }) => i.id)).toEqual(
        last.body.individuals.map((i: { id: string }) => i.id),
      );
      const beyond = await get('/employer/directory?offset=500');
      expect(beyond.body).toEqual({ paging: { count: 25, offset: 500 }, individuals: [] });
    });

    it('answers a page over 10,000 with 422 page_size_limit_exceeded, as the public document does', async () => {
      for (const limit of ['10001', '1000000']) {
        const res = await get(`/employer/directory?limit=${limit}`);
        expect({ status: res.status, body: res.body }).toMatchObject({
          status: 422,
          body: { code: 422, name: 'unprocessable_request_error', service_code: 'page_size_limit_exceeded', message: expect.stringContaining('maximum of 10000') },
        });
      }
      expect((await get('/employer/directory?limit=10000')).status).toBe(200);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=1.5', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=1e30', 'offset'],
      ['limit=5&limit=6', 'limit'],
      ['page=2', 'page: unknown field'],
    ])('refuses directory?%s with 400 naming %s', async (query, field) => {
      const res = await get(`/employer/directory?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error', service_code: 'invalid_request' });
      expect(res.body.message).toContain(field);
    });

    it('reads individuals per item: 200, 404 for an unknown id, 400 for a malformed one; SSN only when included', async () => {
      const ids = await directoryIds();
      const unknown = randomUUID();
      const res = await post('/employer/individual', {
        requests: [{ individual_id: ids[0] }, { individual_id: unknown }, { individual_id: 'not-a-uuid' }, { individual_id: ids[1] }],
      });
      expect(res.status).toBe(200);
      expect(res.body.responses.map((r: { individual_id: string; code: number }) => [r.individual_id, r.code])).toEqual([
        [ids[0], 200],
        [unknown, 404],
        ['not-a-uuid', 400],
        [ids[1], 200],
      ]);
      const [found, missing, malformed] = res.body.responses;
      expect(found.body).toMatchObject({
        id: ids[0],
        first_name: expect.any(String),
        dob: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        ssn: null,
      });
      expect(missing.body).toMatchObject({ code: 404, name: 'not_found_error', service_code: 'individual_not_found' });
      expect(malformed.body).toMatchObject({ code: 400, name: 'invalid_request_error', message: 'individual_id must be a UUID' });

      const withSsn = await post('/employer/individual', { requests: [{ individual_id: ids[0] }], options: { include: ['ssn'] } });
      expect(withSsn.body.responses[0].body.ssn).toMatch(/^\d{3}-?\d{2}-?\d{4}$/);
      const { ssn: _ssn, ...rest } = withSsn.body.responses[0].body;
      const { ssn: _none, ...restWithout } = found.body;
      expect(rest).toEqual(restWithout);
    });

    it.each([
      [{}, 'requests'],
      [{ requests: [] }, 'requests'],
      [{ requests: 'all' }, 'requests'],
      [{ requests: [{ individual_id: 7 }] }, 'requests[0].individual_id'],
      [{ requests: [{}] }, 'requests[0].individual_id'],
      [{ requests: [{ individual_id: randomUUID(), extra: 1 }] }, 'requests[0].extra: unknown field'],
      [{ requests: [{ individual_id: randomUUID() }], options: { include: ['dob'] } }, 'include'],
      [{ requests: [{ individual_id: randomUUID() }], options: 'ssn' }, 'options'],
      [{ requests: Array.from({ length: 10_001 }, () => ({ individual_id: randomUUID() })) }, 'requests'],
    ])('refuses an individual body %# with 400 naming the field', async (body, field) => {
      const res = await post('/employer/individual', body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_request' });
      expect(res.body.message).toContain(field);
    });

    it('reads employments per item, in request order, duplicates answered each time', async () => {
      const ids = await directoryIds();
      const unknown = randomUUID();
      const res = await post('/employer/employment', {
        requests: [{ individual_id: ids[2] }, { individual_id: unknown }, { individual_id: ids[2].toUpperCase() }, { individual_id: '12' }],
      });
      expect(res.status).toBe(200);
      expect(res.body.responses.map((r: { code: number }) => r.code)).toEqual([200, 404, 200, 400]);
      expect(res.body.responses[0].body).toMatchObject({
        id: ids[2],
        title: expect.any(String),
        employment: { type: expect.any(String), subtype: expect.any(String) },
        income: { unit: expect.stringMatching(/^(yearly|hourly)$/), amount: expect.any(Number) },
        is_active: expect.any(Boolean),
      });
      expect(res.body.responses[2]).toEqual({ individual_id: ids[2].toUpperCase(), code: 200, body: res.body.responses[0].body });
      expect(res.body.responses[1].body).toMatchObject({ code: 404, name: 'not_found_error' });
      const bad = await post('/employer/employment', { requests: [{ individual_id: ids[0] }], options: { include: ['ssn'] } });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain('options: unknown field');
    });

    it('lists payments by pay date, oldest first, as a bare array', async () => {
      const res = await get(`/employer/payment?${WHOLE_HISTORY}`);
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body.length).toBeGreaterThan(5);
      const dates = res.body.map((p: { pay_date: string }) => p.pay_date);
      expect([...dates].sort()).toEqual(dates);
      expect(res.body[0]).toMatchObject({
        id: expect.any(String),
        pay_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        pay_period: { start_date: expect.any(String), end_date: expect.any(String) },
        gross_pay: { amount: expect.any(Number), currency: expect.any(String) },
        individual_ids: expect.any(Array),
      });
      const [, second, third] = dates;
      const window = await get(`/employer/payment?start_date=${second}&end_date=${third}`);
      expect(window.body.map((p: { pay_date: string }) => p.pay_date)).toEqual(dates.filter((d: string) => d >= second && d <= third));
      const empty = await get('/employer/payment?start_date=1990-01-01&end_date=1990-12-31');
      expect(empty.body).toEqual([]);
    });

    it.each([
      ['', 'start_date is required'],
      ['start_date=2026-01-01', 'end_date is required'],
      ['start_date=2026-13-01&end_date=2026-12-31', 'start_date must be a date'],
      ['start_date=2026-02-30&end_date=2026-12-31', 'start_date must be a date'],
      ['start_date=2026-01-01&end_date=01/31/2026', 'end_date must be a date'],
      ['start_date=2026-02-01&end_date=2026-01-31', 'must not be after end_date'],
    ])('refuses payment?%s with 400', async (query, message) => {
      const res = await get(`/employer/payment?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_request' });
      expect(res.body.message).toContain(message);
    });

    it('reads pay statements per payment with paging, 404 and 400 items', async () => {
      const [payment] = (await get(`/employer/payment?${WHOLE_HISTORY}`)).body;
      const total = payment.individual_ids.length;
      expect(total).toBeGreaterThan(3);
      const unknown = randomUUID();
      const res = await post('/employer/pay-statement', {
        requests: [
          { payment_id: payment.id, limit: 2, offset: 1 },
          { payment_id: unknown },
          { payment_id: 'payment-1' },
          { payment_id: payment.id },
        ],
      });
      expect(res.status).toBe(200);
      const [page, missing, malformed, all] = res.body.responses;
      expect(page).toMatchObject({ payment_id: payment.id, code: 200, body: { paging: { count: total, offset: 1 } } });
      expect(page.body.pay_statements).toHaveLength(2);
      expect(all.body.paging).toEqual({ count: total, offset: 0 });
      expect(all.body.pay_statements).toHaveLength(Math.min(total, 100));
      expect(all.body.pay_statements.slice(1, 3)).toEqual(page.body.pay_statements);
      const individuals = all.body.pay_statements.map((s: { individual_id: string }) => s.individual_id);
      expect([...individuals].sort()).toEqual(individuals);
      expect(missing).toMatchObject({
        payment_id: unknown,
        code: 404,
        body: { code: 404, name: 'not_found_error', service_code: 'payment_not_found' },
      });
      expect(malformed).toMatchObject({ payment_id: 'payment-1', code: 400, body: { code: 400, name: 'invalid_request_error' } });
      const statement = all.body.pay_statements[0];
      expect(['regular_payroll', 'off_cycle_payroll', 'one_time_payment']).toContain(statement.type);
      expect(statement).toMatchObject({
        gross_pay: { amount: expect.any(Number) },
        net_pay: { amount: expect.any(Number) },
        earnings: expect.any(Array),
        taxes: expect.any(Array),
        employee_deductions: expect.any(Array),
        employer_contributions: expect.any(Array),
      });
    });

    it.each([
      [{ requests: [] }, 'requests'],
      [{ requests: Array.from({ length: 11 }, () => ({ payment_id: randomUUID() })) }, 'requests'],
      [{ requests: [{ payment_id: randomUUID(), limit: 5001 }] }, 'requests[0].limit'],
      [{ requests: [{ payment_id: randomUUID(), limit: 0 }] }, 'requests[0].limit'],
      [{ requests: [{ payment_id: randomUUID(), offset: -1 }] }, 'requests[0].offset'],
      [{ requests: [{ payment_id: randomUUID(), offset: 1e30 }] }, 'requests[0].offset'],
      [{ requests: [{ payment_id: randomUUID(), offset: '1' }] }, 'requests[0].offset'],
      [{ requests: [{ payment_id: null }] }, 'requests[0].payment_id'],
    ])('refuses a pay-statement body %# with 400 naming the field', async (body, field) => {
      const res = await post('/employer/pay-statement', body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_request' });
      expect(res.body.message).toContain(field);
    });

    it('lists pay groups, filters them, and reads one with its individuals', async () => {
      const list = await get('/employer/pay-groups');
      expect(list.status).toBe(200);
      expect(list.body.length).toBeGreaterThan(0);
      for (const group of list.body) expect(Object.keys(group).sort()).toEqual(['id', 'name', 'pay_frequencies']);
      const groups = await Promise.all(list.body.map((g: { id: string }) => get(`/employer/pay-groups/${g.id}`)));
      groups.forEach((one, n) => {
        expect(one.status).toBe(200);
        expect(one.body).toEqual({ ...list.body[n], individual_ids: expect.any(Array) });
      });
      const one = groups.find((g) => g.body.individual_ids.length > 0)!;
      const first = list.body.find((g: { id: string }) => g.id === one.body.id);

      const member = one.body.individual_ids[0];
      const ofMember = await get(`/employer/pay-groups?individual_id=${member}`);
      expect(ofMember.body.map((g: { id: string }) => g.id)).toContain(first.id);
      const ofStranger = await get(`/employer/pay-groups?individual_id=${randomUUID()}`);
      expect(ofStranger.body).toEqual([]);
      const frequency = first.pay_frequencies[0];
      const byFrequency = await get(`/employer/pay-groups?pay_frequencies[]=${frequency}`);
      expect(byFrequency.body.map((g: { id: string }) => g.id)).toContain(first.id);
      for (const group of byFrequency.body) expect(group.pay_frequencies).toContain(frequency);
      const other = frequency === 'annually' ? 'daily' : 'annually';
      const none = await get(`/employer/pay-groups?pay_frequencies=${other}`);
      expect(none.body.every((g: { pay_frequencies: string[] }) => g.pay_frequencies.includes(other))).toBe(true);
    });

    it('answers 404 for an unknown pay group and 400 for bad pay-group input', async () => {
      const unknown = await get(`/employer/pay-groups/${randomUUID()}`);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ code: 404, name: 'not_found_error' });
      const malformed = await get('/employer/pay-groups/group-1');
      expect(malformed.status).toBe(400);
      expect(malformed.body.message).toContain('pay_group_id must be a UUID');
      const badFilter = await get('/employer/pay-groups?individual_id=someone');
      expect(badFilter.status).toBe(400);
      expect(badFilter.body.message).toContain('individual_id');
      const badFrequency = await get('/employer/pay-groups?pay_frequencies[]=fortnightly');
      expect(badFrequency.status).toBe(400);
      expect(badFrequency.body.message).toContain('pay_frequencies[]');
    });
  });

  describe('from the latest completed sync', () => {
    it('serves the same records, in the same shapes and order, once a sync has completed', async () => {
      const fresh = await sandboxEmployer(ALL_PRODUCTS, 12);
      const before = await everyRead(fresh.token);
      await syncNow(fresh.token);
      const after = await everyRead(fresh.token);
      // Only the per-item 404s differ: a synced read says when the data was synced and what shows newer records.
      const { reads, reworded } = asSynced(before, clock.now().toISOString());
      expect(reworded).toEqual({ payment: 1, individual: 1, employment: 1 });
      expect(after).toEqual(reads);
    });

    it('reads the synced copy, not the provider, after the sync', async () => {
      const fresh = await sandboxEmployer(ALL_PRODUCTS, 5);
      await syncNow(fresh.token);
      // Change the synced copy only: a read that still went to the provider would not see it.
      await service.app.get(DataSource).query(
        `UPDATE employer_data SET body = jsonb_set(body, '{legal_name}', '"Synced Copy Inc."')
         WHERE entity_id = $1 AND kind = 'company'`,
        [fresh.entityId],
      );
      const company = await get('/employer/company', fresh.token);
      expect(company.body.legal_name).toBe('Synced Copy Inc.');
      const ids = (await get('/employer/directory', fresh.token)).body.individuals.map((i: { id: string }) => i.id);
      const individuals = await post(
        '/employer/individual',
        { requests: [{ individual_id: ids[0] }, { individual_id: randomUUID() }] },
        fresh.token,
      );
      expect(individuals.body.responses.map((r: { code: number }) => r.code)).toEqual([200, 404]);
      expect(individuals.body.responses[0].body.ssn).toBeNull();
      const withSsn = await post(
        '/employer/individual',
        { requests: [{ individual_id: ids[0] }], options: { include: ['ssn'] } },
        fresh.token,
      );
      expect(withSsn.body.responses[0].body.ssn).toEqual(expect.any(String));
    });
  });

  /**
   * Live reads' per-item 404 messages as a synced read words them (sync completed at `syncedAt`),
   * with how many of each kind were reworded.
   */
  function asSynced(reads: unknown, syncedAt: string) {
    const reworded = { payment: 0, individual: 0, employment: 0 };
    const since = `in this entity's data as of its last sync (${syncedAt}).`;
    const rules: [RegExp, keyof typeof reworded, (id: string) => string][] = [
      [/^No payment (\S+) for this entity$/, 'payment', (id) => `No payment ${id} ${since} A pay run made since shows after the next sync (POST /jobs/automated).`],
      [/^No individual (\S+) for this entity$/, 'individual', (id) => `No individual ${id} ${since} Someone added since shows after the next sync (POST /jobs/automated).`],
      [
        /^No employment for individual (\S+) in this entity$/,
        'employment',
        (id) => `No employment for individual ${id} ${since} Someone added since shows after the next sync (POST /jobs/automated).`,
      ],
    ];
    const reword = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reword);
      if (value === null || typeof value !== 'object') return value;
      const object = Object.fromEntries(Object.entries(value).map(([key, v]) => [key, reword(v)]));
      if (object.code !== 404 || typeof object.message !== 'string') return object;
      for (const [pattern, kind, synced] of rules) {
        const match = pattern.exec(object.message);
        if (!match) continue;
        reworded[kind]++;
        return { ...object, message: synced(match[1]) };
      }
      return object;
    };
    return { reads: reword(reads), reworded };
  }

  async function directoryIds(token = employer.token): Promise<string[]> {
    const res = await get('/employer/directory', token);
    return res.body.individuals.map((i: { id: string }) => i.id);
  }

  /** Every read of an employer, with paging and per-item answers, for comparing two sources. */
  async function everyRead(token: string) {
    const directory = await get('/employer/directory?limit=5&offset=3', token);
    const ids = await directoryIds(token);
    const people = [ids[0], UNKNOWN_PERSON, 'x', ids[ids.length - 1]].map((individual_id) => ({ individual_id }));
    const payments = await get(`/employer/payment?${WHOLE_HISTORY}`, token);
    const paymentIds = payments.body.map((p: { id: string }) => p.id);
    const groups = await get('/employer/pay-groups', token);
    return {
      company: (await get('/employer/company', token)).body,
      directory: directory.body,
      fullDirectory: (await get('/employer/directory?limit=10000', token)).body,
      individuals: (await post('/employer/individual', { requests: people, options: { include: ['ssn'] } }, token)).body,
      employments: (await post('/employer/employment', { requests: people }, token)).body,
      payments: payments.body,
      someMonth: (await get(`/employer/payment?start_date=${payments.body[2].pay_date}&end_date=${payments.body[4].pay_date}`, token)).body,
      statements: (
        await post(
          '/employer/pay-statement',
          {
            requests: [
              { payment_id: paymentIds[0] },
              { payment_id: paymentIds[1], limit: 3, offset: 2 },
              { payment_id: paymentIds.at(-1) },
              { payment_id: UNKNOWN_PAYMENT },
            ],
          },
          token,
        )
      ).body,
      groups: groups.body,
      group: (await get(`/employer/pay-groups/${groups.body[0].id}`, token)).body,
      groupsOfOne: (await get(`/employer/pay-groups?individual_id=${ids[0]}`, token)).body,
      groupsByFrequency: (await get(`/employer/pay-groups?pay_frequencies[]=${groups.body[0].pay_frequencies[0]}`, token)).body,
      items: (await get('/employer/pay-statement-item', token)).body,
    };
  }
});
