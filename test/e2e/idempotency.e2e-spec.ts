import { Body, Controller, HttpCode, Module, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DataSource, MigrationInterface } from 'typeorm';
import { ManualClock } from '../../src/domain/shared/clock';
import { DomainError } from '../../src/domain/shared/domain-error';
import { IdempotencySecretAnswers1797930000000 } from '../../src/infrastructure/database/migrations/1797930000000-idempotency-secret-answers';
import { IdempotencyPersonalAnswers1798600000000 } from '../../src/infrastructure/database/migrations/1798600000000-idempotency-personal-answers';
import { SecretBox } from '../../src/infrastructure/webhooks/secret-box';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { RequiresAccessToken } from '../../src/modules/auth/access-token.guard';
import { ConnectSessionsService } from '../../src/modules/auth/connect-sessions.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication, everythingStored, REDIRECT_URI } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const RULES = '/employer/pay-statement-item/rule';
const DAY_MS = 24 * 60 * 60 * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const rule = (gl = '4010') => ({
  conditions: [{ field: 'type', operator: 'equals', value: '401k' }],
  attributes: { metadata: { gl_code: gl, plan: { provider: 'Acme 401(k)', match: true } } },
});
const person = (first = 'Ada') => ({
  first_name: first,
  last_name: 'Lovelace',
  dob: '1985-12-10',
  title: 'Analyst',
  income: { unit: 'yearly', amount: 9_000_000 },
});

/** Routes whose failures the real API cannot produce on demand: 5xx, then success. */
let flakyRuns = 0;
let providerRuns = 0;
let sizedRuns = 0;
@Controller('idempotency-probe')
@RequiresAccessToken()
class ProbeController {
  @Post('crash-once')
  @HttpCode(201)
  crashOnce() {
    flakyRuns += 1;
    if (flakyRuns === 1) throw new Error('the database went away');
    return { run: flakyRuns };
  }

  @Post('provider-down-once')
  providerDownOnce() {
    providerRuns += 1;
    if (providerRuns === 1) throw new DomainError('provider_error', 'The payroll provider answered 503');
    return { run: providerRuns };
  }

  @Post('accepted')
  accepted(@Res({ passthrough: true }) reply: FastifyReply) {
    void reply.status(202);
    return { accepted_at: Date.now(), random: Math.random() };
  }

  /** An answer of about `bytes` bytes, as a provider's large answer to POST /forward. */
  @Post('sized')
  @HttpCode(200)
  sized(@Body() body: { bytes: number; tag?: string }) {
    sizedRuns += 1;
    return { run: sizedRuns, data: 'x'.repeat(body.bytes) };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

describeWithPostgres('Idempotency-Key on POST', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let otherApp: IssuedCredentials;
  let dataSource: DataSource;
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  let n = 0;
  const freshKey = () => `key-${Date.now()}-${++n}`;

  beforeAll(async () => {
    service = await startTestService({ clock, extraModules: [ProbeModule] });
    app = await createApplication(service);
    otherApp = await createApplication(service);
    dataSource = service.app.get(DataSource);
  });
  afterAll(() => service?.close());

  interface Employer {
    token: string;
    connectionId: string;
    entityId: string;
  }

  async function sandboxEmployer(credentials = app): Promise<Employer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 3 }, basic(credentials)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  const post = (path: string, body: unknown, token: string, key?: string, extra: Record<string, string> = {}) =>
    service.request(path, json(body, { ...bearer(token), ...(key === undefined ? {} : { 'idempotency-key': key }), ...extra }));

  const count = async (sql: string, params: unknown[]) => Number((await dataSource.query(sql, params))[0].n);
  const rulesOf = (e: Employer) => count(`SELECT count(*) AS n FROM pay_statement_item_rules WHERE connection_id = $1`, [e.connectionId]);
  /** The sandbox directory's size, read live (which also generates the employer on first use). */
  const individualsOf = async (e: Employer) => {
    const res = await service.request('/employer/directory', { headers: bearer(e.token) });
    expect(res.status).toBe(200);
    return res.body.individuals.length as number;
  };

  function expectReplayOf(replay: TestResponse, first: TestResponse) {
    expect(replay.status).toBe(first.status);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('content-type')).toMatch(/^application\/json/);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
  }

