import { DataSource } from 'typeorm';
import { ProviderCatalogue } from '../../src/domain/providers/provider-catalogue';
import { ApplicationsService, IssuedCredentials } from '../../src/modules/applications/applications.service';
import { ConnectPageModule } from '../../src/modules/connect-page/connect-page.module';
import { describeWithPostgres } from '../setup/test-env';
import { basic, createApplication } from '../utils/connect';
import { formsOf, formTo, ParsedForm, visibleText } from '../utils/html-forms';
import { json, startTestService, TestService } from '../utils/test-app';

/** Redirect target; never contacted: the tests read the 303 Location instead of following it. */
const CALLBACK = 'http://127.0.0.1:4999/callback';

// ---- Reading the HTML the way a browser would, without one -------------------------------


describeWithPostgres('connect page', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let db: DataSource;

  beforeAll(async () => {
    service = await startTestService({ extraModules: [ConnectPageModule] });
    app = await createApplication(service, { redirectUris: [CALLBACK] });
    db = service.app.get(DataSource);
  });
  afterAll(() => service?.close());

  /** Path and query of a connect_url, to add parameters to. */
  const pathOf = (url: string): string => `${new URL(url).pathname}${new URL(url).search}`;
  const get = (path: string) => fetch(`${service.url}${path}`, { redirect: 'manual' });

  /** Submits `form` as a browser would: its fields (`values` filled in), checked boxes (or `entities`), and a button. */
  async function submit(form: ParsedForm, options: { values?: Record<string, string>; entities?: string[]; button?: [string, string] } = {}) {
    const values = { ...options.values };
    const body = new URLSearchParams(form.fields.map(([name, value]): [string, string] => [name, values[name] ?? value]));
    for (const [name, value] of Object.entries(values)) if (!form.fields.some(([n]) => n === name)) body.append(name, value);
    const entities = options.entities ?? form.checkboxes.filter((c) => c.checked && !c.disabled).map((c) => c.value);
    for (const name of entities) body.append('entity', name);
    if (options.button) body.append(...options.button);
    return fetch(`${service.url}${form.action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
  }

  async function createSession(extra: Record<string, unknown> = {}, credentials = app): Promise<{ session_id: string; connect_url: string }> {
    const res = await service.request(
      '/connect/sessions',
      json(
        { customer_id: `cust-${Math.random().toString(36).slice(2)}`, customer_name: 'Acme Corp', products: ['company', 'directory'], redirect_uri: CALLBACK, ...extra },
        basic(credentials),
      ),
    );
    expect(res.status).toBe(201);
    return res.body;
  }

  /** Opens a connect URL (path + query) and picks the first automated provider, landing on sign-in. */
  async function openAndPickProvider(path: string): Promise<string> {
    const start = await get(path);
    expect(start.status).toBe(200);
    const html = await start.text();
    const form = formTo(html, '/connect/provider');
    const provider = form.buttons.find((b) => !/Assisted/.test(b.text)) ?? form.buttons[0];
    const signIn = await submit(form, { button: [provider.name, provider.value] });
    expect(signIn.status).toBe(200);
    return signIn.text();
  }

  async function signIn(html: string, username: string, password: string): Promise<Response> {
    return submit(formTo(html, '/connect/sign-in'), { values: { username, password } });
  }

  /** `redirectUri` null: the embedded flow, which has none. */
  const exchange = (code: string, redirectUri: string | null = CALLBACK, credentials = app) =>
    service.request(
      '/auth/token',
      json({ client_id: credentials.client_id, client_secret: credentials.client_secret, code, redirect_uri: redirectUri ?? undefined }),
    );

  const connectionsOf = (customerId: string) => db.query(`SELECT id FROM connections WHERE customer_id = $1`, [customerId]);

  it('walks provider → sign-in → consent and redirects with code and the unchanged state', async () => {
    const session = await createSession({ customer_id: 'cust-happy', products: ['company', 'directory', 'benefits'] });
    const state = 'opaque state/with spaces & symbols=✓';
    const start = await get(`${pathOf(session.connect_url)}&state=${encodeURIComponent(state)}`);
    expect(start.status).toBe(200);
    expect(start.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(start.headers.get('cache-control')).toBe('no-store');
    expect(start.headers.get('content-security-policy')).toMatch(/script-src 'nonce-[^']+'; style-src 'nonce-/);
    const startHtml = await start.text();
    expect(startHtml).toContain('<html lang="en">');
    expect(startHtml).toContain('<label for="provider-search">');
    const providerForm = formTo(startHtml, '/connect/provider');
    expect(providerForm.buttons.length).toBeGreaterThan(1);
    expect(providerForm.fields.map(([name]) => name)).toEqual(['flow']);

    const provider = providerForm.buttons.find((b) => !/Assisted/.test(b.text))!;
    const signInPage = await submit(providerForm, { button: ['provider', provider.value] });
    const signInHtml = await signInPage.text();
    expect(visibleText(signInHtml)).toContain('good_user / good_pass');
    expect(visibleText(signInHtml)).toContain('multi_entity_user / good_pass');
    expect(signInHtml).not.toContain(state); // carried inside the signed flow field only

    const review = await signIn(signInHtml, 'good_user', 'good_pass');
    expect(review.status).toBe(200);
    const reviewHtml = await review.text();
    const text = visibleText(reviewHtml);
    expect(text).toContain('Read basic company data');
    expect(text).toContain('Read company directory and organization structure');
    expect(text).toContain('Create and manage deductions and contributions and enrollment');
    expect(text).toContain('Entity: Acme Corp');
    expect(reviewHtml).not.toContain('good_pass"'); // the password is in no field
    expect(review.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:4999");

    const consentForm = formTo(reviewHtml, '/connect/consent');
    const allowed = await submit(consentForm, { button: ['decision', 'allow'] });
    expect(allowed.status).toBe(303);
    const location = new URL(allowed.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
    expect(location.searchParams.get('state')).toBe(state);
    const code = location.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const token = await exchange(code);
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({ customer_id: 'cust-happy', provider_id: provider.value, products: ['company', 'directory', 'benefits'] });
    expect(token.body.entity_ids).toHaveLength(1);

    // The session is used up: its link, and a replay of the consent form, now fail as 410 pages.
    const again = await get(`${pathOf(session.connect_url)}`);
    expect(again.status).toBe(410);
    expect(visibleText(await again.text())).toContain('already been completed');
    const replay = await submit(consentForm, { button: ['decision', 'allow'] });
    expect(replay.status).toBe(410);
    expect(replay.headers.get('location')).toBeNull();
  });

  it('filters providers server-side with ?q= (the search works without JavaScript)', async () => {
    const session = await createSession();
    const shownFor = async (q: string) => {
      const html = await (await get(`${pathOf(session.connect_url)}&q=${encodeURIComponent(q)}`)).text();
      return [...html.matchAll(/<li data-id="([^"]*)"[^>]*?( hidden)?>/g)].filter((m) => !m[2]).map((m) => m[1]);
    };
    // The catalogue's match: case-insensitive, on display name or id.
    expect(await shownFor('PAYCHEX')).toEqual(['paychex_flex']);
    expect((await shownFor('sandbox_')).sort()).toEqual(['sandbox_assisted', 'sandbox_automated']);
    expect(await shownFor('')).toHaveLength(service.app.get(ProviderCatalogue).list().length);
    const html = await (await get(`${pathOf(session.connect_url)}&state=st&q=zzzz-no-such-provider`)).text();
    expect(html).toMatch(/<p id="no-providers" class="muted">/);
    expect(visibleText(html)).toContain('0 of');
    // The GET search form keeps the session and state, so submitting it stays in the flow.
    const searchForm = formsOf(html).find((f) => f.method === 'get')!;
    expect(searchForm.action).toBe('/connect');
    expect(searchForm.fields).toEqual([
      ['session', session.session_id],
      ['state', 'st'],
      ['q', 'zzzz-no-such-provider'],
    ]);
  });

  it('shows the sign-in form again on a wrong password and creates nothing', async () => {
    const session = await createSession({ customer_id: 'cust-wrong' });
    const signInHtml = await openAndPickProvider(`${pathOf(session.connect_url)}`);
    const wrong = await signIn(signInHtml, 'good_user', 'bad_pass');
    expect(wrong.status).toBe(200);
    const html = await wrong.text();
    expect(visibleText(html)).toContain('Incorrect username or password');
    expect(html).toContain('role="alert"');
    expect(formTo(html, '/connect/sign-in').fields).toEqual(expect.arrayContaining([['username', 'good_user']]));
    expect(html).not.toContain('bad_pass');
    expect(await connectionsOf('cust-wrong')).toEqual([]);
    const [row] = await db.query(`SELECT status FROM connect_sessions WHERE id = $1`, [session.session_id]);
    expect(row.status).toBe('staged');

    // The same form then works with the right password.
    const review = await signIn(html, 'good_user', 'good_pass');
    expect(review.status).toBe(200);
  });

  it('Deny redirects with error=access_denied and the state, and connects nothing', async () => {
    const session = await createSession({ customer_id: 'cust-deny' });
    const signInHtml = await openAndPickProvider(`${pathOf(session.connect_url)}&state=s-123`);
    const review = await signIn(signInHtml, 'good_user', 'good_pass');
    const denied = await submit(formTo(await review.text(), '/connect/consent'), { button: ['decision', 'deny'] });
    expect(denied.status).toBe(303);
    const location = new URL(denied.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('s-123');
    expect(location.searchParams.get('code')).toBeNull();
    expect(await connectionsOf('cust-deny')).toEqual([]);
  });

  it('lets a multi-entity account pick entities (at least one; forged names ignored)', async () => {
    const session = await createSession({ customer_id: 'cust-multi' });
    const signInHtml = await openAndPickProvider(`${pathOf(session.connect_url)}`);
    const review = await signIn(signInHtml, 'multi_entity_user', 'good_pass');
    const form = formTo(await review.text(), '/connect/consent');
    expect(form.checkboxes.map((c) => [c.value, c.checked])).toEqual([
      ['Acme Corp', true],
      ['Acme Corp West', true],
      ['Acme Corp Holdings', true],
    ]);

    const none = await submit(form, { entities: [], button: ['decision', 'allow'] });
    expect(none.status).toBe(200);
    expect(visibleText(await none.text())).toContain('Choose at least one entity');
    expect(await connectionsOf('cust-multi')).toEqual([]);

    const allowed = await submit(form, { entities: ['Acme Corp West', 'Acme Corp Holdings', 'Forged Inc'], button: ['decision', 'allow'] });
    expect(allowed.status).toBe(303);
    const token = await exchange(new URL(allowed.headers.get('location')!).searchParams.get('code')!);
    expect(token.body.entity_ids).toHaveLength(2);
    const names = await db.query(`SELECT name FROM connection_entities WHERE connection_id = $1 ORDER BY name`, [token.body.connection_id]);
    expect(names.map((r: { name: string }) => r.name)).toEqual(['Acme Corp Holdings', 'Acme Corp West']);
  });

  it('refuses a tampered signed field with a 400 page', async () => {
    const session = await createSession({ customer_id: 'cust-tamper' });
    const signInHtml = await openAndPickProvider(`${pathOf(session.connect_url)}`);
    const review = await signIn(signInHtml, 'good_user', 'good_pass');
    const form = formTo(await review.text(), '/connect/consent');
    const flow = form.fields.find(([name]) => name === 'flow')![1];
    const [payload, mac] = flow.split('.');
    const state = JSON.parse(Buffer.from(payload, 'base64url').toString());
    // Add an entity the sign-in never returned, keep the old signature.
    const forged = `${Buffer.from(JSON.stringify({ ...state, entityNames: ['Acme Corp', 'Someone Else Inc'] })).toString('base64url')}.${mac}`;
    const res = await submit({ ...form, fields: [['flow', forged]] }, { entities: ['Someone Else Inc'], button: ['decision', 'allow'] });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('location')).toBeNull();
    expect(visibleText(await res.text())).toContain('This page was changed or is too old');
    const garbage = await submit({ ...form, fields: [['flow', 'not-a-token']] }, { button: ['decision', 'allow'] });
    expect(garbage.status).toBe(400);
    expect(await connectionsOf('cust-tamper')).toEqual([]);
  });

  it('renders error pages for unknown, expired and missing sessions', async () => {
    const unknown = await get('/connect?session=00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    const unknownHtml = await unknown.text();
    expect(unknown.headers.get('content-type')).toContain('text/html');
    expect(visibleText(unknownHtml)).toContain('This connect session does not exist');
    expect(unknownHtml).not.toMatch(/\.ts:\d+|at \w+ \(/);

    const session = await createSession({ customer_id: 'cust-expired' });
    const path = `${pathOf(session.connect_url)}`;
    const signInHtml = await openAndPickProvider(path);
    await db.query(`UPDATE connect_sessions SET expires_at = now() - interval '1 minute' WHERE id = $1`, [session.session_id]);
    const expired = await get(path);
    expect(expired.status).toBe(410);
    expect(visibleText(await expired.text())).toContain('expired');
    // A step posted after expiry fails the same way: each POST re-checks the session.
    const late = await signIn(signInHtml, 'good_user', 'good_pass');
    expect(late.status).toBe(410);

    const missing = await get('/connect');
    expect(missing.status).toBe(400);
    expect(visibleText(await missing.text())).toContain('missing its session');
  });

  it('adds an entity on reauthentication, skipping the provider step', async () => {
    const session = await createSession({ customer_id: 'cust-reauth' });
    const signInHtml = await openAndPickProvider(`${pathOf(session.connect_url)}`);
    const review = await signIn(signInHtml, 'good_user', 'good_pass');
    const allowed = await submit(formTo(await review.text(), '/connect/consent'), { button: ['decision', 'allow'] });
    const first = await exchange(new URL(allowed.headers.get('location')!).searchParams.get('code')!);
    expect(first.body.entity_ids).toHaveLength(1);

    const reauth = await service.request(
      '/connect/sessions/reauthenticate',
      json({ connection_id: first.body.connection_id, redirect_uri: CALLBACK }, basic(app)),
    );
    expect(reauth.status).toBe(201);
    const start = await get(`${pathOf(reauth.body.connect_url)}&state=re`);
    expect(start.status).toBe(200);
    const startHtml = await start.text();
    expect(formsOf(startHtml).map((f) => f.action)).toEqual(['/connect/sign-in']);
    expect(startHtml).not.toContain('Choose a different provider');

    const reauthReview = await signIn(startHtml, 'multi_entity_user', 'good_pass');
    const reviewHtml = await reauthReview.text();
    expect(visibleText(reviewHtml)).toContain('Already connected');
    const form = formTo(reviewHtml, '/connect/consent');
    expect(form.checkboxes).toEqual([
      { name: undefined, value: undefined, checked: true, disabled: true },
      { name: 'entity', value: 'Acme Corp West', checked: false, disabled: false },
      { name: 'entity', value: 'Acme Corp Holdings', checked: false, disabled: false },
    ]);
    const done = await submit(form, { entities: ['Acme Corp Holdings'], button: ['decision', 'allow'] });
    expect(done.status).toBe(303);
    const location = new URL(done.headers.get('location')!);
    expect(location.searchParams.get('state')).toBe('re');
    const second = await exchange(location.searchParams.get('code')!);
    expect(second.body.connection_id).toBe(first.body.connection_id);
    expect(second.body.entity_ids).toHaveLength(2);
    expect(second.body.entity_ids).toContain(first.body.entity_ids[0]);
  });

  it('skips the provider step when the session names an integration', async () => {
    const provider = 'gusto';
    expect(service.app.get(ProviderCatalogue).find(provider)).toBeDefined();
    const session = await createSession({ customer_id: 'cust-integration', integration: { provider } });
    const start = await get(`${pathOf(session.connect_url)}`);
    expect(start.status).toBe(200);
    const html = await start.text();
    expect(formsOf(html).map((f) => f.action)).toEqual(['/connect/sign-in']);
    const review = await signIn(html, 'good_user', 'good_pass');
    const allowed = await submit(formTo(await review.text(), '/connect/consent'), { button: ['decision', 'allow'] });
    const token = await exchange(new URL(allowed.headers.get('location')!).searchParams.get('code')!);
    expect(token.body.provider_id).toBe(provider);
  });

  describe('embedded flow (no redirect_uri)', () => {
    const ORIGINS = ['https://app.example.com', 'http://localhost:5173'];
    /** Registered origins of `app`: the origin of its one redirect URI. */
    const APP_ORIGIN = new URL(CALLBACK).origin;
    let embeddedApp: IssuedCredentials;
    beforeAll(async () => {
      embeddedApp = await createApplication(service, { redirectUris: [], allowedOrigins: ORIGINS });
    });

    const embeddedSession = (customerId: string, credentials = embeddedApp) =>
      createSession({ customer_id: customerId, redirect_uri: undefined }, credentials);
    const resultOf = (html: string) =>
      JSON.parse(/<script type="application\/json" id="connect-result">([\s\S]*?)<\/script>/.exec(html)![1]) as {
        message: Record<string, string | null>;
        targetOrigin: string;
      };
    const sessionStatus = async (id: string) => (await db.query(`SELECT status FROM connect_sessions WHERE id = $1`, [id]))[0].status;

    it('registers the origins given, else the origins of the redirect URIs', () => {
      expect(embeddedApp.allowed_origins).toEqual(ORIGINS);
      expect(app.allowed_origins).toEqual([APP_ORIGIN]);
    });

    it('posts the code to exactly the registered origin the link names, carried signed through every step', async () => {
      const session = await embeddedSession('cust-embedded');
      const path = `${pathOf(session.connect_url)}&state=emb&origin=${encodeURIComponent('HTTPS://App.Example.com:443/')}`;
      const start = await get(path);
      expect(start.status).toBe(200);
      const startHtml = await start.text();
      // The search form keeps the origin, as the browser writes it.
      expect(formsOf(startHtml).find((f) => f.method === 'get')!.fields).toEqual(
        expect.arrayContaining([['origin', 'https://app.example.com']]),
      );

      const signInHtml = await openAndPickProvider(path);
      const review = await signIn(signInHtml, 'good_user', 'good_pass');
      const reviewHtml = await review.text();
      expect(visibleText(reviewHtml)).toContain('the answer goes to app.example.com, the page that opened this window');
      const form = formTo(reviewHtml, '/connect/consent');

      // Swapping the signed origin for another registered one breaks the signature.
      const flow = form.fields.find(([name]) => name === 'flow')![1];
      const [payload, mac] = flow.split('.');
      const swapped = { ...JSON.parse(Buffer.from(payload, 'base64url').toString()), origin: 'http://localhost:5173' };
      const forged = await submit(
        { ...form, fields: [['flow', `${Buffer.from(JSON.stringify(swapped)).toString('base64url')}.${mac}`]] },
        { button: ['decision', 'allow'] },
      );
      expect(forged.status).toBe(400);
      expect(visibleText(await forged.text())).toContain('This page was changed or is too old');
      expect(await sessionStatus(session.session_id)).toBe('staged');

      const done = await submit(form, { button: ['decision', 'allow'] });
      expect(done.status).toBe(200);
      expect(done.headers.get('location')).toBeNull();
      const html = await done.text();
      const data = resultOf(html);
      expect(data).toMatchObject({ message: { type: 'connect:success', code: expect.any(String), state: 'emb' }, targetOrigin: 'https://app.example.com' });
      expect(visibleText(html)).toContain(data.message.code);
      const token = await exchange(data.message.code!, null, embeddedApp);
      expect(token.status).toBe(200);
    });

    it('defaults to the only registered origin, for Deny too (connect:error access_denied)', async () => {
      const session = await createSession({ customer_id: 'cust-embedded-deny', redirect_uri: undefined });
      const signInHtml = await openAndPickProvider(`${pathOf(session.connect_url)}&state=x`);
      const review = await signIn(signInHtml, 'good_user', 'good_pass');
      const done = await submit(formTo(await review.text(), '/connect/consent'), { button: ['decision', 'deny'] });
      expect(done.status).toBe(200);
      const data = resultOf(await done.text());
      expect(data.message).toMatchObject({ type: 'connect:error', error: 'access_denied', state: 'x' });
      expect(data.targetOrigin).toBe(APP_ORIGIN);
    });

    it.each([
      ['no origin while several are registered', '', 'origin is required'],
      ['an unregistered origin', '&origin=https%3A%2F%2Fevil.example.com', 'origin https://evil.example.com is not registered for this application'],
      ['a registered host on another scheme', '&origin=http%3A%2F%2Fapp.example.com', 'is not registered'],
      ['a registered host on another port', '&origin=http%3A%2F%2Flocalhost%3A5174', 'is not registered'],
      ['an origin with a path', `&origin=${encodeURIComponent('https://app.example.com/path')}`, 'must not have a path, query or fragment'],
      ['an origin with a query', `&origin=${encodeURIComponent('https://app.example.com?x=1')}`, 'must not have a path, query or fragment'],
      ['a javascript: origin', `&origin=${encodeURIComponent('javascript:alert(document.domain)')}`, 'must use http or https'],
      ['a data: origin', `&origin=${encodeURIComponent('data:text/html,<script>alert(1)</script>')}`, 'must use http or https'],
      ['the wildcard', '&origin=*', 'is not a URL'],
      ['the opaque origin', '&origin=null', 'is not a URL'],
      ['a repeated origin', '&origin=https%3A%2F%2Fapp.example.com&origin=http%3A%2F%2Flocalhost%3A5173', 'origin must be given once'],
    ])('refuses %s on the page, before any step', async (_, query, message) => {
      const session = await embeddedSession(`cust-refused-${Math.random().toString(36).slice(2)}`);
      const res = await get(`${pathOf(session.connect_url)}${query}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('location')).toBeNull();
      const html = await res.text();
      expect(visibleText(html)).toContain(message);
      expect(formsOf(html)).toEqual([]);
      expect(html).not.toContain('<script type="application/json"');
      expect(html).not.toContain('<script>alert');
      expect(await sessionStatus(session.session_id)).toBe('staged');
    });

    it('refuses the embedded flow of an application that registered no origins', async () => {
      const bare = await createApplication(service, { redirectUris: [] });
      expect(bare.allowed_origins).toEqual([]);
      const session = await embeddedSession('cust-no-origins', bare);
      for (const query of ['', `&origin=${encodeURIComponent('https://app.example.com')}`]) {
        const res = await get(`${pathOf(session.connect_url)}${query}`);
        expect(res.status).toBe(400);
        expect(visibleText(await res.text())).toMatch(/registered no origins|is not registered/);
      }
    });

    it('refuses to hand over the answer when the origin was unregistered mid-flow, and connects nothing', async () => {
      const changing = await createApplication(service, { redirectUris: [], allowedOrigins: ORIGINS });
      const session = await embeddedSession('cust-unregistered-later', changing);
      const signInHtml = await openAndPickProvider(`${pathOf(session.connect_url)}&origin=${encodeURIComponent('http://localhost:5173')}`);
      const review = await signIn(signInHtml, 'good_user', 'good_pass');
      await service.app.get(ApplicationsService).update(changing.client_id, { allowedOrigins: ['https://app.example.com'] });
      const done = await submit(formTo(await review.text(), '/connect/consent'), { button: ['decision', 'allow'] });
      expect(done.status).toBe(400);
      expect(visibleText(await done.text())).toContain('origin http://localhost:5173 is not registered');
      expect(await sessionStatus(session.session_id)).toBe('staged');
      expect(await connectionsOf('cust-unregistered-later')).toEqual([]);
    });

    it('/connect/authorize checks the origin before it starts a session', async () => {
      const sessionsOf = async (clientId: string) =>
        (await db.query(`SELECT count(*)::int AS n FROM connect_sessions WHERE application_id = $1`, [clientId]))[0].n;
      const query = (params: Record<string, string>) =>
        new URLSearchParams({ client_id: embeddedApp.client_id, products: 'company', sandbox: 'finch', ...params }).toString();
      const before = await sessionsOf(embeddedApp.client_id);
      for (const [params, message] of [
        [{}, 'origin is required'],
        [{ origin: 'https://evil.example.com' }, 'is not registered'],
        [{ origin: 'javascript:alert(1)' }, 'must use http or https'],
      ] as const) {
        const res = await get(`/connect/authorize?${query(params)}`);
        expect(res.status).toBe(400);
        expect(res.headers.get('location')).toBeNull();
        expect(visibleText(await res.text())).toContain(message);
      }
      expect(await sessionsOf(embeddedApp.client_id)).toBe(before);

      const named = await get(`/connect/authorize?${query({ origin: 'http://localhost:5173/', state: 'a' })}`);
      expect(named.status).toBe(303);
      expect(new URL(named.headers.get('location')!).searchParams.get('origin')).toBe('http://localhost:5173');
      // With one registered origin the link names it, so every later step shows the same target.
      const single = await get(`/connect/authorize?${new URLSearchParams({ client_id: app.client_id, products: 'company', sandbox: 'finch' })}`);
      expect(single.status).toBe(303);
      expect(new URL(single.headers.get('location')!).searchParams.get('origin')).toBe(APP_ORIGIN);
    });
  });

  describe('/connect/authorize', () => {
    const authorizeQuery = (params: Record<string, string>) => new URLSearchParams({ client_id: app.client_id, products: 'company directory', redirect_uri: CALLBACK, sandbox: 'finch', ...params }).toString();

    it.each(['/connect/authorize', '/authorize'])('%s starts a session and the flow carries state through to the redirect', async (route) => {
      const res = await get(`${route}?${authorizeQuery({ state: 'auth-state' })}`);
      expect(res.status).toBe(303);
      const next = new URL(res.headers.get('location')!);
      expect(next.origin).toBe(service.url);
      expect(next.pathname).toBe('/connect');
      expect(next.searchParams.get('state')).toBe('auth-state');
      const [session] = await db.query(`SELECT * FROM connect_sessions WHERE id = $1`, [next.searchParams.get('session')]);
      expect(session).toMatchObject({ customer_id: null, products: ['company', 'directory'], redirect_uri: CALLBACK, sandbox: 'finch', status: 'staged' });

      const signInHtml = await openAndPickProvider(`${next.pathname}${next.search}`);
      const review = await signIn(signInHtml, 'good_user', 'good_pass');
      const allowed = await submit(formTo(await review.text(), '/connect/consent'), { button: ['decision', 'allow'] });
      const location = new URL(allowed.headers.get('location')!);
      expect(location.searchParams.get('state')).toBe('auth-state');
      const token = await exchange(location.searchParams.get('code')!);
      expect(token.status).toBe(200);
      expect(token.body.customer_id).toBeNull();
    });

    it('shows an error page, never a redirect, for an unregistered redirect_uri', async () => {
      const res = await get(`/connect/authorize?${authorizeQuery({ redirect_uri: 'https://evil.example.com/callback', state: 's' })}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(visibleText(await res.text())).toContain('is not registered for this application');
    });

    it.each([
      ['an unknown client_id', { client_id: '00000000-0000-4000-8000-000000000000' }, 'Unknown client_id'],
      ['a malformed client_id', { client_id: 'nope' }, 'Unknown client_id'],
      ['an unknown product', { products: 'company payroll' }, 'Unknown product payroll'],
      ['no products', { products: '' }, 'products is required'],
      ['a bad sandbox marker', { sandbox: 'yes' }, 'sandbox must be finch or provider'],
    ])('shows a 400 page for %s', async (_, params, message) => {
      const res = await get(`/connect/authorize?${authorizeQuery(params)}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(visibleText(await res.text())).toContain(message);
    });

    it('requires the sandbox marker for a sandbox application', async () => {
      const query = new URLSearchParams({ client_id: app.client_id, products: 'company', redirect_uri: CALLBACK });
      const res = await get(`/connect/authorize?${query}`);
      expect(res.status).toBe(400);
      expect(visibleText(await res.text())).toContain('sandbox is required');
    });
  });

  it('keeps the JSON API JSON-only: a form body elsewhere is still 415', async () => {
    const res = await service.request('/connect/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...basic(app) },
      body: 'customer_id=x&customer_name=y&products=company',
    });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ code: 415 });
  });

  it('leaves the page out of the OpenAPI document', async () => {
    const res = await service.request('/docs/openapi.json');
    expect(Object.keys(res.body.paths)).not.toEqual(expect.arrayContaining(['/connect', '/connect/authorize', '/authorize']));
    expect(Object.keys(res.body.paths).filter((p) => p === '/connect' || p.startsWith('/connect/provider') || p.endsWith('authorize'))).toEqual([]);
  });
});
