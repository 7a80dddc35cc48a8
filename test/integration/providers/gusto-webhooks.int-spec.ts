import { createHmac, randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GustoEventsPoller } from '../../../src/infrastructure/providers/gusto/gusto-events-poller';
import { GustoSystemTokens, GustoWebhookSubscriptions } from '../../../src/infrastructure/providers/gusto/gusto-webhook-subscriptions';
import { ProviderGrants } from '../../../src/infrastructure/providers/provider-grants';
import { GustoEventIntake } from '../../../src/modules/providers/gusto-event-intake';
import { GustoWebhooksModule, GustoWebhooksUpkeep } from '../../../src/modules/providers/gusto-webhooks.module';
import { EventInput, FakeGusto } from '../../fakes/gusto/fake-gusto';
import { describeWithPostgres } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { startTestService, TestResponse, TestService } from '../../utils/test-app';
import { createConnection } from '../sync/sync-test-kit';
import { endJobs, holdJob } from '../../utils/job-queue';

const PATH = '/providers/gusto/webhooks';
const HOUR = 3_600_000;

interface SyncJob {
  id: string;
  connection_id: string;
  status: string;
  params: { trigger: string; gusto_event_uuid: string; gusto_event_type: string; affects: string[] };
  after_job_id: string | null;
}

/**
 * Gusto's webhooks end to end on real PostgreSQL: the service subscribes at the fake Gusto
 * (held to Gusto's document both ways) with a system token, takes the verification token Gusto
 * POSTs and verifies the subscription with it; then the fake's signed deliveries reach
 * `POST /providers/gusto/webhooks`, and the events feed is read as the fallback. The job
 * workers are off, so the syncs requested stay where the tests can see them.
 */
