import { rmSync } from 'node:fs';
import path from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { collectPageErrors, describeWithBrowser, launchChromium, screenshotter } from '../utils/browser';
import { basic, bearer, createApplication } from '../utils/connect';
import { DiscrepancyRow, insertDiscrepancy, insertResult } from '../utils/discrepancy-fixtures';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

const OPS_USER = 'ops';
const OPS_PASSWORD = 'ops-password-for-tests';
const OPS = { authorization: `Basic ${Buffer.from(`${OPS_USER}:${OPS_PASSWORD}`).toString('base64')}` };

/** A name from provider data that carries markup: it must show as text, and nothing may run. */
const HOSTILE_NAME = '<img src=x onerror=window.__pwned=1>';
/** An ops note with markup, typed into the dialog: shown back as text. */
const NOTE = 'Payroll skipped it <b onmouseover=window.__pwned=2>twice</b>; fixed from the next run';

/** The page globals the waiting functions below read (this project's TypeScript has no DOM types). */
interface PageNode {
  textContent: string | null;
}
declare const document: {
  querySelector(selector: string): PageNode | null;
  querySelectorAll(selector: string): ArrayLike<PageNode>;
};

/** How the dashboard writes a time: UTC, 24-hour, to the second. */
const utcText = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ' UTC') : '—');
const short = (id: string) => `…${id.slice(-8)}`;

/**
 * The dashboard's Discrepancies view in headless Chromium (Los Angeles time, so local time could
 * not pass for UTC): the overview's live counts, the list with its kind and status filters, an
 * acknowledgement with a note (required in the dialog), the detail with its statements, and a
 * re-apply that opens a real enrollment job. Discrepancies are rows as the reconciliation job
 * writes them, on a sandbox employer, people and benefit made through the API.
 */
