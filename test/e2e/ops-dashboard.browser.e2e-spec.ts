import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { SandboxEmployerStore } from '../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { collectPageErrors, describeWithBrowser, launchChromium, screenshotter } from '../utils/browser';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

const OPS_USER = 'ops';
const OPS_PASSWORD = 'ops-password-for-tests';
const basicOf = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const OPS = { authorization: basicOf(OPS_USER, OPS_PASSWORD) };
const ASSETS = path.resolve(__dirname, '../../src/modules/ops-dashboard/assets');

/** The page globals the waiting functions below read (this project's TypeScript has no DOM types). */
interface PageNode {
  textContent: string | null;
}
declare const document: {
  body: PageNode;
  querySelector(selector: string): PageNode | null;
  querySelectorAll(selector: string): ArrayLike<PageNode>;
};

interface SandboxEmployer {
  token: string;
  connectionId: string;
  entityId: string;
}

async function sandboxEmployer(service: TestService, app: IssuedCredentials, providerId: string): Promise<SandboxEmployer> {
  const res = await service.request('/sandbox/connections', json({ provider_id: providerId, employee_size: 5 }, basic(app)));
  if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
  return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
}

const ops = (service: TestService, p: string) => service.request(p, { headers: OPS });

/** Renames a sandbox employee as if in the provider's own payroll system (synced by the next data sync). */
async function rename(service: TestService, employer: SandboxEmployer, individualId: string, names: { first_name: string; last_name?: string }) {
  const res = await service.request(`/sandbox/individual/${individualId}`, {
    method: 'PUT',
    headers: { ...bearer(employer.token), 'content-type': 'application/json' },
    body: JSON.stringify(names),
  });
  if (res.status !== 200) throw new Error(`rename failed: ${res.text}`);
}

/** A name from provider data that carries markup: it must show as text, and nothing may run. */
const HOSTILE_NAME = '<img src=x onerror=alert(1)>';

/** The page, its files and the sign-in check over plain HTTP. */
describeWithPostgres('ops dashboard over HTTP', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.close());

  it('sends /ops/ (as people type it) to the page at /ops', async () => {
    const res = await service.request('/ops/', { redirect: 'manual' });
    expect({ status: res.status, location: res.headers.get('location') }).toEqual({ status: 308, location: '/ops' });
    expect((await service.request('/ops/')).status).toBe(200);
  });

  it('serves the page without data, under a CSP that allows only its own script, style and API', async () => {
    const res = await service.request('/ops');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("form-action 'none'");
    expect(csp).not.toContain('unsafe-inline');
    // No inline script or style: everything comes from the two asset routes.
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.text).not.toMatch(/<style|\sstyle=/);
    expect(res.text).toMatch(/<script src="ops\/assets\/dashboard\.js\?v=[0-9a-f]{12}" defer><\/script>/);
    expect(res.text).toMatch(/<link rel="stylesheet" href="ops\/assets\/dashboard\.css\?v=[0-9a-f]{12}">/);
  });

  it('serves the script and the style with their content types', async () => {
    const js = await service.request('/ops/assets/dashboard.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect(js.text).toBe(readFileSync(path.join(ASSETS, 'dashboard.js'), 'utf8'));
    const css = await service.request('/ops/assets/dashboard.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(css.text).toBe(readFileSync(path.join(ASSETS, 'dashboard.css'), 'utf8'));
    expect((await service.request('/ops/assets/other.js')).status).toBe(404);
  });

  it('checks sign-in credentials: 200 with signed_in true or false, 400 without Basic credentials', async () => {
    const check = (authorization?: string) =>
      service.request('/ops/session', { method: 'POST', headers: authorization === undefined ? {} : { authorization } });
    const good = await check(OPS.authorization);
    expect({ status: good.status, body: good.body }).toEqual({ status: 200, body: { signed_in: true, username: OPS_USER } });
    expect(good.headers.get('cache-control')).toBe('no-store');
    for (const wrong of [basicOf(OPS_USER, 'wrong'), basicOf('someone', OPS_PASSWORD), basicOf('', '')]) {
      const res = await check(wrong);
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { signed_in: false, message: 'The username or password is not right.' } });
    }
    for (const bad of [undefined, 'Bearer abc', 'Basic', `Basic ${Buffer.from('no-colon').toString('base64')}`, 'Basic !!!']) {
      const res = await check(bad);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { code: 400, name: 'invalid_request_error', service_code: 'invalid_request', message: expect.stringContaining('Authorization: Basic') },
      });
    }
  });

  it('keeps the ops API itself closed to wrong credentials', async () => {
    const res = await service.request('/ops/api/overview', { headers: { authorization: basicOf(OPS_USER, 'wrong') } });
    expect(res.status).toBe(401);
  });
});

