import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { OPS_BASIC } from '../utils/service-process';
import { json, startTestService, TestService } from '../utils/test-app';
import { DELETE_ALL_ENDPOINTS, WebhookReceiver } from '../utils/webhook-receiver';

/** Fast retries, so that a receiver's outage is minutes of the schedule compressed into seconds. */
const FAST_RETRIES = { WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_RETRY_MAX_DELAY_MS: '400', WEBHOOK_TIMEOUT_MS: '600', SANDBOX_EDIT_SYNCS: 'false' };

interface Harness {
  service: TestService;
  app: IssuedCredentials;
  db: () => DataSource;
  createEndpoint(body: Record<string, unknown>): Promise<{ id: string; secret: string }>;
  /** Sandbox connections whose status toggles make account.updated events, one per toggle. */
  connections(count: number): Promise<string[]>;
  /** Toggles each token's connection `times` times (reauth, connected, …): that many events each, in order. */
  toggle(tokens: string[], times: number): Promise<void>;
  /** Event ids queued for an endpoint, oldest first. */
  queued(endpointId: string): Promise<string[]>;
}

async function harness(env: Record<string, string>): Promise<Harness> {
  const service = await startTestService({ env: { ...FAST_RETRIES, ...env } });
  const app = await createApplication(service);
  const db = () => service.app.get(DataSource);
  return {
    service,
    app,
    db,
    async createEndpoint(body) {
      const res = await service.request('/webhooks/endpoints', json(body, basic(app)));
      expect(res.status).toBe(201);
      return res.body;
    },
    async connections(count) {
      const tokens: string[] = [];
      for (let i = 0; i < count; i++) {
        const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 1 }, basic(app)));
        expect(res.status).toBe(200);
        tokens.push(res.body.access_token);
      }
      return tokens;
    },
    async toggle(tokens, times) {
      for (let i = 0; i < times; i++) {
        for (const token of tokens) {
          const status = i % 2 === 0 ? 'reauth' : 'connected';
          const res = await service.request('/sandbox/connections/accounts', { ...json({ connection_status: status }, bearer(token)), method: 'PUT' });
          expect(res.status).toBe(200);
        }
      }
    },
    async queued(endpointId) {
      const rows: { event_id: string }[] = await db().query(`SELECT event_id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id`, [endpointId]);
      return rows.map((r) => r.event_id);
    },
  };
}

/** Every queued id arrived, and a repeat is only ever a whole delivery again under the same id. */
function expectNothingLost(queued: string[], received: string[]) {
  expect(queued.length).toBeGreaterThan(0);
  expect(new Set(received)).toEqual(new Set(queued));
}

