import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { digestOf, mintOpaqueSecret } from '../../domain/auth/opaque-secret';
import { Connection, ConnectionStatus } from '../../domain/connections/connection';
import { isAssisted, ProviderDescriptor } from '../../domain/providers/provider';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { DomainError, invalidRequest, notFound } from '../../domain/shared/domain-error';
import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { Application } from '../applications/applications.service';

export interface SandboxConnectionRequest {
  providerId: string;
  authenticationType?: string;
  employeeSize?: number;
  products?: string[];
}

/** Sandbox shortcuts: a ready connection and token without the connect flow, and forced statuses. */
@Injectable()
export class SandboxConnectionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly connections: ConnectionsRepository,
    private readonly notifications: ChangeNotifications,
    private readonly catalogue: ProviderCatalogue,
  ) {}

  async createConnection(application: Application, input: SandboxConnectionRequest) {
    assertSandbox(application);
    const provider = this.catalogue.get(input.providerId);
    const authenticationType = authenticationTypeFor(provider, input.authenticationType);
    const products = productsFor(provider, input.products);
    const accessToken = mintOpaqueSecret('');
    const connection = await this.dataSource.transaction(async (manager) => {
      const created = await this.connections.create(
        {
          applicationId: application.id,
          customerId: null,
          customerName: `${provider.display_name} sandbox employer`,
          customerEmail: null,
          providerId: provider.id,
          authenticationType,
          products,
          sandbox: true,
          manual: isAssisted(provider, authenticationType),
          employeeSize: input.employeeSize ?? 20,
          entityNames: [`${provider.display_name} sandbox employer`],
        },
        manager,
      );
      await this.connections.issueToken(created.id, application.id, digestOf(accessToken), manager);
      return created;
    });
    return {
      connection_id: connection.id,
      entity_id: connection.entities[0].id,
      account_id: connection.accountId,
      company_id: connection.companyId,
      provider_id: connection.providerId,
      access_token: accessToken,
      token_type: 'bearer',
      authentication_type: connection.authenticationType,
      products: connection.products,
    };
  }

  /** A new account (and token) for an existing sandbox company of this application. */
  async createAccount(application: Application, input: { companyId: string; providerId: string; authenticationType?: string; products?: string[] }) {
    assertSandbox(application);
    const provider = this.catalogue.get(input.providerId);
    const existing = await this.connections.findByCompany(application.id, input.companyId);
    if (!existing) throw notFound(`No sandbox company ${input.companyId} for this application`, 'company_not_found');
    if (existing.providerId !== provider.id) {
      throw invalidRequest(`Company ${input.companyId} is connected through ${existing.providerId}, not ${provider.id}`);
    }
    const authenticationType = authenticationTypeFor(provider, input.authenticationType ?? existing.authenticationType);
    const products = productsFor(provider, input.products ?? existing.products);
    const accessToken = mintOpaqueSecret('');
    await this.dataSource.transaction(async (manager) => {
      await this.connections.find(existing.id, manager, { lock: true });
      await manager.query(
        `UPDATE connections SET authentication_type = $2, products = $3, manual = $4, status = 'connected', updated_at = now() WHERE id = $1`,
        [existing.id, authenticationType, products, isAssisted(provider, authenticationType)],
      );
      await this.connections.issueToken(existing.id, application.id, digestOf(accessToken), manager);
    });
    return {
      connection_id: existing.id,
      // The first entity, as on creating the connection.
      entity_id: existing.entities[0].id,
      company_id: existing.companyId,
      account_id: existing.accountId,
      provider_id: existing.providerId,
      authentication_type: authenticationType,
      products,
      access_token: accessToken,
      token_type: 'bearer',
    };
  }

  /** Forces a status, e.g. `reauth` to exercise an application's reauthentication path. */
  async updateAccount(connection: Connection, status: ConnectionStatus) {
    await this.dataSource.transaction(async (manager) => {
      await this.connections.find(connection.id, manager, { lock: true });
      if (status === 'disconnected') await this.connections.revokeTokens(connection.id, manager);
      await this.connections.update(connection.id, { status }, manager);
    });
    await this.notifications.caughtUp();
    return {
      connection_id: connection.id,
      entity_id: connection.entities[0].id,
      company_id: connection.companyId,
      account_id: connection.accountId,
      provider_id: connection.providerId,
      authentication_type: connection.authenticationType,
      products: connection.products,
      connection_status: status,
    };
  }
}

function assertSandbox(application: Application): void {
  if (!application.sandbox) {
    throw new DomainError('forbidden_error', 'Sandbox operations need sandbox application credentials', {
      serviceCode: 'sandbox_only',
    });
  }
}

function authenticationTypeFor(provider: ProviderDescriptor, requested: string | undefined): string {
  const methods = provider.authentication_methods.map((m) => m.type);
  if (requested === undefined) return methods[0];
  if (!methods.includes(requested as (typeof methods)[number])) {
    throw invalidRequest(`authentication_type ${requested} is not offered by ${provider.id} (offered: ${methods.join(', ')})`);
  }
  return requested;
}

/** The products asked for, checked against the provider's; absent (or null) means all of them. */
function productsFor(provider: ProviderDescriptor, requested: string[] | null | undefined): string[] {
  if (requested === undefined || requested === null) return [...provider.products];
  const unsupported = requested.filter((p) => !(provider.products as string[]).includes(p));
  if (unsupported.length > 0) {
    throw invalidRequest(`products not supported by ${provider.id}: ${unsupported.join(', ')}`);
  }
  return requested;
}