  /** Answers kept as before `migration` (status 200, under a scope of their own), then the migration run; answers the scope. */
  async function keptBeforeMigration(rows: [string, string | null][], migration: MigrationInterface): Promise<string> {
    const scope = `application:${freshKey()}`;
    for (const [key, body] of rows) {
      await dataSource.query(
        `INSERT INTO idempotency_keys (scope, key, request_hash, attempt, status_code, response_body, created_at) VALUES ($1, $2, 'h', gen_random_uuid(), 200, $3, now())`,
        [scope, key, body],
      );
    }
    const runner = dataSource.createQueryRunner();
    try {
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    return scope;
  }

  describe('the same key and request', () => {
    it('returns the first answer (201, same rule id) and creates nothing more', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const first = await post(RULES, rule(), employer.token, key);
      expect(first.status).toBe(201);
      expect(first.body.id).toMatch(UUID);
      const again = await post(RULES, rule(), employer.token, key);
      expectReplayOf(again, first);
      expect(await rulesOf(employer)).toBe(1);
    });

    it('treats the body as JSON: key order and whitespace do not make another request', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const first = await post(RULES, rule(), employer.token, key);
      const { conditions, attributes } = rule();
      const reordered = await service.request(
        RULES,
        json(JSON.stringify({ attributes, conditions }, null, 2), { ...bearer(employer.token), 'idempotency-key': key }),
      );
      expectReplayOf(reordered, first);
      expect(await rulesOf(employer)).toBe(1);
    });

    it('replays a status the handler chose itself (reply.status(202))', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const first = await post('/idempotency-probe/accepted', {}, employer.token, key);
      expect(first.status).toBe(202);
      const again = await post('/idempotency-probe/accepted', {}, employer.token, key);
      expectReplayOf(again, first);
    });

