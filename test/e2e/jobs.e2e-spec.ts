import { DataSource } from 'typeorm';
import { ManualClock } from '../../src/domain/shared/clock';
import { EmployerRef, PROVIDER_PORT, ProviderPort } from '../../src/domain/providers/provider-port';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NOW = '2026-06-01T12:10:00.000Z';

/** The value with object keys sorted, recursively. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
  }
  return value;
}

type Credentials = Awaited<ReturnType<typeof createApplication>>;

async function sandboxConnection(service: TestService, app: Credentials, body: Record<string, unknown> = {}) {
  const res = await service.request(
    '/sandbox/connections',
    json({ provider_id: 'sandbox_automated', employee_size: 5, ...body }, basic(app)),
  );
  if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
  return res.body as { access_token: string; connection_id: string; entity_id: string; provider_id: string; authentication_type: string };
}

const enqueue = (service: TestService, token: string, body: unknown = { type: 'data_sync_all' }, headers: Record<string, string> = bearer(token)) =>
  service.request('/jobs/automated', json(body, headers));

const getJob = (service: TestService, token: string, id: string) => service.request(`/jobs/automated/${id}`, { headers: bearer(token) });

async function untilFinished(service: TestService, token: string, id: string) {
  return expectEventually(async () => {
    const res = await getJob(service, token, id);
    expect(res.status).toBe(200);
    expect(res.body.status).not.toMatch(/^(pending|in_progress)$/);
    return res.body;
  }, { timeoutMs: 30_000 });
}

describeWithPostgres('automated jobs: /jobs/automated', () => {
  let service: TestService;
  let app: Credentials;
  const clock = new ManualClock(NOW);

  beforeAll(async () => {
    service = await startTestService({ clock, env: { SANDBOX_REFRESHES_PER_HOUR: '3' } });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  it('enqueues a data sync (201) that a worker completes, and the data equals the provider snapshot', async () => {
    const connection = await sandboxConnection(service, app);
    const created = await enqueue(service, connection.access_token);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      job_id: expect.stringMatching(UUID),
      job_url: `${service.url}/jobs/automated/${created.body.job_id}`,
      allowed_refreshes: 3,
      remaining_refreshes: 2,
    });

    const job = await untilFinished(service, connection.access_token, created.body.job_id);
    expect(job).toEqual({
      job_id: created.body.job_id,
      job_url: created.body.job_url,
      type: 'data_sync_all',
      status: 'complete',
      params: null,
      created_at: NOW,
      scheduled_at: NOW,
      started_at: NOW,
      completed_at: NOW,
    });

    // What was stored is what the provider exports, record for record.
    const provider = service.app.get<ProviderPort>(PROVIDER_PORT);
    const ref: EmployerRef = {
      connectionId: connection.connection_id,
      entityId: connection.entity_id,
      entityName: 'Sandbox Payroll (Automated) sandbox employer',
      providerId: 'sandbox_automated',
      authenticationType: connection.authentication_type,
      employeeSize: 5,
    };
    const exported = new Map<string, unknown[]>();
    for await (const batch of provider.snapshot(ref)) {
      const records = batch.kind === 'pay_statement' ? batch.records.map((r) => r.statement) : batch.records;
      exported.set(batch.kind, [...(exported.get(batch.kind) ?? []), ...records]);
    }
    const dataSource = service.app.get(DataSource);
    const stored = async (kind: string) =>
      (
        await dataSource.query(
          `SELECT d.body FROM employer_data d JOIN employer_syncs s ON s.entity_id = d.entity_id AND s.generation = d.generation
           WHERE d.entity_id = $1 AND d.kind = $2`,
          [connection.entity_id, kind],
        )
      ).map((r: { body: unknown }) => r.body);
    // jsonb keeps its own key order: compare records, in a canonical order.
    const key = (r: unknown) => JSON.stringify(canonical(r));
    const records = (list: unknown[]) => [...list].sort((a, b) => (key(a) < key(b) ? -1 : 1));
    for (const kind of ['company', 'individual', 'employment', 'pay_group', 'payment', 'pay_statement']) {
      expect(records(await stored(kind))).toEqual(records(exported.get(kind) ?? []));
    }
    expect((await stored('individual')).length).toBe(5);
    expect((await stored('pay_statement')).length).toBeGreaterThan(0);
  });

  it('lists jobs newest first with paging and the refresh quota', async () => {
    const connection = await sandboxConnection(service, app);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await enqueue(service, connection.access_token);
      expect(created.status).toBe(201);
      ids.push(created.body.job_id);
      await untilFinished(service, connection.access_token, created.body.job_id);
    }
    const all = await service.request('/jobs/automated', { headers: bearer(connection.access_token) });
    expect(all.status).toBe(200);
    expect(all.body.paging).toEqual({ count: 3, offset: 0 });
    expect(all.body.data.map((j: { job_id: string }) => j.job_id)).toEqual([...ids].reverse());
    expect(all.body.data[0]).toMatchObject({ type: 'data_sync_all', status: 'complete', job_url: `${service.url}/jobs/automated/${ids[2]}` });
    expect(all.body.meta).toEqual({ quotas: { data_sync_all: { allowed_refreshes: 3, remaining_refreshes: 0 } } });

    const page = await service.request('/jobs/automated?limit=2&offset=1', { headers: bearer(connection.access_token) });
    expect(page.body.paging).toEqual({ count: 3, offset: 1 });
    expect(page.body.data.map((j: { job_id: string }) => j.job_id)).toEqual([ids[1], ids[0]]);

    const past = await service.request('/jobs/automated?offset=3', { headers: bearer(connection.access_token) });
    expect(past.body).toMatchObject({ paging: { count: 3, offset: 3 }, data: [] });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=x', 'offset'],
    // Past PostgreSQL's bigint OFFSET: a 400, not a failed query.
    ['offset=1e20', 'offset must be at most 2147483647'],
    ['offset=99999999999999999999999', 'offset must be at most 2147483647'],
    ['page=2', 'page'],
  ])('refuses the listing query %s, naming %s', async (query, field) => {
    const connection = await sandboxConnection(service, app);
    const res = await service.request(`/jobs/automated?${query}`, { headers: bearer(connection.access_token) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error', service_code: 'invalid_request' });
    expect(res.body.message).toContain(field);
  });

  it('answers 429 with retry_at over the hourly quota, and the window resets when the clock moves', async () => {
    const connection = await sandboxConnection(service, app);
    for (let remaining = 2; remaining >= 0; remaining--) {
      const created = await enqueue(service, connection.access_token);
      expect(created.body.remaining_refreshes).toBe(remaining);
      await untilFinished(service, connection.access_token, created.body.job_id);
    }
    const refused = await enqueue(service, connection.access_token);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: 429,
      name: 'rate_limit_error',
      service_code: 'refresh_quota_exceeded',
      retry_at: '2026-06-01T13:00:00.000Z',
    });
    expect(refused.body.message).toMatch(/3 data syncs/);
    expect(refused.headers.get('retry-after')).toBe(String(50 * 60));
    const listed = await service.request('/jobs/automated', { headers: bearer(connection.access_token) });
    expect(listed.body.paging.count).toBe(3);

    clock.set('2026-06-01T13:00:00Z');
    try {
      const next = await enqueue(service, connection.access_token);
      expect(next.status).toBe(201);
      expect(next.body).toMatchObject({ allowed_refreshes: 3, remaining_refreshes: 2 });
      await untilFinished(service, connection.access_token, next.body.job_id);
    } finally {
      clock.set(NOW);
    }
  });

  it('refuses a connection to an Assisted provider with 400', async () => {
    const connection = await sandboxConnection(service, app, { provider_id: 'sandbox_assisted' });
    const res = await enqueue(service, connection.access_token);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error' });
    expect(res.body.message).toMatch(/Assisted provider/);
    const listed = await service.request('/jobs/automated', { headers: bearer(connection.access_token) });
    expect(listed.body.paging.count).toBe(0);
  });

  it.each([
    [{ type: 'w4_form_employee_sync' }, 'type must be one of: data_sync_all'],
    [{}, 'type must be one of: data_sync_all'],
    [{ type: 'data_sync_all', params: { individual_id: 'x' } }, 'params: unknown field'],
  ])('refuses the body %j with 400 naming the field', async (body, message) => {
    const connection = await sandboxConnection(service, app);
    const res = await enqueue(service, connection.access_token, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error', service_code: 'invalid_request' });
    expect(res.body.message).toContain(message);
  });

  it('refuses a body that is not JSON, a missing version header and a missing token', async () => {
    const connection = await sandboxConnection(service, app);
    const broken = await service.request('/jobs/automated', json('{"type":', bearer(connection.access_token)));
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ name: 'bad_request_error', service_code: 'malformed_request' });

    const noVersion = await enqueue(service, connection.access_token, { type: 'data_sync_all' }, { authorization: `Bearer ${connection.access_token}` });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.service_code).toBe('missing_version_header');

    const noToken = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, { 'service-api-version': '2020-09-17' }));
    expect(noToken.status).toBe(401);
    expect(noToken.body.name).toBe('authentication_error');
    const listNoToken = await service.request('/jobs/automated', { headers: { 'service-api-version': '2020-09-17' } });
    expect(listNoToken.status).toBe(401);
  });

  it("finds only the token's connection's jobs: another's is 404, a malformed id 400", async () => {
    const mine = await sandboxConnection(service, app);
    const theirs = await sandboxConnection(service, app);
    const created = await enqueue(service, theirs.access_token);
    expect(created.status).toBe(201);

    const foreign = await getJob(service, mine.access_token, created.body.job_id);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 404, name: 'not_found_error', service_code: 'job_not_found' });
    const unknown = await getJob(service, mine.access_token, '0b8f7c7e-3f7a-4d55-9a53-5bb4c8f0a8d1');
    expect(unknown.status).toBe(404);
    const malformed = await getJob(service, mine.access_token, 'not-a-job-id');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_request' });
    expect(malformed.body.message).toContain('job_id must be a UUID');
    const listed = await service.request('/jobs/automated', { headers: bearer(mine.access_token) });
    expect(listed.body.paging.count).toBe(0);

    await untilFinished(service, theirs.access_token, created.body.job_id);
  });
});

describeWithPostgres('automated jobs without a worker in the process', () => {
  let service: TestService;
  let app: Credentials;

  beforeAll(async () => {
    service = await startTestService({ env: { WORKERS_ENABLED: 'false' } });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  it('never runs the sync inside the request, and answers a second request with the queued job (202)', async () => {
    const connection = await sandboxConnection(service, app);
    const first = await enqueue(service, connection.access_token);
    expect(first.status).toBe(201);
    expect(first.body.remaining_refreshes).toBe(9);

    const second = await enqueue(service, connection.access_token);
    expect(second.status).toBe(202);
    expect(second.body).toEqual(first.body);

    const job = await getJob(service, connection.access_token, first.body.job_id);
    expect(job.body).toMatchObject({ status: 'pending', started_at: null, completed_at: null });
    const listed = await service.request('/jobs/automated', { headers: bearer(connection.access_token) });
    expect(listed.body.paging.count).toBe(1);
    expect(listed.body.meta.quotas.data_sync_all.remaining_refreshes).toBe(9);
  });

  it('counts concurrent requests exactly: one job, one refresh', async () => {
    const connection = await sandboxConnection(service, app);
    const answers = await Promise.all(Array.from({ length: 8 }, () => enqueue(service, connection.access_token)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 202, 202, 202, 202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.body.job_id)).size).toBe(1);
    expect(answers.every((a) => a.body.remaining_refreshes === 9)).toBe(true);
  });
});