describeWithBrowser('ops dashboard: discrepancies in Chromium', () => {
  let service: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let dialogs: string[];
  let app: IssuedCredentials;
  let shot: ReturnType<typeof screenshotter>;
  let token: string;
  let benefitId: string;
  let hostile: { id: string };
  let open: DiscrepancyRow;
  let acknowledged: DiscrepancyRow;
  let resolved: DiscrepancyRow;
  /** A second open one, so that no two counts on the overview are the same. */
  let overLimit: DiscrepancyRow;

  const ops = async (p: string) => {
    const res = await service.request(p, { headers: OPS });
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${res.text}`);
    return res.body;
  };
  const employer = (p: string, body?: unknown) =>
    body === undefined ? service.request(p, { headers: bearer(token) }) : service.request(p, json(body, bearer(token)));

  beforeAll(async () => {
    rmSync(path.resolve(__dirname, '../../test-artifacts/browser/ops-dashboard-discrepancies'), { recursive: true, force: true });
    shot = screenshotter('ops-dashboard-discrepancies');
    [service, browser] = await Promise.all([startTestService(), launchChromium()]);
    app = await createApplication(service);
    const sandbox = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5 }, basic(app)));
    expect(sandbox.status).toBe(200);
    token = sandbox.body.access_token;
    const scope = { connectionId: sandbox.body.connection_id, entityId: sandbox.body.entity_id };
    const people: { id: string; first_name: string; last_name: string }[] = (await employer('/employer/directory')).body.individuals;
    hostile = people[0];
    const renamed = await service.request(`/sandbox/individual/${hostile.id}`, {
      method: 'PUT',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ first_name: HOSTILE_NAME, last_name: 'Doe' }),
    });
    expect(renamed.status).toBe(200);

    // A benefit and an enrollment the service applied, for the re-apply.
    const created = await employer('/employer/benefits', { type: '401k', description: 'Retirement', frequency: 'every_paycheck' });
    expect(created.status).toBe(200);
    benefitId = created.body.benefit_id;
    await expectEventually(async () => expect((await employer(`/jobs/automated/${created.body.job_id}`)).body.status).toBe('complete'));
    const enrolled = await employer(`/employer/benefits/${benefitId}/individuals`, [{ individual_id: hostile.id, configuration: { employee_deduction: { type: 'percent', amount: 400 } } }]);
    expect(enrolled.status).toBe(200);
    await expectEventually(async () => expect((await employer(`/jobs/automated/${enrolled.body.job_id}`)).body.status).toBe('complete'));

    const db = service.app.get(DataSource);
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
    open = await insertDiscrepancy(db, {
      ...scope,
      benefitId,
      individualId: hostile.id,
      kind: 'missing',
      openedAt: minutesAgo(90),
      occurrences: 2,
      firstPayDate: '2026-06-15',
      lastPayDate: '2026-06-30',
      expected: { employee: 4_615, employer: 0, limit_room: null },
      observed: { employee: 0, employer: 0 },
    });
    for (const payDate of ['2026-06-15', '2026-06-30']) {
      await insertResult(db, { discrepancy: open, payDate, result: 'missing', expectedEmployee: 4_615, observedEmployee: 0, reconciledAt: minutesAgo(60) });
    }
    acknowledged = await insertDiscrepancy(db, {
      ...scope,
      individualId: people[1].id,
      kind: 'amount_mismatch',
      status: 'acknowledged',
      note: 'Asked payroll about the rounding',
      openedAt: minutesAgo(60),
      expected: { employee: 2_000, employer: 1_000, limit_room: null },
      observed: { employee: 1_999, employer: 1_000 },
    });
    resolved = await insertDiscrepancy(db, { ...scope, individualId: people[2].id, kind: 'unexpected', status: 'resolved', openedAt: minutesAgo(30) });
    overLimit = await insertDiscrepancy(db, { ...scope, individualId: people[3].id, kind: 'over_limit', openedAt: minutesAgo(120), expected: { employee: 0, employer: 0, limit_room: 0 }, observed: { employee: 500, employer: 0 } });

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
  });

  const titled = (text: string) => page.waitForFunction((t) => document.querySelector('#view-title')?.textContent === t, text);
  const textOf = (selector: string, text: string, timeout?: number) =>
    page.waitForFunction(([sel, t]) => document.querySelector(sel)?.textContent === t, [selector, text], { timeout });
  const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });
  const rows = () => page.getByRole('table', { name: 'Discrepancies' }).locator('tbody tr');
  const rowOf = (id: string) => rows().filter({ has: page.getByRole('link', { name: short(id), exact: true }) });
  /** Waits until the list shows exactly these discrepancies (or its empty message, for none). */
  const listIs = (ids: string[]) =>
    page.waitForFunction(
      (want) => {
        const links = Array.from(document.querySelectorAll('#view a[data-focus-key^="discrepancy:"]')).map((a) => a.textContent);
        return JSON.stringify(links.sort()) === JSON.stringify([...want].sort()) && (want.length > 0 || document.querySelector('#view .empty') !== null);
      },
      ids.map(short),
    );
  const pwned = () => page.evaluate<unknown>('window.__pwned');

  async function nothingRan() {
    await expect(page.locator('#view img, #view script, #view b').count()).resolves.toBe(0);
    await expect(pwned()).resolves.toBeUndefined();
  }

  it('signs in; the overview shows the live discrepancies by status and kind, as the API counts them', async () => {
    await page.goto(`${service.url}/ops`);
    await page.getByLabel('Username').fill(OPS_USER);
    await page.getByLabel('Password').fill(OPS_PASSWORD);
    await page.keyboard.press('Enter');
    await titled('Overview');
    const counts = (await ops('/ops/api/overview')).discrepancies;
    expect(counts).toMatchObject({ open: 2, acknowledged: 1 });
    const cards = page.getByRole('list', { name: 'Live discrepancies' });
    await expect(cards.getByRole('link', { name: /open discrepancies/ }).textContent()).resolves.toBe(`${counts.open}open discrepancies`);
    await expect(cards.getByRole('link', { name: /acknowledged/ }).textContent()).resolves.toBe(`${counts.acknowledged}acknowledged`);
    const byKind = page.getByRole('table', { name: 'Live discrepancies by kind' }).locator('tbody tr');
    const shown = Object.fromEntries((await byKind.evaluateAll((trs) => trs.map((tr) => [tr.children[0].textContent, Number(tr.children[1].textContent)]))) as [string, number][]);
    expect(shown).toEqual(Object.fromEntries(Object.entries(counts.by_kind).map(([kind, n]) => [kind.replace(/_/g, ' '), n])));
    await shot(page, 'overview');

    // The open card opens the list of open ones.
    await cards.getByRole('link', { name: /open discrepancies/ }).click();
    await titled('Discrepancies');
    expect(new URL(page.url()).hash).toBe('#/discrepancies?status=open');
    await listIs([open.id, overLimit.id]);
  });

  it('lists the live discrepancies, names as text, and filters them by kind and status', async () => {
    await nav('Discrepancies').click();
    await titled('Discrepancies');
    await expect(nav('Discrepancies').getAttribute('aria-current')).resolves.toBe('page');
    await listIs([open.id, acknowledged.id, overLimit.id]);
    // Newest opened first.
    await expect(rows().locator('a[data-focus-key^="discrepancy:"]').allTextContents()).resolves.toEqual([acknowledged.id, open.id, overLimit.id].map(short));
    const first = rowOf(open.id);
    await expect(first.locator('td').allTextContents()).resolves.toEqual([
      short(open.id),
      'missing',
      'open',
      `${HOSTILE_NAME} Doe ${short(hostile.id)}`,
      short(benefitId),
      'employee $46.15, employer $0.00',
      'employee $0.00, employer $0.00',
      '2',
      `2026-06-30 ${short(open.lastPaymentId!)}`,
      utcText(open.openedAt.toISOString()),
      short(open.connectionId),
      'Acknowledge…Re-apply…',
    ]);
    await expect(rowOf(acknowledged.id).locator('.badge').textContent()).resolves.toBe('acknowledged');
    await expect(rowOf(acknowledged.id).getByRole('button', { name: /^Edit the note of amount mismatch discrepancy/ }).count()).resolves.toBe(1);
    await nothingRan();
    await shot(page, 'list');

    await page.getByLabel('Kind').selectOption('amount_mismatch');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.hash === '#/discrepancies?kind=amount_mismatch');
    await listIs([acknowledged.id]);
    await page.getByRole('status').filter({ hasText: 'Discrepancies: 1 found.' }).waitFor();

    await page.getByLabel('Kind').selectOption('');
    await page.getByLabel('Status').selectOption('resolved');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.hash === '#/discrepancies?status=resolved');
    await listIs([resolved.id]);
    await expect(rowOf(resolved.id).locator('td').last().textContent()).resolves.toBe('resolved: agreed');

    await page.getByLabel('Status').selectOption('open,acknowledged,resolved');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await listIs([open.id, acknowledged.id, resolved.id, overLimit.id]);
    // A typo in an id is said on the form, not sent.
    await page.getByLabel('Individual id').fill('ann');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await textOf('#filter-individual_id-error', 'Individual id must be a UUID, e.g. 0f3a6c1e-…');
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForURL((url) => url.hash === '#/discrepancies');
    await listIs([open.id, acknowledged.id, overLimit.id]);
  });

  it('acknowledges one with a note: required in the dialog, Escape changes nothing, then acknowledged and audited', async () => {
    const button = rowOf(open.id).getByRole('button', { name: `Acknowledge missing discrepancy ${short(open.id)}` });
    await button.click();
    const dialog = page.getByRole('dialog', { name: `Acknowledge missing discrepancy ${short(open.id)}` });
    await dialog.waitFor();
    await page.keyboard.press('Enter');
    await expect(page.locator('#dialog-note-error').textContent()).resolves.toBe('Note is required.');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await ops(`/ops/api/discrepancies/${open.id}`)).status).toBe('open');

    await button.click();
    await dialog.waitFor();
    await page.keyboard.type(NOTE);
    await shot(page, 'acknowledge-dialog');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: `Discrepancy ${short(open.id)} acknowledged.` }).waitFor();
    // The announcement comes before the list's refresh: wait for the refreshed row.
    await rowOf(open.id).locator('.badge', { hasText: /^acknowledged$/ }).waitFor();
    await expect(rowOf(open.id).locator('.badge').textContent()).resolves.toBe('acknowledged');
    const after = await ops(`/ops/api/discrepancies/${open.id}`);
    expect(after).toMatchObject({ status: 'acknowledged', note: NOTE, acknowledged_by: OPS_USER, acknowledged_at: expect.any(String) });
    await nothingRan();

    // Its page shows the note as typed, and its audit trail the acknowledgement.
    await rowOf(open.id).getByRole('link', { name: short(open.id), exact: true }).click();
    await titled(`Discrepancy ${short(open.id)}`);
    await textOf('#discrepancy-note', NOTE);
    await textOf('#discrepancy-status', 'acknowledged');
    const terms = await page.locator('#view dl.facts > dt').allTextContents();
    const values = await page.locator('#view dl.facts > dd').allTextContents();
    const fact = Object.fromEntries(terms.map((term, i) => [term, values[i]]));
    expect(fact).toMatchObject({
      Kind: 'missing',
      Individual: `${HOSTILE_NAME} Doe ${hostile.id}`,
      Acknowledged: `${utcText(after.acknowledged_at)} by ${OPS_USER}`,
      Occurrences: '2',
      'First statement': `2026-06-15 ${short(open.firstPaymentId!)}`,
      'Re-apply job': '—',
    });
    await nothingRan();
    await page.getByRole('link', { name: 'Audit trail of this discrepancy' }).click();
    await titled('Audit log');
    const audit = page.locator('#view table tbody tr');
    await audit.first().waitFor();
    await expect(audit.count()).resolves.toBe(1);
    await expect(audit.locator('td').nth(2).textContent()).resolves.toBe('discrepancy.acknowledge');
    await expect(audit.getByRole('link', { name: short(open.id) }).getAttribute('href')).resolves.toBe(`#/discrepancies/${open.id}`);
  });

  it('shows the statements that fed one, and re-applies the service’s configuration after confirming', async () => {
    await page.goto(`${service.url}/ops#/discrepancies/${open.id}`);
    await titled(`Discrepancy ${short(open.id)}`);
    const statements = page.getByRole('table', { name: 'Statements' }).locator('tbody tr');
    await statements.first().waitFor();
    await expect(statements.locator('td:first-child').allTextContents()).resolves.toEqual(['2026-06-30', '2026-06-15']);
    await expect(statements.first().locator('td').nth(3).textContent()).resolves.toBe('$46.15');

    // Re-apply asks first; Escape leaves everything as it was.
    const reapply = page.getByRole('button', { name: `Re-apply the configuration of missing discrepancy ${short(open.id)}` });
    await reapply.click();
    const dialog = page.getByRole('dialog', { name: `Re-apply the configuration of missing discrepancy ${short(open.id)}` });
    await dialog.waitFor();
    await shot(page, 'reapply-dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await ops(`/ops/api/discrepancies/${open.id}`)).reapply_job_id).toBeNull();

    await reapply.click();
    await dialog.getByRole('button', { name: 'Re-apply', exact: true }).click();
    const job = await expectEventually(async () => {
      const now = await ops(`/ops/api/discrepancies/${open.id}`);
      expect(now.reapply_job_id).toEqual(expect.any(String));
      return now.reapply_job_id as string;
    });
    await page.getByRole('status').filter({ hasText: `Discrepancy ${short(open.id)}: re-applied by job ${short(job)}.` }).waitFor();
    await textOf('#discrepancy-reapply-job', job);
    await expect(page.locator('#discrepancy-reapply-job').getAttribute('href')).resolves.toBe(`#/jobs/${job}`);
    // Still live: only a later statement or read that agrees resolves it.
    await textOf('#discrepancy-status', 'acknowledged');
    const opened = await ops(`/ops/api/jobs/${job}`);
    expect(opened).toMatchObject({ type: 'benefit_enroll', params: { benefit_id: benefitId, groups: [{ items: [{ individual_id: hostile.id, configuration: { employee_deduction: { type: 'percent', amount: 400 } } }] }] } });
    await shot(page, 'reapplied');

    // The job, followed in the dashboard until it completes.
    await page.locator('#discrepancy-reapply-job').click();
    await titled(`Job ${short(job)}`);
    await textOf('#job-status', 'complete', 20_000);
    await nothingRan();
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});
