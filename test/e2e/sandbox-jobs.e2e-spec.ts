import { ManualClock } from '../../src/domain/shared/clock';
import { EmployerDataRepository } from '../../src/infrastructure/database/repositories/employer-data.repository';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, connectEmployer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type Credentials = Awaited<ReturnType<typeof createApplication>>;

/** The sandbox job operations document no version header: these calls send none. */
const token = (accessToken: string) => ({ authorization: `Bearer ${accessToken}` });

describeWithPostgres('sandbox jobs: /sandbox/jobs', () => {
  let service: TestService;
  let app: Credentials;
  const clock = new ManualClock('2026-06-01T12:30:00Z');

  const sandboxConnection = async (body: Record<string, unknown> = {}) => {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 4, ...body }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return res.body as { access_token: string; connection_id: string; entity_id: string };
  };
  const sandboxJob = (accessToken: string, body: unknown = { type: 'data_sync_all' }) =>
    service.request('/sandbox/jobs', json(body, token(accessToken)));
  const configure = (accessToken: string, body: unknown) =>
    service.request('/sandbox/jobs/configuration', {
      method: 'PUT',
      headers: { ...token(accessToken), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const untilFinished = (accessToken: string, jobId: string) =>
    expectEventually(async () => {
      const res = await service.request(`/jobs/automated/${jobId}`, { headers: bearer(accessToken) });
      expect(res.body.status).not.toMatch(/^(pending|in_progress)$/);
      return res.body;
    }, { timeoutMs: 30_000 });
  const generationOf = (entityId: string) => service.app.get(EmployerDataRepository).currentGeneration(entityId);

  beforeAll(async () => {
    service = await startTestService({ clock, env: { SANDBOX_REFRESHES_PER_HOUR: '2' } });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  it('syncs an Automated sandbox connection: 200 with a pollable job', async () => {
    const connection = await sandboxConnection();
    const res = await sandboxJob(connection.access_token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      job_id: expect.stringMatching(UUID),
      job_url: `${service.url}/jobs/automated/${res.body.job_id}`,
      allowed_refreshes: 2,
      remaining_refreshes: 1,
    });
    expect(await untilFinished(connection.access_token, res.body.job_id)).toMatchObject({ type: 'data_sync_all', status: 'complete' });
    expect(await generationOf(connection.entity_id)).not.toBeNull();
  });

  it('syncs an Assisted sandbox connection with null job_id and job_url, and no pollable job', async () => {
    const connection = await sandboxConnection({ provider_id: 'sandbox_assisted' });
    const res = await sandboxJob(connection.access_token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ job_id: null, job_url: null, allowed_refreshes: 2, remaining_refreshes: 1 });

    await expectEventually(async () => expect(await generationOf(connection.entity_id)).not.toBeNull(), { timeoutMs: 30_000 });
    const listed = await service.request('/jobs/automated', { headers: bearer(connection.access_token) });
    expect(listed.body).toMatchObject({ paging: { count: 0, offset: 0 }, data: [] });
    expect(listed.body.meta.quotas.data_sync_all.remaining_refreshes).toBe(1);
  });

  it('shares the hourly quota with POST /jobs/automated, then answers 429 with retry_at', async () => {
    const connection = await sandboxConnection();
    const first = await sandboxJob(connection.access_token);
    await untilFinished(connection.access_token, first.body.job_id);
    const second = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(connection.access_token)));
    expect(second.status).toBe(201);
    expect(second.body.remaining_refreshes).toBe(0);
    await untilFinished(connection.access_token, second.body.job_id);

    const refused = await sandboxJob(connection.access_token);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 429, name: 'rate_limit_error', retry_at: '2026-06-01T13:00:00.000Z' });
    expect(refused.headers.get('retry-after')).toBe(String(30 * 60));
  });

  it('syncs every entity of a multi-entity connection', async () => {
    const employer = await connectEmployer(service, app, { entityNames: ['North Co', 'South Co'] });
    const res = await sandboxJob(employer.accessToken);
    expect(res.status).toBe(200);
    await untilFinished(employer.accessToken, res.body.job_id);
    for (const entityId of employer.entityIds) expect(await generationOf(entityId)).not.toBeNull();
  });

  it('reads and saves the job configuration (default complete)', async () => {
    const connection = await sandboxConnection();
    const initial = await service.request('/sandbox/jobs/configuration', { headers: token(connection.access_token) });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual([{ type: 'data_sync_all', completion_status: 'complete' }]);

    const saved = await configure(connection.access_token, { type: 'data_sync_all', completion_status: 'permissions_error' });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ type: 'data_sync_all', completion_status: 'permissions_error' });
    const read = await service.request('/sandbox/jobs/configuration', { headers: token(connection.access_token) });
    expect(read.body).toEqual([{ type: 'data_sync_all', completion_status: 'permissions_error' }]);
  });

  it.each([
    [{ type: 'data_sync_all', completion_status: 'sometimes' }, 'completion_status must be one of: complete, reauth_error, permissions_error, error'],
    [{ type: 'data_sync_all' }, 'completion_status must be one of'],
    [{ type: 'payroll_sync', completion_status: 'complete' }, 'type must be one of: data_sync_all'],
    [{ completion_status: 'complete' }, 'type must be one of: data_sync_all'],
    [{ type: 'data_sync_all', completion_status: 'complete', delay: 5 }, 'delay: unknown field'],
  ])('refuses the configuration %j with 400 naming the field', async (body, message) => {
    const connection = await sandboxConnection();
    const res = await configure(connection.access_token, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error', service_code: 'invalid_request' });
    expect(res.body.message).toContain(message);
    const read = await service.request('/sandbox/jobs/configuration', { headers: token(connection.access_token) });
    expect(read.body).toEqual([{ type: 'data_sync_all', completion_status: 'complete' }]);
  });

  it('reauth_error: the job ends in reauth_error, no data is switched, and the connection moves to reauth', async () => {
    const connection = await sandboxConnection();
    await configure(connection.access_token, { type: 'data_sync_all', completion_status: 'reauth_error' });
    const res = await sandboxJob(connection.access_token);
    expect(await untilFinished(connection.access_token, res.body.job_id)).toMatchObject({ status: 'reauth_error' });
    expect(await generationOf(connection.entity_id)).toBeNull();

    const introspect = await service.request('/introspect', { headers: bearer(connection.access_token) });
    expect(introspect.body.connection_status.status).toBe('reauth');
    // Data calls and new syncs now ask for reauthentication; the job stays readable.
    const company = await service.request('/employer/company', { headers: bearer(connection.access_token) });
    expect(company.status).toBe(401);
    expect(company.body.service_code).toBe('reauthenticate_user');
    for (const again of [
      await sandboxJob(connection.access_token),
      await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(connection.access_token))),
    ]) {
      expect(again.status).toBe(401);
      expect(again.body).toMatchObject({ name: 'authentication_error', service_code: 'reauthenticate_user' });
    }
    const listed = await service.request('/jobs/automated', { headers: bearer(connection.access_token) });
    expect(listed.body.data.map((j: { status: string }) => j.status)).toEqual(['reauth_error']);
    expect(listed.body.meta.quotas.data_sync_all.remaining_refreshes).toBe(1);
  });

  it.each(['permissions_error', 'error'])('%s: the job ends so, no data is switched, the connection stays connected', async (status) => {
    const connection = await sandboxConnection();
    await configure(connection.access_token, { type: 'data_sync_all', completion_status: status });
    const res = await sandboxJob(connection.access_token);
    expect(await untilFinished(connection.access_token, res.body.job_id)).toMatchObject({ status });
    expect(await generationOf(connection.entity_id)).toBeNull();
    const introspect = await service.request('/introspect', { headers: bearer(connection.access_token) });
    expect(introspect.body.connection_status.status).toBe('connected');
  });

  it.each([
    [{ type: 'w4_form_employee_sync' }, 'type must be one of: data_sync_all'],
    [{}, 'type must be one of: data_sync_all'],
  ])('refuses the job body %j with 400', async (body, message) => {
    const connection = await sandboxConnection();
    const res = await sandboxJob(connection.access_token, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_request' });
    expect(res.body.message).toContain(message);
  });

  it('needs a bearer token', async () => {
    expect((await service.request('/sandbox/jobs', json({ type: 'data_sync_all' }))).status).toBe(401);
    expect((await service.request('/sandbox/jobs/configuration')).status).toBe(401);
  });

  it('is for sandbox connections only', async () => {
    const production = await createApplication(service, { sandbox: false });
    const employer = await connectEmployer(service, production);
    for (const res of [
      await sandboxJob(employer.accessToken),
      await service.request('/sandbox/jobs/configuration', { headers: token(employer.accessToken) }),
      await configure(employer.accessToken, { type: 'data_sync_all', completion_status: 'error' }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 403, name: 'forbidden_error', service_code: 'sandbox_connection_required' });
    }
    // A production connection to an Automated provider syncs through /jobs/automated.
    const created = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(employer.accessToken)));
    expect(created.status).toBe(201);
    expect(await untilFinished(employer.accessToken, created.body.job_id)).toMatchObject({ status: 'complete' });
  });
});

describeWithPostgres('sandbox jobs without a worker in the process', () => {
  let service: TestService;
  let app: Credentials;

  beforeAll(async () => {
    service = await startTestService({ env: { WORKERS_ENABLED: 'false' } });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  it('answers the queued sync instead of starting another, for Automated and Assisted connections alike', async () => {
    for (const providerId of ['sandbox_automated', 'sandbox_assisted']) {
      const created = await service.request('/sandbox/connections', json({ provider_id: providerId, employee_size: 2 }, basic(app)));
      const accessToken = created.body.access_token;
      const first = await service.request('/sandbox/jobs', json({ type: 'data_sync_all' }, token(accessToken)));
      const second = await service.request('/sandbox/jobs', json({ type: 'data_sync_all' }, token(accessToken)));
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.body).toEqual(first.body);
      expect(first.body.remaining_refreshes).toBe(9);
      if (providerId === 'sandbox_automated') {
        const job = await service.request(`/jobs/automated/${first.body.job_id}`, { headers: bearer(accessToken) });
        expect(job.body.status).toBe('pending');
      } else {
        expect(first.body.job_id).toBeNull();
      }
    }
  });
});
