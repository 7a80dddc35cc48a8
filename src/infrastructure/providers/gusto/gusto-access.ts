import { Clock } from '../../../domain/shared/clock';
import { DomainError } from '../../../domain/shared/domain-error';
import { ProviderGrant, ProviderGrants } from '../provider-grants';
import { GustoUnauthorized } from './gusto-http';
import { GustoTokens, refreshDueAt } from './gusto-oauth';

/** What refreshes a grant: GustoOAuth.refresh. */
export interface GustoTokenRefresher {
  refresh(refreshToken: string): Promise<GustoTokens>;
}

/** Told once when a connection's grant is refused for good, to put the connection in `reauth`. */
export type GrantLost = (connectionId: string, reason: string) => Promise<void>;

/**
 * Live access to a connection's Gusto company. Access tokens last two hours and refresh tokens
 * are single-use, so a token is refreshed ahead of its expiry and once more when Gusto answers
 * 401, each time through ProviderGrants.refreshOnce: however many jobs and instances find the
 * token due together, Gusto sees one refresh. A refresh Gusto refuses (the grant revoked, the
 * refresh token spent) loses the grant: it is marked failed, the connection goes to `reauth`
 * (GrantLost), and the call fails with `reauthenticate_user`.
 */
export class GustoAccess {
  constructor(
    private readonly grants: ProviderGrants,
    private readonly refresher: GustoTokenRefresher,
    private readonly clock: Clock,
    private readonly grantLost: GrantLost,
  ) {}

  /** Runs `call` with a live token and the company it reaches; a 401 refreshes and runs it once more. */
  async withToken<T>(connectionId: string, call: (accessToken: string, companyUuid: string) => Promise<T>): Promise<T> {
    let grant = await this.grants.find(connectionId);
    if (!grant || grant.failure !== null) throw reauthenticate(connectionId, grant?.failure ?? 'no grant is stored');
    if (this.clock.now() >= refreshDueAt(grant.expiresAt)) grant = await this.refresh(grant);
    try {
      return await call(grant.accessToken, grant.accountRef);
    } catch (error) {
      if (!(error instanceof GustoUnauthorized)) throw error;
      // Revoked or expired early: one refresh, one more try; a second 401 is Gusto's answer.
      grant = await this.refresh(grant);
      return call(grant.accessToken, grant.accountRef);
    }
  }

  private async refresh(grant: ProviderGrant): Promise<ProviderGrant> {
    let refreshed: ProviderGrant;
    try {
      refreshed = await this.grants.refreshOnce(grant.connectionId, grant.generation, (current) => this.refresher.refresh(current.refreshToken));
    } catch (error) {
      if (!(error instanceof GustoUnauthorized)) throw error;
      await this.grants.fail(grant.connectionId, error.message);
      await this.grantLost(grant.connectionId, error.message);
      throw reauthenticate(grant.connectionId, error.message);
    }
    // Another caller's refresh failed for good while this one waited for the grant's lock.
    if (refreshed.failure !== null) throw reauthenticate(grant.connectionId, refreshed.failure);
    return refreshed;
  }
}

const reauthenticate = (connectionId: string, reason: string) =>
  new DomainError('authentication_error', `Connection ${connectionId} needs reauthentication: Gusto refused its grant (${reason})`, {
    serviceCode: 'reauthenticate_user',
  });
