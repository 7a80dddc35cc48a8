import { rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { ApplicationsService, IssuedCredentials } from '../../src/modules/applications/applications.service';
import { collectPageErrors, describeWithBrowser, launchChromium, screenshotter } from '../utils/browser';
import { basic, bearer, createApplication, REDIRECT_URI } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';
import { WebhookReceiver } from '../utils/webhook-receiver';

const OPS_USER = 'ops';
const OPS_PASSWORD = 'ops-password-for-tests';
const OPS = { authorization: `Basic ${Buffer.from(`${OPS_USER}:${OPS_PASSWORD}`).toString('base64')}` };
const COMPLETED = 'job.data_sync_all.completed';

// Markup from everywhere an endpoint's owner or receiver writes: each must show as text, and nothing may run.
const HOSTILE_DESCRIPTION = '<img src=x onerror=window.__pwned=1> platform hooks';
const HOSTILE_EXCERPT = '<img src=x onerror=window.__pwned=2><script>window.__pwned=3</script>';
const HOSTILE_APPLICATION = 'Partner <b onmouseover=window.__pwned=4>Payroll</b>';
const HOSTILE_URL = 'https://hooks.example.com/<script>window.__pwned=5</script>';
const HOSTILE_REASON = 'Disabled automatically: <img src=x onerror=window.__pwned=6>';

/** The page globals the waiting functions below read (this project's TypeScript has no DOM types). */
interface PageNode {
  textContent: string | null;
}
declare const document: {
  querySelector(selector: string): PageNode | null;
  querySelectorAll(selector: string): ArrayLike<PageNode>;
};

interface Endpoint {
  id: string;
  url: string;
  application_name: string;
  enabled: boolean;
  failing_since: string | null;
  disabled_at: string | null;
  last_delivered_at: string | null;
  pending: number;
  failed: number;
  delivered: number;
}

interface Delivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  status: string;
}

/** A receiver that refuses every webhook with markup in its answer, the start of which the service keeps. */
async function startHostileReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(500, { 'content-type': 'text/html' }).end(HOSTILE_EXCERPT));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** How the dashboard writes a time: UTC, 24-hour, to the second. */
const utcText = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ' UTC') : '—');

/**
 * The dashboard's Webhooks view in headless Chromium (Los Angeles time, so local time could not
 * pass for UTC), on webhooks made through the real API: an endpoint whose receiver answers 500
 * until it is fixed, one whose receiver answers with markup, and one of another application
 * disabled by the service. Deliveries fail fast (a one-second retry window).
 */