describeWithPostgres('webhook delivery under receiver faults (PostgreSQL)', () => {
  let h: Harness;
  const receivers: WebhookReceiver[] = [];
  const receiver = async (port = 0) => {
    const r = await new WebhookReceiver().start(port);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    h = await harness({});
  });
  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await h?.service.close();
  });
  beforeEach(() => h.db().query(DELETE_ALL_ENDPOINTS));

  it('a receiver down for a while gets everything once it is back: nothing lost', async () => {
    const down = await receiver();
    const port = down.listeningPort;
    const endpoint = await h.createEndpoint({ url: down.url, event_types: ['account.updated'] });
    await down.stop();
    const tokens = await h.connections(4);
    await h.toggle(tokens, 5);
    const queued = await h.queued(endpoint.id);
    expect(queued).toHaveLength(20);
    // Attempts fail while it is away (connection refused), and are recorded.
    await expectEventually(async () => {
      const [{ n }] = await h.db().query(`SELECT count(*)::int AS n FROM webhook_attempts WHERE status_code IS NULL AND error ILIKE '%refused%'`);
      expect(n).toBeGreaterThanOrEqual(20);
    });
    const back = await receiver(port);
    await expectEventually(() => expect(new Set(back.ids).size).toBe(20), { timeoutMs: 20_000 });
    expectNothingLost(queued, back.ids);
    for (const webhook of back.received) new Webhook(endpoint.secret).verify(webhook.body, webhook.headers);
    // The receiver has the last one before the service has its answer and records it delivered.
    await expectEventually(async () => {
      const [{ n }] = await h.db().query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'delivered'`, [endpoint.id]);
      expect(n).toBe(20);
    });
  });

  it('a receiver answering 500 then 200 gets each event, retried under the same id with backoff', async () => {
    const flaky = await receiver();
    const seen = new Map<string, number>();
    flaky.answer = (request) => {
      const id = request.headers['webhook-id'];
      seen.set(id, (seen.get(id) ?? 0) + 1);
      return seen.get(id)! <= 2 ? 500 : 200;
    };
    const endpoint = await h.createEndpoint({ url: flaky.url, event_types: ['account.updated'] });
    await h.toggle(await h.connections(2), 3);
    const queued = await h.queued(endpoint.id);
    await expectEventually(async () => {
      const [{ n }] = await h.db().query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'delivered'`, [endpoint.id]);
      expect(n).toBe(6);
    }, { timeoutMs: 20_000 });
    expectNothingLost(queued, flaky.ids);
    expect([...seen.values()]).toEqual(Array(6).fill(3));
    const attempts: { delivery_id: string; codes: number[]; gaps: number[] }[] = await h.db().query(
      `SELECT delivery_id, array_agg(status_code ORDER BY id) AS codes,
              array_agg(extract(epoch FROM attempted_at - lag) * 1000 ORDER BY id) FILTER (WHERE lag IS NOT NULL) AS gaps
       FROM (SELECT a.*, lag(a.attempted_at) OVER (PARTITION BY a.delivery_id ORDER BY a.id) AS lag FROM webhook_attempts a
             JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1) AS x
       GROUP BY delivery_id`,
      [endpoint.id],
    );
    for (const a of attempts) {
      expect(a.codes).toEqual([500, 500, 200]);
      // Backoff: each wait at least half its exponential step (100 ms, then 200 ms) after the attempt before.
      expect(a.gaps[0]).toBeGreaterThanOrEqual(50);
      expect(a.gaps[1]).toBeGreaterThanOrEqual(100);
    }
  });

  it('a receiver that hangs holds only its own slots: another endpoint is served meanwhile', async () => {
    const hanging = await receiver();
    hanging.answer = () => 'hang';
    const healthy = await receiver();
    const slow = await h.createEndpoint({ url: hanging.url, event_types: ['account.updated'], max_concurrency: 2 });
    const fast = await h.createEndpoint({ url: healthy.url, event_types: ['account.updated'] });
    await h.toggle(await h.connections(3), 4);
    await expectEventually(() => expect(new Set(healthy.ids).size).toBe(12), { timeoutMs: 10_000 });
    expectNothingLost(await h.queued(fast.id), healthy.ids);
    // The hanging one never had more than its cap in flight, and its attempts end in the timeout.
    expect(hanging.maxInFlight).toBeLessThanOrEqual(2);
    await expectEventually(async () => {
      const [{ n }] = await h.db().query(
        `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
         WHERE d.endpoint_id = $1 AND a.status_code IS NULL AND a.error ILIKE '%timed out%'`,
        [slow.id],
      );
      expect(n).toBeGreaterThanOrEqual(2);
    });
    hanging.answer = () => 200;
    await expectEventually(() => expect(new Set(hanging.ids).size).toBe(12), { timeoutMs: 20_000 });
    expectNothingLost(await h.queued(slow.id), hanging.ids);
    expect(hanging.maxInFlight).toBeLessThanOrEqual(2);
  });

  it('a 4xx other than 408 and 429 ends the delivery at once; 429 is retried', async () => {
    const gone = await receiver();
    gone.answer = () => 410;
    const busy = await receiver();
    busy.answer = (_r, index) => (index === 0 ? 429 : 200);
    const stopped = await h.createEndpoint({ url: gone.url, event_types: ['account.updated'] });
    const retried = await h.createEndpoint({ url: busy.url, event_types: ['account.updated'] });
    await h.toggle(await h.connections(1), 1);
    await expectEventually(async () => {
      const rows: { endpoint_id: string; status: string; attempts: number }[] = await h.db().query(
        `SELECT endpoint_id, status, attempts FROM webhook_deliveries WHERE endpoint_id = ANY($1::uuid[])`,
        [[stopped.id, retried.id]],
      );
      expect(rows.find((r) => r.endpoint_id === stopped.id)).toMatchObject({ status: 'failed', attempts: 1 });
      expect(rows.find((r) => r.endpoint_id === retried.id)).toMatchObject({ status: 'delivered', attempts: 2 });
    });
    expect(gone.received).toHaveLength(1);
  });

  it('an endpoint ordered by connection gets each connection’s events in order, a failing one holding back the rest', async () => {
    const ordered = await receiver();
    let failures = 0;
    // The first event fails three times: the later events of its connection wait behind it.
    ordered.answer = (_r, index) => (index === 0 || (failures > 0 && failures < 3) ? (failures++, 503) : 200);
    const endpoint = await h.createEndpoint({ url: ordered.url, event_types: ['account.updated'], ordered_by_connection: true });
    const tokens = await h.connections(2);
    await h.toggle(tokens, 6);
    const queued: { event_id: string; connection_id: string }[] = await h.db().query(
      `SELECT event_id, connection_id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id`,
      [endpoint.id],
    );
    expect(queued).toHaveLength(12);
    await expectEventually(() => expect(new Set(ordered.ids).size).toBe(12), { timeoutMs: 20_000 });
    const delivered = ordered.received.filter((_r, i) => i >= 3).map((r) => r.headers['webhook-id']);
    for (const connection of new Set(queued.map((q) => q.connection_id))) {
      const expected = queued.filter((q) => q.connection_id === connection).map((q) => q.event_id);
      expect(delivered.filter((id) => expected.includes(id))).toEqual(expected);
    }
    // And the statuses arrive in the order they happened: reauth, connected, reauth, …
    const first = ordered.bodies<{ connection_id: string; data: { status: string } }>().slice(3);
    const ofOne = first.filter((b) => b.connection_id === queued[0].connection_id).map((b) => b.data.status);
    expect(ofOne).toEqual(['reauth', 'connected', 'reauth', 'connected', 'reauth', 'connected']);
  });
});

