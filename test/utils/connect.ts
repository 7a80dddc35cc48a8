import { DataSource } from 'typeorm';
import { ApplicationsService, IssuedCredentials } from '../../src/modules/applications/applications.service';
import { ConnectSessionsService } from '../../src/modules/auth/connect-sessions.service';
import { json, TestService } from './test-app';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

export function basic(credentials: IssuedCredentials): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${credentials.client_id}:${credentials.client_secret}`).toString('base64')}` };
}

export const bearer = (token: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${token}`,
  'service-api-version': '2020-09-17',
  ...extra,
});

/** `allowedOrigins` absent: the origins of the redirect URIs, as for any new application. */
export function createApplication(
  service: TestService,
  { sandbox = true, redirectUris = [REDIRECT_URI], allowedOrigins }: { sandbox?: boolean; redirectUris?: string[]; allowedOrigins?: string[] } = {},
) {
  return service.app.get(ApplicationsService).create({ name: 'Test application', redirectUris, allowedOrigins, sandbox });
}

export interface ConnectedEmployer {
  accessToken: string;
  connectionId: string;
  entityIds: string[];
  token: Record<string, unknown>;
}

/**
 * Walks the connect flow the way the hosted page does (session → provider sign-in → consent)
 * and exchanges the code, so API tests get a real token without driving HTML.
 */
export async function connectEmployer(
  service: TestService,
  credentials: IssuedCredentials,
  {
    customerId = `customer-${Math.random().toString(36).slice(2)}`,
    products = ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement', 'benefits'],
    entityNames = ['Acme Corp'],
    providerId = 'sandbox_automated',
  }: { customerId?: string; products?: string[]; entityNames?: string[]; providerId?: string } = {},
): Promise<ConnectedEmployer> {
  const session = await service.request(
    '/connect/sessions',
    json({ customer_id: customerId, customer_name: 'Acme Corp', products, redirect_uri: REDIRECT_URI }, basic(credentials)),
  );
  if (session.status !== 201) throw new Error(`connect session failed: ${session.text}`);
  const flow = await service.app.get(ConnectSessionsService).complete(session.body.session_id, {
    providerId,
    authenticationType: 'credential',
    manual: false,
    entityNames,
  });
  const token = await service.request(
    '/auth/token',
    json({ client_id: credentials.client_id, client_secret: credentials.client_secret, code: flow.code, redirect_uri: REDIRECT_URI }),
  );
  if (token.status !== 200) throw new Error(`token exchange failed: ${token.text}`);
  return { accessToken: token.body.access_token, connectionId: token.body.connection_id, entityIds: token.body.entity_ids, token: token.body };
}

/** Every text value stored in the public schema, for "never stored in plain text" checks. */
export async function everythingStored(service: TestService): Promise<string> {
  const dataSource = service.app.get(DataSource);
  const tables: { table_name: string }[] = await dataSource.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  );
  let dump = '';
  for (const { table_name } of tables) {
    const rows = await dataSource.query(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`);
    dump += rows.map((r: { row: string }) => r.row).join('\n');
  }
  return dump;
}
