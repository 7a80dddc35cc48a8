import { DataSource } from 'typeorm';
import { AppConfig } from '../../src/config/app-config';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

const PRODUCTS = ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement'];

/**
 * Live provider calls as clients meet them: with the provider's latency, and failing the way
 * providers fail (server errors, timeouts), which the fault-drill settings switch on. The
 * settings are changed on the running service between cases, as an operator's drill would.
 */
describeWithPostgres('live provider calls: latency and failures', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let config: AppConfig;

  beforeAll(async () => {
    service = await startTestService();
    app = await createApplication(service);
    config = service.app.get(AppConfig);
  });
  afterAll(() => service?.close());
  afterEach(() => {
    Object.assign(config, { PROVIDER_LATENCY_MS: 0, PROVIDER_FAILURE_RATE: 0, PROVIDER_TIMEOUT_RATE: 0, PROVIDER_TIMEOUT_MS: 30_000 });
  });

  async function sandboxToken(): Promise<string> {
    const res = await service.request(
      '/sandbox/connections',
      json({ provider_id: 'sandbox_automated', employee_size: 6, products: PRODUCTS }, basic(app)),
    );
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return res.body.access_token;
  }

  const get = (path: string, token: string) => service.request(path, { headers: bearer(token) });
  const post = (path: string, body: unknown, token: string) => service.request(path, json(body, bearer(token)));

  /** Every read, each answered 200 when the provider is not needed. */
  async function readStatuses(token: string): Promise<number[]> {
    return Promise.all([
      get('/employer/company', token),
      get('/employer/directory', token),
      post('/employer/individual', { requests: [{ individual_id: '6a1e3c1e-7f4b-4a39-9d53-5a4f5c2f0c11' }] }, token),
      post('/employer/employment', { requests: [{ individual_id: '6a1e3c1e-7f4b-4a39-9d53-5a4f5c2f0c11' }] }, token),
      get('/employer/payment?start_date=2000-01-01&end_date=2100-01-01', token),
      get('/employer/pay-groups', token),
      get('/employer/pay-statement-item', token),
    ]).then((responses) => responses.map((r) => r.status));
  }

  it("takes the provider's latency on a live read", async () => {
    const token = await sandboxToken();
    await get('/employer/company', token); // the employer is generated on first use
    config.PROVIDER_LATENCY_MS = 400;
    const started = Date.now();
    const res = await get('/employer/company', token);
    expect(res.status).toBe(200);
    // A lower bound only: the read waited for the provider, however fast the machine.
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });

  it('answers 502 provider_error when the provider fails, on reads and on forward, and nothing is cached', async () => {
    const token = await sandboxToken();
    config.PROVIDER_FAILURE_RATE = 1;
    const statuses = await readStatuses(token);
    expect(statuses).toEqual(statuses.map(() => 502));
    const company = await get('/employer/company', token);
    expect(company.body).toEqual({ code: 502, name: 'provider_error', message: expect.stringMatching(/server error/) });
    const forward = await post('/forward', { method: 'GET', route: '/company' }, token);
    expect(forward.status).toBe(502);
    expect(forward.body.name).toBe('provider_error');

    config.PROVIDER_FAILURE_RATE = 0;
    expect((await get('/employer/company', token)).status).toBe(200);
  });

  it('answers 504 with the provider_error family when the provider does not answer in time', async () => {
    const token = await sandboxToken();
    Object.assign(config, { PROVIDER_TIMEOUT_RATE: 1, PROVIDER_TIMEOUT_MS: 50 });
    const res = await get('/employer/directory', token);
    expect(res.status).toBe(504);
    expect(res.body).toEqual({ code: 504, name: 'provider_error', message: expect.stringMatching(/did not answer within 50 ms/) });
  });

  it('retries a sync through provider failures and completes once the provider recovers', async () => {
    const token = await sandboxToken();
    config.PROVIDER_FAILURE_RATE = 1;
    const started = await post('/jobs/automated', { type: 'data_sync_all' }, token);
    expect(started.status).toBe(201);
    const jobUrl = `/jobs/automated/${started.body.job_id}`;
    // The first run failed and the job waits for its retry, not ended.
    await expectEventually(async () => {
      const rows = await service.app.get(DataSource).query(`SELECT attempts, status FROM jobs WHERE id = $1`, [started.body.job_id]);
      expect(rows[0].attempts).toBeGreaterThanOrEqual(1);
      expect(rows[0].status).toBe('pending');
    });
    expect((await get(jobUrl, token)).body.status).toBe('pending');

    config.PROVIDER_FAILURE_RATE = 0;
    await expectEventually(async () => expect((await get(jobUrl, token)).body.status).toBe('complete'), { timeoutMs: 20_000 });
  });

  it('serves reads from the completed sync while the provider fails', async () => {
    const token = await sandboxToken();
    const started = await post('/jobs/automated', { type: 'data_sync_all' }, token);
    await expectEventually(async () => expect((await get(`/jobs/automated/${started.body.job_id}`, token)).body.status).toBe('complete'));

    config.PROVIDER_FAILURE_RATE = 1;
    const statuses = await readStatuses(token);
    expect(statuses).toEqual(statuses.map(() => 200));
  });
});
