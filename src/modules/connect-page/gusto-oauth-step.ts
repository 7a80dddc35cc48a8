import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { Connection } from '../../domain/connections/connection';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, invalidRequest } from '../../domain/shared/domain-error';
import { returnedRows } from '../../infrastructure/database/query-result';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { GUSTO_CALLBACK_PATH } from '../../infrastructure/providers/gusto/gusto-connection';
import { GustoApiError, GustoHttp } from '../../infrastructure/providers/gusto/gusto-http';
import { authorizeUrl, GustoOAuth, GustoTokens } from '../../infrastructure/providers/gusto/gusto-oauth';
import { GustoRateLimiter } from '../../infrastructure/providers/gusto/gusto-rate-limiter';
import { ProviderGrants } from '../../infrastructure/providers/provider-grants';
import { SealingKey } from '../../infrastructure/secrets/sealing-key';
import { SecretBox } from '../../infrastructure/webhooks/secret-box';
import { ApplicationsService } from '../applications/applications.service';
import { ConnectSession, ConnectSessionsService } from '../auth/connect-sessions.service';
import { FLOW_STATE_TTL_MS, FlowState, FlowStateSigner, invalidFlowState } from './flow-state';

export const GUSTO_PROVIDER_ID = 'gusto';

type Flow = Omit<FlowState, 'issuedAt'>;

/** What Gusto's redirect back to the callback comes to. */
export type GustoCallbackOutcome =
  | { denied: true; session: ConnectSession; flow: Flow }
  | { denied: false; session: ConnectSession; flow: Flow & { entityNames: string[]; pendingGrant: string } };

/** Runs inside the transaction that completes the session, once the connection exists. */
export type CompletionStep = (connection: Connection, manager: EntityManager) => Promise<void>;

interface PendingRow {
  provider_id: string;
  account_ref: string;
  access_token_sealed: string;
  refresh_token_sealed: string;
  expires_at: Date;
  discard_after: Date;
}

/** Label of a provider the list shows but cannot be chosen. */
export const NOT_CONFIGURED = 'Not configured';

export const gustoNotConfigured = () =>
  new DomainError(
    'conflict_error',
    'Gusto is not set up on this service yet, so a Gusto account cannot be connected here. Go back and choose another provider, or contact the application that sent you here.',
    { serviceCode: 'provider_not_configured' },
  );

const authorizationFailed = (message: string) => new DomainError('invalid_request_error', message, { serviceCode: 'provider_authorization_failed' });

/**
 * The connect page's provider step for real Gusto connections: OAuth 2.0 as Gusto documents it
 * (https://docs.gusto.com/app-integrations/docs/oauth2) instead of the sandbox's simulated
 * sign-in. The employer is sent to Gusto's authorize page with the signed flow state as `state`;
 * the callback trusts nothing but that state, exchanges the code, and names the company from
 * /v1/token_info (one token reaches one company). The tokens wait for Allow server-side, sealed,
 * in one row per session; the page carries only the row's random id, signed. Allow moves them to
 * ProviderGrants in the transaction that creates the connection; Deny, a new authorization or
 * time discards them.
 *
 * Applies to production sessions only: a sandbox application's connections are simulated, Gusto
 * included, and keep the sandbox sign-in.
 */
