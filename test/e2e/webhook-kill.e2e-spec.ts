import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source';
import { describeWithPostgres } from '../setup/test-env';
import { bearer } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { ServiceProcess, startServiceProcess } from '../utils/service-process';
import { json } from '../utils/test-app';
import { createTestDatabase, TestDatabase } from '../utils/test-database';
import { WebhookReceiver } from '../utils/webhook-receiver';

const MAX_CONCURRENCY = 6;
const CONNECTIONS = 5;
const TOGGLES = 10;
const EVENTS = CONNECTIONS * TOGGLES;

/**
 * The service as a real process, SIGKILLed while deliveries are in flight at a slow receiver and
 * restarted: every event arrives, and the only repeats are deliveries that were in flight (or
 * answered but not yet recorded) at the kill, each under its own event id.
 */
describeWithPostgres('webhook delivery across a SIGKILL of the service', () => {
  let database: TestDatabase;
  let db: DataSource;
  let receiver: WebhookReceiver;
  const processes: ServiceProcess[] = [];
  const clientId = randomUUID();
  const clientSecret = `secret-${randomBytes(16).toString('hex')}`;
  const appAuth = { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` };

  const start = async () => {
    const service = await startServiceProcess({
      name: 'webhooks',
      databaseUrl: database.url,
      env: {
        APP_CLIENT_ID: clientId,
        APP_CLIENT_SECRET: clientSecret,
        // The restart is this instance's successor: it frees what the killed one held as it starts.
        INSTANCE_ID: 'webhooks-1',
        INSTANCE_HEARTBEAT_MS: '250',
        INSTANCE_DEAD_AFTER_MS: '2000',
        // Longer than the deliveries are held below, so none times out and is sent again.
        WEBHOOK_TIMEOUT_MS: '60000',
        WEBHOOK_RETRY_BASE_MS: '100',
        SANDBOX_EDIT_SYNCS: 'false',
      },
    });
    processes.push(service);
    return service;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = new DataSource(dataSourceOptions({ url: database.url, poolSize: 2 }));
    await db.initialize();
    receiver = await new WebhookReceiver().start();
    // Slow enough that a kill lands with deliveries in flight.
    receiver.answer = () => ({ status: 200, delayMs: 150 });
  }, 60_000);
  afterAll(async () => {
    for (const p of processes) await p.kill('SIGKILL').catch(() => undefined);
    await receiver?.stop();
    await db?.destroy();
    await database?.drop();
  });

  it('loses nothing, and repeats only what was in flight, with the same ids', async () => {
    const first = await start();
    const endpoint = await first.request(
      '/webhooks/endpoints',
      json({ url: receiver.url, event_types: ['account.updated'], max_concurrency: MAX_CONCURRENCY }, appAuth),
    );
    expect(endpoint.status).toBe(201);
    // Every event queued before any delivery completes, so the kill lands mid-stream on a slow
    // machine too (toggling took longer there than delivering, and all had arrived by the kill).
    const release = receiver.hold();
    const tokens: string[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const res = await first.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 1 }, appAuth));
      expect(res.status).toBe(200);
      tokens.push(res.body.access_token);
    }
    for (let i = 0; i < TOGGLES; i++) {
      for (const token of tokens) {
        const res = await first.request('/sandbox/connections/accounts', {
          ...json({ connection_status: i % 2 === 0 ? 'reauth' : 'connected' }, bearer(token)),
          method: 'PUT',
        });
        expect(res.status).toBe(200);
      }
    }
    const queued: string[] = (await db.query(`SELECT event_id FROM webhook_deliveries ORDER BY id`)).map((r: { event_id: string }) => r.event_id);
    expect(queued).toHaveLength(EVENTS);
    expect(receiver.received.length).toBeLessThanOrEqual(MAX_CONCURRENCY);
    release();

    // Kill it in the middle: some delivered, some in flight at the receiver.
    await expectEventually(() => {
      expect(receiver.received.length).toBeGreaterThanOrEqual(10);
      expect(receiver.inFlight).toBeGreaterThan(0);
    }, { timeoutMs: 30_000, intervalMs: 5 });
    const atKill = { received: receiver.received.length, inFlight: receiver.inFlight };
    await first.kill('SIGKILL');
    expect(atKill.received).toBeLessThan(EVENTS);

    await start();
    await expectEventually(() => expect(new Set(receiver.ids).size).toBe(EVENTS), { timeoutMs: 60_000 });
    await expectEventually(async () => {
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`);
      expect(n).toBe(EVENTS);
    });

    expect(new Set(receiver.ids)).toEqual(new Set(queued));
    const repeats = receiver.ids.length - EVENTS;
    // At least once: a repeat is a delivery that was under way when the process died, never more.
    expect(repeats).toBeLessThanOrEqual(MAX_CONCURRENCY);
    for (const webhook of receiver.received) new Webhook(endpoint.body.secret).verify(webhook.body, webhook.headers);
    // Each repeat is byte-for-byte the same event.
    const bodies = new Map<string, string>();
    for (const r of receiver.received) {
      const id = r.headers['webhook-id'];
      if (bodies.has(id)) expect(r.body).toBe(bodies.get(id));
      bodies.set(id, r.body);
    }
    process.stdout.write(`webhook kill: ${atKill.received} received and ${atKill.inFlight} in flight at the kill; ${repeats} repeated after the restart\n`);
  }, 240_000);
});
