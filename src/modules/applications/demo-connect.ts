import { SANDBOX_CREDENTIALS } from '../../domain/connections/sandbox-login';
import { PRODUCTS } from '../../domain/providers/provider';
import { IssuedCredentials } from './applications.service';

/**
 * The connect link start-up prints (and the home page shows) for the application it created or
 * updated: every product the sandbox offers, so the whole loop (through pay statements) works
 * with the token it ends in.
 */
export function connectLinkOf(credentials: Pick<IssuedCredentials, 'client_id' | 'redirect_uris' | 'sandbox'>, baseUrl: string): string {
  const authorize = new URL(`${baseUrl}/connect/authorize`);
  authorize.searchParams.set('client_id', credentials.client_id);
  authorize.searchParams.set('products', PRODUCTS.join(' '));
  const redirectUri = credentials.redirect_uris[0];
  if (redirectUri) authorize.searchParams.set('redirect_uri', redirectUri);
  if (credentials.sandbox) authorize.searchParams.set('sandbox', 'finch');
  return authorize.toString().replace(/\+/g, '%20');
}

/** Who to sign in as on a sandbox provider. */
export const SANDBOX_SIGN_IN = SANDBOX_CREDENTIALS.map((c) => `${c.username} / ${c.password}`).join(' or ');

/**
 * The exact token exchange that follows the connect page: without `redirect_uri` when the
 * application has none (the embedded flow), with its first one otherwise.
 */
export function tokenExchangeCommand(credentials: Pick<IssuedCredentials, 'client_id' | 'redirect_uris'>, clientSecret: string, baseUrl: string): string {
  const body: Record<string, string> = { client_id: credentials.client_id, client_secret: clientSecret, code: 'CODE_FROM_THE_PAGE' };
  if (credentials.redirect_uris[0]) body.redirect_uri = credentials.redirect_uris[0];
  return `curl -s ${baseUrl}/auth/token -H 'content-type: application/json' -d '${JSON.stringify(body)}'`;
}
