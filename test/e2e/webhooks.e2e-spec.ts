import Finch from '@tryfinch/finch-api';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';
import { DELETE_ALL_ENDPOINTS, ReceivedWebhook, WebhookReceiver } from '../utils/webhook-receiver';

interface Employer {
  token: string;
  connectionId: string;
  entityId: string;
}

const finch = new Finch({ accessToken: 'unused' });

/** Both verifiers the issue names accept the delivery under `secret`, and agree on the payload. */
function verifyWithBoth(webhook: ReceivedWebhook, secret: string): Record<string, unknown> {
  const bySdk = finch.webhooks.unwrap(webhook.body, webhook.headers, secret) as unknown as Record<string, unknown>;
  const byStandard = new Webhook(secret).verify(webhook.body, webhook.headers) as Record<string, unknown>;
  expect(byStandard).toEqual(bySdk);
  return bySdk;
}

describeWithPostgres('webhooks (PostgreSQL, a local receiver)', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let receiver: WebhookReceiver;
  const db = () => service.app.get(DataSource);

  beforeAll(async () => {
    service = await startTestService({ env: { SANDBOX_EDIT_SYNCS: 'false', WEBHOOK_RETRY_BASE_MS: '100' } });
    app = await createApplication(service);
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await service?.close();
  });
  beforeEach(async () => {
    receiver.received.length = 0;
    receiver.answer = () => 200;
    // Each test makes its own endpoints, and sees no event of an earlier test's job.
    await expectEventually(async () => expect((await db().query(`SELECT count(*)::int AS n FROM job_queue`))[0].n).toBe(0), { timeoutMs: 30_000 });
    await db().query(DELETE_ALL_ENDPOINTS);
  });

  const api = (path: string, init: RequestInit = {}, credentials = app) =>
    service.request(path, {
      ...init,
      headers: { ...basic(credentials), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...(init.headers ?? {}) },
    });
  const createEndpoint = (body: Record<string, unknown>, credentials = app) => api('/webhooks/endpoints', { method: 'POST', body: JSON.stringify(body) }, credentials);

  async function sandbox(): Promise<Employer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 4 }, basic(app)));
    expect(res.status).toBe(200);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  async function sync(employer: Employer): Promise<string> {
    const started = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(employer.token)));
    expect(started.status).toBe(201);
    return started.body.job_id;
  }

  const receivedOfType = (type: string) => receiver.received.filter((r) => JSON.parse(r.body).event_type === type);

  describe('endpoints API', () => {
    it('creates an endpoint with every standard type by default and shows its secret only at creation', async () => {
      const res = await createEndpoint({ url: receiver.url, description: 'All events' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ url: receiver.url, description: 'All events', enabled: true, ordered_by_connection: false, max_concurrency: 4 });
      expect(res.body.secret).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(res.body.event_types).toContain('job.benefit_enroll.completed');
      expect(res.body.event_types).toContain('account.updated');
      expect(res.body.event_types).not.toContain('hris.saga.completed');

      const listed = await api('/webhooks/endpoints');
      expect(listed.status).toBe(200);
      expect(listed.body.data).toHaveLength(1);
      expect(listed.body.data[0].secret).toBeUndefined();
      expect((await api(`/webhooks/endpoints/${res.body.id}`)).body.secret).toBeUndefined();
      // Sealed at rest: the secret itself is nowhere in the table.
      const [row] = await db().query(`SELECT secret_sealed FROM webhook_endpoints WHERE id = $1`, [res.body.id]);
      expect(row.secret_sealed).not.toContain(res.body.secret);
    });

    it('refuses bad input with the error object and writes nothing', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ url: 'http://receiver.example.com/hook' }, /https/],
        [{ url: 'not a url' }, /url/],
        [{ url: 'https://10.1.2.3/hook' }, /private/],
        [{ url: receiver.url, event_types: ['job.nothing.completed'] }, /Unknown event type/],
        [{ url: receiver.url, event_types: [] }, /at least one/],
        [{ url: receiver.url, event_types: ['account.updated', 'account.updated'] }, /repeat/],
        [{ url: receiver.url, max_concurrency: 0 }, /max_concurrency/],
        [{ url: receiver.url, unknown_field: true }, /unknown_field/],
        [{}, /url/],
      ];
      for (const [body, message] of cases) {
        const res = await createEndpoint(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.message).toMatch(message);
        expect(res.body).toMatchObject({ name: expect.any(String), code: 400 });
      }
      expect((await db().query(`SELECT count(*)::int AS n FROM webhook_endpoints`))[0].n).toBe(0);
    });

    it('allows a loopback http receiver only for sandbox applications', async () => {
      const live = await createApplication(service, { sandbox: false });
      const refused = await createEndpoint({ url: receiver.url }, live);
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/loopback|sandbox/);
      expect((await createEndpoint({ url: 'https://hooks.platform.example.com/benefits' }, live)).status).toBe(201);
    });

    describe('addresses written in IPv6 that reach private or metadata addresses (issue 38, finding 6)', () => {
      // Each is refused by the sender; registration must refuse them too, for every application.
      const forms = [
        'https://[64:ff9b::a9fe:a9fe]/', // NAT64 of 169.254.169.254
        'https://[64:ff9b:1::a9fe:a9fe]/', // local-use NAT64 (RFC 8215)
        'https://[2002:a9fe:a9fe::]/', // 6to4 of 169.254.169.254
        'https://[::a9fe:a9fe]/', // IPv4-compatible 169.254.169.254
        'https://[::10.0.0.1]/', // IPv4-compatible 10.0.0.1
        'https://[::ffff:0:a9fe:a9fe]/', // IPv4-translated (RFC 6145) 169.254.169.254
        'https://[100::1]/', // discard-only (RFC 6666)
        'https://169.254.169.254/',
        'https://10.0.0.1/',
      ];
      const kinds = [
        ['sandbox', true],
        ['production', false],
      ] as const;

      it.each(kinds)('refuses each at creation for a %s application and makes no endpoint', async (_, sandboxApp) => {
        const owner = await createApplication(service, { sandbox: sandboxApp });
        for (const url of forms) {
          const res = await createEndpoint({ url }, owner);
          expect({ url, status: res.status, service_code: res.body.service_code }).toEqual({ url, status: 400, service_code: 'invalid_webhook_url' });
          expect(res.body.message).toMatch(/webhooks go to public addresses/);
        }
        expect((await db().query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE application_id = $1`, [owner.client_id]))[0].n).toBe(0);
      });

      it.each(kinds)('refuses each on PATCH for a %s application and keeps the old url', async (_, sandboxApp) => {
        const owner = await createApplication(service, { sandbox: sandboxApp });
        const created = await createEndpoint({ url: 'https://hooks.platform.example.com/benefits' }, owner);
        expect(created.status).toBe(201);
        for (const url of forms) {
          const res = await api(`/webhooks/endpoints/${created.body.id}`, { method: 'PATCH', body: JSON.stringify({ url }) }, owner);
          expect({ url, status: res.status, service_code: res.body.service_code }).toEqual({ url, status: 400, service_code: 'invalid_webhook_url' });
        }
        expect((await api(`/webhooks/endpoints/${created.body.id}`, {}, owner)).body.url).toBe('https://hooks.platform.example.com/benefits');
      });
    });

    it('needs the application credentials, and an application sees only its own endpoints', async () => {
      const mine = await createEndpoint({ url: receiver.url });
      const other = await createApplication(service);
      expect((await service.request('/webhooks/endpoints')).status).toBe(401);
      expect((await api('/webhooks/endpoints', {}, { ...app, client_secret: 'wrong' })).status).toBe(401);
      expect((await api('/webhooks/endpoints', {}, other)).body.data).toEqual([]);
      for (const [path, method] of [
        [`/webhooks/endpoints/${mine.body.id}`, 'GET'],
        [`/webhooks/endpoints/${mine.body.id}`, 'DELETE'],
        [`/webhooks/endpoints/${mine.body.id}/rotate-secret`, 'POST'],
        [`/webhooks/endpoints/${mine.body.id}/deliveries`, 'GET'],
        ['/webhooks/endpoints/not-a-uuid', 'GET'],
      ]) {
        const res = await api(path, { method }, other);
        expect({ path, method, status: res.status }).toEqual({ path, method, status: 404 });
      }
      const patched = await api(`/webhooks/endpoints/${mine.body.id}`, { method: 'PATCH', body: JSON.stringify({ enabled: false }) }, other);
      expect(patched.status).toBe(404);
      expect((await api(`/webhooks/endpoints/${mine.body.id}`)).body.enabled).toBe(true);
    });

    it('updates, and deletes with its pending deliveries', async () => {
      const created = await createEndpoint({ url: receiver.url, event_types: ['account.updated'] });
      const updated = await api(`/webhooks/endpoints/${created.body.id}`, {
        method: 'PATCH',
        body: JSON.stringify({ event_types: ['job.data_sync_all.completed', 'hris.saga.failed'], description: 'Syncs', max_concurrency: 2 }),
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ event_types: ['job.data_sync_all.completed', 'hris.saga.failed'], description: 'Syncs', max_concurrency: 2 });
      expect((await api(`/webhooks/endpoints/${created.body.id}`, { method: 'PATCH', body: '{}' })).status).toBe(400);
      const deleted = await api(`/webhooks/endpoints/${created.body.id}`, { method: 'DELETE' });
      expect(deleted.body).toEqual({ id: created.body.id, deleted: true });
      expect((await api(`/webhooks/endpoints/${created.body.id}`)).status).toBe(404);
    });

    it('lists the event types, marking the opt-in ones', async () => {
      const res = await api('/webhooks/event-types');
      expect(res.status).toBe(200);
      expect(res.body.data).toContainEqual(expect.objectContaining({ type: 'job.benefit_enroll.completed', opt_in: false }));
      expect(res.body.data).toContainEqual(expect.objectContaining({ type: 'hris.event.dead_lettered', opt_in: true }));
    });
  });

  describe('delivery', () => {
    it('delivers job completions and account updates, signed so that the SDK and the Standard Webhooks library both verify them', async () => {
      const endpoint = await createEndpoint({ url: receiver.url });
      const employer = await sandbox();
      const jobId = await sync(employer);
      await expectEventually(() => expect(receivedOfType('job.data_sync_all.completed')).toHaveLength(1), { timeoutMs: 20_000 });
      const [completed] = receivedOfType('job.data_sync_all.completed');
      const event = verifyWithBoth(completed, endpoint.body.secret);
      const [connection] = await db().query(`SELECT company_id, account_id FROM connections WHERE id = $1`, [employer.connectionId]);
      expect(event).toEqual({
        event_type: 'job.data_sync_all.completed',
        connection_id: employer.connectionId,
        company_id: connection.company_id,
        account_id: connection.account_id,
        // A data sync is the connection's, not one entity's.
        data: { job_id: jobId, job_url: `${service.url}/jobs/automated/${jobId}` },
      });
      expect(completed.headers['webhook-id']).toBe(completed.headers['finch-event-id']);
      expect(completed.headers['content-type']).toBe('application/json');
      // The job_url answers with the job.
      const job = await service.request(`/jobs/automated/${jobId}`, { headers: bearer(employer.token) });
      expect(job.body).toMatchObject({ job_id: jobId, status: 'complete' });

      const reauth = await service.request('/sandbox/connections/accounts', { ...json({ connection_status: 'reauth' }, bearer(employer.token)), method: 'PUT' });
      expect(reauth.status).toBe(200);
      await expectEventually(() => expect(receivedOfType('account.updated')).toHaveLength(1));
      expect(verifyWithBoth(receivedOfType('account.updated')[0], endpoint.body.secret)).toMatchObject({
        event_type: 'account.updated',
        connection_id: employer.connectionId,
        data: { status: 'reauth', authentication_method: { type: expect.any(String) } },
      });
      // A signature under another secret is refused by both verifiers.
      const wrong = Buffer.alloc(32, 7).toString('base64');
      expect(() => finch.webhooks.unwrap(completed.body, completed.headers, wrong)).toThrow();
      expect(() => new Webhook(wrong).verify(completed.body, completed.headers)).toThrow();
    });

    it('delivers benefit job completions: create and enroll', async () => {
      const endpoint = await createEndpoint({ url: receiver.url, event_types: ['job.benefit_create.completed', 'job.benefit_enroll.completed'] });
      const employer = await sandbox();
      const post = (path: string, body: unknown) => service.request(path, json(body, bearer(employer.token)));
      const created = await post('/employer/benefits', { type: '401k', description: 'Retirement', frequency: 'every_paycheck' });
      expect(created.status).toBe(200);
      const directory = await service.request('/employer/directory', { headers: bearer(employer.token) });
      const individual = directory.body.individuals[0].id;
      const enrolled = await post(`/employer/benefits/${created.body.benefit_id}/individuals`, [
        { individual_id: individual, configuration: { employee_deduction: { type: 'percent', amount: 600 } } },
      ]);
      expect(enrolled.status).toBe(200);
      await expectEventually(() => expect(receiver.received).toHaveLength(2), { timeoutMs: 20_000 });
      const events = receiver.received.map((r) => verifyWithBoth(r, endpoint.body.secret));
      expect(events.map((e) => [e.event_type, (e.data as { job_id: string }).job_id]).sort()).toEqual(
        [
          ['job.benefit_create.completed', created.body.job_id],
          ['job.benefit_enroll.completed', enrolled.body.job_id],
        ].sort(),
      );
    });

    it('sends no type the endpoint did not choose, nothing to a disabled endpoint, and opt-in types only when named', async () => {
      await createEndpoint({ url: receiver.url, event_types: ['account.updated'] });
      const off = await createEndpoint({ url: `${receiver.url}?off`, enabled: false });
      const employer = await sandbox();
      await sync(employer);
      await service.request('/sandbox/connections/accounts', { ...json({ connection_status: 'reauth' }, bearer(employer.token)), method: 'PUT' });
      await expectEventually(() => expect(receiver.received).toHaveLength(1));
      // Time for anything else to arrive.
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.bodies().map((b) => b.event_type)).toEqual(['account.updated']);
      expect((await db().query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1`, [off.body.id]))[0].n).toBe(0);
    });

    it('keeps signing with the old secret beside the new one for 24 hours after a rotation', async () => {
      const endpoint = await createEndpoint({ url: receiver.url, event_types: ['job.data_sync_all.completed'] });
      const rotated = await api(`/webhooks/endpoints/${endpoint.body.id}/rotate-secret`, { method: 'POST' });
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).not.toBe(endpoint.body.secret);
      const grace = Date.parse(rotated.body.previous_secret_expires_at) - Date.now();
      expect(grace).toBeGreaterThan(23.9 * 3_600_000);
      expect(grace).toBeLessThanOrEqual(24 * 3_600_000);
      await sync(await sandbox());
      await expectEventually(() => expect(receiver.received).toHaveLength(1), { timeoutMs: 20_000 });
      const [webhook] = receiver.received;
      expect(webhook.headers['webhook-signature'].split(' ')).toHaveLength(2);
      verifyWithBoth(webhook, rotated.body.secret);
      verifyWithBoth(webhook, endpoint.body.secret);

      // Past the grace, only the new secret signs.
      await db().query(`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [endpoint.body.id]);
      await sync(await sandbox());
      await expectEventually(() => expect(receiver.received).toHaveLength(2), { timeoutMs: 20_000 });
      const later = receiver.received[1];
      expect(later.headers['webhook-signature'].split(' ')).toHaveLength(1);
      verifyWithBoth(later, rotated.body.secret);
      expect(() => finch.webhooks.unwrap(later.body, later.headers, endpoint.body.secret)).toThrow();
    });

    it('records every attempt and lets the application read its deliveries', async () => {
      const endpoint = await createEndpoint({ url: receiver.url, event_types: ['job.data_sync_all.completed'] });
      // Each webhook's first attempt fails, its second succeeds.
      const tried = new Set<string>();
      receiver.answer = (request) => (tried.has(request.headers['webhook-id']) ? 200 : (tried.add(request.headers['webhook-id']), 503));
      const employer = await sandbox();
      await sync(employer);
      // This test's delivery is its connection's: an earlier test's job may still complete now.
      const ours = async () => {
        const list = await api(`/webhooks/endpoints/${endpoint.body.id}/deliveries`);
        return list.body.data.filter((d: { connection_id: string }) => d.connection_id === employer.connectionId);
      };
      await expectEventually(async () => expect(await ours()).toMatchObject([{ status: 'delivered' }]), { timeoutMs: 30_000 });
      const [delivery] = await ours();
      const detail = await api(`/webhooks/deliveries/${delivery.id}`);
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({ status: 'delivered', attempts: 2, event_type: 'job.data_sync_all.completed', last_status_code: 200 });
      expect(detail.body.recent_attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 200]);
      expect(detail.body.recent_attempts[0].response_excerpt).toBe('status 503');
      // Both attempts carried the event's id, and the body sent is the body shown.
      const requests = receiver.received.filter((r) => r.headers['webhook-id'] === detail.body.event_id);
      expect(requests).toHaveLength(2);
      expect(requests[0].body).toBe(requests[1].body);
      expect(detail.body.body).toBe(requests[1].body);
      // Another application cannot read it.
      const other = await createApplication(service);
      expect((await api(`/webhooks/deliveries/${delivery.id}`, {}, other)).status).toBe(404);
    });
  });
});

describeWithPostgres('webhooks without WEBHOOK_SECRETS_KEY on PostgreSQL', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { WEBHOOK_SECRETS_KEY: '' } });
  });
  afterAll(() => service?.close());

  it('refuses to make an endpoint, naming the setting, and writes nothing', async () => {
    const app = await createApplication(service);
    const res = await service.request('/webhooks/endpoints', json({ url: 'https://hooks.platform.example.com/x' }, basic(app)));
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 409, service_code: 'webhooks_not_configured', message: expect.stringContaining('WEBHOOK_SECRETS_KEY') });
    expect((await service.app.get(DataSource).query(`SELECT count(*)::int AS n FROM webhook_endpoints`))[0].n).toBe(0);
  });
});