describeWithPostgres('Gusto webhooks intake (fake Gusto, PostgreSQL)', () => {
  let fake: FakeGusto;
  let service: TestService;
  let dataSource: DataSource;
  let subscriptions: GustoWebhookSubscriptions;
  let grants: ProviderGrants;
  const companyA = randomUUID();
  const companyB = randomUUID();
  let connectionA: string;
  let connectionB: string;

  const hookUrl = () => `${service.url}${PATH}`;
  const token = () => fake.webhookSubscriptions()[0].verification_token;
  const sign = (body: string, key = token()) => createHmac('sha256', key).update(body).digest('hex');
  const post = (body: string, headers: Record<string, string> = {}): Promise<TestResponse> =>
    service.request(PATH, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const signedPost = (body: string) => post(body, { 'x-gusto-signature': sign(body) });
  const eventBody = (overrides: Record<string, unknown> = {}) =>
    JSON.stringify({
      uuid: randomUUID(),
      event_type: 'employee.updated',
      resource_type: 'Company',
      resource_uuid: companyA,
      entity_type: 'Employee',
      entity_uuid: randomUUID(),
      timestamp: Math.floor(Date.now() / 1000),
      ...overrides,
    });
  const deliver = async (input: Partial<EventInput> & Pick<EventInput, 'resource_uuid'>) => {
    const deliveries = await fake.deliver({ event_type: 'employee.updated', entity_type: 'Employee', entity_uuid: randomUUID(), ...input });
    expect(deliveries).toHaveLength(1);
    return deliveries[0];
  };
  const syncJobs = async (): Promise<SyncJob[]> =>
    dataSource.query(`SELECT id, connection_id, status, params, after_job_id FROM jobs WHERE type = 'data_sync_all' ORDER BY seq`);
  /** Ends every open sync, so a second act would have to queue a new one. */
  const settleSyncs = () => endJobs(dataSource, `type = 'data_sync_all' AND status IN ('pending', 'in_progress')`, [], 'complete');
  const connect = async (company: string): Promise<string> => {
    const { id } = await createConnection(dataSource, { providerId: 'gusto', sandbox: false });
    await grants.save({ connectionId: id, providerId: 'gusto', accountRef: company, accessToken: 'a', refreshToken: 'r', expiresAt: new Date(Date.now() + 2 * HOUR) });
    return id;
  };

  beforeAll(async () => {
    fake = await new FakeGusto().start();
    service = await startTestService({
      env: { GUSTO_CLIENT_ID: fake.clientId, GUSTO_CLIENT_SECRET: fake.clientSecret, GUSTO_BASE_URL: fake.url, WORKERS_ENABLED: 'false' },
      extraModules: [GustoWebhooksModule],
    });
    dataSource = service.app.get(DataSource);
    subscriptions = service.app.get(GustoWebhookSubscriptions);
    grants = service.app.get(ProviderGrants);
    connectionA = await connect(companyA);
    connectionB = await connect(companyB);
  });

  afterAll(async () => {
    await fake?.stop();
    await service?.close();
  });

  afterEach(() => {
    expect(fake.violations).toEqual([]);
    jest.restoreAllMocks();
  });

  describe('subscribing', () => {
    it('subscribes with a system token, keeps the token Gusto posts sealed, and verifies the subscription with it', async () => {
      const subscription = await subscriptions.ensure(hookUrl());
      await fake.idle();
      const [atGusto] = fake.webhookSubscriptions();
      expect(atGusto).toMatchObject({ uuid: subscription.uuid, url: hookUrl(), status: 'verified' });
      expect(atGusto.subscription_types).toEqual(expect.arrayContaining(['Employee', 'EmployeeBenefit', 'CompanyBenefit', 'Payroll', 'Company']));

      // The handshake: an unsigned POST of the token, answered 200.
      const [handshake] = fake.webhookDeliveries;
      expect(handshake).toMatchObject({ url: hookUrl(), signature: undefined, status: 200 });
      expect(JSON.parse(handshake.body)).toEqual({ verification_token: atGusto.verification_token });

      const operations = fake.requests.map((r) => `${r.operation} ${r.status}`);
      expect(operations).toEqual(
        expect.arrayContaining([
          'POST /oauth/token 200',
          'GET /v1/webhook_subscriptions 200',
          'POST /v1/webhook_subscriptions 201',
          'PUT /v1/webhook_subscriptions/{webhook_subscription_uuid}/verify 200',
        ]),
      );
      await expectEventually(async () => expect((await subscriptions.find(subscription.uuid))?.status).toBe('verified'));
      const [row] = await dataSource.query(`SELECT verification_token_sealed FROM gusto_webhook_subscriptions WHERE uuid = $1`, [subscription.uuid]);
      expect(row.verification_token_sealed).toMatch(/^v1\./);
      expect(row.verification_token_sealed).not.toContain(atGusto.verification_token);
      expect(await subscriptions.verificationTokens()).toEqual([atGusto.verification_token]);
      // The token was consumed: nothing kept for pairing.
      expect(await dataSource.query(`SELECT token_digest FROM gusto_webhook_verification_tokens`)).toEqual([]);
    });

    it('subscribes once: asking again creates nothing at Gusto', async () => {
      const creates = () => fake.requests.filter((r) => r.operation === 'POST /v1/webhook_subscriptions').length;
      const before = creates();
      const again = await subscriptions.ensure(hookUrl());
      expect(again.status).toBe('verified');
      expect(creates()).toBe(before);
      expect(fake.webhookSubscriptions()).toHaveLength(1);
    });

    it('a token posted by someone else verifies nothing and signs nothing', async () => {
      const answer = await post(JSON.stringify({ verification_token: 'forged-token' }));
      expect(answer.status).toBe(200);
      expect(await subscriptions.verificationTokens()).toEqual([token()]);
      const body = eventBody();
      expect((await post(body, { 'x-gusto-signature': sign(body, 'forged-token') })).status).toBe(401);
    });
  });

  describe('deliveries', () => {
    beforeEach(async () => {
      await settleSyncs();
    });

    it('a signed event is answered 200 and requests a data sync of the connection reaching its company, and no other', async () => {
      const delivery = await deliver({ resource_uuid: companyA, event_type: 'payroll.paid', entity_type: 'Payroll' });
      expect(delivery.status).toBe(200);
      const event = JSON.parse(delivery.body);
      const open = (await syncJobs()).filter((job) => job.status === 'pending');
      expect(open).toEqual([
        expect.objectContaining({
          connection_id: connectionA,
          params: { trigger: 'gusto_event', gusto_event_uuid: event.uuid, gusto_event_type: 'payroll.paid', affects: ['payment', 'pay_statement'] },
        }),
      ]);
      const [recorded] = await dataSource.query(`SELECT via, company_uuid, connection_ids FROM gusto_events WHERE uuid = $1`, [event.uuid]);
      expect(recorded).toEqual({ via: 'webhook', company_uuid: companyA, connection_ids: [connectionA] });
    });

    it('events while a sync is queued share it; while one runs, one follow-up is queued after it', async () => {
      const first = await signedPost(eventBody());
      expect(first.body).toEqual({ outcome: 'sync_requested', connections: 1 });
      await signedPost(eventBody());
      expect((await syncJobs()).filter((job) => job.status === 'pending')).toHaveLength(1);

      const [{ id: syncId }] = await dataSource.query(`SELECT id FROM jobs WHERE type = 'data_sync_all' AND status = 'pending'`);
      await holdJob(dataSource, syncId, 'a-worker', `now() + interval '1 hour'`);
      const [running] = (await syncJobs()).filter((job) => job.status === 'in_progress');
      await signedPost(eventBody());
      await signedPost(eventBody());
      const pending = (await syncJobs()).filter((job) => job.status === 'pending');
      expect(pending).toEqual([expect.objectContaining({ connection_id: connectionA, after_job_id: running.id })]);
    });

    it('every connection reaching the company gets its sync; one needing reauthentication, or another company’s, none', async () => {
      const second = await connect(companyA);
      const lost = await connect(companyA);
      await dataSource.query(`UPDATE connections SET status = 'reauth' WHERE id = $1`, [lost]);
      const answer = await signedPost(eventBody({ event_type: 'employee_benefit.created', entity_type: 'EmployeeBenefit' }));
      expect(answer.body).toEqual({ outcome: 'sync_requested', connections: 2 });
      const open = (await syncJobs()).filter((job) => job.status === 'pending').map((job) => job.connection_id);
      expect(open.sort()).toEqual([connectionA, second].sort());
      expect(open).not.toContain(connectionB);
      await dataSource.query(`UPDATE connections SET status = 'disconnected' WHERE id = ANY ($1)`, [[second, lost]]);
    });

    it('a wrong signature is 401 with the error object, and nothing is taken in', async () => {
      const body = eventBody();
      const tampered = body.replace('employee.updated', 'employee.created');
      const answer = await post(tampered, { 'x-gusto-signature': sign(body) });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({
        code: 401,
        name: 'authentication_error',
        service_code: 'invalid_webhook_signature',
        message: 'X-Gusto-Signature does not sign this body',
      });
      // The same JSON spaced differently is other bytes: refused too.
      const spaced = JSON.stringify(JSON.parse(body), null, 2);
      expect((await post(spaced, { 'x-gusto-signature': sign(body) })).status).toBe(401);
      expect((await post(body, { 'x-gusto-signature': 'not-hex' })).status).toBe(401);
      expect(await syncJobs()).not.toContainEqual(expect.objectContaining({ status: 'pending' }));
      expect(await dataSource.query(`SELECT uuid FROM gusto_events WHERE uuid = $1`, [JSON.parse(body).uuid])).toEqual([]);
    });

    it('a missing signature is 401, whatever the body', async () => {
      for (const body of [eventBody(), '{}', '[]']) {
        const answer = await post(body);
        expect(answer.status).toBe(401);
        expect(answer.body).toMatchObject({ code: 401, name: 'authentication_error', service_code: 'invalid_webhook_signature' });
      }
    });

    it('a signed body that is not an event is 400; one too large is 413', async () => {
      const answer = await signedPost(JSON.stringify({ uuid: randomUUID(), event_type: 'payroll.paid' }));
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: 400, service_code: 'invalid_gusto_webhook' });
      const large = eventBody({ padding: 'x'.repeat(9 * 1024) });
      expect((await signedPost(large)).status).toBe(413);
      // Sent in chunks without a length: refused as it arrives.
      const chunks = [large.slice(0, 4096), large.slice(4096, 8192), large.slice(8192)];
      const streamed = new ReadableStream<Uint8Array>({
        pull(controller) {
          const chunk = chunks.shift();
          if (chunk === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(chunk));
        },
      });
      const init = { method: 'POST', headers: { 'content-type': 'application/json', 'x-gusto-signature': sign(large) }, body: streamed, duplex: 'half' };
      const answer413 = await service.request(PATH, init as RequestInit);
      expect(answer413.status).toBe(413);
      expect(answer413.body).toMatchObject({ code: 413, service_code: 'payload_too_large' });
    });

    it('a redelivery is answered 200 and does nothing again', async () => {
      const delivery = await deliver({ resource_uuid: companyA });
      expect(delivery.status).toBe(200);
      await settleSyncs();
      const before = await syncJobs();
      const again = await post(delivery.body, { 'x-gusto-signature': delivery.signature as string });
      expect(again).toMatchObject({ status: 200, body: { outcome: 'duplicate' } });
      expect(await syncJobs()).toEqual(before);
    });

    it('deliveries of one event at once take it in once', async () => {
      const body = eventBody();
      const answers = await Promise.all(Array.from({ length: 6 }, () => signedPost(body)));
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
      const outcomes = answers.map((a) => a.body.outcome).sort();
      expect(outcomes).toEqual([...Array(5).fill('duplicate'), 'sync_requested']);
      expect((await syncJobs()).filter((job) => job.status === 'pending')).toHaveLength(1);
      expect(await dataSource.query(`SELECT count(*)::int AS n FROM gusto_events WHERE uuid = $1`, [JSON.parse(body).uuid])).toEqual([{ n: 1 }]);
    });

    it('an event for a company no connection reaches is answered 200, ignored and logged', async () => {
      const log = jest.spyOn(Logger.prototype, 'log');
      const stranger = randomUUID();
      const delivery = await deliver({ resource_uuid: stranger, event_type: 'company.updated', entity_type: 'Company' });
      expect(delivery.status).toBe(200);
      expect(await syncJobs()).not.toContainEqual(expect.objectContaining({ status: 'pending' }));
      expect(log).toHaveBeenCalledWith(expect.stringContaining(`company ${stranger}, which no connected connection reaches`));
    });

    it('an event about nothing the service reads is answered 200 and starts no sync', async () => {
      const answer = await signedPost(eventBody({ event_type: 'contractor.created', entity_type: 'Contractor' }));
      expect(answer).toMatchObject({ status: 200, body: { outcome: 'not_synced' } });
      expect(await syncJobs()).not.toContainEqual(expect.objectContaining({ status: 'pending' }));
    });
  });

  describe('the events feed', () => {
    let poller: GustoEventsPoller;

    beforeAll(() => {
      // Small pages, so a poll reads several.
      poller = new GustoEventsPoller(dataSource, service.app.get(GustoSystemTokens), service.app.get(GustoEventIntake), { pageSize: 2 });
    });

    beforeEach(async () => {
      await settleSyncs();
    });

    it('picks up the events webhooks missed and does not take again those they delivered', async () => {
      // Deliveries Gusto could not make (the subscription not verified here: every one refused).
      await dataSource.query(`UPDATE gusto_webhook_subscriptions SET status = 'pending'`);
      const missedA = await deliver({ resource_uuid: companyA, event_type: 'payroll.paid', entity_type: 'Payroll' });
      const missedB = await deliver({ resource_uuid: companyB, event_type: 'employee.created' });
      expect([missedA.status, missedB.status]).toEqual([401, 401]);
      await dataSource.query(`UPDATE gusto_webhook_subscriptions SET status = 'verified'`);
      const delivered = await deliver({ resource_uuid: companyA, event_type: 'employee.updated' });
      expect(delivered.status).toBe(200);
      await settleSyncs();

      const result = await poller.pollOnce();
      const feed = fake.eventLog();
      expect(result).toEqual({ polled: true, pages: Math.floor(feed.length / 2) + 1, read: feed.length, taken: 2 });

      const open = (await syncJobs()).filter((job) => job.status === 'pending');
      expect(open.map((job) => [job.connection_id, job.params.gusto_event_uuid]).sort()).toEqual(
        [
          [connectionA, JSON.parse(missedA.body).uuid],
          [connectionB, JSON.parse(missedB.body).uuid],
        ].sort(),
      );
      const vias = await dataSource.query(`SELECT uuid, via FROM gusto_events WHERE uuid = ANY ($1) ORDER BY via`, [
        [missedA, missedB, delivered].map((d) => JSON.parse(d.body).uuid),
      ]);
      expect(vias.map((v: { via: string }) => v.via)).toEqual(['poll', 'poll', 'webhook']);
      const [cursor] = await dataSource.query(`SELECT last_event_uuid, leased_by FROM gusto_event_cursor`);
      expect(cursor).toEqual({ last_event_uuid: feed[feed.length - 1].uuid, leased_by: null });
    });

    it('goes on from where it stopped: only events after the last one read', async () => {
      expect(await poller.pollOnce()).toEqual({ polled: true, pages: 1, read: 0, taken: 0 });
      const next = await fake.deliver({ event_type: 'company_benefit.created', entity_type: 'CompanyBenefit', entity_uuid: randomUUID(), resource_uuid: companyB });
      expect(next[0].status).toBe(200);
      expect(await poller.pollOnce()).toEqual({ polled: true, pages: 1, read: 1, taken: 0 });
      const [query] = fake.requests.filter((r) => r.operation === 'GET /v1/events').slice(-1);
      expect(query.status).toBe(200);
    });

    it('one instance reads the feed at a time, and not more often than asked', async () => {
      await dataSource.query(`UPDATE gusto_event_cursor SET polled_at = NULL`);
      const other = new GustoEventsPoller(dataSource, service.app.get(GustoSystemTokens), service.app.get(GustoEventIntake));
      const results = await Promise.all([poller.pollOnce({ minIntervalMs: 60_000 }), other.pollOnce({ minIntervalMs: 60_000 })]);
      expect(results.map((r) => r.polled).sort()).toEqual([false, true]);
      expect((await poller.pollOnce({ minIntervalMs: 60_000 })).polled).toBe(false);
    });

    it('the background round reads the feed once due: at once while no subscription is verified', async () => {
      const upkeep = service.app.get(GustoWebhooksUpkeep);
      await dataSource.query(`UPDATE gusto_webhook_subscriptions SET status = 'pending'`);
      const missed = await deliver({ resource_uuid: companyB, event_type: 'payroll.paid', entity_type: 'Payroll' });
      expect(missed.status).toBe(401);
      // Read a minute ago or more: due while nothing is verified.
      await dataSource.query(`UPDATE gusto_event_cursor SET polled_at = now() - interval '61 seconds'`);
      await upkeep.round();
      expect((await syncJobs()).filter((job) => job.status === 'pending')).toEqual([
        expect.objectContaining({ connection_id: connectionB, params: expect.objectContaining({ gusto_event_uuid: JSON.parse(missed.body).uuid }) }),
      ]);
      await dataSource.query(`UPDATE gusto_webhook_subscriptions SET status = 'verified'`);
      await dataSource.query(`UPDATE gusto_event_cursor SET polled_at = now() - interval '61 seconds'`);
      const reads = () => fake.requests.filter((r) => r.operation === 'GET /v1/events').length;
      const before = reads();
      // With a verified subscription the feed is only a safety net: not read again within 15 minutes.
      await upkeep.round();
      expect(reads()).toBe(before);
    });
  });

  describe('a lost handshake', () => {
    it("asks Gusto for the token again, at most every ten minutes, and verifies with the one it posts", async () => {
      const url = `${hookUrl()}?handshake=lost`;
      const asks = () => fake.requests.filter((r) => r.operation === 'GET /v1/webhook_subscriptions/{webhook_subscription_uuid}/request_verification_token').length;
      fake.loseHandshakes(1);
      const created = await subscriptions.ensure(url);
      await fake.idle();
      expect(created.status).toBe('pending');
      expect(asks()).toBe(0);

      // The next rounds: nothing to verify with, so Gusto is asked once, and posts the token again.
      expect((await subscriptions.ensure(url)).status).toBe('pending');
      await fake.idle();
      expect(asks()).toBe(1);
      expect(fake.webhookDeliveries.filter((d) => d.url === url)).toEqual([expect.objectContaining({ signature: undefined, status: 200 })]);
      const verified = await subscriptions.ensure(url);
      expect(verified).toMatchObject({ uuid: created.uuid, status: 'verified' });
      expect(fake.webhookSubscriptions().find((s) => s.uuid === created.uuid)?.status).toBe('verified');
      expect(asks()).toBe(1);

      // Another subscription whose handshake and the token asked for are both lost: asked once, not again within ten minutes.
      fake.loseHandshakes(2);
      const other = `${hookUrl()}?handshake=lost-twice`;
      for (let round = 0; round < 3; round++) {
        expect((await subscriptions.ensure(other)).status).toBe('pending');
        await fake.idle();
      }
      expect(asks()).toBe(2);
    });

    it('a pending subscription Gusto no longer has is marked removed when its token is asked for, and subscribed anew', async () => {
      const url = `${hookUrl()}?handshake=gone`;
      fake.loseHandshakes(1);
      const created = await subscriptions.ensure(url);
      await dataSource.query(`UPDATE gusto_webhook_subscriptions SET uuid = $2 WHERE uuid = $1`, [created.uuid, randomUUID()]);
      const [{ uuid: unknownToGusto }] = await dataSource.query(`SELECT uuid FROM gusto_webhook_subscriptions WHERE url = $1`, [url]);

      await subscriptions.ensure(url);
      expect((await subscriptions.find(unknownToGusto))?.status).toBe('removed');
      await fake.idle();
      const again = await subscriptions.ensure(url);
      expect(again.uuid).not.toBe(unknownToGusto);
    });
  });
});
