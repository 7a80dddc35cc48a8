import { createServer } from 'node:net';
import { DataSource } from 'typeorm';
import { ProviderGrants } from '../../src/infrastructure/providers/provider-grants';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { FakeGusto, GustoCompany } from '../fakes/gusto/fake-gusto';
import { describeWithPostgres } from '../setup/test-env';
import { basic, createApplication, everythingStored } from '../utils/connect';
import { formTo, ParsedForm, visibleText } from '../utils/html-forms';
import { json, startTestService, TestService } from '../utils/test-app';

/** The platform's redirect_uri; never contacted: the tests read the 303 Location. */
const CALLBACK = 'http://127.0.0.1:4999/callback';
const GUSTO_CALLBACK = '/connect/oauth/gusto/callback';

/** An address nothing listens on: Gusto unreachable. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The connect page's OAuth step for real Gusto connections, end to end over HTTP: the service,
 * a fake Gusto (every request held to Gusto's document), the employer's browser as fetches that
 * follow no redirect, and the platform exchanging its code.
 */
describeWithPostgres('connect page: Gusto OAuth', () => {
  let fake: FakeGusto;
  let service: TestService;
  let production: IssuedCredentials;
  let sandbox: IssuedCredentials;
  let db: DataSource;
  let company: GustoCompany;
  let otherCompany: GustoCompany;

  beforeAll(async () => {
    fake = await new FakeGusto().start();
    company = fake.addCompany({ name: 'Gusty Bakery LLC' });
    otherCompany = fake.addCompany({ name: 'Other Company Inc' });
    service = await startTestService({
      env: { GUSTO_CLIENT_ID: 'fake-gusto-client-id', GUSTO_CLIENT_SECRET: 'fake-gusto-client-secret', GUSTO_BASE_URL: fake.url },
    });
    production = await createApplication(service, { sandbox: false, redirectUris: [CALLBACK] });
    sandbox = await createApplication(service, { sandbox: true, redirectUris: [CALLBACK] });
    db = service.app.get(DataSource);
  });
  afterAll(async () => {
    await service?.close();
    await fake?.stop();
  });

  const get = (path: string, on: TestService = service) => fetch(`${on.url}${path}`, { redirect: 'manual' });

  async function submit(form: ParsedForm, button: [string, string], on: TestService = service): Promise<Response> {
    const body = new URLSearchParams(form.fields);
    body.append(...button);
    return fetch(`${on.url}${form.action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
  }

  async function createSession(credentials: IssuedCredentials, customerId: string, on: TestService = service): Promise<{ session_id: string; connect_url: string }> {
    const res = await on.request(
      '/connect/sessions',
      json({ customer_id: customerId, customer_name: 'Gusty Bakery', products: ['company', 'directory'], redirect_uri: CALLBACK }, basic(credentials)),
    );
    expect(res.status).toBe(201);
    return res.body;
  }

  const pathOf = (url: string) => `${new URL(url).pathname}${new URL(url).search}`;

  /** Opens the link and picks Gusto: the answer of the provider step. */
  async function chooseGusto(credentials: IssuedCredentials, customerId: string, on: TestService = service) {
    const session = await createSession(credentials, customerId, on);
    const start = await get(`${pathOf(session.connect_url)}&state=app-state`, on);
    expect(start.status).toBe(200);
    const form = formTo(await start.text(), '/connect/provider');
    return { session, answer: await submit(form, ['provider', 'gusto'], on) };
  }

  /** The employer at Gusto's authorize page, granting `to`; the callback path and query Gusto sends the browser back to. */
  async function grantAtGusto(authorizeUrl: string, to: GustoCompany = company, on: TestService = service): Promise<string> {
    const url = new URL(authorizeUrl);
    url.searchParams.set('company_uuid', to.uuid); // the fake's stand-in for picking a company
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(`${on.url}${GUSTO_CALLBACK}`);
    return `${back.pathname}${back.search}`;
  }

  /** The platform's side: its code for a token. `redirectUri` null: the embedded flow, which has none. */
  const exchange = (code: string, credentials = production, redirectUri: string | null = CALLBACK) =>
    service.request('/auth/token', json({ client_id: credentials.client_id, client_secret: credentials.client_secret, code, redirect_uri: redirectUri ?? undefined }));

  const pendingRows = (sessionId: string): Promise<{ account_ref: string; access_token_sealed: string }[]> =>
    db.query(`SELECT account_ref, access_token_sealed FROM pending_provider_grants WHERE session_id = $1`, [sessionId]);

  /** An error page of the connect page: HTML, the status, the message, and nothing internal. */
  async function expectErrorPage(res: Response, status: number, message: string | RegExp): Promise<void> {
    const html = await res.text();
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(visibleText(html)).toMatch(message);
    expect(html).not.toMatch(/\n\s+at \S+ \(|GustoApiError|DomainError/);
  }

  /** Provider step → Gusto → callback → review → Allow → code: a connected production Gusto employer. */
  async function connectThroughGusto(customerId: string) {
    const { session, answer } = await chooseGusto(production, customerId);
    const review = await get(await grantAtGusto(answer.headers.get('location')!));
    expect(review.status).toBe(200);
    const reviewHtml = await review.text();
    const allowed = await submit(formTo(reviewHtml, '/connect/consent'), ['decision', 'allow']);
    expect(allowed.status).toBe(303);
    const location = new URL(allowed.headers.get('location')!);
    const token = await exchange(location.searchParams.get('code')!);
    expect(token.status).toBe(200);
    return { session, reviewHtml, location, token: token.body as { connection_id: string; provider_id: string; entity_ids: string[] } };
  }

  it('sends a production employer to Gusto, takes the code back, and stores the grant sealed with the connection', async () => {
    const { session, answer } = await chooseGusto(production, 'cust-full');
    expect(answer.status).toBe(303);
    const authorize = new URL(answer.headers.get('location')!);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${fake.url}/oauth/authorize`);
    expect(authorize.searchParams.get('client_id')).toBe('fake-gusto-client-id');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${service.url}${GUSTO_CALLBACK}`);
    expect(authorize.searchParams.get('response_type')).toBe('code');
    expect(authorize.searchParams.get('state')).toMatch(/^[\w-]+\.[\w-]+$/);

    const review = await get(await grantAtGusto(authorize.toString()));
    expect(review.status).toBe(200);
    const reviewHtml = await review.text();
    expect(visibleText(reviewHtml)).toContain('Allow Test application to access your Gusto data?');
    expect(visibleText(reviewHtml)).toContain('Entity: Gusty Bakery LLC');
    // Held server-side and sealed until Allow; the page carries none of it.
    const [pending] = await pendingRows(session.session_id);
    expect(pending.account_ref).toBe(company.uuid);
    expect(pending.access_token_sealed).toMatch(/^v1\./);

    const allowed = await submit(formTo(reviewHtml, '/connect/consent'), ['decision', 'allow']);
    expect(allowed.status).toBe(303);
    const location = new URL(allowed.headers.get('location')!);
    expect(location.searchParams.get('state')).toBe('app-state');
    const token = await exchange(location.searchParams.get('code')!);
    expect(token.status).toBe(200);
    expect(token.body.provider_id).toBe('gusto');
    expect(token.body.entity_ids).toHaveLength(1);

    const grant = await service.app.get(ProviderGrants).find(token.body.connection_id);
    expect(grant).toMatchObject({ providerId: 'gusto', accountRef: company.uuid, generation: 1, failure: null });
    expect(grant!.expiresAt.getTime()).toBeGreaterThan(Date.now() + 60 * 60_000);
    // The tokens Gusto issued work at Gusto, and are nowhere in the page or the database in clear.
    const info = await fetch(`${fake.url}/v1/token_info`, { headers: { authorization: `Bearer ${grant!.accessToken}` } });
    expect(info.status).toBe(200);
    expect(((await info.json()) as { resource: { uuid: string } }).resource.uuid).toBe(company.uuid);
    const stored = await everythingStored(service);
    for (const secret of [grant!.accessToken, grant!.refreshToken]) {
      expect(stored).not.toContain(secret);
      expect(reviewHtml).not.toContain(secret);
    }
    expect(await pendingRows(session.session_id)).toEqual([]);
    const [connection] = await db.query(`SELECT sandbox, provider_id, authentication_type FROM connections WHERE id = $1`, [token.body.connection_id]);
    expect(connection).toEqual({ sandbox: false, provider_id: 'gusto', authentication_type: 'oauth' });
  });

  it('refuses a changed or missing state, and a state posted to the sandbox sign-in', async () => {
    const { answer } = await chooseGusto(production, 'cust-tamper');
    const callback = new URL(await grantAtGusto(answer.headers.get('location')!), service.url);
    const state = callback.searchParams.get('state')!;
    const exchangesBefore = fake.requests.filter((r) => r.path === '/oauth/token').length;

    const [payload, mac] = state.split('.');
    const forged = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    forged.state = 'attacker-state';
    for (const bad of [`${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${mac}`, `${payload}.${mac.slice(0, -2)}xx`, 'nonsense']) {
      callback.searchParams.set('state', bad);
      await expectErrorPage(await get(`${callback.pathname}${callback.search}`), 400, /changed or is too old/);
    }
    callback.searchParams.delete('state');
    await expectErrorPage(await get(`${callback.pathname}${callback.search}`), 400, /changed or is too old/);
    // Nothing was exchanged for any of them: the code is still good with its real state.
    expect(fake.requests.filter((r) => r.path === '/oauth/token').length).toBe(exchangesBefore);

    // The OAuth state is a signed flow token, but not a way into the simulated sign-in.
    const signIn = await fetch(`${service.url}/connect/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ flow: state, username: 'good_user', password: 'good_pass' }).toString(),
    });
    await expectErrorPage(signIn, 400, /changed or is too old/);

    callback.searchParams.set('state', state);
    expect((await get(`${callback.pathname}${callback.search}`)).status).toBe(200);
  });

  it('answers access_denied to the platform when the employer refuses at Gusto, or denies on the review', async () => {
    const { answer } = await chooseGusto(production, 'cust-denied-at-gusto');
    const state = new URL(answer.headers.get('location')!).searchParams.get('state')!;
    const denied = await get(`${GUSTO_CALLBACK}?${new URLSearchParams({ error: 'access_denied', error_description: 'The user denied', state })}`);
    expect(denied.status).toBe(303);
    const location = new URL(denied.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
    expect(Object.fromEntries(location.searchParams)).toEqual({ error: 'access_denied', error_description: 'The employer denied access', state: 'app-state' });

    // Deny after Gusto granted: the same answer, and the held tokens are dropped.
    const second = await chooseGusto(production, 'cust-deny-on-review');
    const review = await get(await grantAtGusto(second.answer.headers.get('location')!));
    expect(await pendingRows(second.session.session_id)).toHaveLength(1);
    const deny = await submit(formTo(await review.text(), '/connect/consent'), ['decision', 'deny']);
    expect(deny.status).toBe(303);
    expect(new URL(deny.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
    expect(await pendingRows(second.session.session_id)).toEqual([]);
    expect(await db.query(`SELECT id FROM connections WHERE customer_id IN ('cust-denied-at-gusto', 'cust-deny-on-review')`)).toEqual([]);

    // Any other error Gusto reports is the page's, with Gusto's words.
    const other = await chooseGusto(production, 'cust-gusto-error');
    const otherState = new URL(other.answer.headers.get('location')!).searchParams.get('state')!;
    await expectErrorPage(
      await get(`${GUSTO_CALLBACK}?${new URLSearchParams({ error: 'invalid_scope', error_description: 'The requested scope is invalid', state: otherState })}`),
      400,
      /Gusto did not grant access \(invalid_scope: The requested scope is invalid\)/,
    );
  });

  it('shows an error page when Gusto refuses the code or fails, never a 500', async () => {
    const { answer } = await chooseGusto(production, 'cust-refused');
    const callback = new URL(await grantAtGusto(answer.headers.get('location')!), service.url);
    const real = callback.searchParams.get('code')!;

    callback.searchParams.set('code', 'not-a-code-gusto-issued');
    await expectErrorPage(await get(`${callback.pathname}${callback.search}`), 400, /Gusto did not accept the authorization/);

    // Gusto failing after the exchange (token_info answers 500 twice): 502, and nothing held.
    fake.failNext(2, { status: 500 }, { operation: 'GET /v1/token_info' });
    callback.searchParams.set('code', real);
    await expectErrorPage(await get(`${callback.pathname}${callback.search}`), 502, /Gusto did not answer properly/);

    // The code was spent by that exchange: Gusto refuses it a second time.
    await expectErrorPage(await get(`${callback.pathname}${callback.search}`), 400, /expired or was already used/);
    const sessionId = (await db.query(`SELECT id FROM connect_sessions WHERE customer_id = 'cust-refused'`))[0].id;
    expect(await pendingRows(sessionId)).toEqual([]);
  });

  it('discards held tokens past their time: Allow then fails and creates nothing', async () => {
    const { session, answer } = await chooseGusto(production, 'cust-expired');
    const review = await get(await grantAtGusto(answer.headers.get('location')!));
    const reviewHtml = await review.text();
    await db.query(`UPDATE pending_provider_grants SET discard_after = now() - interval '1 second' WHERE session_id = $1`, [session.session_id]);
    const allowed = await submit(formTo(reviewHtml, '/connect/consent'), ['decision', 'allow']);
    await expectErrorPage(allowed, 400, /authorization at Gusto has expired/);
    expect(await db.query(`SELECT id FROM connections WHERE customer_id = 'cust-expired'`)).toEqual([]);
    expect((await db.query(`SELECT status FROM connect_sessions WHERE id = $1`, [session.session_id]))[0].status).toBe('staged');

    // The next authorization anywhere sweeps it away; this session can go through Gusto again.
    const restart = await get(pathOf(session.connect_url));
    const again = await submit(formTo(await restart.text(), '/connect/provider'), ['provider', 'gusto']);
    const fresh = await get(await grantAtGusto(again.headers.get('location')!));
    expect(fresh.status).toBe(200);
    expect(await db.query(`SELECT id FROM pending_provider_grants WHERE discard_after <= now()`)).toEqual([]);
    expect(await pendingRows(session.session_id)).toHaveLength(1);
    // The old review page names tokens that are gone: refused, even though the session has new ones.
    await expectErrorPage(await submit(formTo(reviewHtml, '/connect/consent'), ['decision', 'allow']), 400, /expired or was replaced/);
    const allowedNow = await submit(formTo(await fresh.text(), '/connect/consent'), ['decision', 'allow']);
    expect(allowedNow.status).toBe(303);
  });

  it('reconnects through Gusto again and replaces the grant of the same connection', async () => {
    const first = await connectThroughGusto('cust-reauth');
    const connectionId = first.token.connection_id;
    const grants = service.app.get(ProviderGrants);
    const before = (await grants.find(connectionId))!;
    await grants.fail(connectionId, 'invalid_grant: refresh token revoked');
    await db.query(`UPDATE connections SET status = 'reauth' WHERE id = $1`, [connectionId]);

    const reauthSession = async () => {
      const res = await service.request('/connect/sessions/reauthenticate', json({ connection_id: connectionId, redirect_uri: CALLBACK }, basic(production)));
      expect(res.status).toBe(201);
      // No provider list and no sandbox sign-in: straight to Gusto.
      const start = await get(`${pathOf(res.body.connect_url)}&state=re`);
      expect(start.status).toBe(303);
      expect(start.headers.get('location')).toContain(`${fake.url}/oauth/authorize?`);
      return start.headers.get('location')!;
    };

    // Another company than the connection's is refused: it would swap the data under the connection.
    await expectErrorPage(await get(await grantAtGusto(await reauthSession(), otherCompany)), 400, /this connection is to another Gusto company/);
    expect((await grants.find(connectionId))!.failure).not.toBeNull();

    const review = await get(await grantAtGusto(await reauthSession()));
    const reviewHtml = await review.text();
    expect(review.status).toBe(200);
    expect(visibleText(reviewHtml)).toContain('You are reconnecting an existing connection');
    expect(visibleText(reviewHtml)).toContain('Gusty Bakery LLC Already connected');
    const allowed = await submit(formTo(reviewHtml, '/connect/consent'), ['decision', 'allow']);
    expect(allowed.status).toBe(303);
    const token = await exchange(new URL(allowed.headers.get('location')!).searchParams.get('code')!);
    expect(token.body.connection_id).toBe(connectionId);
    expect(token.body.entity_ids).toEqual(first.token.entity_ids);

    const after = (await grants.find(connectionId))!;
    expect(after).toMatchObject({ accountRef: company.uuid, failure: null, generation: before.generation + 1 });
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect((await db.query(`SELECT status FROM connections WHERE id = $1`, [connectionId]))[0].status).toBe('connected');
  });

  it('carries the embedded flow\'s origin through Gusto to the opener', async () => {
    const ORIGIN = 'https://app.example.com';
    const embedded = await createApplication(service, { sandbox: false, redirectUris: [], allowedOrigins: [ORIGIN] });
    const resultOf = (html: string) =>
      JSON.parse(/<script type="application\/json" id="connect-result">([\s\S]*?)<\/script>/.exec(html)![1]) as { message: Record<string, string | null>; targetOrigin: string };
    const open = async (customerId: string) => {
      const res = await service.request('/connect/sessions', json({ customer_id: customerId, customer_name: 'Gusty Bakery', products: ['company'] }, basic(embedded)));
      const start = await get(`${pathOf(res.body.connect_url)}&${new URLSearchParams({ origin: ORIGIN, state: 'popup' })}`);
      const chosen = await submit(formTo(await start.text(), '/connect/provider'), ['provider', 'gusto']);
      expect(chosen.status).toBe(303);
      return chosen.headers.get('location')!;
    };

    const review = await get(await grantAtGusto(await open('cust-embedded')));
    const done = await submit(formTo(await review.text(), '/connect/consent'), ['decision', 'allow']);
    expect(done.status).toBe(200);
    const success = resultOf(await done.text());
    expect(success.targetOrigin).toBe(ORIGIN);
    expect(success.message).toMatchObject({ type: 'connect:success', state: 'popup' });
    const token = await exchange(success.message.code!, embedded, null);
    expect((await service.app.get(ProviderGrants).find(token.body.connection_id))?.accountRef).toBe(company.uuid);

    const state = new URL(await open('cust-embedded-denied')).searchParams.get('state')!;
    const denied = await get(`${GUSTO_CALLBACK}?${new URLSearchParams({ error: 'access_denied', state })}`);
    expect(denied.status).toBe(200);
    expect(resultOf(await denied.text())).toEqual({
      message: { type: 'connect:error', error: 'access_denied', error_description: 'The employer denied access', state: 'popup' },
      targetOrigin: ORIGIN,
      notified: expect.any(String),
    });
  });

  it('keeps the simulated sign-in for sandbox sessions, Gusto included', async () => {
    const { answer } = await chooseGusto(sandbox, 'cust-sandbox');
    expect(answer.status).toBe(200);
    const html = await answer.text();
    expect(visibleText(html)).toContain('Sign in to Gusto');
    formTo(html, '/connect/sign-in');
    // And a Gusto callback for a sandbox session's flow is refused: there is no OAuth step to return to.
    const flow = formTo(html, '/connect/sign-in').fields.find(([name]) => name === 'flow')![1];
    await expectErrorPage(await get(`${GUSTO_CALLBACK}?${new URLSearchParams({ code: 'x', state: flow })}`), 400, /changed or is too old/);
  });

  it('leaves production providers other than Gusto on the simulated sign-in', async () => {
    const session = await createSession(production, 'cust-production-other');
    const start = await get(pathOf(session.connect_url));
    const signIn = await submit(formTo(await start.text(), '/connect/provider'), ['provider', 'sandbox_automated']);
    expect(signIn.status).toBe(200);
    formTo(await signIn.text(), '/connect/sign-in');
  });

  it('held every exchange with Gusto to its document', () => {
    expect(fake.violations).toEqual([]);
  });

  describe('without a Gusto application', () => {
    let bare: TestService;
    let bareProduction: IssuedCredentials;
    let bareSandbox: IssuedCredentials;

    beforeAll(async () => {
      bare = await startTestService();
      bareProduction = await createApplication(bare, { sandbox: false, redirectUris: [CALLBACK] });
      bareSandbox = await createApplication(bare, { sandbox: true, redirectUris: [CALLBACK] });
    });
    afterAll(() => bare?.close());

    it('lists Gusto as not configured for production, and says so when it is chosen anyway', async () => {
      const session = await createSession(bareProduction, 'cust-bare', bare);
      const html = await (await get(pathOf(session.connect_url), bare)).text();
      const form = formTo(html, '/connect/provider');
      expect(form.buttons.find((b) => b.value === 'gusto')).toEqual({ name: 'provider', value: 'gusto', text: 'G Gusto Not configured', disabled: true });
      expect(form.buttons.filter((b) => b.disabled)).toHaveLength(1);
      await expectErrorPage(await submit(form, ['provider', 'gusto'], bare), 409, /Gusto is not set up on this service yet/);
    });

    it('keeps Gusto selectable, and simulated, for sandbox sessions', async () => {
      const { answer } = await chooseGusto(bareSandbox, 'cust-bare-sandbox', bare);
      expect(answer.status).toBe(200);
      formTo(await answer.text(), '/connect/sign-in');
    });
  });

  describe('with Gusto unreachable', () => {
    let cut: TestService;
    let cutProduction: IssuedCredentials;

    beforeAll(async () => {
      cut = await startTestService({
        env: { GUSTO_CLIENT_ID: 'fake-gusto-client-id', GUSTO_CLIENT_SECRET: 'fake-gusto-client-secret', GUSTO_BASE_URL: `http://127.0.0.1:${await closedPort()}` },
      });
      cutProduction = await createApplication(cut, { sandbox: false, redirectUris: [CALLBACK] });
    });
    afterAll(() => cut?.close());

    it('shows the page with a 502 when the code cannot be exchanged', async () => {
      const { answer } = await chooseGusto(cutProduction, 'cust-cut', cut);
      expect(answer.status).toBe(303);
      const state = new URL(answer.headers.get('location')!).searchParams.get('state')!;
      await expectErrorPage(await get(`${GUSTO_CALLBACK}?${new URLSearchParams({ code: 'some-code', state })}`, cut), 502, /Gusto could not be reached/);
    });
  });
});
