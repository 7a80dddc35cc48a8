import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Connection } from '../../domain/connections/connection';
import { DomainError } from '../../domain/shared/domain-error';
import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';

/** Disconnecting a whole connection or some of its entities. */
@Injectable()
export class ConnectionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly connections: ConnectionsRepository,
    private readonly notifications: ChangeNotifications,
  ) {}

  /** Every token of the connection stops working at once; the connection is kept for the record. */
  async disconnect(connectionId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const connection = await this.connections.find(connectionId, manager, { lock: true });
      if (!connection) return;
      await this.connections.revokeTokens(connectionId, manager);
      await this.connections.disconnectEntities(connectionId, connection.entities.map((e) => e.id), manager);
      await this.connections.update(connectionId, { status: 'disconnected' }, manager);
    });
    // The answer is sent once this instance's cached tokens no longer hold the connection.
    await this.notifications.caughtUp();
  }

  /** Only the named entities; all must belong to this connection, or nothing changes. */
  async disconnectEntities(connection: Connection, entityIds: string[]): Promise<void> {
    const own = new Set(connection.entities.map((e) => e.id));
    const foreign = entityIds.filter((id) => !own.has(id));
    if (foreign.length > 0) {
      throw new DomainError('forbidden_error', `Entities not authorized for this access token: ${foreign.join(', ')}`, {
        serviceCode: 'entity_not_authorized',
      });
    }
    await this.dataSource.transaction(async (manager) => {
      await this.connections.find(connection.id, manager, { lock: true });
      await this.connections.disconnectEntities(connection.id, entityIds, manager);
    });
    await this.notifications.caughtUp();
  }
}
