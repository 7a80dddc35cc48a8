import { Browser, BrowserContext, Page } from 'playwright-core';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { ConnectPageModule } from '../../src/modules/connect-page/connect-page.module';
import { ConnectionsModule } from '../../src/modules/connections/connections.module';
import {
  CallbackServer,
  collectPageErrors,
  describeWithBrowser,
  launchChromium,
  navigation,
  screenshotter,
  startCallbackServer,
} from '../utils/browser';
import { basic, createApplication } from '../utils/connect';
import { json, startTestService, TestService } from '../utils/test-app';

/**
 * The connect page in a real browser (headless Chromium): typing, clicking and keyboard use,
 * the redirect back to the application, and no console errors on the way.
 */
describeWithBrowser('connect flow in Chromium', () => {
  let service: TestService;
  let callback: CallbackServer;
  let browser: Browser;
  let app: IssuedCredentials;
  let redirectUri: string;

  beforeAll(async () => {
    [service, callback, browser] = await Promise.all([
      startTestService({ extraModules: [ConnectPageModule, ConnectionsModule] }),
      startCallbackServer(),
      launchChromium(),
    ]);
    redirectUri = `${callback.url}/callback`;
    app = await createApplication(service, { redirectUris: [redirectUri] });
  });
  afterAll(async () => {
    await browser?.close();
    await callback?.close();
    await service?.close();
  });

  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  beforeEach(async () => {
    context = await browser.newContext();
    page = await context.newPage();
    errors = collectPageErrors(page);
  });
  afterEach(() => context?.close());

  async function createSession(body: Record<string, unknown>): Promise<string> {
    const res = await service.request(
      '/connect/sessions',
      json({ customer_name: 'Acme Corp', products: ['company', 'directory', 'benefits'], ...body }, basic(app)),
    );
    expect(res.status).toBe(201);
    return res.body.connect_url;
  }

  it('connects through search, sign-in and consent, then the token introspects', async () => {
    const shot = screenshotter('redirect-flow');
    const connectUrl = await createSession({ customer_id: 'browser-1', redirect_uri: redirectUri });
    await page.goto(`${connectUrl}&state=${encodeURIComponent('browser state ✓')}`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Connect Test application');
    await shot(page, 'choose-provider');

    // Filtering happens as you type, with the count announced in a live region.
    const total = await page.locator('#provider-list li').count();
    await page.getByLabel('Search providers').pressSequentially('sandbox', { delay: 20 });
    await expect(page.locator('#provider-list li:visible').count()).resolves.toBe(2);
    await expect(page.locator('#provider-count').textContent()).resolves.toBe(`2 of ${total} providers match`);
    await page.getByLabel('Search providers').fill('no such payroll');
    await expect(page.locator('#no-providers').isVisible()).resolves.toBe(true);
    await page.getByLabel('Search providers').fill('automated');
    await shot(page, 'search');

    // Keyboard only: Enter moves to the first match, Enter again picks it.
    await page.getByLabel('Search providers').press('Enter');
    await expect(page.evaluate<string>('document.activeElement.textContent.trim()')).resolves.toContain('Sandbox Payroll (Automated)');
    await navigation(page, () => page.keyboard.press('Enter'));
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in to Sandbox Payroll (Automated)');
    await expect(page.getByRole('note').textContent()).resolves.toContain('good_user');

    // The username field has focus; type, Tab to the password, Enter submits.
    await page.keyboard.type('good_user');
    await page.keyboard.press('Tab');
    await page.keyboard.type('good_pass');
    await shot(page, 'sign-in');
    await navigation(page, () => page.keyboard.press('Enter'));

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Allow Test application');
    await expect(page.locator('.products').textContent()).resolves.toContain('Read basic company data');
    await shot(page, 'review');
    await navigation(page, () => page.getByRole('button', { name: 'Allow' }).click());
    await shot(page, 'callback');

    const landed = new URL(page.url());
    const code = landed.searchParams.get('code');
    expect(code).toBeTruthy();
    expect(landed.searchParams.get('state')).toBe('browser state ✓');
    expect(callback.received.at(-1)?.get('code')).toBe(code);

    const token = await service.request(
      '/auth/token',
      json({ client_id: app.client_id, client_secret: app.client_secret, code, redirect_uri: redirectUri }),
    );
    expect(token.status).toBe(200);
    const introspect = await service.request('/introspect', { headers: { authorization: `Bearer ${token.body.access_token}` } });
    expect(introspect.status).toBe(200);
    expect(introspect.body).toMatchObject({
      connection_id: token.body.connection_id,
      client_id: app.client_id,
      customer_id: 'browser-1',
      customer_name: 'Acme Corp',
      provider_id: 'sandbox_automated',
      products: ['company', 'directory', 'benefits'],
      entities: [{ id: token.body.entity_ids[0], name: 'Acme Corp', source_id: null, status: 'connected' }],
    });
    expect(errors).toEqual([]);

    // The used link now shows a friendly error page (Chromium logs its 410 as a failed load).
    const gone = await page.goto(connectUrl);
    expect(gone?.status()).toBe(410);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('This link can no longer be used');
    await shot(page, 'used-link');
  });

  it('shows a wrong password as an alert and picks entities of a multi-entity account', async () => {
    const shot = screenshotter('multi-entity');
    const connectUrl = await createSession({ customer_id: 'browser-2', redirect_uri: redirectUri });
    await page.goto(connectUrl);
    await navigation(page, () => page.getByRole('button', { name: /Gusto/ }).click());
    await page.getByLabel('Username').fill('multi_entity_user');
    await page.getByLabel('Password').fill('wrong');
    await navigation(page, () => page.getByRole('button', { name: 'Sign in' }).click());
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Incorrect username or password');
    await expect(page.getByLabel('Username').inputValue()).resolves.toBe('multi_entity_user');
    await shot(page, 'wrong-password');

    await page.getByLabel('Password').fill('good_pass');
    await navigation(page, () => page.getByRole('button', { name: 'Sign in' }).click());
    await expect(page.getByRole('group', { name: 'Entities to connect' }).isVisible()).resolves.toBe(true);
    await page.getByLabel('Acme Corp West').uncheck();
    await shot(page, 'entities');
    await navigation(page, () => page.getByRole('button', { name: 'Allow' }).click());
    const code = new URL(page.url()).searchParams.get('code');
    const token = await service.request(
      '/auth/token',
      json({ client_id: app.client_id, client_secret: app.client_secret, code, redirect_uri: redirectUri }),
    );
    expect(token.body.entity_ids).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  /** A page of the application that records every message it receives. */
  const OPENER_PAGE = `<!doctype html><html lang="en"><head><title>App</title><link rel="icon" href="data:,"></head><body><h1>App</h1>
<script>window.received = []; window.addEventListener('message', function (e) { window.received.push({ origin: e.origin, data: e.data }); });</script>
</body></html>`;

  it('embedded flow: posts the code to the opener at its registered origin', async () => {
    const shot = screenshotter('embedded-flow');
    const connectUrl = await createSession({ customer_id: 'browser-3' });
    // The application's registered origin: that of its redirect URI, the callback server.
    expect(app.allowed_origins).toEqual([callback.url]);
    callback.page('/app', OPENER_PAGE);
    await page.goto(`${callback.url}/app`);
    const url = `${connectUrl}&state=emb-1&origin=${encodeURIComponent(callback.url)}`;
    const [popup] = await Promise.all([context.waitForEvent('page'), page.evaluate(`void window.open(${JSON.stringify(url)}, 'connect')`)]);
    const popupErrors = collectPageErrors(popup);
    await popup.waitForLoadState();
    await popup.getByLabel('Search providers').fill('automated');
    await navigation(popup, () => popup.getByRole('button', { name: /Sandbox Payroll \(Automated\)/ }).click());
    await popup.getByLabel('Username').fill('good_user');
    await popup.getByLabel('Password').fill('good_pass');
    await navigation(popup, () => popup.getByRole('button', { name: 'Sign in' }).click());
    await navigation(popup, () => popup.getByRole('button', { name: 'Allow' }).click());
    await shot(popup, 'embedded-result');

    await page.waitForFunction('window.received.length > 0');
    const [message] = await page.evaluate<{ origin: string; data: Record<string, string> }[]>('window.received');
    expect(message.data).toEqual({ type: 'connect:success', code: expect.any(String), state: 'emb-1' });
    expect(message.origin).toBe(new URL(service.url).origin);
    await expect(popup.locator('#authorization-code').textContent()).resolves.toBe(message.data.code);
    await expect(popup.locator('#result-status').textContent()).resolves.toContain('Test application has been told');

    const token = await service.request('/auth/token', json({ client_id: app.client_id, client_secret: app.client_secret, code: message.data.code }));
    expect(token.status).toBe(200);
    expect([...errors, ...popupErrors]).toEqual([]);
  });

  it('embedded flow: an opener on another origin never receives the code', async () => {
    const shot = screenshotter('embedded-foreign-opener');
    // Same server, another origin: the browser tells localhost and 127.0.0.1 apart.
    const foreign = callback.url.replace('127.0.0.1', 'localhost');
    callback.page('/app', OPENER_PAGE);
    await page.goto(`${foreign}/app`);
    const open = async (url: string, name: string) => {
      const [popup] = await Promise.all([context.waitForEvent('page'), page.evaluate(`void window.open(${JSON.stringify(url)}, ${JSON.stringify(name)})`)]);
      await popup.waitForLoadState();
      return popup;
    };

    // Naming its own origin on the link is refused on the page.
    const refusedUrl = `${await createSession({ customer_id: 'browser-5' })}&origin=${encodeURIComponent(foreign)}`;
    const refused = await open(refusedUrl, 'refused');
    await expect(refused.getByRole('alert').textContent()).resolves.toContain(`origin ${foreign} is not registered for this application`);
    await expect(refused.locator('form').count()).resolves.toBe(0);
    await shot(refused, 'origin-refused');
    await refused.close();

    // Without an origin the page targets the registered one, so the browser drops the message.
    const popup = await open(await createSession({ customer_id: 'browser-6' }), 'connect');
    const popupErrors = collectPageErrors(popup);
    await popup.getByLabel('Search providers').fill('automated');
    await navigation(popup, () => popup.getByRole('button', { name: /Sandbox Payroll \(Automated\)/ }).click());
    await popup.getByLabel('Username').fill('good_user');
    await popup.getByLabel('Password').fill('good_pass');
    await navigation(popup, () => popup.getByRole('button', { name: 'Sign in' }).click());
    await expect(popup.locator('main').textContent()).resolves.toContain(`the answer goes to ${new URL(callback.url).host}`);
    await navigation(popup, () => popup.getByRole('button', { name: 'Allow' }).click());
    await expect(popup.locator('#authorization-code').textContent()).resolves.toMatch(/\S{20,}/);
    // The page's script has run its postMessage (it updates the status right after).
    await expect(popup.locator('#result-status').textContent()).resolves.toContain('has been told');
    await shot(popup, 'result-not-delivered');

    // Messages from one window arrive in the order sent: once this later one is in, the
    // result would have been too, had the browser delivered it.
    await popup.evaluate(`window.opener.postMessage('after the result', '*')`);
    await page.waitForFunction('window.received.length > 0');
    await expect(page.evaluate('window.received')).resolves.toEqual([{ origin: new URL(service.url).origin, data: 'after the result' }]);
    expect([...errors, ...popupErrors]).toEqual([]);
  });

  it('works without JavaScript: the search box submits and filters on the server', async () => {
    const shot = screenshotter('no-javascript');
    const noJs = await browser.newContext({ javaScriptEnabled: false });
    try {
      const plain = await noJs.newPage();
      const plainErrors = collectPageErrors(plain);
      const connectUrl = await createSession({ customer_id: 'browser-4', redirect_uri: redirectUri });
      await plain.goto(connectUrl);
      await plain.getByLabel('Search providers').fill('gusto');
      await Promise.all([plain.waitForURL((url) => url.searchParams.get('q') === 'gusto'), plain.getByRole('button', { name: 'Search' }).click()]);
      await expect(plain.locator('#provider-list li:visible').count()).resolves.toBe(1);
      await shot(plain, 'search-without-js');
      await navigation(plain, () => plain.getByRole('button', { name: /Gusto/ }).click());
      await expect(plain.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in to Gusto');
      expect(plainErrors).toEqual([]);
    } finally {
      await noJs.close();
    }
  });
});
