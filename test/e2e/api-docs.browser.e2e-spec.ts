import { Browser, BrowserContext, Page } from 'playwright-core';
import { CURRENT_API_VERSION } from '../../src/infrastructure/http/api-version';
import { collectPageErrors, describeWithBrowser, launchChromium, screenshotter } from '../utils/browser';
import { basic, createApplication } from '../utils/connect';
import { json, startTestService, TestService } from '../utils/test-app';

/**
 * The docs page (Swagger UI) in headless Chromium, used as a developer would: authorize with a
 * sandbox token, then "Try it out" and "Execute" on employer reads, which must answer 200.
 */
describeWithBrowser('the docs page in Chromium', () => {
  let service: TestService;
  let browser: Browser;
  let token: string;

  beforeAll(async () => {
    [service, browser] = await Promise.all([startTestService(), launchChromium()]);
    const app = await createApplication(service);
    const connection = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5 }, basic(app)));
    expect(connection.status).toBe(200);
    token = connection.body.access_token;
  });
  afterAll(async () => {
    await browser?.close();
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

  async function openDocs(): Promise<void> {
    await page.goto(`${service.url}/docs`);
    await page.locator('.swagger-ui .opblock').first().waitFor();
  }

  async function authorize(accessToken: string): Promise<void> {
    await page.locator('.swagger-ui .auth-wrapper .btn.authorize').click();
    const dialog = page.locator('.swagger-ui .modal-ux');
    const bearer = dialog.locator('.auth-container').filter({ hasText: 'access-token' });
    await expect(bearer.textContent()).resolves.toMatch(/\(http, Bearer\)An opaque access token/);
    await bearer.getByLabel('auth-bearer-value').fill(accessToken);
    await bearer.getByRole('button', { name: 'Apply credentials' }).click();
    await bearer.locator('button', { hasText: 'Logout' }).waitFor();
    await dialog.locator('.close-modal').click();
  }

  /** Opens an operation, presses "Try it out" and "Execute"; answers the status and body the page shows. */
  async function tryItOut(operationId: string, tag: string): Promise<{ status: string; body: string; versionHeader: string | null }> {
    const block = page.locator(`#operations-${tag}-${operationId}`);
    await block.locator('.opblock-summary').first().click();
    await block.getByRole('button', { name: 'Try it out' }).click();
    const versionInput = block.locator('tr[data-param-name="Service-API-Version"] input');
    const versionHeader = (await versionInput.count()) > 0 ? await versionInput.inputValue() : null;
    await block.getByRole('button', { name: 'Execute' }).click();
    const status = block.locator('.live-responses-table .response .response-col_status');
    await status.first().waitFor();
    const body = await block.locator('.live-responses-table .response-col_description pre').first().textContent();
    return { status: (await status.first().textContent())?.trim() ?? '', body: body ?? '', versionHeader };
  }

  it('declares the version header and the opaque bearer token, and "Try it out" reads the directory and the company', async () => {
    const shot = screenshotter('api-docs');
    await openDocs();
    await shot(page, 'docs');
    await authorize(token);

    const directory = await tryItOut('EmployerController_directory', 'employer');
    expect(directory.versionHeader).toBe(CURRENT_API_VERSION);
    await shot(page, 'directory-executed');
    expect(directory.status).toBe('200');
    const individuals = JSON.parse(directory.body) as { paging: { count: number }; individuals: unknown[] };
    expect(individuals.paging.count).toBe(5);
    expect(individuals.individuals).toHaveLength(5);

    const company = await tryItOut('EmployerController_company', 'employer');
    expect(company.versionHeader).toBe(CURRENT_API_VERSION);
    await shot(page, 'company-executed');
    expect(company.status).toBe('200');
    expect(JSON.parse(company.body)).toMatchObject({ id: expect.any(String), legal_name: expect.any(String) });

    // The request the page sent is shown as curl: the header is in it.
    await expect(page.locator('#operations-employer-EmployerController_company .curl-command').textContent()).resolves.toContain(
      `Service-API-Version: ${CURRENT_API_VERSION}`,
    );
    expect(errors).toEqual([]);
  });

  it('shows error responses with the Error schema, not as "Undocumented"', async () => {
    await openDocs();
    // No token: the page's request is refused, and the refusal is a documented response.
    const refused = await tryItOut('EmployerController_directory', 'employer');
    expect(refused.status).toBe('401');
    expect(JSON.parse(refused.body)).toMatchObject({ code: 401, name: 'authentication_error', service_code: 'missing_access_token' });
    const block = page.locator('#operations-employer-EmployerController_directory');
    await expect(block.locator('.live-responses-table').textContent()).resolves.not.toContain('Undocumented');
    await expect(block.locator('.responses-table tr.response[data-code="401"]').count()).resolves.toBe(1);
    await expect(block.locator('.responses-table tr.response[data-code="400"]').textContent()).resolves.toContain('missing_version_header');
    expect(errors.filter((error) => !/status of 401/.test(error))).toEqual([]);
  });
});