/**
 * The dashboard in headless Chromium at 1366×768 (and at 390 and 1280 px wide for the layout),
 * in a time zone other than UTC, on data made through the real APIs: a failed enrollment saga,
 * a dead letter whose cause gets fixed, an Assisted provider's ops task, an employee whose name
 * carries markup. Keyboard where a person would use it; no console errors, page errors or
 * dialogs at all.
 */
describeWithBrowser('ops dashboard in Chromium', () => {
  let service: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let app: IssuedCredentials;
  let automated: SandboxEmployer;
  let assisted: SandboxEmployer;
  let failedSagaId: string;
  let failedJobId: string;
  let unknownIndividual: string;
  /** An employee of the Automated employer, renamed to HOSTILE_NAME Doe. */
  let named: string;
  let dialogs: string[];
  let missingBenefitId: string;
  let deadLetterId: string;
  let deadLetterMessageId: string;
  let taskId: string;
  let manualJobId: string;
  let assistedBenefitId: string;
  let shot: ReturnType<typeof screenshotter>;

  beforeAll(async () => {
    // Screenshots of this run only, numbered in the order the steps ran.
    rmSync(path.resolve(__dirname, '../../test-artifacts/browser/ops-dashboard'), { recursive: true, force: true });
    shot = screenshotter('ops-dashboard');
    [service, browser] = await Promise.all([startTestService(), launchChromium()]);
    app = await createApplication(service);
    [automated, assisted] = await Promise.all([sandboxEmployer(service, app, 'sandbox_automated'), sandboxEmployer(service, app, 'sandbox_assisted')]);
    const directory = await service.request('/employer/directory', { headers: bearer(automated.token) });
    expect(directory.status).toBe(200);
    named = directory.body.individuals[0].id;
    await rename(service, automated, named, { first_name: HOSTILE_NAME, last_name: 'Doe' });

    // A failed saga: an enrollment whose only individual the provider does not know (404), so the job ends in error.
    const benefit = await service.request('/employer/benefits', json({ type: '401k', description: 'Retirement', frequency: 'every_paycheck' }, bearer(automated.token)));
    expect(benefit.status).toBe(200);
    await expectEventually(async () => expect((await ops(service, `/ops/api/jobs/${benefit.body.job_id}`)).body.status).toBe('complete'));
    unknownIndividual = randomUUID();
    const enroll = await service.request(
      `/employer/benefits/${benefit.body.benefit_id}/individuals`,
      json([{ individual_id: unknownIndividual, configuration: { employee_deduction: { type: 'percent', amount: 300 } } }], bearer(automated.token)),
    );
    expect(enroll.status).toBe(200);
    failedJobId = enroll.body.job_id;
    const failed = await expectEventually(async () => {
      const res = await ops(service, `/ops/api/sagas?state=failed&connection_id=${automated.connectionId}`);
      expect(res.body.data).toHaveLength(1);
      return res.body.data[0];
    });
    failedSagaId = failed.saga_id;

    // A dead letter: a contribution change for a benefit the service does not know yet.
    missingBenefitId = randomUUID();
    deadLetterMessageId = randomUUID();
    const event = await service.request(
      '/hris/events',
      json(
        {
          id: deadLetterMessageId,
          type: 'ContributionChanged',
          version: 1,
          occurred_at: '2026-03-01T09:00:00Z',
          connection_id: automated.connectionId,
          entity_id: automated.entityId,
          data: { individual_id: named, benefit_id: missingBenefitId, configuration: { employee_deduction: { type: 'percent', amount: 500 } } },
        },
        basic(app),
      ),
    );
    expect(event.body).toMatchObject({ outcome: 'dead_lettered', reason: expect.stringContaining(`Unknown benefit ${missingBenefitId}`) });
    const letters = await ops(service, '/ops/api/dead-letters?status=open');
    deadLetterId = letters.body.data.find((d: { message_id: string }) => d.message_id === deadLetterMessageId).dead_letter_id;

    // An ops task: a benefit created on the Assisted provider waits for its staff.
    const assistedBenefit = await service.request('/employer/benefits', json({ type: '401k', description: 'Assisted plan', frequency: 'every_paycheck' }, bearer(assisted.token)));
    expect(assistedBenefit.status).toBe(200);
    manualJobId = assistedBenefit.body.job_id;
    assistedBenefitId = assistedBenefit.body.benefit_id;
    const tasks = await ops(service, `/ops/api/tasks?status=open&connection_id=${assisted.connectionId}`);
    taskId = tasks.body.data.find((t: { job_id: string }) => t.job_id === manualJobId).task_id;

    // Los Angeles, so that a time shown in the browser's own zone could not pass for UTC.
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

  const h1 = () => page.getByRole('heading', { level: 1 });
  /** Waits for the view's title (the h1 of the view, not the hidden sign-in heading). */
  const titled = (text: string) => page.waitForFunction((t) => document.querySelector('#view-title')?.textContent === t, text);
  const textOf = (selector: string, text: string, timeout?: number) =>
    page.waitForFunction(([sel, t]) => document.querySelector(sel)?.textContent === t, [selector, text], { timeout });
  /** Waits until the table has exactly `count` rows (or at least, with atLeast). */
  const rowsAre = (count: number, atLeast = false) =>
    page.waitForFunction(
      ([c, least]) => {
        const rows = document.querySelectorAll('table tbody tr').length;
        return least ? rows >= c : rows === c;
      },
      [count, atLeast] as const,
    );
  const linkGone = (text: string, timeout?: number) =>
    page.waitForFunction((t) => !Array.from(document.querySelectorAll('table tbody a')).some((a) => a.textContent === t), text, { timeout });
  // page.evaluate with an expression runs outside the page's CSP; waitForFunction takes functions.
  const focused = (what: string) => page.evaluate<string>(`document.activeElement?.${what}`);
  const pwned = () => page.evaluate<unknown>('window.__pwned');
  /** A section link of the navigation bar (breadcrumbs and cards may share its words). */
  const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });
  const short = (id: string) => `…${id.slice(-8)}`;

  it('signs in: a wrong password is an error on the form, the right one opens the overview', async () => {
    await page.goto(`${service.url}/ops`);
    await expect(h1().textContent()).resolves.toBe('Sign in');
    await expect(focused('id')).resolves.toBe('ops-username');

    // Keyboard only: type, Tab, type, Enter.
    await page.keyboard.type(OPS_USER);
    await page.keyboard.press('Tab');
    await page.keyboard.type('not-the-password');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();
    await expect(page.locator('#sign-in-error').textContent()).resolves.toBe('Sign-in failed: The username or password is not right.');
    await expect(page.locator('#nav').isHidden()).resolves.toBe(true);
    await shot(page, 'sign-in-wrong-password');

    // The password field has focus with its text selected: typing replaces it.
    await page.keyboard.type(OPS_PASSWORD);
    await page.keyboard.press('Enter');
    await titled('Overview');
    await expect(page.locator('#signed-in-as').textContent()).resolves.toBe('Signed in as ops');
    await expect(nav('Overview').getAttribute('aria-current')).resolves.toBe('page');

    // The counts are the API's.
    const overview = (await ops(service, '/ops/api/overview')).body;
    const failedCard = page.getByRole('list', { name: 'Sagas by state' }).getByRole('link', { name: /failed/ });
    await expect(failedCard.textContent()).resolves.toBe(`${overview.sagas.by_state.failed}failed`);
    expect(overview.sagas.by_state.failed).toBeGreaterThanOrEqual(1);
    await expect(page.getByRole('link', { name: /open dead letters/ }).textContent()).resolves.toBe(`${overview.dead_letters.open}open dead letters`);
    await expect(page.getByRole('link', { name: /open tasks/ }).textContent()).resolves.toBe(`${overview.tasks.open}open tasks`);
    // Readable at 1366 wide: nothing sticks out sideways.
    await expect(page.evaluate<number>('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(1366);

    // The header's clock is UTC and 24-hour like every other time on the page, though the browser is in Los Angeles.
    await page.locator('#refresh-time time').waitFor();
    // Read together: live refresh rewrites the clock every few seconds.
    const [clock, at] = await page.evaluate<[string, string]>(
      `(() => { const el = document.getElementById('refresh-time'); return [el.textContent, el.querySelector('time').getAttribute('datetime')]; })()`,
    );
    expect(at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(clock).toBe(`Updated ${at.slice(11, 19)} UTC`);
    expect(Math.abs(Date.parse(at) - Date.now())).toBeLessThan(60_000);
    await shot(page, 'overview');
  });

  it('finds the failed saga with the filters and reads its timeline', async () => {
    await nav('Sagas').click();
    await titled('Sagas');

    // A bad age is refused on the form, before any request.
    const age = page.getByLabel('Started more than … ago');
    await age.fill('two hours');
    await age.press('Enter');
    await expect(page.locator('#filter-older_than-error').textContent()).resolves.toBe('Use a duration like 90s, 15m, 2h or 3d.');
    await expect(age.getAttribute('aria-invalid')).resolves.toBe('true');
    expect(new URL(page.url()).hash).toBe('#/sagas');
    await age.fill('');

    await page.getByLabel('State').selectOption('failed');
    await page.getByLabel('Type').selectOption('enrollment');
    const connection = page.getByLabel('Connection id');
    await connection.fill(automated.connectionId);
    await connection.press('Enter');
    await page.waitForURL((url) => url.hash.includes('state=failed'));
    expect(new URLSearchParams(new URL(page.url()).hash.split('?')[1]).get('connection_id')).toBe(automated.connectionId);
    const rows = page.locator('table tbody tr');
    await rowsAre(1);
    await expect(rows.first().textContent()).resolves.toContain('job failed');
    await page.getByRole('status').filter({ hasText: 'Sagas: 1 found.' }).waitFor();
    await shot(page, 'sagas-failed');

    // Keyboard: focus the saga's link and follow it with Enter.
    await page.getByRole('link', { name: short(failedSagaId) }).focus();
    await page.keyboard.press('Enter');
    await titled(`Saga ${short(failedSagaId)}`);
    await page.locator('#timeline').waitFor();
    const steps = page.locator('#timeline li .step-name');
    await expect(steps.allTextContents()).resolves.toEqual(['enroll requested', 'group processed', 'job error']);
    await expect(page.locator('#timeline').textContent()).resolves.toContain(`job_id: ${failedJobId}`);
    // The group's detail (key order is the database's): nobody enrolled, one failed.
    await expect(page.locator('#timeline li').nth(1).textContent()).resolves.toMatch(/failed: 1\b/);
    await expect(page.locator('#timeline li').nth(1).textContent()).resolves.toMatch(/succeeded: 0\b/);
    const jobRow = page.locator('table tbody tr').filter({ has: page.getByRole('link', { name: short(failedJobId) }) });
    await expect(jobRow.textContent()).resolves.toContain('error');
    await shot(page, 'saga-timeline');

    // Its job: the individual the provider did not know, with the provider's message.
    await page.getByRole('link', { name: short(failedJobId) }).click();
    await titled(`Job ${short(failedJobId)}`);
    await expect(page.locator('#job-status').textContent()).resolves.toBe('error');
    const individual = page.getByRole('table', { name: 'Individual errors' }).locator('tbody tr');
    await expect(individual.count()).resolves.toBe(1);
    await expect(individual.textContent()).resolves.toContain(unknownIndividual);
    await expect(individual.textContent()).resolves.toContain('404');
    // The service knows no name for that individual: the id alone, as the API says.
    await expect(individual.locator('.person-name').count()).resolves.toBe(0);
    expect((await ops(service, `/ops/api/jobs/${failedJobId}?include=individual_names`)).body.individual_names).toEqual({});
    expect((await ops(service, `/ops/api/jobs/${failedJobId}?include=everything`)).body).toMatchObject({
      code: 400,
      message: expect.stringContaining('include must be individual_names'),
    });
    await shot(page, 'job-individual-errors');
  });

  it('replays a dead letter: still refused while the benefit is unknown, applied once it exists, and its saga appears', async () => {
    await nav('Dead letters').click();
    await titled('Dead letters');
    const row = page.locator('table tbody tr').filter({ has: page.getByRole('link', { name: short(deadLetterId) }) });
    await expect(row.textContent()).resolves.toContain(`Unknown benefit ${missingBenefitId}`);

    // Select it and replay the selection before the fix: it stays open and the answer says why.
    // click, not check(): ticking re-renders the row (highlight, count), so the box is a new element.
    await row.getByRole('checkbox', { name: `Select dead letter ${short(deadLetterId)}` }).click();
    await expect(row.getByRole('checkbox').isChecked()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Replay selected (1)' }).click();
    await page.getByRole('dialog', { name: 'Replay dead letter ' + short(deadLetterId) }).waitFor();
    await page.keyboard.press('Enter');
    await page.locator('#replay-results').waitFor();
    await expect(page.locator('#replay-results').textContent()).resolves.toContain('0 of 1 replayed');
    await expect(page.locator('#replay-results').textContent()).resolves.toContain('still_poison');
    await expect((await ops(service, `/ops/api/dead-letters/${deadLetterId}`)).body.status).toBe('open');
    await shot(page, 'dead-letter-still-refused');

    // The fix: the employer set the benefit up in payroll directly; the service learns it on its next read.
    const connection = (await ops(service, `/ops/api/connections/${automated.connectionId}`)).body;
    await service.app.get(SandboxEmployerStore).addBenefit(
      {
        connectionId: automated.connectionId,
        entityId: automated.entityId,
        entityName: connection.entities[0].name,
        providerId: connection.provider_id,
        authenticationType: connection.authentication_type,
        employeeSize: 5,
      },
      { benefit_id: missingBenefitId, type: '401k', description: 'Set up in payroll', frequency: 'every_paycheck', company_contribution: null },
    );
    const listed = await service.request('/employer/benefits', { headers: bearer(automated.token) });
    expect(listed.body.map((b: { benefit_id: string }) => b.benefit_id)).toContain(missingBenefitId);

    // The dead letter's page: payload and reason, then Replay with a note.
    await page.getByRole('link', { name: short(deadLetterId) }).click();
    await titled(`Dead letter ${short(deadLetterId)}`);
    await expect(page.getByLabel('Payload').textContent()).resolves.toContain('"type": "ContributionChanged"');
    await expect(page.getByLabel('Payload').textContent()).resolves.toContain(missingBenefitId);
    // The event's employee by name (from the sandbox payroll: no sync yet), as text, with the id beside it.
    const employee = page.locator('#view dl li').filter({ hasText: named });
    await expect(employee.textContent()).resolves.toBe(`${HOSTILE_NAME} Doe ${named}`);
    await expect(page.locator('main img').count()).resolves.toBe(0);
    const letter = await ops(service, `/ops/api/dead-letters/${deadLetterId}?include=individual_names`);
    expect(letter.body.individual_names).toEqual({ [named]: `${HOSTILE_NAME} Doe` });
    expect((await ops(service, `/ops/api/dead-letters/${deadLetterId}`)).body).not.toHaveProperty('individual_names');
    await page.getByRole('button', { name: `Replay dead letter ${short(deadLetterId)}` }).click();
    await page.getByLabel('Note (optional: what was fixed)').fill('benefit set up in payroll');
    await page.keyboard.press('Enter');
    await textOf('#dead-letter-status', 'replayed');
    await expect(page.locator('#replay-results').textContent()).resolves.toContain('1 of 1 replayed');
    await expect(page.locator('main').textContent()).resolves.toContain('benefit set up in payroll');
    await shot(page, 'dead-letter-replayed');
    const replayed = (await ops(service, `/ops/api/dead-letters/${deadLetterId}`)).body;
    expect(replayed).toMatchObject({ status: 'replayed', resolved_by: 'ops', note: 'benefit set up in payroll' });

    // Its effect: the contribution-change saga the event starts, with the event as its source.
    await page.goto(`${service.url}/ops#/sagas?type=contribution_change`);
    await rowsAre(1);
    // The saga's employee by name in the list (the id shortened, whole in its title).
    const sagaRow = page.locator('table tbody tr').first();
    await expect(sagaRow.locator('.person-name').textContent()).resolves.toBe(`${HOSTILE_NAME} Doe`);
    await expect(sagaRow.locator('.person-id').getAttribute('title')).resolves.toBe(named);
    const withNames = (await ops(service, `/ops/api/sagas?type=contribution_change&include=individual_names`)).body.data;
    expect(withNames).toEqual([expect.objectContaining({ individual_id: named, individual_names: { [named]: `${HOSTILE_NAME} Doe` } })]);
    expect((await ops(service, '/ops/api/sagas?type=contribution_change')).body.data[0]).not.toHaveProperty('individual_id');
    await page.locator('table tbody tr a').first().click();
    await page.locator('#saga-source-event').waitFor();
    await expect(page.locator('#saga-source-event').textContent()).resolves.toBe(deadLetterMessageId);
    await expect(page.locator('#timeline').textContent()).resolves.toContain('enroll requested');
    await expect(page.locator('#saga-individual').textContent()).resolves.toBe(`${HOSTILE_NAME} Doe ${named}`);
    await expect(page.locator('#timeline').textContent()).resolves.toContain(`individual_id: ${HOSTILE_NAME} Doe ${named}`);
    await expect(page.locator('main img').count()).resolves.toBe(0);
    await shot(page, 'replayed-saga');
  });

  it('completes an assisted task and its manual job completes; failing needs a note', async () => {
    await nav('Tasks').click();
    await titled('Ops tasks');
    const row = page.locator('table tbody tr').filter({ has: page.getByRole('link', { name: short(taskId) }) });
    await expect(row.textContent()).resolves.toContain('401k “Assisted plan”');
    await expect(row.textContent()).resolves.toContain('on time');
    await shot(page, 'tasks');

    // Fail asks for a note: empty is refused in the dialog, Escape leaves the task open.
    await row.getByRole('button', { name: /^Fail / }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await page.keyboard.press('Enter');
    await expect(page.locator('#dialog-note-error').textContent()).resolves.toBe('Why it cannot be done is required.');
    await shot(page, 'task-fail-needs-note');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await expect(focused('textContent')).resolves.toBe('Fail…');
    expect((await ops(service, `/ops/api/tasks/${taskId}`)).body.status).toBe('open');

    // Complete, by keyboard: Shift+Tab from Fail… to Complete…, Enter, then Enter in the dialog.
    await page.keyboard.press('Shift+Tab');
    await expect(focused('textContent')).resolves.toBe('Complete…');
    // Focus is visible.
    await expect(page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle')).resolves.toBe('solid');
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.type('created in the provider portal');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: `Task ${short(taskId)} completed` }).waitFor();
    // The open queue no longer lists it.
    await linkGone(short(taskId));
    expect((await ops(service, `/ops/api/tasks/${taskId}`)).body).toMatchObject({ status: 'completed', resolved_by: 'ops', note: 'created in the provider portal' });

    // Its manual job, followed in the dashboard until it completes (live refresh).
    await page.goto(`${service.url}/ops#/tasks?status=completed`);
    await page.locator('table tbody tr').filter({ has: page.getByRole('link', { name: short(taskId) }) }).getByRole('link', { name: short(manualJobId) }).click();
    await titled(`Job ${short(manualJobId)}`);
    await textOf('#job-status', 'complete', 20_000);
    await shot(page, 'manual-job-complete');
    const manual = await service.request(`/jobs/manual/${manualJobId}`, { headers: bearer(assisted.token) });
    expect(manual.body).toMatchObject({ job_id: manualJobId, status: 'complete' });

    // An enrollment on the Assisted provider: its task names the employee (from its manual job's read).
    const staff = (await service.request('/employer/directory', { headers: bearer(assisted.token) })).body.individuals.find(
      (i: { is_active: boolean }) => i.is_active,
    );
    const configuration = { employee_deduction: { type: 'percent', amount: 400 }, effective_date: new Date().toISOString().slice(0, 10) };
    const enrolled = await service.request(`/employer/benefits/${assistedBenefitId}/individuals`, json([{ individual_id: staff.id, configuration }], bearer(assisted.token)));
    expect(enrolled.status).toBe(200);
    const enrollTask = await expectEventually(async () => {
      const res = await ops(service, `/ops/api/tasks?status=open&type=benefit_enroll&connection_id=${assisted.connectionId}`);
      expect(res.body.data).toHaveLength(1);
      return res.body.data[0];
    });
    await page.goto(`${service.url}/ops#/tasks/${enrollTask.task_id}`);
    await titled(`Task ${short(enrollTask.task_id)}`);
    const enrollee = page.locator('#view dl li').filter({ hasText: staff.id });
    await expect(enrollee.textContent()).resolves.toBe(`${staff.first_name} ${staff.last_name} ${staff.id}`);
    await shot(page, 'enroll-task');
    // Done, so that the Assisted connection has no open task left.
    expect((await service.request(`/ops/api/tasks/${enrollTask.task_id}/complete`, json({}, OPS))).status).toBe(200);
  });

  it('lists failed jobs and retries one that can run again', async () => {
    // A data sync the sandbox fails on purpose; a data sync may run again, an enrollment may not.
    const configure = (status: string) =>
      service.request('/sandbox/jobs/configuration', {
        method: 'PUT',
        headers: { ...bearer(automated.token), 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'data_sync_all', completion_status: status }),
      });
    expect((await configure('error')).status).toBe(200);
    const sync = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(automated.token)));
    expect(sync.status).toBe(201);
    const syncId: string = sync.body.job_id;
    await expectEventually(async () => expect((await ops(service, `/ops/api/jobs/${syncId}`)).body.status).toBe('error'));

    await nav('Jobs').click();
    await titled('Jobs');
    await page.getByRole('link', { name: 'Failed', exact: true }).click();
    await page.waitForURL((url) => url.hash === '#/jobs?status=error');
    await page.getByRole('status').filter({ hasText: /^Jobs: \d+ found\.$/ }).waitFor();
    await expect(page.getByLabel('Status').inputValue()).resolves.toBe('error');
    const enrollRow = page.locator('table tbody tr').filter({ has: page.getByRole('link', { name: short(failedJobId) }) });
    await expect(enrollRow.textContent()).resolves.toContain('benefit enroll');
    await expect(enrollRow.getByRole('button').count()).resolves.toBe(0);
    const syncRow = page.locator('table tbody tr').filter({ has: page.getByRole('link', { name: short(syncId) }) });
    await expect(syncRow.textContent()).resolves.toContain('data sync all');
    await shot(page, 'jobs-failed');

    expect((await configure('complete')).status).toBe(200);
    await syncRow.getByRole('button', { name: `Retry job ${short(syncId)}` }).click();
    await page.getByRole('status').filter({ hasText: `Job ${short(syncId)} will run again.` }).waitFor();
    await expectEventually(async () => expect((await ops(service, `/ops/api/jobs/${syncId}`)).body.status).toBe('complete'));
    // The failed list no longer holds it once the next poll comes.
    await linkGone(short(syncId), 15_000);
    const audit = await ops(service, `/ops/api/audit?target_type=job&target_id=${syncId}`);
    expect(audit.body.data).toEqual([expect.objectContaining({ action: 'job.retry', actor: 'ops' })]);
  });

  it('replays several dead letters at once and discards one with a note', async () => {
    const poison = async (type: string) => {
      const res = await service.request(
        '/hris/events',
        json({ id: randomUUID(), type, version: 1, occurred_at: '2026-03-01T09:00:00Z', connection_id: automated.connectionId, entity_id: automated.entityId, data: {} }, basic(app)),
      );
      expect(res.body.outcome).toBe('dead_lettered');
      return res.body.id as string;
    };
    await poison('EmployeePromoted');
    // A reason that carries markup: it must show as text, and nothing may run.
    const hostile = '<img src=x onerror=window.__pwned=1>';
    const hostileMessage = await poison(hostile);
    const hostileLetter = (await ops(service, '/ops/api/dead-letters?status=open')).body.data.find((d: { message_id: string }) => d.message_id === hostileMessage);

    await nav('Dead letters').click();
    await titled('Dead letters');
    await rowsAre(2);
    await expect(page.locator('table tbody').textContent()).resolves.toContain(hostile);
    await expect(page.locator('main img').count()).resolves.toBe(0);
    await expect(pwned()).resolves.toBeUndefined();

    await page.getByRole('button', { name: 'Select all open on this page' }).click();
    await expect(page.getByRole('checkbox', { checked: true }).count()).resolves.toBe(2);
    await page.getByRole('button', { name: 'Replay selected (2)' }).click();
    await page.getByRole('dialog', { name: 'Replay 2 dead letters' }).waitFor();
    await page.keyboard.press('Enter');
    await page.locator('#replay-results').filter({ hasText: '0 of 2 replayed' }).waitFor();
    await expect(page.locator('#replay-results li').count()).resolves.toBe(2);
    await shot(page, 'dead-letters-replay-many');

    // Discard needs its note.
    const row = page.locator('table tbody tr').filter({ has: page.getByRole('link', { name: short(hostileLetter.dead_letter_id) }) });
    await row.getByRole('button', { name: /^Discard / }).click();
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Enter');
    await expect(page.locator('#dialog-note-error').textContent()).resolves.toBe('Why it is discarded is required.');
    await page.keyboard.type('test message with markup');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: `Dead letter ${short(hostileLetter.dead_letter_id)} discarded.` }).waitFor();
    await rowsAre(1);
    expect((await ops(service, `/ops/api/dead-letters/${hostileLetter.dead_letter_id}`)).body).toMatchObject({ status: 'discarded', note: 'test message with markup' });
    await expect(pwned()).resolves.toBeUndefined();
  });

  it('shows connections, policies and the audit log', async () => {
    await nav('Connections').click();
    await titled('Connections');
    await rowsAre(2);
    // The provider filter is a choice among the catalogue's providers, by name; the query is the id as before.
    const catalogue: { id: string; display_name: string }[] = (await service.request('/providers')).body;
    const provider = page.getByLabel('Provider', { exact: true });
    await page.waitForFunction((n) => document.querySelectorAll('#filter-provider_id option').length === n, catalogue.length + 1);
    await expect(provider.locator('option').allTextContents()).resolves.toEqual(['Any provider', ...catalogue.map((p) => p.display_name)]);
    await provider.selectOption({ label: 'Sandbox Payroll (Assisted)' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.hash === '#/connections?provider_id=sandbox_assisted');
    await rowsAre(1);
    await expect(page.locator('table tbody').textContent()).resolves.toContain('Sandbox Payroll (Assisted)');
    await shot(page, 'connections-by-provider');
    // An address with a provider the catalogue does not list keeps it as the choice shown.
    await page.goto(`${service.url}/ops#/connections?provider_id=retired_payroll`);
    await page.locator('#view .empty').waitFor();
    await expect(provider.inputValue()).resolves.toBe('retired_payroll');
    await page.goto(`${service.url}/ops#/connections?provider_id=sandbox_assisted`);
    await rowsAre(1);
    await page.getByRole('link', { name: short(assisted.connectionId) }).first().click();
    await titled(`Connection ${short(assisted.connectionId)}`);
    await page.locator('#view dl').filter({ hasText: 'sandbox_assisted' }).waitFor();
    await expect(page.getByRole('link', { name: /open tasks/ }).textContent()).resolves.toBe('0open tasks');
    await shot(page, 'connection');

    await nav('Policies').click();
    await titled('Policies');
    await expect(page.locator('.empty').textContent()).resolves.toBe('No policies match.');
    await shot(page, 'policies');

    await nav('Audit log').click();
    await titled('Audit log');
    await rowsAre(5, true);
    const audit = await page.locator('table tbody').textContent();
    expect(audit).toContain('task.complete');
    expect(audit).toContain('dead_letter.replay');
    expect(audit).toContain('outcome: refused');
    expect(audit).toContain('outcome: replayed');
    expect(audit).toContain('job.retry');
    expect(audit).toContain('dead_letter.discard');
    await shot(page, 'audit');
  });

  it('fits every view at 390 px and 1280 px wide: nothing overflows sideways, Sign out stays on screen and works', async () => {
    const views: [string, string][] = [
      ['#/overview', '.cards'],
      ['#/sagas', 'table'],
      [`#/sagas/${failedSagaId}`, '#timeline'],
      ['#/jobs?status=error', 'table'],
      [`#/jobs/${failedJobId}`, '#job-status'],
      ['#/tasks?status=completed', 'table'],
      [`#/tasks/${taskId}`, 'dl'],
      ['#/dead-letters', 'table'],
      [`#/dead-letters/${deadLetterId}`, '#dead-letter-status'],
      ['#/connections', 'table'],
      [`#/connections/${automated.connectionId}`, 'dl'],
      ['#/policies', '.empty'],
      ['#/audit', 'table'],
    ];
    const signOut = page.getByRole('button', { name: 'Sign out' });
    const fits = () => page.evaluate<boolean>('document.scrollingElement.scrollWidth <= window.innerWidth');
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      for (const [hash, loaded] of views) {
        await page.goto(`${service.url}/ops${hash}`);
        await page.locator(`#view ${loaded}`).first().waitFor();
        await expect(fits()).resolves.toBe(true);
        const box = (await signOut.boundingBox())!;
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(width);
        expect(box.y).toBeGreaterThanOrEqual(0);
        expect(box.y + box.height).toBeLessThanOrEqual(800);
        // Visible, enabled and not covered: a click would land on it.
        await signOut.click({ trial: true });
      }
      await shot(page, `audit-at-${width}`);

      // At this width, Sign out works and the sign-in form fits too; signing in again is keyboard only.
      await page.goto(`${service.url}/ops#/overview`);
      await page.locator('#view .cards').first().waitFor();
      await shot(page, `overview-at-${width}`);
      await signOut.click();
      await expect(h1().textContent()).resolves.toBe('Sign in');
      await expect(fits()).resolves.toBe(true);
      // The username stays filled in from before: Tab to the password.
      await expect(focused('id')).resolves.toBe('ops-username');
      await expect(page.locator('#ops-username').inputValue()).resolves.toBe(OPS_USER);
      await page.keyboard.press('Tab');
      await page.keyboard.type(OPS_PASSWORD);
      await page.keyboard.press('Enter');
      await titled('Overview');
    }
    await page.setViewportSize({ width: 1366, height: 768 });
  });

  it('refreshes the view on its own, can be paused, and signs out', async () => {
    await nav('Overview').click();
    await titled('Overview');
    const openLetters = page.getByRole('link', { name: /open dead letters/ });
    const before = Number((await openLetters.textContent())!.replace(/\D+$/, ''));
    await service.request(
      '/hris/events',
      json({ id: randomUUID(), type: 'EmployeePromoted', version: 1, occurred_at: '2026-03-01T09:00:00Z', connection_id: automated.connectionId, entity_id: automated.entityId, data: {} }, basic(app)),
    );
    // No navigation: the next poll shows it.
    await page.waitForFunction((text) => document.body.textContent?.includes(text), `${before + 1}open dead letters`, { timeout: 15_000 });

    const toggle = page.getByRole('button', { name: 'Pause live refresh' });
    await toggle.click();
    await expect(page.getByRole('button', { name: 'Resume live refresh' }).getAttribute('aria-pressed')).resolves.toBe('true');
    await expect(page.locator('#refresh-status').textContent()).resolves.toBe('Live refresh is paused.');
    await page.getByRole('button', { name: 'Resume live refresh' }).click();
    await expect(page.getByRole('button', { name: 'Pause live refresh' }).getAttribute('aria-pressed')).resolves.toBe('false');

    // A reload keeps the session of this tab (sessionStorage) and the view of the address.
    await page.reload();
    await titled('Overview');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(h1().textContent()).resolves.toBe('Sign in');
    await expect(page.evaluate<number>('sessionStorage.length')).resolves.toBe(0);
    await expect(page.locator('#view').isHidden()).resolves.toBe(true);

    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
  });

  // Last: it leaves the ops username locked for every client without a device token.
  it('keeps this browser signing in with its device token while guessers elsewhere have used up the username', async () => {
    // Kept across sign-out (unlike the credentials): it stands for the browser, not the session.
    await expect(page.evaluate<string | null>("localStorage.getItem('ops-dashboard.device')")).resolves.toMatch(/^[A-Za-z0-9_.-]{40,200}$/);
    const overviewFrom = async (peer: string, authorization: string) =>
      (await service.app.inject({ method: 'GET', url: '/ops/api/overview', remoteAddress: peer, headers: { authorization } })).statusCode;
    for (let i = 0; i < 30; i++) expect([401, 429]).toContain(await overviewFrom(`192.0.2.${(i % 3) + 1}`, basicOf(OPS_USER, 'not-the-password')));
    expect(await overviewFrom('192.0.2.9', OPS.authorization)).toBe(429);

    await page.locator('#ops-username').fill(OPS_USER);
    await page.locator('#ops-password').fill(OPS_PASSWORD);
    await page.keyboard.press('Enter');
    await titled('Overview');
    // The overview's data came from the ops API, which let the device's calls in.
    await page.getByRole('link', { name: /open dead letters/ }).waitFor();
    await expect(page.locator('#sign-in').isHidden()).resolves.toBe(true);
    expect(errors).toEqual([]);
  });
});
