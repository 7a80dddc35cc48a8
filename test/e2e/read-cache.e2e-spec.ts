import { DataSource } from 'typeorm';
import { startService, RunningService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { Metrics } from '../../src/infrastructure/observability/metrics';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, request, startTestService, TestResponse, TestService } from '../utils/test-app';
import { serviceDatabaseEnv } from '../../bench/database-pooler';

/**
 * Synced reads from memory (src/modules/read-cache): ETags and 304s, answers kept per sync
 * generation, and token changes heard by every instance. Two instances share one database,
 * as in production.
 */
describeWithPostgres('read cache: ETags, answers per generation, revocation across instances', () => {
  let a: TestService;
  let b: RunningService;
  let app: IssuedCredentials;

  beforeAll(async () => {
    a = await startTestService();
    b = await startService(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        ...serviceDatabaseEnv(a.database.url),
        DATABASE_POOL_SIZE: '3',
        OPS_USERNAME: 'ops',
        OPS_PASSWORD: 'ops-password-for-tests',
        LOG_LEVEL: 'silent',
        KAFKA_BROKERS: '',
        PROVIDER_LATENCY_MS: '0',
        JOB_POLL_MS: '20',
        WEBHOOK_SECRETS_KEY: 'webhook-secrets-key-of-the-test-services-0123',
      }),
    );
    app = await createApplication(a);
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const onA = (path: string, init?: RequestInit) => a.request(path, init);
  const onB = (path: string, init?: RequestInit) => request(b.url, path, init);

  async function syncedEmployer(products = ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement']) {
    const res = await onA('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 10, products }, basic(app)));
    expect(res.status).toBe(200);
    const token: string = res.body.access_token;
    await syncNow(token);
    return { token, connectionId: res.body.connection_id as string, entityId: res.body.entity_id as string };
  }

  async function syncNow(token: string): Promise<void> {
    const started = await onA('/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
    expect([201, 202]).toContain(started.status);
    await expectEventually(async () => expect((await onA(`/jobs/automated/${started.body.job_id}`, { headers: bearer(token) })).body.status).toBe('complete'), {
      timeoutMs: 60_000,
    });
  }

  const hits = async (service: RunningService, outcome: 'hit' | 'not_modified' | 'miss') =>
    (await service.app.get(Metrics).readCacheRequests.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;

  const expectSame = (x: TestResponse, y: TestResponse) => {
    expect(y.status).toBe(200);
    expect(y.text).toBe(x.text);
    expect(y.headers.get('etag')).toBe(x.headers.get('etag'));
  };

  it('answers a synced read with a strong ETag, 304 to If-None-Match, and the same bytes from memory on a repeat', async () => {
    const { token } = await syncedEmployer();
    const first = await onA('/employer/company', { headers: bearer(token) });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');

    const hitsBefore = await hits(a, 'hit');
    expectSame(first, await onA('/employer/company', { headers: bearer(token) }));
    expect(await hits(a, 'hit')).toBe(hitsBefore + 1);

    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await onA('/employer/company', { headers: bearer(token, { 'if-none-match': ifNoneMatch }) });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
    }
    // A tag that does not match, or a malformed header, gets the whole answer.
    for (const ifNoneMatch of ['"stale"', 'not a tag']) {
      expectSame(first, await onA('/employer/company', { headers: bearer(token, { 'if-none-match': ifNoneMatch }) }));
    }
    // The other instance computes the same tag for the same bytes (and 304s on it).
    expectSame(first, await onB('/employer/company', { headers: bearer(token) }));
    expect((await onB('/employer/company', { headers: bearer(token, { 'if-none-match': etag }) })).status).toBe(304);
  });

  it('sends an answer from memory with the headers of the pipeline, its own request id, and times it in the HTTP metrics', async () => {
    const { token } = await syncedEmployer();
    const first = await onA('/employer/company', { headers: bearer(token) });
    const timed = async () =>
      (await a.app.get(Metrics).httpRequestDuration.get()).values.find(
        (v) => v.metricName === 'http_request_duration_seconds_count' && v.labels.route === '/employer/company' && v.labels.status_code === '200',
      )?.value ?? 0;
    const timedBefore = await timed();
    const hitsBefore = await hits(a, 'hit');

    const fromMemory = await onA('/employer/company', { headers: bearer(token) });

    expect(await hits(a, 'hit')).toBe(hitsBefore + 1);
    expect(await timed()).toBe(timedBefore + 1);
    const perRequest = new Set(['date', 'x-request-id', 'connection', 'keep-alive', 'content-length']);
    const named = (response: TestResponse) => [...response.headers.entries()].filter(([name]) => !perRequest.has(name)).sort();
    expect(named(fromMemory)).toEqual(named(first));
    expect(fromMemory.headers.get('content-length')).toBe(String(Buffer.byteLength(first.text)));
    expect(fromMemory.headers.get('x-request-id')).toMatch(/\S/);
    expect(fromMemory.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
  });

  it('keeps POST batch reads per body, and never keeps an answer whose 404s name the sync under way', async () => {
    const { token } = await syncedEmployer();
    const directory = await onA('/employer/directory', { headers: bearer(token) });
    const ids: string[] = directory.body.individuals.map((i: { id: string }) => i.id);
    const known = { requests: ids.slice(0, 3).map((individual_id) => ({ individual_id })) };
    const first = await onA('/employer/individual', json(known, bearer(token)));
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toBeTruthy();
    const hitsBefore = await hits(a, 'hit');
    expectSame(first, await onA('/employer/individual', json(known, bearer(token))));
    expect(await hits(a, 'hit')).toBe(hitsBefore + 1);
    expect((await onA('/employer/individual', json(known, bearer(token, { 'if-none-match': first.headers.get('etag')! })))).status).toBe(304);

    // Another body is another answer.
    const other = await onA('/employer/individual', json({ requests: [{ individual_id: ids[4] }] }, bearer(token)));
    expect(other.body.responses[0].individual_id).toBe(ids[4]);

    const unknown = { requests: [{ individual_id: '00000000-0000-4000-8000-000000000000' }] };
    await onA('/employer/individual', json(unknown, bearer(token)));
    const hitsAfter = await hits(a, 'hit');
    const again = await onA('/employer/individual', json(unknown, bearer(token)));
    expect(again.body.responses[0].code).toBe(404);
    expect(await hits(a, 'hit')).toBe(hitsAfter);
  });

  it('answers from the new generation once a sync completes: nothing kept of the old one is served', async () => {
    const { token } = await syncedEmployer();
    await onA('/employer/directory', { headers: bearer(token) });
    await onA('/employer/directory', { headers: bearer(token) });
    const hitsBefore = await hits(a, 'hit');
    const missesBefore = await hits(a, 'miss');
    await syncNow(token);
    const after = await onA('/employer/directory', { headers: bearer(token) });
    expect(after.status).toBe(200);
    expect(await hits(a, 'hit')).toBe(hitsBefore);
    expect(await hits(a, 'miss')).toBe(missesBefore + 1);
  });

  it('keeps the checks of the guard on an answer from memory: product, entity, rate of the token', async () => {
    const { token } = await syncedEmployer(['company', 'directory']);
    await onA('/employer/company', { headers: bearer(token) });
    expect((await onA('/employer/company', { headers: bearer(token) })).status).toBe(200);
    // A foreign entity is refused, cached answer or not.
    const foreign = await onA('/employer/company?entity_ids=00000000-0000-4000-8000-000000000000', { headers: bearer(token) });
    expect(foreign.status).toBe(403);
    // Without the version header: the ordinary 400, never the kept answer.
    const { 'service-api-version': _dropped, ...withoutVersion } = bearer(token);
    expect((await onA('/employer/company', { headers: withoutVersion })).status).toBe(400);
  });

  it("never gives another connection's token an answer kept for this one: its entity is refused, its own read is its own", async () => {
    const mine = await syncedEmployer(['company']);
    const theirs = await syncedEmployer(['company']);
    const kept = await onA('/employer/company', { headers: bearer(mine.token) });
    expect((await onA('/employer/company', { headers: bearer(mine.token) })).status).toBe(200);
    const foreign = await onA(`/employer/company?entity_ids=${mine.entityId}`, { headers: bearer(theirs.token) });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ name: 'forbidden_error', service_code: 'entity_not_authorized' });
    const own = await onA('/employer/company', { headers: bearer(theirs.token) });
    expect(own.status).toBe(200);
    expect(own.text).not.toBe(kept.text);
    // A token that is not one: 401 with the error object, never a kept answer.
    const unknown = await onA('/employer/company', { headers: bearer('not-a-token') });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ code: 401, message: expect.any(String) });
  });

  it('takes the rate limit once per request, answered from memory or not: the last within the limit passes, the next is refused with Retry-After', async () => {
    const limited = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '6' } });
    try {
      const limitedApp = await createApplication(limited);
      const res = await limited.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 3, products: ['company'] }, basic(limitedApp)));
      const token: string = res.body.access_token;
      const sync = await limited.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
      // Watched in the database: polling the job would spend the token's few requests.
      const db = limited.app.get(DataSource);
      await expectEventually(async () => expect((await db.query(`SELECT status FROM jobs WHERE id = $1`, [sync.body.job_id]))[0].status).toBe('complete'), {
        timeoutMs: 60_000,
      });
      // One request so far (the sync): read until refused.
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await limited.request('/employer/company', { headers: bearer(token) })).status);
      const served = statuses.filter((s) => s === 200).length;
      expect(served).toBe(5);
      expect(statuses.slice(0, served).every((s) => s === 200)).toBe(true);
      expect(statuses.slice(served).every((s) => s === 429)).toBe(true);
      expect(served).toBeGreaterThan(1);
      expect(await hits(limited, 'hit')).toBe(served - 1);
      const refused = await limited.request('/employer/company', { headers: bearer(token) });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });

  it('a token revoked through one instance is refused by the other within a second, though it had the answer in memory', async () => {
    const { token } = await syncedEmployer();
    await onB('/employer/company', { headers: bearer(token) });
    const hitsBefore = await hits(b, 'hit');
    expect((await onB('/employer/company', { headers: bearer(token) })).status).toBe(200);
    expect(await hits(b, 'hit')).toBe(hitsBefore + 1);

    const disconnected = await onA('/disconnect', { method: 'POST', headers: bearer(token) });
    expect(disconnected.status).toBe(200);
    const revokedAt = Date.now();
    let refusedAfter = Infinity;
    while (Date.now() - revokedAt < 5_000) {
      const res = await onB('/employer/company', { headers: bearer(token) });
      if (res.status === 401) {
        refusedAfter = Date.now() - revokedAt;
        break;
      }
      expect(res.status).toBe(200);
      await new Promise((done) => setTimeout(done, 10));
    }
    expect(refusedAfter).toBeLessThan(1_000);
    expect((await onB('/employer/directory', { headers: bearer(token) })).status).toBe(401);
  });
});
