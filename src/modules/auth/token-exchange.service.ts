import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { digestOf, mintOpaqueSecret } from '../../domain/auth/opaque-secret';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { Application } from '../applications/applications.service';
import { TokenResponseDto } from './dto/token.dto';

const invalidGrant = (message: string) => new DomainError('invalid_request_error', message, { serviceCode: 'invalid_grant' });

/**
 * Exchanges an authorization code for a long-lived access token. A code works once, for ten
 * minutes, for the application and redirect_uri it was issued to; a failed exchange changes
 * nothing (it revokes no token already issued).
 */
@Injectable()
export class TokenExchangeService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly connections: ConnectionsRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async exchange(application: Application, code: string, redirectUri: string | undefined): Promise<TokenResponseDto> {
    const accessToken = mintOpaqueSecret('');
    const connection = await this.dataSource.transaction(async (manager) => {
      const [grant] = await manager.query(`SELECT * FROM authorization_codes WHERE code_hash = $1 FOR UPDATE`, [digestOf(code)]);
      if (!grant || grant.application_id !== application.id) throw invalidGrant('The authorization code is not valid');
      if (grant.used_at !== null) throw invalidGrant('The authorization code has already been used');
      if (new Date(grant.expires_at) <= this.clock.now()) throw invalidGrant('The authorization code has expired');
      if ((grant.redirect_uri ?? undefined) !== (redirectUri || undefined)) {
        throw invalidGrant('redirect_uri does not match the one the connect flow ran with');
      }
      await manager.query(`UPDATE authorization_codes SET used_at = now() WHERE code_hash = $1`, [grant.code_hash]);
      const connection = await this.connections.find(grant.connection_id, manager);
      if (!connection || connection.status === 'disconnected') throw invalidGrant('The connection was disconnected');
      await this.connections.issueToken(connection.id, application.id, digestOf(accessToken), manager);
      return connection;
    });
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