    it('replays POST /jobs/automated: the same job_id, one job', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const first = await post('/jobs/automated', { type: 'data_sync_all' }, employer.token, key);
      expect(first.status).toBe(201);
      await expectEventually(async () => {
        const job = await service.request(`/jobs/automated/${first.body.job_id}`, { headers: bearer(employer.token) });
        expect(job.body.status).toBe('complete');
      });
      const again = await post('/jobs/automated', { type: 'data_sync_all' }, employer.token, key);
      expectReplayOf(again, first);
      expect(again.body.job_id).toBe(first.body.job_id);
      expect(await count(`SELECT count(*) AS n FROM jobs WHERE connection_id = $1`, [employer.connectionId])).toBe(1);
      // Without the key the same request is a new one.
      const fresh = await post('/jobs/automated', { type: 'data_sync_all' }, employer.token);
      expect(fresh.body.job_id).not.toBe(first.body.job_id);
    });

    it('replays a 4xx answer; the key stays spent for other bodies', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const first = await post('/sandbox/directory', { individuals: [person()] }, employer.token, key);
      expect(first.status).toBe(400);
      expect(first.body).toMatchObject({ name: 'bad_request_error', service_code: 'malformed_request' });
      const again = await post('/sandbox/directory', { individuals: [person()] }, employer.token, key);
      expectReplayOf(again, first);
      const corrected = await post('/sandbox/directory', [person()], employer.token, key);
      expect(corrected.status).toBe(409);
      expect(corrected.body.service_code).toBe('idempotency_key_reused');
      expect(await individualsOf(employer)).toBe(3);
    });

    it('lets two concurrent requests have one effect; the other is replayed or told the key is in use', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const answers = await Promise.all(Array.from({ length: 4 }, () => post('/sandbox/directory', [person('Grace')], employer.token, key)));
      const firsts = answers.filter((a) => a.status === 200 && a.headers.get('idempotent-replayed') === null);
      expect(firsts).toHaveLength(1);
      for (const other of answers.filter((a) => a !== firsts[0])) {
        if (other.status === 409) expect(other.body).toMatchObject({ code: 409, name: 'conflict_error', service_code: 'idempotency_key_in_use' });
        else expectReplayOf(other, firsts[0]);
      }
      expect(await individualsOf(employer)).toBe(4);
      // Once it has finished, the key replays.
      expectReplayOf(await post('/sandbox/directory', [person('Grace')], employer.token, key), firsts[0]);
    });
  });

  describe('benefit writes', () => {
    it('answers a repeated create and enrollment with the same job_id and starts no second job', async () => {
      const employer = await sandboxEmployer();
      const jobsOf = () => count(`SELECT count(*) AS n FROM jobs WHERE connection_id = $1`, [employer.connectionId]);
      const benefit = { type: '401k', description: 'Retirement plan', frequency: 'every_paycheck' };
      const createKey = freshKey();
      const created = await post('/employer/benefits', benefit, employer.token, createKey);
      expect(created.status).toBe(200);
      expect(created.body.job_id).toMatch(UUID);
      const jobsAfterCreate = await jobsOf();
      const createdAgain = await post('/employer/benefits', benefit, employer.token, createKey);
      expectReplayOf(createdAgain, created);
      expect(createdAgain.body).toEqual(created.body);
      expect(await jobsOf()).toBe(jobsAfterCreate);

      const directory = await service.request('/employer/directory', { headers: bearer(employer.token) });
      const enrollment = [
        { individual_id: directory.body.individuals[0].id, configuration: { employee_deduction: { type: 'percent', amount: 500 } } },
      ];
      const enrollKey = freshKey();
      const path = `/employer/benefits/${created.body.benefit_id}/individuals`;
      const enrolled = await post(path, enrollment, employer.token, enrollKey);
      expect(enrolled.status).toBe(200);
      expect(enrolled.body.job_id).toMatch(UUID);
      const jobsAfterEnroll = await jobsOf();
      const enrolledAgain = await post(path, enrollment, employer.token, enrollKey);
      expectReplayOf(enrolledAgain, enrolled);
      expect(enrolledAgain.body.job_id).toBe(enrolled.body.job_id);
      expect(await jobsOf()).toBe(jobsAfterEnroll);

      const changed = await post(path, [{ ...enrollment[0], configuration: { employee_deduction: { type: 'percent', amount: 600 } } }], employer.token, enrollKey);
      expect(changed.status).toBe(409);
      expect(changed.body.service_code).toBe('idempotency_key_reused');
    });
  });

  describe('the same key with another request', () => {
    it('is 409 conflict_error / idempotency_key_reused, for another body, path or query', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      expect((await post(RULES, rule('4010'), employer.token, key)).status).toBe(201);
      const others = [
        await post(RULES, rule('4020'), employer.token, key),
        await post('/sandbox/directory', [person()], employer.token, key),
        await post(`${RULES}?entity_ids=${employer.entityId}`, rule('4010'), employer.token, key),
      ];
      for (const res of others) {
        expect(res.status).toBe(409);
        expect(res.body).toEqual({
          code: 409,
          name: 'conflict_error',
          service_code: 'idempotency_key_reused',
          message: expect.stringMatching(/Idempotency-Key was already used with a different request/),
        });
      }
      expect(await rulesOf(employer)).toBe(1);
      expect(await individualsOf(employer)).toBe(3);
    });
  });

  describe('scope', () => {
    it('keeps keys per connection: another connection’s same key and body is its own request', async () => {
      const [a, b] = [await sandboxEmployer(), await sandboxEmployer()];
      const key = freshKey();
      const first = await post(RULES, rule(), a.token, key);
      const other = await post(RULES, rule(), b.token, key);
      expect(other.status).toBe(201);
      expect(other.headers.get('idempotent-replayed')).toBeNull();
      expect(other.body.id).not.toBe(first.body.id);
      expect([await rulesOf(a), await rulesOf(b)]).toEqual([1, 1]);
    });

    it('keeps keys per application on Basic routes and never replays to wrong credentials', async () => {
      const key = freshKey();
      const body = { provider_id: 'sandbox_automated', employee_size: 2 };
      const connectionsOf = (credentials: IssuedCredentials) =>
        count(`SELECT count(*) AS n FROM connections WHERE application_id = $1`, [credentials.client_id]);
      const before = await connectionsOf(app);

      const first = await service.request('/sandbox/connections', json(body, { ...basic(app), 'idempotency-key': key }));
      expect(first.status).toBe(200);
      const again = await service.request('/sandbox/connections', json(body, { ...basic(app), 'idempotency-key': key }));
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      // The same connection, never its token again (see 'answers that carry a secret').
      const { access_token: token, ...connection } = first.body;
      expect(again.body).toEqual(connection);
      expect(again.text).not.toContain(token);
      expect(await connectionsOf(app)).toBe(before + 1);

      // Same client id, wrong secret: the route's own 401, never the stored token.
      const impostor = await service.request(
        '/sandbox/connections',
        json(body, { ...basic({ ...app, client_secret: 'not-the-secret' }), 'idempotency-key': key }),
      );
      expect(impostor.status).toBe(401);
      expect(impostor.text).not.toContain(first.body.access_token);

      const otherApplication = await service.request('/sandbox/connections', json(body, { ...basic(otherApp), 'idempotency-key': key }));
      expect(otherApplication.status).toBe(200);
      expect(otherApplication.headers.get('idempotent-replayed')).toBeNull();
      expect(otherApplication.body.connection_id).not.toBe(first.body.connection_id);
      expect(await connectionsOf(app)).toBe(before + 1);
    });

    it('does not store authentication failures', async () => {
      const key = freshKey();
      const body = { provider_id: 'sandbox_automated', employee_size: 2 };
      const wrong = await service.request('/sandbox/connections', json(body, { ...basic({ ...app, client_secret: 'nope' }), 'idempotency-key': key }));
      expect(wrong.status).toBe(401);
      const right = await service.request('/sandbox/connections', json(body, { ...basic(app), 'idempotency-key': key }));
      expect(right.status).toBe(200);
      expect(right.headers.get('idempotent-replayed')).toBeNull();
    });
  });

  describe('answers that carry a secret (issue 38, finding 5)', () => {
    const storedAnswers = async () =>
      ((await dataSource.query(`SELECT coalesce(string_agg(response_body, ' '), '') AS bodies FROM idempotency_keys`))[0].bodies as string);

    async function codeFor(credentials: IssuedCredentials) {
      const session = await service.request(
        '/connect/sessions',
        json({ customer_id: freshKey(), customer_name: 'Acme Corp', products: ['company'], redirect_uri: REDIRECT_URI }, basic(credentials)),
      );
      expect(session.status).toBe(201);
      const flow = await service.app.get(ConnectSessionsService).complete(session.body.session_id, {
        providerId: 'sandbox_automated',
        authenticationType: 'credential',
        manual: false,
        entityNames: ['Acme Corp'],
      });
      return flow.code;
    }

    it('never replays a token exchange: the retry is a second use of the code, refused, and it revokes the token', async () => {
      const code = await codeFor(app);
      const key = freshKey();
      const exchange = () =>
        service.request(
          '/auth/token',
          json({ client_id: app.client_id, client_secret: app.client_secret, code, redirect_uri: REDIRECT_URI }, { 'idempotency-key': key }),
        );
      const first = await exchange();
      expect(first.status).toBe(200);
      expect(first.headers.get('cache-control')).toBe('no-store');
      expect(await storedAnswers()).not.toContain(first.body.access_token);

      const again = await exchange();
      expect(again.status).toBe(400);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      expect(again.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_grant' });
      expect(again.text).not.toContain(first.body.access_token);
      // RFC 6749 §4.1.2, as without the key: the token the code issued is revoked.
      const introspected = await service.request('/introspect', { headers: bearer(first.body.access_token) });
      expect(introspected.status).toBe(401);
      // ... and a third try hands out no revoked token either.
      const third = await exchange();
      expect(third.status).toBe(400);
      expect(third.text).not.toContain(first.body.access_token);
      expect(await everythingStored(service)).not.toContain(first.body.access_token);
    });

    it('replays a webhook endpoint’s creation and rotation without the signing secret, also once it is deleted, and never stores it', async () => {
      const createKey = freshKey();
      const create = () =>
        service.request('/webhooks/endpoints', json({ url: 'https://hooks.platform.example.com/benefits' }, { ...basic(app), 'idempotency-key': createKey }));
      const created = await create();
      expect(created.status).toBe(201);
      expect(created.body.secret).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(created.headers.get('cache-control')).toBe('no-store');
      const { secret, ...endpoint } = created.body;

      const rotateKey = freshKey();
      const rotate = () =>
        service.request(`/webhooks/endpoints/${endpoint.id}/rotate-secret`, { method: 'POST', headers: { ...basic(app), 'idempotency-key': rotateKey } });
      const rotated = await rotate();
      expect(rotated.status).toBe(200);
      expect(rotated.headers.get('cache-control')).toBe('no-store');
      const { secret: newSecret, ...afterRotation } = rotated.body;
      expect(newSecret).toMatch(/^[A-Za-z0-9+/]{43}=$/);

      const check = async () => {
        const [createdAgain, rotatedAgain] = [await create(), await rotate()];
        for (const [again, first, shown] of [
          [createdAgain, created, endpoint],
          [rotatedAgain, rotated, afterRotation],
        ] as const) {
          expect(again.status).toBe(first.status);
          expect(again.headers.get('idempotent-replayed')).toBe('true');
          expect(again.headers.get('cache-control')).toBe('no-store');
          expect(again.body).toEqual(shown);
          expect(again.text).not.toContain(secret);
          expect(again.text).not.toContain(newSecret);
        }
      };
      const endpoints = async () =>
        (await dataSource.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE application_id = $1`, [app.client_id]))[0].n;
      await check();
      expect(await endpoints()).toBe(1);
      expect((await service.request(`/webhooks/endpoints/${endpoint.id}`, { method: 'DELETE', headers: basic(app) })).status).toBe(200);
      await check();
      expect(await endpoints()).toBe(0);
      // The secrets are kept nowhere in clear (the endpoint's own is sealed, and now gone).
      const stored = await everythingStored(service);
      expect(stored).not.toContain(secret);
      expect(stored).not.toContain(newSecret);
    });

    it('replays a sandbox connection or account without its access token, and never stores the token', async () => {
      const key = freshKey();
      const body = { provider_id: 'sandbox_automated', employee_size: 2 };
      const first = await service.request('/sandbox/connections', json(body, { ...basic(app), 'idempotency-key': key }));
      expect(first.status).toBe(200);
      const accountKey = freshKey();
      const accountBody = { company_id: first.body.company_id, provider_id: 'sandbox_automated' };
      const account = await service.request('/sandbox/connections/accounts', json(accountBody, { ...basic(app), 'idempotency-key': accountKey }));
      expect(account.status).toBe(200);
      // Disconnected: its tokens are revoked; a replay must not hand them out.
      const disconnect = await service.request('/sandbox/connections/accounts', {
        ...json({ connection_status: 'disconnected' }, bearer(account.body.access_token)),
        method: 'PUT',
      });
      expect(disconnect.status).toBe(200);
      for (const [path, sent, answer, replayKey] of [
        ['/sandbox/connections', body, first, key],
        ['/sandbox/connections/accounts', accountBody, account, accountKey],
      ] as const) {
        const again = await service.request(path, json(sent, { ...basic(app), 'idempotency-key': replayKey }));
        expect(again.status).toBe(200);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(again.headers.get('cache-control')).toBe('no-store');
        const { access_token: token, ...rest } = answer.body;
        expect(again.body).toEqual(rest);
        expect(again.text).not.toContain(token);
      }
      const stored = await everythingStored(service);
      expect(stored).not.toContain(first.body.access_token);
      expect(stored).not.toContain(account.body.access_token);
    });

    it('migration 1797930000000 clears the secrets that answers kept before it', async () => {
      const rows: [string, string | null][] = [
        ['token', JSON.stringify({ access_token: 'tok-exchange-secret', token_type: 'bearer', connection_id: 'c1', client_type: 'sandbox', connection_type: 'provider' })],
        ['sandbox', JSON.stringify({ connection_id: 'c2', access_token: 'tok-sandbox-secret', token_type: 'bearer', authentication_type: 'credential' })],
        ['webhook', JSON.stringify({ id: 'e1', url: 'https://x.example.com/', secret: 'signing-secret-in-clear' })],
        ['plain', JSON.stringify({ id: 'r1', note: 'mentions "secret" and "access_token" only as values' })],
        ['list', JSON.stringify(['secret', 'access_token'])],
        ['empty', null],
      ];
      const scope = await keptBeforeMigration(rows, new IdempotencySecretAnswers1797930000000());
      const left: { key: string; response_body: string | null }[] = await dataSource.query(
        `SELECT key, response_body FROM idempotency_keys WHERE scope = $1 ORDER BY key`,
        [scope],
      );
      const byKey = Object.fromEntries(left.map((r) => [r.key, r.response_body === null ? null : JSON.parse(r.response_body)]));
      expect(byKey).toEqual({
        // An exchange is not replayed any more: its retry is a second use of the code.
        sandbox: { connection_id: 'c2', token_type: 'bearer', authentication_type: 'credential' },
        webhook: { id: 'e1', url: 'https://x.example.com/' },
        plain: JSON.parse(rows[3][1]!),
        list: ['secret', 'access_token'],
        empty: null,
      });
    });
  });

  describe('answers that may carry personal data', () => {
    const keptBody = async (key: string) =>
      ((await dataSource.query(`SELECT response_body FROM idempotency_keys WHERE key = $1`, [key]))[0]?.response_body ?? null) as string | null;

    async function individualWithSsn(): Promise<{ employer: Employer; body: unknown; ssn: string }> {
      const employer = await sandboxEmployer();
      const directory = await service.request('/employer/directory', { headers: bearer(employer.token) });
      expect(directory.status).toBe(200);
      const body = { requests: [{ individual_id: directory.body.individuals[0].id }], options: { include: ['ssn'] } };
      const read = await post('/employer/individual', body, employer.token);
      const ssn = read.body.responses[0].body.ssn as string;
      expect(ssn).toMatch(/^\d{3}-?\d{2}-?\d{4}$/);
      return { employer, body, ssn };
    }

    it('keeps an individual read with SSNs only sealed, and replays it byte for byte', async () => {
      const { employer, body, ssn } = await individualWithSsn();
      const key = freshKey();
      const first = await post('/employer/individual', body, employer.token, key);
      expect(first.status).toBe(200);
      expect(first.text).toContain(ssn);
      expect(first.headers.get('cache-control')).toBe('no-store');
      const kept = await keptBody(key);
      expect(kept).toMatch(/^v1\./);
      expect(kept).not.toContain(ssn);
      const replay = await post('/employer/individual', body, employer.token, key);
      expectReplayOf(replay, first);
      expect(replay.headers.get('cache-control')).toBe('no-store');
    });

    it('keeps sandbox individuals made with their SSNs only sealed', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const made = [{ ...person('Grace'), ssn: '123-45-6789' }];
      const first = await post('/sandbox/directory', made, employer.token, key);
      expect(first.status).toBe(200);
      expect(first.text).toContain('123-45-6789');
      expect(await keptBody(key)).not.toContain('123-45-6789');
      expectReplayOf(await post('/sandbox/directory', made, employer.token, key), first);
      expect(await individualsOf(employer)).toBe(4);
    });

    it('keeps an error answer of such a route as it is (it carries no personal data)', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const body = { requests: [], options: { include: ['ssn'] } };
      const first = await post('/employer/individual', body, employer.token, key);
      expect(first.status).toBe(400);
      expect(JSON.parse((await keptBody(key))!)).toEqual(first.body);
      expectReplayOf(await post('/employer/individual', body, employer.token, key), first);
    });

    it('answers a replay whose sealed answer cannot be opened (another sealing key) as not kept, and does not run it again', async () => {
      const { employer, body, ssn } = await individualWithSsn();
      const key = freshKey();
      const first = await post('/employer/individual', body, employer.token, key);
      expect(first.status).toBe(200);
      const underAnotherKey = new SecretBox('another-sealing-key-material-of-32-chars', 'idempotent-answers').seal(first.text);
      await dataSource.query(`UPDATE idempotency_keys SET response_body = $2 WHERE key = $1`, [key, underAnotherKey]);
      const replay = await post('/employer/individual', body, employer.token, key);
      expect(replay.status).toBe(409);
      expect(replay.body).toMatchObject({ name: 'conflict_error', service_code: 'idempotency_answer_not_kept', message: expect.stringMatching(/status 200.*sealing key/) });
      expect(replay.text).not.toContain(ssn);
    });

    it('migration 1798600000000 drops the SSNs that answers kept in clear before, and nothing else', async () => {
      const rows: [string, string][] = [
        ['individual', JSON.stringify({ responses: [{ code: 200, body: { id: 'i1', first_name: 'Ada', ssn: '123-45-6789' } }] })],
        ['forwarded', JSON.stringify({ statusCode: 200, data: JSON.stringify({ employees: [{ ssn: '987-65-4321' }] }) })],
        ['no-ssn', JSON.stringify({ responses: [{ code: 200, body: { id: 'i2', first_name: 'Grace', ssn: null } }] })],
        ['other', JSON.stringify({ id: 'r1', note: 'an ssn is a number' })],
      ];
      const scope = await keptBeforeMigration(rows, new IdempotencyPersonalAnswers1798600000000());
      const left: { key: string; response_body: string | null; response_not_kept: string | null }[] = await dataSource.query(
        `SELECT key, response_body, response_not_kept FROM idempotency_keys WHERE scope = $1 ORDER BY key`,
        [scope],
      );
      expect(left).toEqual([
        { key: 'forwarded', response_body: null, response_not_kept: expect.stringMatching(/personal data/) },
        { key: 'individual', response_body: null, response_not_kept: expect.stringMatching(/personal data/) },
        { key: 'no-ssn', response_body: rows[2][1], response_not_kept: null },
        { key: 'other', response_body: rows[3][1], response_not_kept: null },
      ]);
    });
  });

  describe('failures the server owns', () => {
    it('does not keep a 500: the retry runs again', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const crashed = await post('/idempotency-probe/crash-once', {}, employer.token, key);
      expect(crashed.status).toBe(500);
      const retried = await post('/idempotency-probe/crash-once', {}, employer.token, key);
      expect(retried.status).toBe(201);
      expect(retried.body).toEqual({ run: 2 });
      expectReplayOf(await post('/idempotency-probe/crash-once', {}, employer.token, key), retried);
    });

    it('does not keep a provider error (502): the retry runs again', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const failed = await post('/idempotency-probe/provider-down-once', {}, employer.token, key);
      expect(failed.status).toBe(502);
      const retried = await post('/idempotency-probe/provider-down-once', {}, employer.token, key);
      expect(retried.status).toBe(201);
      expect(retried.body).toEqual({ run: 2 });
    });
  });

  describe('the header itself', () => {
    it('changes nothing when absent', async () => {
      const employer = await sandboxEmployer();
      expect((await post(RULES, rule(), employer.token)).status).toBe(201);
      expect((await post(RULES, rule(), employer.token)).status).toBe(201);
      expect(await rulesOf(employer)).toBe(2);
    });

    it.each([
      ['empty', ''],
      ['300 characters', 'k'.repeat(300)],
    ])('refuses an %s key with 400 naming the header, before any effect', async (_, key) => {
      const employer = await sandboxEmployer();
      const res = await post(RULES, rule(), employer.token, key);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error', service_code: 'invalid_idempotency_key' });
      expect(res.body.message).toMatch(/^Idempotency-Key must be 1 to 255 printable ASCII characters/);
      expect(await rulesOf(employer)).toBe(0);
    });

    it('still answers 401 first without credentials', async () => {
      const res = await service.request(RULES, json(rule(), { 'service-api-version': '2020-09-17', 'idempotency-key': '' }));
      expect(res.status).toBe(401);
    });

    it('is ignored on other methods and on the connect page’s form posts', async () => {
      const employer = await sandboxEmployer();
      const read = await service.request(RULES, { headers: { ...bearer(employer.token), 'idempotency-key': '' } });
      expect(read.status).toBe(200);
      const form = await service.request('/connect/provider', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': '' },
        body: 'state=x',
      });
      expect(form.headers.get('content-type')).toMatch(/^text\/html/);
    });
  });

  describe('expiry', () => {
    it('forgets a key after 24 h by the service clock: the request runs again', async () => {
      const employer = await sandboxEmployer();
      const key = freshKey();
      const first = await post(RULES, rule(), employer.token, key);
      clock.advance(DAY_MS - 1000);
      expectReplayOf(await post(RULES, rule(), employer.token, key), first);
      clock.advance(1000);
      const later = await post(RULES, rule(), employer.token, key);
      expect(later.status).toBe(201);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
      expect(later.body.id).not.toBe(first.body.id);
      expect(await rulesOf(employer)).toBe(2);
      // ... and the new answer is the one kept from now on.
      expectReplayOf(await post(RULES, rule(), employer.token, key), later);
    });
  });
});

describeWithPostgres('Idempotency-Key: what one application may store (issue 38, finding 7)', () => {
  let service: TestService;
  let dataSource: DataSource;
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  const limits = { IDEMPOTENCY_MAX_ANSWER_BYTES: '2000', IDEMPOTENCY_ANSWER_BYTES_PER_APPLICATION: '5000', IDEMPOTENCY_KEYS_PER_APPLICATION: '12' };
  let n = 0;
  const freshKey = () => `bound-${Date.now()}-${++n}`;

  beforeAll(async () => {
    service = await startTestService({ clock, extraModules: [ProbeModule], env: limits });
    dataSource = service.app.get(DataSource);
  });
  afterAll(() => service?.close());

  async function tokenOf(credentials: IssuedCredentials): Promise<string> {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 1 }, basic(credentials)));
    expect(res.status).toBe(200);
    return res.body.access_token;
  }
  const sized = (token: string, bytes: number, key?: string) =>
    service.request('/idempotency-probe/sized', json({ bytes }, { ...bearer(token), ...(key === undefined ? {} : { 'idempotency-key': key }) }));
  /** Bytes of answers kept for the application, over all its connections. */
  const keptBytes = async (credentials: IssuedCredentials) =>
    Number(
      (
        await dataSource.query(
          `SELECT coalesce(sum(octet_length(k.response_body)), 0) AS n FROM idempotency_keys k
            WHERE k.scope IN (SELECT 'connection:' || c.id FROM connections c WHERE c.application_id = $1)`,
          [credentials.client_id],
        )
      )[0].n,
    );

  it('answers an answer larger than IDEMPOTENCY_MAX_ANSWER_BYTES in full but keeps only its outcome: a retry is told so, and not run again', async () => {
    const token = await tokenOf(await createApplication(service));
    const key = freshKey();
    const first = await sized(token, 3000, key);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(3000);
    const runs = sizedRuns;
    const again = await sized(token, 3000, key);
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toMatchObject({ code: 409, name: 'conflict_error', service_code: 'idempotency_answer_not_kept' });
    expect(again.body.message).toMatch(/already processed \(status 200\)/);
    expect(again.body.message).toMatch(/larger than the 2000 bytes/);
    expect(sizedRuns).toBe(runs);
    // Another body with the key is still another request.
    expect((await sized(token, 10, key)).body.service_code).toBe('idempotency_key_reused');
    // A small answer is kept as before.
    const smallKey = freshKey();
    const small = await sized(token, 100, smallKey);
    const smallAgain = await sized(token, 100, smallKey);
    expect([smallAgain.status, smallAgain.text, smallAgain.headers.get('idempotent-replayed')]).toEqual([200, small.text, 'true']);
  });

  it('keeps at most IDEMPOTENCY_ANSWER_BYTES_PER_APPLICATION of answers per application, over all its connections', async () => {
    const limited = await createApplication(service);
    const tokens = [await tokenOf(limited), await tokenOf(limited)];
    const sent: { token: string; key: string; answer: TestResponse }[] = [];
    for (let i = 0; i < 8; i++) {
      const token = tokens[i % 2];
      const key = freshKey();
      const answer = await sized(token, 1500, key);
      expect(answer.status).toBe(200);
      sent.push({ token, key, answer });
    }
    expect(await keptBytes(limited)).toBeLessThanOrEqual(5000);
    const replays = [];
    for (const { token, key, answer } of sent) {
      const again = await sized(token, 1500, key);
      if (again.status === 200) expect(again.text).toBe(answer.text);
      replays.push(again.status === 200 ? 'replayed' : again.body.service_code);
    }
    // The first answers fit (3 × ~1.5 kB); the later ones were answered but not kept, and are not run again.
    expect(replays).toEqual(['replayed', 'replayed', 'replayed', ...Array(5).fill('idempotency_answer_not_kept')]);
    // Another application has its own allowance.
    const other = await tokenOf(await createApplication(service));
    const key = freshKey();
    const first = await sized(other, 1500, key);
    expect((await sized(other, 1500, key)).text).toBe(first.text);
  });

  it('refuses new keys past IDEMPOTENCY_KEYS_PER_APPLICATION with 429 and Retry-After until its day is over; replays and keyless requests go on', async () => {
    const limited = await createApplication(service);
    const token = await tokenOf(limited);
    const keys = Array.from({ length: 12 }, () => freshKey());
    for (const key of keys) expect((await sized(token, 10, key)).status).toBe(200);
    const runs = sizedRuns;
    const refused = await sized(token, 10, freshKey());
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 429, name: 'rate_limit_error', service_code: 'idempotency_keys_exhausted' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(24 * 3600);
    expect(sizedRuns).toBe(runs);
    // Keys already taken still replay; a request without a key still runs; other applications are not held back.
    expect((await sized(token, 10, keys[0])).headers.get('idempotent-replayed')).toBe('true');
    expect((await sized(token, 10)).status).toBe(200);
    expect((await sized(await tokenOf(await createApplication(service)), 10, freshKey())).status).toBe(200);
    // A day later the allowance is back.
    clock.advance(DAY_MS);
    expect((await sized(token, 10, freshKey())).status).toBe(200);
  });
});

describeWithPostgres('Idempotency-Key: personal data without a sealing key', () => {
  let service: TestService;
  let app: IssuedCredentials;

  beforeAll(async () => {
    // A deployment on its own database without WEBHOOK_SECRETS_KEY has nothing to seal with.
    service = await startTestService({ env: { WEBHOOK_SECRETS_KEY: undefined } });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  it('keeps only the status of an answer that may carry SSNs: the replay is told so, never shown them', async () => {
    const made = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 2 }, basic(app)));
    expect(made.status).toBe(200);
    const token = made.body.access_token as string;
    const directory = await service.request('/employer/directory', { headers: bearer(token) });
    const body = { requests: [{ individual_id: directory.body.individuals[0].id }], options: { include: ['ssn'] } };
    const send = () => service.request('/employer/individual', json(body, { ...bearer(token), 'idempotency-key': 'personal-1' }));
    const first = await send();
    expect(first.status).toBe(200);
    const ssn = first.body.responses[0].body.ssn as string;
    expect(ssn).toMatch(/^\d{3}-?\d{2}-?\d{4}$/);
    const [row] = await service.app.get(DataSource).query(`SELECT response_body, response_not_kept FROM idempotency_keys WHERE key = 'personal-1'`);
    expect(row).toEqual({ response_body: null, response_not_kept: expect.stringMatching(/personal data.*WEBHOOK_SECRETS_KEY/) });
    const replay = await send();
    expect(replay.status).toBe(409);
    expect(replay.body).toMatchObject({ service_code: 'idempotency_answer_not_kept', message: expect.stringMatching(/status 200.*personal data/) });
    expect(replay.text).not.toContain(ssn);
  });
});