describeWithBrowser('ops dashboard: webhooks in Chromium', () => {
  let service: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let dialogs: string[];
  let receiver: WebhookReceiver;
  let hostileReceiver: Awaited<ReturnType<typeof startHostileReceiver>>;
  let app: IssuedCredentials;
  let main: Endpoint;
  let hostile: Endpoint;
  let off: Endpoint;
  let mainDelivery: Delivery;
  let hostileDelivery: Delivery;
  let shot: ReturnType<typeof screenshotter>;

  const ops = async (p: string) => {
    const res = await service.request(p, { headers: OPS });
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${res.text}`);
    return res.body;
  };
  const endpointsNow = async (): Promise<Endpoint[]> => (await ops('/ops/api/webhooks/endpoints')).data;
  const endpointNow = async (id: string) => (await endpointsNow()).find((e) => e.id === id)!;

  async function createEndpoint(owner: IssuedCredentials, body: Record<string, unknown>): Promise<Endpoint> {
    const res = await service.request('/webhooks/endpoints', json(body, basic(owner)));
    if (res.status !== 201) throw new Error(`endpoint not created: ${res.text}`);
    return res.body;
  }

  beforeAll(async () => {
    rmSync(path.resolve(__dirname, '../../test-artifacts/browser/ops-dashboard-webhooks'), { recursive: true, force: true });
    shot = screenshotter('ops-dashboard-webhooks');
    receiver = await new WebhookReceiver().start();
    receiver.answer = () => 500;
    hostileReceiver = await startHostileReceiver();
    [service, browser] = await Promise.all([
      startTestService({ env: { WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_RETRY_WINDOW_MS: '1000' } }),
      launchChromium(),
    ]);
    app = await createApplication(service);
    const partner = await service.app.get(ApplicationsService).create({ name: HOSTILE_APPLICATION, redirectUris: [REDIRECT_URI], sandbox: true });

    main = await createEndpoint(app, { url: receiver.url, event_types: [COMPLETED], description: 'Benefits platform' });
    hostile = await createEndpoint(app, { url: hostileReceiver.url, event_types: [COMPLETED], description: HOSTILE_DESCRIPTION });
    // Disabled as the service does after days of failures; a URL with markup, which the API would never take, for the banner.
    off = await createEndpoint(partner, { url: 'http://127.0.0.1:9/hooks', event_types: [COMPLETED] });
    await service.app
      .get(DataSource)
      .query(`UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), disabled_reason = $2, url = $3 WHERE id = $1`, [off.id, HOSTILE_REASON, HOSTILE_URL]);

    // One data sync: one event, one delivery to each enabled endpoint, each failed within the second.
    const sandbox = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 4 }, basic(app)));
    expect(sandbox.status).toBe(200);
    const sync = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(sandbox.body.access_token)));
    expect(sync.status).toBe(201);
    const failedOf = async (endpoint: Endpoint): Promise<Delivery> =>
      expectEventually(
        async () => {
          const list = await ops(`/ops/api/webhooks/deliveries?status=failed&endpoint_id=${endpoint.id}`);
          expect(list.data).toHaveLength(1);
          return list.data[0];
        },
        { timeoutMs: 20_000 },
      );
    [mainDelivery, hostileDelivery] = await Promise.all([failedOf(main), failedOf(hostile)]);
    [main, hostile, off] = await Promise.all([endpointNow(main.id), endpointNow(hostile.id), endpointNow(off.id)]);
    expect(main).toMatchObject({ enabled: true, failing_since: expect.any(String), pending: 0, failed: 1, delivered: 0 });
    expect(off).toMatchObject({ enabled: false, disabled_at: expect.any(String), url: HOSTILE_URL, application_name: HOSTILE_APPLICATION });

    context = await browser.newContext({ viewport: { width: 1366, height: 768 }, timezoneId: 'America/Los_Angeles', locale: 'en-US' });
    page = await context.newPage();
    errors = collectPageErrors(page);
    dialogs = [];
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await service?.close();
    await receiver?.stop();
    await hostileReceiver?.close();
  });

  const titled = (text: string) => page.waitForFunction((t) => document.querySelector('#view-title')?.textContent === t, text);
  const textOf = (selector: string, text: string, timeout?: number) =>
    page.waitForFunction(([sel, t]) => document.querySelector(sel)?.textContent === t, [selector, text], { timeout });
  const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });
  const hash = () => new URL(page.url()).hash;
  const deliveries = () => page.getByRole('table', { name: 'Webhook deliveries' });
  const deliveryRows = () => deliveries().locator('tbody tr');
  /** Waits until the deliveries table shows exactly these delivery ids (or its empty message, for none). */
  const deliveriesAre = (ids: string[]) =>
    page.waitForFunction(
      (want) => {
        const links = Array.from(document.querySelectorAll('#view a[data-focus-key^="delivery:"]')).map((a) => a.textContent);
        return JSON.stringify(links.sort()) === JSON.stringify([...want].sort()) && (want.length > 0 || document.querySelector('#view .empty') !== null);
      },
      ids,
    );
  const endpointRow = (id: string) => page.locator(`#view tr[data-endpoint-id="${id}"]`);
  const cells = (id: string) => endpointRow(id).locator('td').allTextContents();
  const tab = (name: RegExp) => page.getByRole('navigation', { name: 'Deliveries by status' }).getByRole('link', { name });
  const pwned = () => page.evaluate<unknown>('window.__pwned');

  async function nothingRan() {
    await expect(page.locator('#view img, #view script, #view b').count()).resolves.toBe(0);
    await expect(pwned()).resolves.toBeUndefined();
  }

  it('lists every endpoint with its counts, a banner for the disabled one and a warning for the failing one', async () => {
    await page.goto(`${service.url}/ops`);
    await page.getByLabel('Username').fill(OPS_USER);
    await page.getByLabel('Password').fill(OPS_PASSWORD);
    await page.keyboard.press('Enter');
    await titled('Overview');

    await nav('Webhooks').click();
    await titled('Webhooks');
    // Failed first: what needs someone.
    expect(hash()).toBe('#/webhooks?status=failed');
    await expect(nav('Webhooks').getAttribute('aria-current')).resolves.toBe('page');
    await endpointRow(off.id).waitFor();

    await expect(cells(main.id)).resolves.toEqual([
      'Test application',
      `${main.url}Benefits platform`,
      'enabled ⚠ failing',
      '0',
      '1',
      '0',
      '—',
      utcText(main.failing_since),
    ]);
    await expect(endpointRow(main.id).locator('.badge-failing').getAttribute('title')).resolves.toBe(`Every delivery has failed since ${main.failing_since}`);
    await expect(cells(hostile.id)).resolves.toEqual(['Test application', `${hostile.url}${HOSTILE_DESCRIPTION}`, 'enabled ⚠ failing', '0', '1', '0', '—', utcText(hostile.failing_since)]);
    await expect(cells(off.id)).resolves.toEqual([HOSTILE_APPLICATION, HOSTILE_URL, 'disabled', '0', '0', '0', '—', '—']);

    // The banner of the disabled endpoint, above the tables; its time in UTC, though the browser is in Los Angeles.
    const notices = page.getByRole('list', { name: 'Disabled webhook endpoints' }).getByRole('listitem');
    await expect(notices.allTextContents()).resolves.toEqual([`Endpoint ${HOSTILE_URL} of ${HOSTILE_APPLICATION} disabled ${utcText(off.disabled_at)}: ${HOSTILE_REASON} Its deliveries`]);
    await expect(notices.locator('time').getAttribute('datetime')).resolves.toBe(off.disabled_at);
    await nothingRan();
    await expect(page.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(1366);
    await shot(page, 'webhooks');
  });

  it('filters the deliveries by status with the tabs, and by endpoint', async () => {
    await deliveriesAre([mainDelivery.id, hostileDelivery.id]);
    await expect(tab(/^Failed/).getAttribute('aria-current')).resolves.toBe('page');
    await expect(
      page.getByRole('navigation', { name: 'Deliveries by status' }).getByRole('link').allTextContents(),
    ).resolves.toEqual(['All 2', 'Failed 2', 'Pending 0', 'Delivered 0']);
    await expect(deliveryRows().first().locator('.badge').textContent()).resolves.toBe('failed');
    // The last answer of each: 500, with the receiver's error.
    await expect(deliveryRows().filter({ hasText: main.url }).textContent()).resolves.toContain('500');

    await tab(/^Pending/).click();
    await page.waitForURL((url) => url.hash === '#/webhooks?status=pending');
    await deliveriesAre([]);
    await expect(page.locator('#view .empty').textContent()).resolves.toBe('No webhook deliveries match.');
    await page.getByRole('status').filter({ hasText: 'Webhook deliveries: 0 found.' }).waitFor();

    // An endpoint's URL opens its deliveries, of every status.
    await endpointRow(main.id).getByRole('link', { name: main.url, exact: true }).click();
    await page.waitForURL((url) => url.hash === `#/webhooks?endpoint_id=${main.id}`);
    await deliveriesAre([mainDelivery.id]);
    await expect(page.getByLabel('Endpoint', { exact: true }).inputValue()).resolves.toBe(main.id);
    await expect(tab(/^All/).getAttribute('aria-current')).resolves.toBe('page');
    await expect(tab(/^All/).textContent()).resolves.toBe('All 1');

    // The tabs keep the endpoint; the endpoint filter keeps the tab, Clear included.
    await tab(/^Failed/).click();
    await page.waitForURL((url) => url.hash === `#/webhooks?status=failed&endpoint_id=${main.id}`);
    await deliveriesAre([mainDelivery.id]);
    const choices = await page.getByLabel('Endpoint', { exact: true }).locator('option').allTextContents();
    expect(choices).toEqual(expect.arrayContaining(['Any endpoint', `Test application — ${hostile.url}`, `${HOSTILE_APPLICATION} — ${HOSTILE_URL}`]));
    await page.getByLabel('Endpoint', { exact: true }).selectOption(hostile.id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.hash === `#/webhooks?status=failed&endpoint_id=${hostile.id}`);
    await deliveriesAre([hostileDelivery.id]);
    await shot(page, 'webhooks-failed-of-endpoint');
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForURL((url) => url.hash === '#/webhooks?status=failed');
    await deliveriesAre([mainDelivery.id, hostileDelivery.id]);
    await nothingRan();
  });

  it('opens a failed delivery: its attempts, the receiver’s answers and the body, all as text', async () => {
    await deliveries().getByRole('link', { name: hostileDelivery.id, exact: true }).click();
    await titled(`Webhook delivery ${hostileDelivery.id}`);
    await textOf('#delivery-status', 'failed');
    const detail = await ops(`/ops/api/webhooks/deliveries/${hostileDelivery.id}`);
    const attempts = page.getByRole('table', { name: 'Attempts' }).locator('tbody tr');
    await expect(attempts.count()).resolves.toBe(detail.recent_attempts.length);
    expect(detail.recent_attempts.length).toBeGreaterThan(1);
    // Newest first: the time, the status code, the latency, no error, the excerpt as the receiver wrote it.
    const newest = detail.recent_attempts[detail.recent_attempts.length - 1];
    await expect(attempts.first().locator('td').allTextContents()).resolves.toEqual([utcText(newest.attempted_at), '500', String(newest.latency_ms), '—', HOSTILE_EXCERPT]);
    await expect(page.locator('#view td.excerpt').allTextContents()).resolves.toEqual(detail.recent_attempts.map(() => HOSTILE_EXCERPT));
    await expect(page.locator('#view dl.facts').textContent()).resolves.toContain(`${hostile.url} of Test application`);
    await nothingRan();
    await shot(page, 'delivery-hostile');

    // The other failed delivery, opened by its address: every fact, and the body it sent, indented.
    await page.goto(`${service.url}/ops#/webhooks/${mainDelivery.id}`);
    await titled(`Webhook delivery ${mainDelivery.id}`);
    await textOf('#delivery-status', 'failed');
    const sent = await ops(`/ops/api/webhooks/deliveries/${mainDelivery.id}`);
    const terms = await page.locator('#view dl.facts > dt').allTextContents();
    const values = await page.locator('#view dl.facts > dd').allTextContents();
    expect(Object.fromEntries(terms.map((term, i) => [term, values[i]]))).toEqual({
      Status: 'failed',
      'Event type': COMPLETED,
      'Event id': sent.event_id,
      Endpoint: `${receiver.url} of Test application enabled ⚠ failing`,
      Connection: sent.connection_id,
      Attempts: String(sent.attempts),
      'Next attempt': utcText(sent.next_attempt_at),
      'Last answer': '500',
      'Last error': sent.last_error ?? '—',
      Created: utcText(sent.created_at),
      Ended: utcText(sent.completed_at),
    });
    await expect(page.locator('#delivery-body').textContent()).resolves.toBe(JSON.stringify(JSON.parse(sent.body), null, 2));
    expect(JSON.parse(sent.body)).toMatchObject({ event_type: COMPLETED });
    await expect(page.getByRole('table', { name: 'Attempts' }).locator('tbody tr').first().locator('td').nth(4).textContent()).resolves.toBe('status 500');
    // Not a delivery's number: said so, without asking the service.
    await page.goto(`${service.url}/ops#/webhooks/not-a-number`);
    await textOf('#view .error', '“not-a-number” is not a webhook delivery id (a number).');
  });

  it('resends a failed delivery once the receiver is fixed: pending at once, then delivered, and audited', async () => {
    await page.goto(`${service.url}/ops#/webhooks/${mainDelivery.id}`);
    await textOf('#delivery-status', 'failed');
    receiver.answer = () => 200;
    const before = receiver.received.length;
    // Every status the page shows from now on, in order (the reload after the resend may already find it delivered).
    await page.evaluate(`(() => {
      window.__statuses = [];
      const record = () => {
        const status = document.querySelector('#delivery-status');
        const text = status && status.textContent;
        if (text && window.__statuses[window.__statuses.length - 1] !== text) window.__statuses.push(text);
      };
      record();
      new MutationObserver(record).observe(document.getElementById('view'), { childList: true, subtree: true });
    })()`);
    await page.getByRole('button', { name: `Resend delivery ${mainDelivery.id}` }).click();
    await page.getByRole('status').filter({ hasText: `Delivery ${mainDelivery.id} will be sent again.` }).waitFor();
    // Live refresh (every 5 s) follows it to the end.
    await textOf('#delivery-status', 'delivered', 20_000);
    await expect(page.evaluate<string[]>('window.__statuses')).resolves.toEqual(['failed', 'pending', 'delivered']);
    expect(receiver.received.length).toBe(before + 1);
    const attempts = page.getByRole('table', { name: 'Attempts' }).locator('tbody tr');
    await expect(attempts.first().locator('td').nth(1).textContent()).resolves.toBe('200');
    await expect(attempts.first().locator('td').nth(4).textContent()).resolves.toBe('ok');
    // Delivered may go again.
    await page.getByRole('button', { name: `Resend delivery ${mainDelivery.id}` }).waitFor();
    await shot(page, 'delivery-resent');

    expect(await ops(`/ops/api/webhooks/deliveries/${mainDelivery.id}`)).toMatchObject({ status: 'delivered', last_status_code: 200, event_id: mainDelivery.event_id });
    const audit = await service.app
      .get(DataSource)
      .query(`SELECT actor, action, detail FROM ops_audit WHERE target_type = 'webhook_delivery' AND target_id = $1`, [mainDelivery.id]);
    expect(audit).toEqual([{ actor: OPS_USER, action: 'webhook_delivery.resend', detail: { endpoint_id: main.id, event_id: mainDelivery.event_id, was: 'failed' } }]);

    // The audit trail of the delivery links back to it.
    await page.getByRole('link', { name: 'Audit trail of this delivery' }).click();
    await titled('Audit log');
    const row = page.locator('#view table tbody tr');
    await row.first().waitFor();
    await expect(row.count()).resolves.toBe(1);
    await expect(row.locator('td').nth(2).textContent()).resolves.toBe('webhook_delivery.resend');
    await expect(row.getByRole('link', { name: mainDelivery.id }).getAttribute('href')).resolves.toBe(`#/webhooks/${mainDelivery.id}`);

    // The endpoint is healthy again: no warning, the delivery counted, its time shown.
    await nav('Webhooks').click();
    await titled('Webhooks');
    const now = await endpointNow(main.id);
    expect(now).toMatchObject({ failing_since: null, failed: 0, delivered: 1, last_delivered_at: expect.any(String) });
    await page.waitForFunction((id) => document.querySelector(`#view tr[data-endpoint-id="${id}"] td:nth-child(3)`)?.textContent === 'enabled', main.id, { timeout: 15_000 });
    await expect(cells(main.id)).resolves.toEqual(['Test application', `${main.url}Benefits platform`, 'enabled', '0', '0', '1', utcText(now.last_delivered_at), '—']);
    // Only the other one is left on the Failed tab.
    await deliveriesAre([hostileDelivery.id]);
  });

  it('fits at 390 px and 1280 px wide: nothing overflows sideways, the top bar’s Sign out and Webhooks stay on screen', async () => {
    const views: [string, string][] = [
      ['#/webhooks?status=failed', 'table'],
      [`#/webhooks?endpoint_id=${main.id}`, 'table'],
      [`#/webhooks/${hostileDelivery.id}`, '#delivery-status'],
    ];
    const fits = () => page.evaluate<boolean>('document.scrollingElement.scrollWidth <= window.innerWidth');
    const onScreen = async (locator: ReturnType<Page['locator']>, width: number) => {
      const box = (await locator.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(width);
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThanOrEqual(800);
      await locator.click({ trial: true });
    };
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      for (const [address, loaded] of views) {
        await page.goto(`${service.url}/ops${address}`);
        await page.locator(`#view ${loaded}`).first().waitFor();
        await expect(fits()).resolves.toBe(true);
        await onScreen(page.getByRole('button', { name: 'Sign out' }), width);
        await onScreen(nav('Webhooks'), width);
      }
      await page.goto(`${service.url}/ops#/webhooks?status=failed`);
      await endpointRow(off.id).waitFor();
      await shot(page, `webhooks-at-${width}`);
    }
    await page.setViewportSize({ width: 1366, height: 768 });
    await nothingRan();
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});
