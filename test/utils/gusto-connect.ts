import { FakeGusto } from '../fakes/gusto/fake-gusto';
import { formTo } from './html-forms';
import { json, request } from './test-app';

/** What connecting through Gusto needs of the platform's application. */
export interface GustoConnectApplication {
  client_id: string;
  client_secret: string;
}

export interface GustoConnection {
  accessToken: string;
  connectionId: string;
  entityIds: string[];
}

const ALL_PRODUCTS = ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement', 'benefits'];

/** The hidden and text fields of the page's form posting to `action`, as a browser would send them. */
function fieldsOfForm(html: string, action: string): [string, string][] {
  return formTo(html, action).fields;
}

async function submitForm(baseUrl: string, html: string, action: string, button: [string, string]): Promise<Response> {
  const body = new URLSearchParams(fieldsOfForm(html, action));
  body.append(...button);
  return fetch(`${baseUrl}${action}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
}

function expectStatus(res: Response, status: number, step: string): void {
  if (res.status !== status) throw new Error(`${step}: expected ${status}, got ${res.status}`);
}

/**
 * A production employer connected to a Gusto company the way a browser does it, over HTTP only
 * (so it works against a service in a child process): the connect page's provider step, Gusto's
 * authorize page (the fake's, the company picked by `company_uuid`), the callback, Allow on the
 * review, and the platform exchanging its code. The grant is stored by the service itself.
 */
export async function connectThroughGusto(
  baseUrl: string,
  application: GustoConnectApplication,
  fake: FakeGusto,
  companyUuid: string,
  { customerId = `customer-${Math.random().toString(36).slice(2)}`, redirectUri }: { customerId?: string; redirectUri: string },
): Promise<GustoConnection> {
  const basic = { authorization: `Basic ${Buffer.from(`${application.client_id}:${application.client_secret}`).toString('base64')}` };
  const session = await request(baseUrl, '/connect/sessions', json({ customer_id: customerId, customer_name: 'Gusty Bakery', products: ALL_PRODUCTS, redirect_uri: redirectUri }, basic));
  if (session.status !== 201) throw new Error(`connect session: ${session.status} ${session.text}`);
  const link = new URL(session.body.connect_url);
  const start = await fetch(`${baseUrl}${link.pathname}${link.search}`, { redirect: 'manual' });
  expectStatus(start, 200, 'the connect page');
  const chosen = await submitForm(baseUrl, await start.text(), '/connect/provider', ['provider', 'gusto']);
  expectStatus(chosen, 303, 'choosing Gusto');
  const authorize = new URL(chosen.headers.get('location')!);
  if (authorize.origin !== fake.url) throw new Error(`choosing Gusto sent the browser to ${authorize.origin}, not the fake Gusto`);
  authorize.searchParams.set('company_uuid', companyUuid); // the fake's stand-in for the employer picking a company
  const granted = await fetch(authorize, { redirect: 'manual' });
  expectStatus(granted, 302, 'Gusto’s authorize page');
  const callback = new URL(granted.headers.get('location')!);
  const review = await fetch(`${baseUrl}${callback.pathname}${callback.search}`, { redirect: 'manual' });
  expectStatus(review, 200, 'the callback from Gusto');
  const allowed = await submitForm(baseUrl, await review.text(), '/connect/consent', ['decision', 'allow']);
  expectStatus(allowed, 303, 'Allow');
  const code = new URL(allowed.headers.get('location')!).searchParams.get('code');
  if (!code) throw new Error(`Allow answered no code: ${allowed.headers.get('location')}`);
  const token = await request(baseUrl, '/auth/token', json({ client_id: application.client_id, client_secret: application.client_secret, code, redirect_uri: redirectUri }));
  if (token.status !== 200) throw new Error(`token exchange: ${token.status} ${token.text}`);
  return { accessToken: token.body.access_token, connectionId: token.body.connection_id, entityIds: token.body.entity_ids };
}
