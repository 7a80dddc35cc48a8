import { Controller, Get, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConnectionEntity } from '../../src/domain/connections/entity-scope';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { CurrentEntity, RequiresAccessToken } from '../../src/modules/auth/access-token.guard';
import { ConnectSessionsService } from '../../src/modules/auth/connect-sessions.service';
import { RequiresApiVersion } from '../../src/infrastructure/http/api-version';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, connectEmployer, createApplication, everythingStored, REDIRECT_URI } from '../utils/connect';
import { json, startTestService, TestService } from '../utils/test-app';

/** Stands in for the data operations: scoped by product and entity like every real one. */
@Controller('probe')
class ScopedProbeController {
  @Get('payments')
  @RequiresAccessToken('payment')
  @RequiresApiVersion()
  payments(@CurrentEntity() entity: ConnectionEntity) {
    return { entity_id: entity.id };
  }
}

@Module({ controllers: [ScopedProbeController] })
class ScopedProbeModule {}

const sessionBody = (extra: Record<string, unknown> = {}) => ({
  customer_id: 'customer-1',
  customer_name: 'Acme Corp',
  products: ['company', 'payment'],
  redirect_uri: REDIRECT_URI,
  ...extra,
});

describeWithPostgres('authorization', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let otherApp: IssuedCredentials;

  beforeAll(async () => {
    service = await startTestService({ extraModules: [ScopedProbeModule] });
    app = await createApplication(service);
    otherApp = await createApplication(service);
  });
  afterAll(() => service?.close());

  describe('POST /connect/sessions', () => {
    it('creates a session with HTTP Basic or body credentials', async () => {
      const res = await service.request('/connect/sessions', json(sessionBody({ customer_id: 'c-basic' }), basic(app)));
      expect(res.status).toBe(201);
      expect(res.body.session_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.body.connect_url).toBe(`${service.url}/connect?session=${res.body.session_id}`);
      const viaBody = await service.request(
        '/connect/sessions',
        json(sessionBody({ customer_id: 'c-body', client_id: app.client_id, client_secret: app.client_secret })),
      );
      expect(viaBody.status).toBe(201);
    });

    it('reuses the staged session of a customer and updates its parameters; ignores state', async () => {
      const first = await service.request('/connect/sessions', json(sessionBody({ customer_id: 'c-reuse' }), basic(app)));
      const second = await service.request(
        '/connect/sessions',
        json(sessionBody({ customer_id: 'c-reuse', customer_name: 'Acme Renamed', state: 'xyz' }), basic(app)),
      );
      expect(second.status).toBe(201);
      expect(second.body.session_id).toBe(first.body.session_id);
      const [row] = await service.app.get(DataSource).query(`SELECT customer_name FROM connect_sessions WHERE id = $1`, [first.body.session_id]);
      expect(row.customer_name).toBe('Acme Renamed');
    });

    it('gives concurrent creates for one customer one session', async () => {
      const results = await Promise.all(
        Array.from({ length: 5 }, () => service.request('/connect/sessions', json(sessionBody({ customer_id: 'c-race' }), basic(app)))),
      );
      expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
      expect(new Set(results.map((r) => r.body.session_id)).size).toBe(1);
    });

    it('starts a new session once the staged one has expired', async () => {
      const first = await service.request('/connect/sessions', json(sessionBody({ customer_id: 'c-exp' }), basic(app)));
      await service.app.get(DataSource).query(`UPDATE connect_sessions SET expires_at = now() - interval '1 minute' WHERE id = $1`, [first.body.session_id]);
      const second = await service.request('/connect/sessions', json(sessionBody({ customer_id: 'c-exp' }), basic(app)));
      expect(second.body.session_id).not.toBe(first.body.session_id);
    });

    it.each([
      ['wrong secret', { authorization: `Basic ${Buffer.from('x:y').toString('base64')}` }],
      ['malformed Basic', { authorization: 'Basic !!!' }],
      ['Basic without a colon', { authorization: `Basic ${Buffer.from('nocolon').toString('base64')}` }],
      ['no credentials', {}],
    ])('refuses %s with 401', async (_, headers) => {
      const res = await service.request('/connect/sessions', json(sessionBody(), headers as Record<string, string>));
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 401, name: 'authentication_error' });
    });

    it.each([
      [{ customer_id: undefined }, /customer_id/],
      [{ customer_name: '' }, /customer_name/],
      [{ products: ['payroll'] }, /products must be one of/],
      [{ products: [] }, /products/],
      [{ minutes_to_expire: 129_601 }, /minutes_to_expire/],
      [{ customer_email: 'not-an-email' }, /customer_email/],
      [{ sandbox: 'yes' }, /sandbox/],
      [{ colour: 'blue' }, /colour: unknown field/],
    ])('names the bad field %j', async (change, message) => {
      const res = await service.request('/connect/sessions', json(sessionBody(change), basic(app)));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_request' });
      expect(res.body.message).toMatch(message);
    });

    it('refuses an unregistered redirect_uri', async () => {
      const res = await service.request('/connect/sessions', json(sessionBody({ redirect_uri: 'https://evil.example/cb' }), basic(app)));
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/not registered/);
    });

    it('answers connection_already_exists once the customer is connected', async () => {
      const employer = await connectEmployer(service, app, { customerId: 'c-live' });
      const res = await service.request('/connect/sessions', json(sessionBody({ customer_id: 'c-live' }), basic(app)));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        name: 'invalid_request_error',
        service_code: 'connection_already_exists',
        context: { customer_id: 'c-live', connection_id: employer.connectionId },
      });
      // Another application's customer of the same id is someone else.
      expect((await service.request('/connect/sessions', json(sessionBody({ customer_id: 'c-live' }), basic(otherApp)))).status).toBe(201);
    });
  });

  describe('POST /connect/sessions/reauthenticate', () => {
    it('opens a session for the connection that can change products and add entities', async () => {
      const employer = await connectEmployer(service, app, { products: ['company'] });
      const res = await service.request(
        '/connect/sessions/reauthenticate',
        json({ connection_id: employer.connectionId, products: ['company', 'payment'], redirect_uri: REDIRECT_URI }, basic(app)),
      );
      expect(res.status).toBe(201);
      const flow = await service.app.get(ConnectSessionsService).complete(res.body.session_id, {
        providerId: 'sandbox_automated',
        authenticationType: 'credential',
        manual: false,
        entityNames: ['Acme Corp', 'Acme Corp West'],
      });
      expect(flow.connection.id).toBe(employer.connectionId);
      expect(flow.connection.entities.map((e) => e.name)).toEqual(['Acme Corp', 'Acme Corp West']);
      const introspect = await service.request('/introspect', { headers: bearer(employer.accessToken) });
      expect(introspect.body.products).toEqual(['company', 'payment']);
      expect(introspect.body.entities).toHaveLength(2);
    });

    it('refuses unknown and foreign connections, and body credentials', async () => {
      const employer = await connectEmployer(service, app);
      const unknown = await service.request(
        '/connect/sessions/reauthenticate',
        json({ connection_id: '2b7e1f5c-4a43-4c9e-9a39-6a1f0a2b3c4d' }, basic(app)),
      );
      expect({ status: unknown.status, body: unknown.body }).toMatchObject({ status: 400, body: { name: 'invalid_request_error', service_code: 'connection_not_found' } });
      const foreign = await service.request('/connect/sessions/reauthenticate', json({ connection_id: employer.connectionId }, basic(otherApp)));
      expect({ status: foreign.status, body: foreign.body }).toMatchObject({ status: 400, body: { service_code: 'connection_not_found' } });
      const viaBody = await service.request(
        '/connect/sessions/reauthenticate',
        json({ connection_id: employer.connectionId, client_id: app.client_id, client_secret: app.client_secret }),
      );
      expect(viaBody.status).toBe(401);
    });
  });

  describe('POST /auth/token', () => {
    async function codeFor(credentials = app, redirectUri: string | null = REDIRECT_URI) {
      const session = await service.request(
        '/connect/sessions',
        json(sessionBody({ customer_id: `c-${Math.random()}`, redirect_uri: redirectUri ?? undefined }), basic(credentials)),
      );
      return service.app.get(ConnectSessionsService).complete(session.body.session_id, {
        providerId: 'sandbox_automated',
        authenticationType: 'credential',
        manual: false,
        entityNames: ['Acme Corp'],
      });
    }
    /** `redirectUri` null leaves the field out of the request. */
    const exchange = (code: string, credentials = app, redirectUri: string | null = REDIRECT_URI) =>
      service.request(
        '/auth/token',
        json({ client_id: credentials.client_id, client_secret: credentials.client_secret, code, redirect_uri: redirectUri ?? undefined }),
      );

    it('returns the token response of DECISIONS.md', async () => {
      const flow = await codeFor();
      const res = await exchange(flow.code);
      expect(res.status).toBe(200);
      // A token response is never cached (RFC 6749 §5.1).
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('pragma')).toBe('no-cache');
      expect(res.body).toEqual({
        access_token: expect.stringMatching(/^\S{40,}$/),
        token_type: 'bearer',
        connection_id: flow.connection.id,
        customer_id: flow.connection.customerId,
        account_id: flow.connection.accountId,
        company_id: flow.connection.companyId,
        entity_ids: [flow.connection.entities[0].id],
        products: ['company', 'payment'],
        provider_id: 'sandbox_automated',
        client_type: 'sandbox',
        connection_type: expect.any(String),
      });
    });

    it('works once; a second use fails and revokes the token the first one issued (RFC 6749 §4.1.2)', async () => {
      const flow = await codeFor();
      const first = await exchange(flow.code);
      expect(first.status).toBe(200);
      expect((await service.request('/introspect', { headers: bearer(first.body.access_token) })).status).toBe(200);
      const second = await exchange(flow.code);
      expect(second.status).toBe(400);
      expect(second.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_grant', message: expect.stringMatching(/already been used/) });
      const revoked = await service.request('/introspect', { headers: bearer(first.body.access_token) });
      expect(revoked.status).toBe(401);
      expect(revoked.body.service_code).toBe('invalid_access_token');
      // A third try is refused the same way.
      expect((await exchange(flow.code)).status).toBe(400);
    });

    it("revokes only that code's token, not the connection's others", async () => {
      const employer = await connectEmployer(service, app);
      const session = await service.request('/connect/sessions/reauthenticate', json({ connection_id: employer.connectionId, redirect_uri: REDIRECT_URI }, basic(app)));
      const reauth = await service.app.get(ConnectSessionsService).complete(session.body.session_id, {
        providerId: 'sandbox_automated',
        authenticationType: 'credential',
        manual: false,
        entityNames: [],
      });
      const first = await exchange(reauth.code);
      expect(first.status).toBe(200);
      expect((await exchange(reauth.code)).status).toBe(400);
      expect((await service.request('/introspect', { headers: bearer(first.body.access_token) })).status).toBe(401);
      expect((await service.request('/introspect', { headers: bearer(employer.accessToken) })).status).toBe(200);
    });

    it('lets only one of two concurrent exchanges of a code succeed; the other revokes its token', async () => {
      for (let round = 0; round < 5; round++) {
        const flow = await codeFor();
        const answers = await Promise.all([exchange(flow.code), exchange(flow.code)]);
        expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
        const winner = answers.find((a) => a.status === 200)!;
        expect((await service.request('/introspect', { headers: bearer(winner.body.access_token) })).status).toBe(401);
        const tokens = await service.app.get(DataSource).query(`SELECT revoked_at FROM access_tokens WHERE connection_id = $1`, [flow.connection.id]);
        expect(tokens).toEqual([{ revoked_at: expect.any(Date) }]);
      }
    });

    it('revokes nothing when another client presents a used code', async () => {
      const flow = await codeFor();
      const first = await exchange(flow.code);
      expect((await exchange(flow.code, otherApp)).status).toBe(400);
      expect((await service.request('/introspect', { headers: bearer(first.body.access_token) })).status).toBe(200);
    });

    it('is bound to the client and the redirect_uri', async () => {
      const flow = await codeFor();
      expect((await exchange(flow.code, otherApp)).status).toBe(400);
      expect((await exchange(flow.code, app, 'http://127.0.0.1:9/other')).status).toBe(400);
      expect((await exchange(flow.code, app, null)).status).toBe(400);
      expect((await exchange(flow.code)).status).toBe(200); // failed attempts did not burn it
    });

    it('supports the embedded flow without redirect_uri', async () => {
      const flow = await codeFor(app, null);
      expect((await exchange(flow.code, app, null)).status).toBe(200);
    });

    it('expires after ten minutes', async () => {
      const flow = await codeFor();
      await service.app.get(DataSource).query(`UPDATE authorization_codes SET expires_at = now() - interval '1 second'`);
      const res = await exchange(flow.code);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/expired/);
    });

    it('refuses wrong client credentials with 401 and bad bodies with 400', async () => {
      const flow = await codeFor();
      const wrong = await service.request('/auth/token', json({ client_id: app.client_id, client_secret: 'nope', code: flow.code, redirect_uri: REDIRECT_URI }));
      expect(wrong.status).toBe(401);
      const missing = await service.request('/auth/token', json({ client_id: app.client_id, client_secret: app.client_secret }));
      expect(missing.status).toBe(400);
      expect(missing.body.message).toMatch(/code/);
      expect((await service.request('/auth/token', json({ client_id: 1, client_secret: [], code: {} }))).status).toBe(400);
    });
  });

  describe('access tokens', () => {
    it.each([
      ['no Authorization header', {}],
      ['an unknown token', { authorization: 'Bearer not-a-token' }],
      ['a malformed header', { authorization: 'Token abc' }],
    ])('refuses %s with 401', async (_, headers) => {
      const res = await service.request('/introspect', { headers: headers as Record<string, string> });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 401, name: 'authentication_error' });
    });

    it('introspects the connection behind the token', async () => {
      const employer = await connectEmployer(service, app, { customerId: 'c-introspect' });
      const res = await service.request('/introspect', { headers: bearer(employer.accessToken) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        connection_id: employer.connectionId,
        client_id: app.client_id,
        client_type: 'sandbox',
        connection_type: expect.stringMatching(/^(finch|provider)$/),
        customer_id: 'c-introspect',
        customer_name: 'Acme Corp',
        provider_id: 'sandbox_automated',
        connection_status: { status: 'connected' },
        entities: [{ id: employer.entityIds[0], name: 'Acme Corp', source_id: null, status: 'connected' }],
        authentication_methods: [{ type: 'credential', connection_status: { status: 'connected' } }],
      });
    });

    it('enforces product scopes with 403 product_not_granted', async () => {
      const employer = await connectEmployer(service, app, { products: ['company'] });
      const res = await service.request('/probe/payments', { headers: bearer(employer.accessToken) });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ name: 'forbidden_error', service_code: 'product_not_granted' });
    });

    it('requires the version header on scoped operations', async () => {
      const employer = await connectEmployer(service, app);
      const res = await service.request('/probe/payments', { headers: { authorization: `Bearer ${employer.accessToken}` } });
      expect(res.status).toBe(400);
      expect(res.body.service_code).toBe('missing_version_header');
    });

    it('applies the entity_ids rules', async () => {
      const employer = await connectEmployer(service, app, { entityNames: ['Acme', 'Acme West'] });
      const [a, b] = employer.entityIds;
      const headers = bearer(employer.accessToken);
      const required = await service.request('/probe/payments', { headers });
      expect(required.status).toBe(400);
      expect(required.body.message).toMatch(/entity_ids is required/);
      for (const query of [`entity_ids=${b}`, `entity_ids[]=${b}`, `entity_ids%5B%5D=${b}`]) {
        const res = await service.request(`/probe/payments?${query}`, { headers });
        expect(res.body).toEqual({ entity_id: b });
      }
      const two = await service.request(`/probe/payments?entity_ids=${a},${b}`, { headers });
      expect(two.status).toBe(400);
      const other = await connectEmployer(service, app);
      const foreign = await service.request(`/probe/payments?entity_ids=${other.entityIds[0]}`, { headers });
      expect(foreign.status).toBe(403);
      expect(foreign.body.service_code).toBe('entity_not_authorized');
    });

    it("never lets one connection's token reach another's entity", async () => {
      const [x, y] = await Promise.all([connectEmployer(service, app), connectEmployer(service, otherApp)]);
      const res = await service.request(`/probe/payments?entity_ids=${y.entityIds[0]}`, { headers: bearer(x.accessToken) });
      expect(res.status).toBe(403);
      const own = await service.request(`/probe/payments?entity_ids=${x.entityIds[0]}`, { headers: bearer(x.accessToken) });
      expect(own.status).toBe(200);
    });
  });

  describe('disconnection', () => {
    it('POST /disconnect revokes every token of the connection', async () => {
      const employer = await connectEmployer(service, app);
      const other = await connectEmployer(service, app);
      const missingVersion = await service.request('/disconnect', { method: 'POST', headers: { authorization: `Bearer ${employer.accessToken}` } });
      expect(missingVersion.status).toBe(400);
      const res = await service.request('/disconnect', { method: 'POST', headers: bearer(employer.accessToken) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'success' });
      expect((await service.request('/introspect', { headers: bearer(employer.accessToken) })).status).toBe(401);
      expect((await service.request('/probe/payments', { headers: bearer(employer.accessToken) })).status).toBe(401);
      expect((await service.request('/introspect', { headers: bearer(other.accessToken) })).status).toBe(200);
    });

    it('POST /disconnect-entity disconnects only the named entities', async () => {
      const employer = await connectEmployer(service, app, { entityNames: ['Acme', 'Acme West'] });
      const [a, b] = employer.entityIds;
      const headers = { ...bearer(employer.accessToken), 'content-type': 'application/json' };
      const empty = await service.request('/disconnect-entity', { method: 'POST', headers, body: JSON.stringify({ entity_ids: [] }) });
      expect(empty.status).toBe(400);
      const stranger = await connectEmployer(service, app);
      const foreign = await service.request('/disconnect-entity', {
        method: 'POST',
        headers,
        body: JSON.stringify({ entity_ids: [a, stranger.entityIds[0]] }),
      });
      expect(foreign.status).toBe(403);
      const ok = await service.request('/disconnect-entity', { method: 'POST', headers, body: JSON.stringify({ entity_ids: [a] }) });
      expect(ok.body).toEqual({ status: 'success' });
      expect((await service.request(`/probe/payments?entity_ids=${a}`, { headers: bearer(employer.accessToken) })).status).toBe(403);
      // One active entity left: entity_ids may now be omitted.
      expect((await service.request('/probe/payments', { headers: bearer(employer.accessToken) })).body).toEqual({ entity_id: b });
      const introspect = await service.request('/introspect', { headers: bearer(employer.accessToken) });
      expect(introspect.body.entities.map((e: { status: string }) => e.status)).toEqual(['disconnected', 'connected']);
    });
  });

  describe('sandbox connections', () => {
    it('POST /sandbox/connections returns a ready token', async () => {
      const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5, products: ['company', 'payment'] }, basic(app)));
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body).toMatchObject({ provider_id: 'sandbox_automated', token_type: 'bearer', products: ['company', 'payment'] });
      const probe = await service.request('/probe/payments', { headers: bearer(res.body.access_token) });
      expect(probe.body).toEqual({ entity_id: res.body.entity_id });
    });

    it('reads products: null as absent: every product of the provider', async () => {
      const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5, products: null }, basic(app)));
      expect(res.status).toBe(200);
      const all = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5 }, basic(app)));
      expect(res.body.products).toEqual(all.body.products);
      expect(res.body.products.length).toBeGreaterThan(1);
    });

    it.each([
      [{ provider_id: 'no_such_provider' }, 404],
      [{ provider_id: 'sandbox_automated', employee_size: 0 }, 400],
      [{ provider_id: 'sandbox_automated', employee_size: 10_001 }, 400],
      [{ provider_id: 'sandbox_automated', authentication_type: 'telepathy' }, 400],
      [{}, 400],
    ])('refuses %j', async (body, status) => {
      expect((await service.request('/sandbox/connections', json(body, basic(app)))).status).toBe(status);
    });

    it('needs sandbox application credentials', async () => {
      const production = await createApplication(service, { sandbox: false });
      const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated' }, basic(production)));
      expect(res.status).toBe(403);
    });

    it('accounts: a new token for the company, and a forced reauth status', async () => {
      const created = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated' }, basic(app)));
      const account = await service.request(
        '/sandbox/connections/accounts',
        json({ company_id: created.body.company_id, provider_id: 'sandbox_automated' }, basic(app)),
      );
      expect(account.status).toBe(200);
      expect(account.headers.get('cache-control')).toBe('no-store');
      expect(account.body.connection_id).toBe(created.body.connection_id);
      expect(account.body.access_token).not.toBe(created.body.access_token);
      const reauth = await service.request('/sandbox/connections/accounts', {
        method: 'PUT',
        headers: { ...bearer(account.body.access_token), 'content-type': 'application/json' },
        body: JSON.stringify({ connection_status: 'reauth' }),
      });
      expect(reauth.body.connection_status).toBe('reauth');
      const introspect = await service.request('/introspect', { headers: bearer(created.body.access_token) });
      expect(introspect.body.connection_status.status).toBe('reauth');
      const data = await service.request('/probe/payments', { headers: bearer(created.body.access_token) });
      expect(data.status).toBe(401);
      expect(data.body.service_code).toBe('reauthenticate_user');
      const foreign = await service.request(
        '/sandbox/connections/accounts',
        json({ company_id: created.body.company_id, provider_id: 'sandbox_automated' }, basic(otherApp)),
      );
      expect(foreign.status).toBe(404);
    });
  });

  describe('bad input on the token routes', () => {
    const post = (path: string, token: string, body: unknown, method = 'POST') =>
      service.request(path, { method, headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify(body) });

    it.each([
      [{}, /entity_ids/],
      [{ entity_ids: 'not-a-list' }, /entity_ids/],
      [{ entity_ids: [1] }, /entity_ids/],
      [{ entity_ids: ['not-a-uuid'] }, /entity_ids/],
      [{ entity_ids: [], extra: true }, /extra: unknown field/],
    ])('POST /disconnect-entity refuses %j with 400 and changes nothing', async (body, message) => {
      const employer = await connectEmployer(service, app);
      const res = await post('/disconnect-entity', employer.accessToken, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error' });
      expect(res.body.message).toMatch(message);
      const introspect = await service.request('/introspect', { headers: bearer(employer.accessToken) });
      expect(introspect.body.entities.map((e: { status: string }) => e.status)).toEqual(['connected']);
    });

    it.each([
      [{}, 400],
      [{ connection_status: 'sleeping' }, 400],
      [{ connection_status: 'reauth', colour: 'red' }, 400],
    ])('PUT /sandbox/connections/accounts refuses %j', async (body, status) => {
      const created = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated' }, basic(app)));
      const res = await post('/sandbox/connections/accounts', created.body.access_token, body, 'PUT');
      expect(res.status).toBe(status);
      expect((await service.request('/introspect', { headers: bearer(created.body.access_token) })).body.connection_status.status).toBe('connected');
    });

    it.each([
      [{ company_id: '2b7e1f5c-4a43-4c9e-9a39-6a1f0a2b3c4d', provider_id: 'sandbox_automated' }, 404],
      [{ company_id: 'not-a-uuid', provider_id: 'sandbox_automated' }, 400],
      [{ provider_id: 'sandbox_automated' }, 400],
    ])('POST /sandbox/connections/accounts refuses %j', async (body, status) => {
      expect((await service.request('/sandbox/connections/accounts', json(body, basic(app)))).status).toBe(status);
    });

    it('POST /connect/sessions/reauthenticate names bad fields', async () => {
      const employer = await connectEmployer(service, app);
      for (const body of [{ connection_id: 'nope' }, { connection_id: employer.connectionId, products: ['payroll'] }, { connection_id: employer.connectionId, products: [] }]) {
        const res = await service.request('/connect/sessions/reauthenticate', json(body, basic(app)));
        expect(res.status).toBe(400);
        expect(res.body.service_code).toBe('invalid_request');
      }
    });

    it("acts only on the token's own connection on every token route", async () => {
      const [mine, theirs] = await Promise.all([connectEmployer(service, app), connectEmployer(service, otherApp)]);
      const theirState = async () => (await service.request('/introspect', { headers: bearer(theirs.accessToken) })).body;
      const before = await theirState();
      expect((await service.request('/introspect', { headers: bearer(mine.accessToken) })).body.connection_id).toBe(mine.connectionId);
      expect((await post('/disconnect-entity', mine.accessToken, { entity_ids: theirs.entityIds })).status).toBe(403);
      expect((await post('/sandbox/connections/accounts', mine.accessToken, { connection_status: 'reauth' }, 'PUT')).status).toBe(200);
      expect((await post('/disconnect', mine.accessToken, {})).status).toBe(200);
      expect(await theirState()).toEqual(before);
      expect((await service.request('/probe/payments', { headers: bearer(theirs.accessToken) })).status).toBe(200);
    });
  });

  it('stores no secret, code or token in plain text', async () => {
    const fresh = await createApplication(service);
    const session = await service.request('/connect/sessions', json(sessionBody({ customer_id: 'c-secrets' }), basic(fresh)));
    const flow = await service.app.get(ConnectSessionsService).complete(session.body.session_id, {
      providerId: 'sandbox_automated',
      authenticationType: 'credential',
      manual: false,
      entityNames: ['Acme'],
    });
    const unusedFlow = await connectEmployer(service, fresh);
    const token = await service.request(
      '/auth/token',
      json({ client_id: fresh.client_id, client_secret: fresh.client_secret, code: flow.code, redirect_uri: REDIRECT_URI }),
    );
    const sandbox = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated' }, basic(fresh)));
    const stored = await everythingStored(service);
    expect(stored).toContain(fresh.client_id); // the dump does hold this application
    for (const secret of [fresh.client_secret, flow.code, token.body.access_token, unusedFlow.accessToken, sandbox.body.access_token]) {
      expect(secret.length).toBeGreaterThan(20);
      expect(stored).not.toContain(secret);
    }
  });
});

describeWithPostgres('rate limit', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
  });
  afterAll(() => service?.close());

  it('answers 429 with Retry-After once a token exceeds its rate, per token', async () => {
    const app = await createApplication(service);
    const [a, b] = await Promise.all([connectEmployer(service, app), connectEmployer(service, app)]);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await service.request('/introspect', { headers: bearer(a.accessToken) })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await service.request('/introspect', { headers: bearer(a.accessToken) });
    expect(limited.body).toMatchObject({ code: 429, name: 'rate_limit_error' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await service.request('/introspect', { headers: bearer(b.accessToken) })).status).toBe(200);
  });
});
