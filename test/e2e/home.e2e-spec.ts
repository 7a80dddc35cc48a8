import { randomUUID } from 'node:crypto';
import { describeWithPostgres } from '../setup/test-env';
import { startTestService, TestService } from '../utils/test-app';

/** `GET /` is a small page pointing a person at the docs, the dashboard, the demo and health. */
describeWithPostgres('the home page', () => {
  let service: TestService;
  const clientId = randomUUID();

  beforeAll(async () => {
    service = await startTestService({ env: { APP_CLIENT_ID: clientId, APP_CLIENT_SECRET: 'a-secret-of-sixteen-chars', APP_SANDBOX: 'true', APP_REDIRECT_URIS: 'http://127.0.0.1:9/callback' } });
  });
  afterAll(async () => service?.close());

  it('links the docs, the dashboard, health and a connect link for the sandbox application', async () => {
    const res = await service.request('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    for (const href of ['/docs', '/ops', '/health/ready', '/metrics', '/providers']) expect(res.text).toContain(`href="${href}"`);
    const connect = /href="([^"]*\/connect\/authorize[^"]*)"/.exec(res.text)?.[1].replace(/&amp;/g, '&');
    expect(connect).toBeDefined();
    const link = new URL(connect!);
    expect(link.searchParams.get('client_id')).toBe(clientId);
    expect(link.searchParams.get('products')!.split(' ')).toEqual(expect.arrayContaining(['payment', 'pay_statement', 'benefits']));
    // The link it shows starts the connect flow.
    const authorize = await fetch(connect!, { redirect: 'manual' });
    expect(authorize.status).toBe(303);
    expect(res.text).not.toContain('a-secret-of-sixteen-chars');
  });

  it('is left out of the API document, and HEAD and other paths behave as before', async () => {
    const doc = await service.request('/docs/openapi.json');
    expect(Object.keys(doc.body.paths)).not.toContain('/');
    expect((await service.request('/nothing-here')).status).toBe(404);
  });
});
