import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Connection, ConnectionStatus } from '../../../domain/connections/connection';
import { ConnectionEntity } from '../../../domain/connections/entity-scope';
import { affectedCount } from '../query-result';

interface ConnectionRow {
  id: string;
  application_id: string;
  customer_id: string | null;
  customer_name: string | null;
  customer_email: string | null;
  provider_id: string;
  authentication_type: string;
  account_id: string;
  company_id: string;
  products: string[];
  status: ConnectionStatus;
  sandbox: boolean;
  manual: boolean;
  employee_size: number | null;
  created_at: Date;
  entities: ConnectionEntity[] | null;
}

export interface NewConnection {
  applicationId: string;
  customerId: string | null;
  customerName: string | null;
  customerEmail: string | null;
  providerId: string;
  authenticationType: string;
  products: string[];
  sandbox: boolean;
  manual: boolean;
  employeeSize: number | null;
  entityNames: string[];
}

const SELECT_CONNECTION = `
  SELECT c.*, (
    SELECT coalesce(json_agg(json_build_object('id', e.id, 'name', e.name, 'status', e.status) ORDER BY e.created_at, e.id), '[]'::json)
    FROM connection_entities e WHERE e.connection_id = c.id
  ) AS entities
  FROM connections c`;

export function toConnection(row: ConnectionRow): Connection {
  return {
    id: row.id,
    applicationId: row.application_id,
    customerId: row.customer_id,
    customerName: row.customer_name,
    customerEmail: row.customer_email,
    providerId: row.provider_id,
    authenticationType: row.authentication_type,
    accountId: row.account_id,
    companyId: row.company_id,
    products: row.products,
    status: row.status,
    sandbox: row.sandbox,
    manual: row.manual,
    employeeSize: row.employee_size,
    createdAt: new Date(row.created_at),
    entities: row.entities ?? [],
  };
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Connections and their entities; every method takes the caller's transaction when it has one. */
@Injectable()
export class ConnectionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  private db(manager?: EntityManager) {
    return manager ?? this.dataSource.manager;
  }

  async find(id: string, manager?: EntityManager, { lock = false } = {}): Promise<Connection | undefined> {
    if (lock) await this.db(manager).query(`SELECT 1 FROM connections WHERE id = $1 FOR UPDATE`, [id]);
    const [row] = await this.db(manager).query(`${SELECT_CONNECTION} WHERE c.id = $1`, [id]);
    return row ? toConnection(row) : undefined;
  }

  /** Several connections in one round trip, by id (unknown ids are left out). */
  async findMany(ids: readonly string[], manager?: EntityManager): Promise<Map<string, Connection>> {
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))].filter((id) => UUID_PATTERN.test(id));
    if (unique.length === 0) return new Map();
    const rows = await this.db(manager).query(`${SELECT_CONNECTION} WHERE c.id = ANY($1::uuid[])`, [unique]);
    return new Map(rows.map((row: Parameters<typeof toConnection>[0]) => [row.id, toConnection(row)]));
  }

  async findLiveForCustomer(applicationId: string, customerId: string, manager?: EntityManager): Promise<Connection | undefined> {
    const [row] = await this.db(manager).query(
      `${SELECT_CONNECTION} WHERE c.application_id = $1 AND c.customer_id = $2 AND c.status <> 'disconnected'`,
      [applicationId, customerId],
    );
    return row ? toConnection(row) : undefined;
  }

  async findByCompany(applicationId: string, companyId: string, manager?: EntityManager): Promise<Connection | undefined> {
    const [row] = await this.db(manager).query(
      `${SELECT_CONNECTION} WHERE c.application_id = $1 AND c.company_id = $2 AND c.status <> 'disconnected'
       ORDER BY c.created_at DESC LIMIT 1`,
      [applicationId, companyId],
    );
    return row ? toConnection(row) : undefined;
  }

  /** The connection behind an access token, with its entities, in one round trip. */
  async findByTokenDigest(digest: string): Promise<{ tokenId: string; connection: Connection } | undefined> {
    const [row] = await this.dataSource.query(
      `${SELECT_CONNECTION} JOIN access_tokens t ON t.connection_id = c.id
       WHERE t.token_hash = $1 AND t.revoked_at IS NULL`.replace('SELECT c.*,', 'SELECT c.*, t.id AS token_id,'),
      [digest],
    );
    return row ? { tokenId: row.token_id, connection: toConnection(row) } : undefined;
  }

  async create(input: NewConnection, manager: EntityManager): Promise<Connection> {
    const id = randomUUID();
    const entityIds = input.entityNames.map(() => randomUUID());
    await manager.query(
      `INSERT INTO connections (id, application_id, customer_id, customer_name, customer_email, provider_id,
         authentication_type, account_id, company_id, products, status, sandbox, manual, employee_size)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'connected', $11, $12, $13)`,
      [
        id,
        input.applicationId,
        input.customerId,
        input.customerName,
        input.customerEmail,
        input.providerId,
        input.authenticationType,
        randomUUID(),
        entityIds[0],
        input.products,
        input.sandbox,
        input.manual,
        input.employeeSize,
      ],
    );
    await this.addEntities(id, input.entityNames, manager, entityIds);
    return (await this.find(id, manager))!;
  }

  async addEntities(connectionId: string, names: string[], manager: EntityManager, ids = names.map(() => randomUUID())): Promise<void> {
    if (names.length === 0) return;
    await manager.query(
      `INSERT INTO connection_entities (id, connection_id, name, status, created_at)
       SELECT id, $1, name, 'active', now() + (ord * interval '1 microsecond')
       FROM unnest($2::uuid[], $3::text[]) WITH ORDINALITY AS e(id, name, ord)`,
      [connectionId, ids, names],
    );
  }

  async update(
    connectionId: string,
    changes: { status?: ConnectionStatus; products?: string[] },
    manager?: EntityManager,
  ): Promise<void> {
    await this.db(manager).query(
      `UPDATE connections SET status = coalesce($2, status), products = coalesce($3, products), updated_at = now(),
         disconnected_at = CASE WHEN $2 = 'disconnected' THEN now() ELSE disconnected_at END
       WHERE id = $1`,
      [connectionId, changes.status ?? null, changes.products ?? null],
    );
  }

  async disconnectEntities(connectionId: string, entityIds: string[], manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE connection_entities SET status = 'disconnected', disconnected_at = now()
       WHERE connection_id = $1 AND id = ANY($2::uuid[]) AND status = 'active'`,
      [connectionId, entityIds],
    );
  }

  async revokeTokens(connectionId: string, manager: EntityManager): Promise<number> {
    const result = await manager.query(
      `UPDATE access_tokens SET revoked_at = now() WHERE connection_id = $1 AND revoked_at IS NULL`,
      [connectionId],
    );
    return affectedCount(result);
  }

  async issueToken(connectionId: string, applicationId: string, digest: string, manager: EntityManager): Promise<string> {
    const id = randomUUID();
    await manager.query(`INSERT INTO access_tokens (id, token_hash, connection_id, application_id) VALUES ($1, $2, $3, $4)`, [
      id,
      digest,
      connectionId,
      applicationId,
    ]);
    return id;
  }
}
