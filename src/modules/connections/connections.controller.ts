import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../domain/connections/connection';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { RequiresApiVersion } from '../../infrastructure/http/api-version';
import { CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { ConnectionsService } from './connections.service';
import { DisconnectEntityDto } from './dto/disconnect-entity.dto';

@ApiTags('connections')
@ApiBearerAuth('access-token')
@Controller()
export class ConnectionsController {
  constructor(
    private readonly connections: ConnectionsService,
    private readonly catalogue: ProviderCatalogue,
  ) {}

  @Get('introspect')
  @RequiresAccessToken()
  @ApiOperation({ summary: 'Describe the connection behind the access token' })
  @ApiOkResponse({ description: 'The token’s id, its connection, entities, products, provider, customer and status' })
  introspect(@CurrentPrincipal() { tokenId, connection }: Principal) {
    const provider = this.catalogue.find(connection.providerId);
    const status = { status: connection.status, message: statusMessage(connection.status) };
    return {
      // The public document's `id` is the access token's own id (never the token itself).
      id: tokenId,
      connection_id: connection.id,
      client_id: connection.applicationId,
      client_type: connection.sandbox ? 'sandbox' : 'production',
      connection_type: connection.sandbox ? 'finch' : 'provider',
      connection_status: status,
      account_id: connection.accountId,
      company_id: connection.companyId,
      customer_id: connection.customerId,
      customer_name: connection.customerName,
      customer_email: connection.customerEmail,
      provider_id: connection.providerId,
      payroll_provider_id: connection.providerId,
      provider_name: provider?.display_name ?? connection.providerId,
      manual: this.catalogue.isAssistedConnection(connection),
      products: connection.products,
      authentication_methods: [
        { type: connection.authenticationType, connection_status: status, products: connection.products },
      ],
      // An active entity is as connected as its connection; `source_id` is the provider's id for it, which no provider here has.
      entities: connection.entities.map((e) => ({
        id: e.id,
        name: e.name,
        source_id: null,
        status: e.status === 'disconnected' ? 'disconnected' : connection.status,
      })),
      created_at: connection.createdAt.toISOString(),
    };
  }

  @Post('disconnect')
  @HttpCode(200)
  @RequiresAccessToken()
  @RequiresApiVersion()
  @ApiOperation({ summary: 'Disconnect the connection; every access token of it is revoked' })
  async disconnect(@CurrentPrincipal() { connection }: Principal) {
    await this.connections.disconnect(connection.id);
    return { status: 'success' };
  }

  @Post('disconnect-entity')
  @HttpCode(200)
  @RequiresAccessToken()
  @RequiresApiVersion()
  @ApiOperation({ summary: 'Disconnect some entities of the connection; the others stay active' })
  async disconnectEntity(@CurrentPrincipal() { connection }: Principal, @Body() body: DisconnectEntityDto) {
    await this.connections.disconnectEntities(connection, body.entity_ids);
    return { status: 'success' };
  }
}

function statusMessage(status: string): string {
  if (status === 'reauth') return 'The employer must reauthenticate: create a reauthentication session';
  if (status === 'disconnected') return 'The connection was disconnected';
  return 'Connected';
}
