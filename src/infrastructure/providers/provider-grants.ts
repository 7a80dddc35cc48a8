import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../../domain/shared/domain-error';
import { SealingKey } from '../secrets/sealing-key';
import { SecretBox } from '../webhooks/secret-box';

/** The tokens a provider's OAuth grant gives, as the provider answered them. */
export interface GrantTokens {
  accessToken: string;
  refreshToken: string;
  expiresAt: Date;
}

/** A connection's OAuth grant at a real payroll provider, opened. */
export interface ProviderGrant extends GrantTokens {
  connectionId: string;
  providerId: string;
  /** The provider's id of what the grant reaches (Gusto: the company's uuid). */
  accountRef: string;
  /** Bumped by every refresh: who read generation n and finds n+1 stored uses it as it is. */
  generation: number;
  /** Set when a refresh was refused for good: the connection needs reauthentication. */
  failure: string | null;
}

interface GrantRow {
  connection_id: string;
  provider_id: string;
  account_ref: string;
  access_token_sealed: string;
  refresh_token_sealed: string;
  expires_at: Date;
  generation: number;
  failure: string | null;
}

const COLUMNS = 'connection_id, provider_id, account_ref, access_token_sealed, refresh_token_sealed, expires_at, generation, failure';

/**
 * Real providers' OAuth grants, one per connection, sealed at rest (the sealing key is not in
 * the database: a copy of it alone reaches no provider). A refresh token is single-use, so a
 * refresh happens once per grant whatever the number of instances: it runs under the grant's
 * row lock, and only while the grant is still the generation the caller saw; a caller that saw
 * an older one gets the tokens another instance already obtained.
 */
@Injectable()
export class ProviderGrants {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sealingKey: SealingKey,
  ) {}

  /** Stores a new grant for the connection (the connect flow), replacing any before it. */
  async save(grant: Omit<ProviderGrant, 'generation' | 'failure'>, manager: EntityManager = this.dataSource.manager): Promise<void> {
    const box = this.box();
    await manager.query(
      `INSERT INTO provider_grants (connection_id, provider_id, account_ref, access_token_sealed, refresh_token_sealed, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (connection_id) DO UPDATE SET provider_id = EXCLUDED.provider_id, account_ref = EXCLUDED.account_ref,
         access_token_sealed = EXCLUDED.access_token_sealed, refresh_token_sealed = EXCLUDED.refresh_token_sealed,
         expires_at = EXCLUDED.expires_at, generation = provider_grants.generation + 1, failed_at = NULL, failure = NULL, updated_at = now()`,
      [grant.connectionId, grant.providerId, grant.accountRef, box.seal(grant.accessToken), box.seal(grant.refreshToken), grant.expiresAt],
    );
  }

  /** Which real provider the connection was granted at, if any: read without opening the tokens (routing needs no key). */
  async providerOf(connectionId: string): Promise<string | undefined> {
    const [row]: { provider_id: string }[] = await this.dataSource.query(`SELECT provider_id FROM provider_grants WHERE connection_id = $1`, [connectionId]);
    return row?.provider_id;
  }

  async find(connectionId: string, manager: EntityManager = this.dataSource.manager): Promise<ProviderGrant | undefined> {
    const [row]: GrantRow[] = await manager.query(`SELECT ${COLUMNS} FROM provider_grants WHERE connection_id = $1`, [connectionId]);
    return row ? this.opened(row) : undefined;
  }

  /**
   * Refreshes the grant once across instances: under its row lock, if it is still generation
   * `seen`, `refresh` is called with it and its answer stored as the next generation; if another
   * caller refreshed meanwhile, that result is answered without a call. A refresh that throws
   * leaves the grant as it was (its caller decides whether the failure is for good: fail()).
   */
  async refreshOnce(connectionId: string, seen: number, refresh: (grant: ProviderGrant) => Promise<GrantTokens>): Promise<ProviderGrant> {
    return this.dataSource.transaction(async (manager) => {
      const [row]: GrantRow[] = await manager.query(`SELECT ${COLUMNS} FROM provider_grants WHERE connection_id = $1 FOR UPDATE`, [connectionId]);
      if (!row) throw new DomainError('authentication_error', `Connection ${connectionId} holds no grant at its provider: connect it again`, { serviceCode: 'reauthenticate_user' });
      const grant = this.opened(row);
      if (grant.generation !== seen || grant.failure !== null) return grant;
      const tokens = await refresh(grant);
      const box = this.box();
      await manager.query(
        `UPDATE provider_grants SET access_token_sealed = $2, refresh_token_sealed = $3, expires_at = $4, generation = generation + 1, updated_at = now()
         WHERE connection_id = $1`,
        [connectionId, box.seal(tokens.accessToken), box.seal(tokens.refreshToken), tokens.expiresAt],
      );
      return { ...grant, ...tokens, generation: grant.generation + 1 };
    });
  }

  /** The provider refused the grant for good (a revoked or spent refresh token): kept, marked. */
  async fail(connectionId: string, reason: string, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await manager.query(`UPDATE provider_grants SET failed_at = now(), failure = $2, updated_at = now() WHERE connection_id = $1`, [connectionId, reason]);
  }

  private opened(row: GrantRow): ProviderGrant {
    const box = this.box();
    return {
      connectionId: row.connection_id,
      providerId: row.provider_id,
      accountRef: row.account_ref,
      accessToken: box.open(row.access_token_sealed),
      refreshToken: box.open(row.refresh_token_sealed),
      expiresAt: new Date(row.expires_at),
      generation: row.generation,
      failure: row.failure,
    };
  }

  private box(): SecretBox {
    return this.sealingKey.requireBox('provider-tokens', {
      message:
        'Real payroll providers are not configured on this service: set WEBHOOK_SECRETS_KEY (the key that encrypts stored secrets and provider tokens; every instance shares it)',
      serviceCode: 'providers_not_configured',
    });
  }

}