@Injectable()
export class GustoOAuthStep {
  private readonly logger = new Logger('GustoOAuthStep');
  /**
   * A person waits on these calls: short timeouts, one retry of a read, no long Retry-After. The
   * token exchange (a POST) is never repeated: a code is single-use.
   */
  private readonly http: GustoHttp;
  private sealed: SecretBox | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly sessions: ConnectSessionsService,
    private readonly applications: ApplicationsService,
    private readonly connections: ConnectionsRepository,
    private readonly grants: ProviderGrants,
    private readonly sealingKey: SealingKey,
    private readonly signer: FlowStateSigner,
    private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.http = new GustoHttp({
      baseUrl: config.GUSTO_BASE_URL,
      apiVersion: config.GUSTO_API_VERSION,
      timeoutMs: 10_000,
      maxAttempts: 2,
      maxRateLimitRetries: 1,
      backoffMaxMs: 1_000,
      maxRetryAfterMs: 5_000,
      limiter: new GustoRateLimiter({ clock }),
      clock,
    });
  }

  /** Whether choosing `providerId` on this session means Gusto's OAuth rather than the sandbox sign-in. */
  async appliesTo(session: ConnectSession, providerId: string): Promise<boolean> {
    return providerId === GUSTO_PROVIDER_ID && !(await this.sandboxSession(session));
  }

  /** Providers the list shows as not selectable on this session, with the reason shown. */
  async unavailableProviders(session: ConnectSession): Promise<Map<string, string>> {
    if (this.usable() || (await this.sandboxSession(session))) return new Map();
    return new Map([[GUSTO_PROVIDER_ID, NOT_CONFIGURED]]);
  }

  /**
   * The provider step: Gusto's authorize URL for an OAuth session (the caller answers 303), else
   * undefined (the sandbox sign-in follows). `baseUrl` is this service's public address.
   */
  async begin(session: ConnectSession, flow: Flow, baseUrl: string): Promise<string | undefined> {
    if (!flow.providerId || !(await this.appliesTo(session, flow.providerId))) return undefined;
    if (!this.usable()) throw gustoNotConfigured();
    return authorizeUrl({
      baseUrl: this.config.GUSTO_BASE_URL,
      clientId: this.config.GUSTO_CLIENT_ID!,
      redirectUri: redirectUriOf(baseUrl),
      // Only what the first steps settled: session, application state, origin, provider.
      state: this.signer.sign({ sessionId: flow.sessionId, state: flow.state, origin: flow.origin, providerId: flow.providerId, authMethod: flow.authMethod }),
    });
  }

  /** The sandbox sign-in is not a way in for an OAuth session (a signed state posted to it, say). */
  async refuseSandboxSignIn(session: ConnectSession, providerId: string): Promise<void> {
    if (await this.appliesTo(session, providerId)) throw invalidFlowState();
  }

  /**
   * `GET /connect/oauth/gusto/callback?code=…&state=…` (or `error=…`): the state must be one this
   * service signed for a Gusto OAuth step of a session still open. Gusto's refusals and outages
   * become the page's error, never a 500.
   */
  async callback(query: Record<string, unknown>, baseUrl: string): Promise<GustoCallbackOutcome> {
    const flow = this.signer.verify(text(query, 'state', 20_000));
    // A later step's token (entities or tokens already settled) is not an OAuth state.
    if (flow.providerId !== GUSTO_PROVIDER_ID || !flow.authMethod || flow.entityNames !== undefined || flow.pendingGrant !== undefined) {
      throw invalidFlowState();
    }
    const session = await this.sessions.findOpen(flow.sessionId);
    if (session.providerId !== null && session.providerId !== GUSTO_PROVIDER_ID) throw invalidFlowState();
    if (!(await this.appliesTo(session, GUSTO_PROVIDER_ID))) throw invalidFlowState();
    const carried: Flow = { sessionId: flow.sessionId, state: flow.state, origin: flow.origin, providerId: flow.providerId, authMethod: flow.authMethod };

    // RFC 6749 §4.1.2.1: the employer refused at Gusto, as Deny on the review step.
    const error = text(query, 'error', 200);
    if (error === 'access_denied') {
      await this.discard(session.id);
      return { denied: true, session, flow: carried };
    }
    if (error !== undefined) {
      const description = text(query, 'error_description', 500);
      throw authorizationFailed(`Gusto did not grant access (${error}${description ? `: ${description}` : ''}). Open the connect link again to start over.`);
    }
    const code = text(query, 'code', 2_000);
    if (!code) throw authorizationFailed('Gusto sent no authorization code back. Open the connect link again to start over.');
    if (!this.usable()) throw gustoNotConfigured();

    const key = `gusto-connect:${session.id}`;
    const oauth = new GustoOAuth({
      http: this.http,
      clientId: this.config.GUSTO_CLIENT_ID!,
      clientSecret: this.config.GUSTO_CLIENT_SECRET!,
      redirectUri: redirectUriOf(baseUrl),
      clock: this.clock,
    });
    const tokens = await this.calling('exchange', () => oauth.exchangeCode(code));
    const info = await this.calling('token_info', () => oauth.tokenInfo(tokens.accessToken, key));
    if (info.companyUuid === null) {
      throw authorizationFailed('Gusto granted access to no company. Sign in to Gusto as an administrator of the company to connect, and try again.');
    }
    const companyUuid = info.companyUuid;
    const company = await this.calling('company', () =>
      this.http.request<{ name?: unknown; trade_name?: unknown }>({ method: 'GET', path: `/v1/companies/${encodeURIComponent(companyUuid)}`, accessToken: tokens.accessToken, key }),
    );
    const companyName = nameOf(company.body) ?? `Gusto company ${companyUuid}`;
    const entityNames = await this.entityNamesFor(session, companyUuid, companyName);
    const pendingGrant = await this.hold(session, companyUuid, tokens);
    return { denied: false, session, flow: { ...carried, entityNames, pendingGrant } };
  }

  /**
   * What Allow must do besides completing the session: for an OAuth session, store the grant the
   * callback held (it must still be there, in time) with the connection, in its transaction.
   */
  async completion(session: ConnectSession, flow: Flow): Promise<CompletionStep | undefined> {
    if (!flow.providerId || !(await this.appliesTo(session, flow.providerId))) return undefined;
    const pendingId = flow.pendingGrant;
    if (!pendingId) throw invalidFlowState();
    return async (connection, manager) => {
      const [row] = returnedRows<PendingRow>(
        await manager.query(
          `DELETE FROM pending_provider_grants WHERE id = $1 AND session_id = $2
           RETURNING provider_id, account_ref, access_token_sealed, refresh_token_sealed, expires_at, discard_after`,
          [pendingId, session.id],
        ),
      );
      if (!row || new Date(row.discard_after) <= this.clock.now()) {
        throw authorizationFailed('Your authorization at Gusto has expired or was replaced by a newer one. Open the connect link again to start over.');
      }
      const box = this.box();
      await this.grants.save(
        {
          connectionId: connection.id,
          providerId: row.provider_id,
          accountRef: row.account_ref,
          accessToken: box.open(row.access_token_sealed),
          refreshToken: box.open(row.refresh_token_sealed),
          expiresAt: new Date(row.expires_at),
        },
        manager,
      );
    };
  }

  /** Deny (or access_denied at Gusto): the session's held tokens are dropped. */
  async discard(sessionId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM pending_provider_grants WHERE session_id = $1`, [sessionId]);
  }

  /** A Gusto application is configured, and tokens can be sealed (WEBHOOK_SECRETS_KEY or the embedded key). */
  private usable(): boolean {
    return this.config.gustoConfigured && this.sealingKey.box('pending-provider-tokens') !== undefined;
  }

  /** Sandbox or production: the connection's for a reauthentication, else the application's (as completing the session decides). */
  private async sandboxSession(session: ConnectSession): Promise<boolean> {
    if (session.kind === 'reauthenticate' && session.connectionId) {
      const connection = await this.connections.find(session.connectionId);
      if (connection) return connection.sandbox;
    }
    return (await this.applications.find(session.applicationId))?.sandbox ?? false;
  }

  /**
   * One Gusto grant reaches one company, named after it. Reconnecting must reach the same company
   * as the grant it replaces (another would swap the data under the connection); it then adds no
   * entity, even when the company was renamed in Gusto since.
   */
  private async entityNamesFor(session: ConnectSession, companyUuid: string, companyName: string): Promise<string[]> {
    if (session.kind !== 'reauthenticate' || !session.connectionId) return [companyName];
    const current = await this.grants.find(session.connectionId);
    if (current && current.accountRef !== companyUuid) {
      throw authorizationFailed(
        `You authorized ${companyName}, but this connection is to another Gusto company. Sign in to Gusto as an administrator of the connected company and try again.`,
      );
    }
    const connection = await this.connections.find(session.connectionId);
    return current && connection && connection.entities.length > 0 ? connection.entities.map((e) => e.name) : [companyName];
  }

  /** Keeps the tokens until Allow, sealed; a newer authorization of the session replaces them. Returns the row's id. */
  private async hold(session: ConnectSession, companyUuid: string, tokens: GustoTokens): Promise<string> {
    const box = this.box();
    const id = randomUUID();
    const now = this.clock.now();
    const discardAfter = new Date(Math.min(now.getTime() + FLOW_STATE_TTL_MS, session.expiresAt.getTime()));
    await this.dataSource.transaction(async (manager) => {
      // Tokens nobody came back for: dropped here rather than by a worker of their own.
      await manager.query(`DELETE FROM pending_provider_grants WHERE discard_after <= $1`, [now]);
      await manager.query(
        `INSERT INTO pending_provider_grants (id, session_id, provider_id, account_ref, access_token_sealed, refresh_token_sealed, expires_at, discard_after)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (session_id) DO UPDATE SET id = EXCLUDED.id, provider_id = EXCLUDED.provider_id, account_ref = EXCLUDED.account_ref,
           access_token_sealed = EXCLUDED.access_token_sealed, refresh_token_sealed = EXCLUDED.refresh_token_sealed,
           expires_at = EXCLUDED.expires_at, discard_after = EXCLUDED.discard_after, created_at = now()`,
        [id, session.id, GUSTO_PROVIDER_ID, companyUuid, box.seal(tokens.accessToken), box.seal(tokens.refreshToken), tokens.expiresAt, discardAfter],
      );
    });
    return id;
  }

  /** A Gusto call of the callback; its failures become what the employer can act on. */
  private async calling<T>(what: 'exchange' | 'token_info' | 'company', call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof GustoApiError)) throw error;
      this.logger.warn(`Gusto ${what} failed during the connect flow: ${error.message}`);
      throw pageErrorOf(what, error);
    }
  }

  private box(): SecretBox {
    this.sealed ??= this.sealingKey.box('pending-provider-tokens');
    if (!this.sealed) throw gustoNotConfigured();
    return this.sealed;
  }
}

function pageErrorOf(what: 'exchange' | 'token_info' | 'company', error: GustoApiError): DomainError {
  if (error.family === 'provider_error' || error.family === 'provider_timeout') {
    // 502/504: Gusto down, slow or rate limiting; trying again later can work.
    const answered = error.status !== undefined ? 'did not answer properly' : 'could not be reached';
    return new DomainError(error.family, `Gusto ${answered} while connecting your account. Open the connect link again in a moment.`, {
      serviceCode: 'provider_unavailable',
    });
  }
  if (what === 'exchange' && error.status === 400) {
    // invalid_grant: the code is spent, expired, or was issued for another redirect_uri.
    return authorizationFailed('Gusto did not accept the authorization: it has expired or was already used. Open the connect link again to start over.');
  }
  // invalid_client and the like: this service's Gusto application, not the employer, is at fault.
  return new DomainError('provider_error', 'Gusto refused this service\'s request, so your account cannot be connected now. Contact the application that sent you here.', {
    serviceCode: 'provider_refused',
  });
}

function redirectUriOf(baseUrl: string): string {
  return `${baseUrl}${GUSTO_CALLBACK_PATH}`;
}

function nameOf(company: { name?: unknown; trade_name?: unknown } | undefined): string | undefined {
  const name = [company?.name, company?.trade_name].find((n): n is string => typeof n === 'string' && n.trim() !== '');
  return name?.trim().slice(0, 255);
}

/** One text value of the callback's query; a repeated or overlong one is a bad request. */
function text(query: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > max) throw invalidRequest(`${name} is not a single value of at most ${max} characters.`);
  return value;
}
