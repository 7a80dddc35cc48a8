import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { digestOf, mintOpaqueSecret } from '../../domain/auth/opaque-secret';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { Application } from '../applications/applications.service';
import { TokenResponseDto } from './dto/token.dto';

const invalidGrant = (message: string) => new DomainError('invalid_request_error', message, { serviceCode: 'invalid_grant' });

/**
 * Exchanges an authorization code for a long-lived access token. A code works once, for ten
 * minutes, for the application and redirect_uri it was issued to. A second exchange of a used
 * code by its application is refused and revokes the token the first one issued (RFC 6749
 * §4.1.2: the code may have been stolen); any other failed exchange changes nothing.
 */
@Injectable()
export class TokenExchangeService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly connections: ConnectionsRepository,
    private readonly notifications: ChangeNotifications,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async exchange(application: Application, code: string, redirectUri: string | undefined): Promise<TokenResponseDto> {
    const accessToken = mintOpaqueSecret('');
    const outcome = await this.dataSource.transaction(async (manager) => {
      // The row lock makes concurrent exchanges of one code take turns: the second finds it used.
      const [grant] = await manager.query(`SELECT * FROM authorization_codes WHERE code_hash = $1 FOR UPDATE`, [digestOf(code)]);
      if (!grant || grant.application_id !== application.id) throw invalidGrant('The authorization code is not valid');
      if (grant.used_at !== null) {
        if (grant.access_token_id !== null) {
          await manager.query(`UPDATE access_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [grant.access_token_id]);
        }
        // Refused once the transaction has committed, so the revocation stays.
        return { reused: true } as const;
      }
      if (new Date(grant.expires_at) <= this.clock.now()) throw invalidGrant('The authorization code has expired');
      if ((grant.redirect_uri ?? undefined) !== (redirectUri || undefined)) {
        throw invalidGrant('redirect_uri does not match the one the connect flow ran with');
      }
      const connection = await this.connections.find(grant.connection_id, manager);
      if (!connection || connection.status === 'disconnected') throw invalidGrant('The connection was disconnected');
      const tokenId = await this.connections.issueToken(connection.id, application.id, digestOf(accessToken), manager);
      await manager.query(`UPDATE authorization_codes SET used_at = now(), access_token_id = $2 WHERE code_hash = $1`, [grant.code_hash, tokenId]);
      return { reused: false, connection } as const;
    });
    if (outcome.reused) {
      // Refused only once this instance's cached tokens no longer hold the one just revoked.
      await this.notifications.caughtUp();
      throw invalidGrant('The authorization code has already been used');
    }
    const { connection } = outcome;
    return {
      access_token: accessToken,
      token_type: 'bearer',
      connection_id: connection.id,
      customer_id: connection.customerId,
      account_id: connection.accountId,
      company_id: connection.companyId,
      entity_ids: connection.entities.filter((e) => e.status === 'active').map((e) => e.id),
      products: connection.products,
      provider_id: connection.providerId,
      client_type: application.sandbox ? 'sandbox' : 'production',
      connection_type: connection.sandbox ? 'finch' : 'provider',
    };
  }
}
