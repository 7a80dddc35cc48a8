import { Clock, SystemClock } from '../../../domain/shared/clock';
import { GustoApiError, GustoHttp, GustoUnauthorized } from './gusto-http';

/**
 * Gusto's OAuth2 authorization-code flow and token upkeep.
 *   authorize and exchange: https://docs.gusto.com/app-integrations/docs/oauth2
 *   refresh, 2 h lifetime:  https://docs.gusto.com/embedded-payroll/docs/company-access-tokens
 *   refresh semantics:      https://docs.gusto.com/app-integrations/v2024-04-01/reference/refresh-access-token
 */

/** Refresh this long before expiry: clock skew, a queued job and a retried refresh all fit in it. */
export const GUSTO_REFRESH_LEAD_MS = 5 * 60_000;

export interface GustoAuthorizeUrlInput {
  /** The web origin, e.g. https://api.gusto.com (where /oauth/authorize lives). */
  baseUrl: string;
  clientId: string;
  redirectUri: string;
  /** Opaque CSRF/correlation value, echoed on the redirect. */
  state: string;
}

/** Where to send the admin to grant access; Gusto redirects back with `code` and `state`. */
export function authorizeUrl(input: GustoAuthorizeUrlInput): string {
  const url = new URL('/oauth/authorize', input.baseUrl);
  url.searchParams.set('client_id', input.clientId);
  url.searchParams.set('redirect_uri', input.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('state', input.state);
  return url.toString();
}

/** When to refresh a token expiring at `expiresAt`. */
export function refreshDueAt(expiresAt: Date, leadMs = GUSTO_REFRESH_LEAD_MS): Date {
  return new Date(expiresAt.getTime() - leadMs);
}

export interface GustoTokens {
  accessToken: string;
  /** Single use: the next refresh must send this one, so store it before using the access token. */
  refreshToken: string;
  expiresAt: Date;
  /** Space-separated scopes, when Gusto says. */
  scope?: string;
}

export interface GustoTokenInfo {
  /** The company the token is for; null for a system token (resource `Oauth::Application`) or none. */
  companyUuid: string | null;
  resourceType: string | null;
  scopes: string[];
  resourceOwner: { type: string; uuid: string } | null;
}

export interface GustoOAuthOptions {
  http: GustoHttp;
  clientId: string;
  clientSecret: string;
  /** Sent on the exchange (required there) and on refresh (optional in the document, asked for by older guides). */
  redirectUri: string;
  clock?: Clock;
}

/** /oauth/token's answer: Create-Token-Authentication / Refresh-Token-Authentication in the document. */
interface TokenAnswer {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
  scope?: unknown;
}

interface TokenInfoAnswer {
  scope?: unknown;
  resource?: { type?: unknown; uuid?: unknown } | null;
  resource_owner?: { type?: unknown; uuid?: unknown } | null;
}

export class GustoOAuth {
  private readonly http: GustoHttp;
  private readonly clock: Clock;

  constructor(private readonly options: GustoOAuthOptions) {
    this.http = options.http;
    this.clock = options.clock ?? new SystemClock();
  }

  /**
   * Trades the `code` of the redirect for the company's tokens. The OpenAPI document describes
   * only the refresh and system-access bodies of /oauth/token; this one is the OAuth2 guide's.
   */
  exchangeCode(code: string, signal?: AbortSignal): Promise<GustoTokens> {
    return this.token(
      {
        client_id: this.options.clientId,
        client_secret: this.options.clientSecret,
        code,
        grant_type: 'authorization_code',
        redirect_uri: this.options.redirectUri,
      },
      signal,
    );
  }

  /**
   * A new token pair for a refresh token. Not retried on a lost answer (it is a POST), but the
   * caller may send the same refresh token again: Gusto revokes it only when the new access
   * token is first used.
   */
  refresh(refreshToken: string, signal?: AbortSignal): Promise<GustoTokens> {
    return this.token(
      {
        client_id: this.options.clientId,
        client_secret: this.options.clientSecret,
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        // Optional on a refresh: sent when the registered callback address is known.
        ...(this.options.redirectUri !== '' && { redirect_uri: this.options.redirectUri }),
      },
      signal,
    );
  }

  /** What the token is for (GET /v1/token_info, schema Token-Info). `key` is the grant's rate-limit key. */
  async tokenInfo(accessToken: string, key: string, signal?: AbortSignal): Promise<GustoTokenInfo> {
    const { body } = await this.http.request<TokenInfoAnswer>({ method: 'GET', path: '/v1/token_info', accessToken, key, signal });
    const resource = body?.resource ?? null;
    const owner = body?.resource_owner ?? null;
    const resourceType = typeof resource?.type === 'string' ? resource.type : null;
    return {
      companyUuid: resourceType === 'Company' && typeof resource?.uuid === 'string' ? resource.uuid : null,
      resourceType,
      scopes: typeof body?.scope === 'string' ? body.scope.split(' ').filter(Boolean) : [],
      resourceOwner: owner && typeof owner.type === 'string' && typeof owner.uuid === 'string' ? { type: owner.type, uuid: owner.uuid } : null,
    };
  }

  private async token(body: Record<string, string>, signal?: AbortSignal): Promise<GustoTokens> {
    // Read before sending: the token was issued after this instant, so expiry counted from it
    // errs early, never late, whatever the latency and Gusto's clock.
    const requestedAt = this.clock.now().getTime();
    let answer: TokenAnswer;
    try {
      // The token endpoint is the application's, not a grant's: its own rate-limit key.
      ({ body: answer } = await this.http.request<TokenAnswer>({
        method: 'POST',
        path: '/oauth/token',
        body,
        key: `oauth-token:${this.options.clientId}`,
        signal,
      }));
    } catch (error) {
      // 400 invalid_grant (a used, revoked or unknown code or refresh token) is final like a 401
      // invalid_client: retrying cannot help, the admin has to connect again.
      if (error instanceof GustoApiError && error.status === 400) {
        throw new GustoUnauthorized(error.message, { status: error.status, errors: error.errors, attempts: error.attempts, cause: error });
      }
      throw error;
    }
    const expiresIn = typeof answer?.expires_in === 'string' ? Number(answer.expires_in) : answer?.expires_in;
    if (typeof answer?.access_token !== 'string' || typeof answer.refresh_token !== 'string' || typeof expiresIn !== 'number' || !(expiresIn > 0)) {
      // Transient on purpose: the refresh token stays valid until the new access token is used.
      throw new GustoApiError('provider_error', 'Gusto answered /oauth/token without access_token, refresh_token or expires_in', {
        status: 200,
        attempts: 1,
      });
    }
    return {
      accessToken: answer.access_token,
      refreshToken: answer.refresh_token,
      expiresAt: new Date(requestedAt + expiresIn * 1000),
      scope: typeof answer.scope === 'string' ? answer.scope : undefined,
    };
  }
}