describeWithPostgres('webhook deliveries that run out of time, Resend, and endpoints failing for days (PostgreSQL)', () => {
  let h: Harness;
  let dead: WebhookReceiver;

  beforeAll(async () => {
    // Three days and five days, compressed: a retry window of 1.5 s, disabled after 3 s of failures.
    h = await harness({ WEBHOOK_RETRY_WINDOW_MS: '1500', WEBHOOK_DISABLE_AFTER_MS: '3000' });
    dead = await new WebhookReceiver().start();
    dead.answer = () => 500;
  });
  afterAll(async () => {
    await dead?.stop();
    await h?.service.close();
  });

  it('fails a delivery after its window, shows it to ops, and Resend delivers it with the same id (audited)', async () => {
    const endpoint = await h.createEndpoint({ url: dead.url, event_types: ['account.updated'] });
    await h.toggle(await h.connections(1), 1);
    const ops = (path: string, init: RequestInit = {}) => h.service.request(path, { ...init, headers: { ...OPS_BASIC, ...(init.headers ?? {}) } });
    const failed = await expectEventually(async () => {
      const res = await ops(`/ops/api/webhooks/deliveries?status=failed&endpoint_id=${endpoint.id}`);
      expect(res.body.data).toHaveLength(1);
      return res.body.data[0];
    }, { timeoutMs: 10_000 });
    expect(failed.attempts).toBeGreaterThan(1);
    expect(failed.last_status_code).toBe(500);
    const firstId = dead.ids[0];
    dead.answer = () => 200;
    const resent = await ops(`/ops/api/webhooks/deliveries/${failed.id}/resend`, { method: 'POST' });
    expect(resent.status).toBe(200);
    expect(resent.body.status).toBe('pending');
    await expectEventually(async () => expect((await ops(`/ops/api/webhooks/deliveries/${failed.id}`)).body.status).toBe('delivered'));
    expect(dead.ids[dead.ids.length - 1]).toBe(firstId);
    const [audit] = await h.db().query(`SELECT actor, action, target_id FROM ops_audit WHERE action = 'webhook_delivery.resend'`);
    expect(audit).toEqual({ actor: 'ops', action: 'webhook_delivery.resend', target_id: failed.id });
    expect((await ops('/ops/api/webhooks/deliveries/12345678/resend', { method: 'POST' })).status).toBe(404);
    expect((await ops('/ops/api/webhooks/deliveries/abc', { method: 'POST' })).status).toBe(404);
    expect((await h.service.request(`/ops/api/webhooks/deliveries/${failed.id}/resend`, { method: 'POST' })).status).toBe(401);
    dead.answer = () => 500;
  });

  it('disables an endpoint that has failed for days, queues nothing more for it, and resumes when its owner enables it', async () => {
    await h.db().query(DELETE_ALL_ENDPOINTS);
    const endpoint = await h.createEndpoint({ url: dead.url, event_types: ['account.updated'] });
    const tokens = await h.connections(1);
    await h.toggle(tokens, 1);
    // Keep it failing past the bound: a new event now and then.
    const disabled = await expectEventually(async () => {
      await h.toggle(tokens, 2);
      const res = await h.service.request(`/webhooks/endpoints/${endpoint.id}`, { headers: basic(h.app) });
      expect(res.body.enabled).toBe(false);
      return res.body;
    }, { timeoutMs: 20_000, intervalMs: 400 });
    expect(disabled.disabled_reason).toMatch(/^Disabled automatically: no delivery has succeeded since \d{4}-\d\d-\d\dT/);
    expect(disabled.disabled_at).not.toBeNull();
    const ops = await h.service.request('/ops/api/webhooks/endpoints', { headers: OPS_BASIC });
    expect(ops.body.data.find((e: { id: string }) => e.id === endpoint.id)).toMatchObject({ enabled: false, disabled_reason: disabled.disabled_reason });

    const before = (await h.queued(endpoint.id)).length;
    await h.toggle(tokens, 2);
    expect((await h.queued(endpoint.id)).length).toBe(before);

    dead.answer = () => 200;
    const enabled = await h.service.request(`/webhooks/endpoints/${endpoint.id}`, { ...json({ enabled: true }, basic(h.app)), method: 'PATCH' });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null, failing_since: null });
    await h.toggle(tokens, 1);
    await expectEventually(async () => {
      const [{ n }] = await h.db().query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'delivered'`, [endpoint.id]);
      expect(n).toBeGreaterThanOrEqual(1);
    });
  });
});
