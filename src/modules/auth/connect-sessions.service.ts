import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { digestOf, mintOpaqueSecret } from '../../domain/auth/opaque-secret';
import { Connection } from '../../domain/connections/connection';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, invalidRequest, notFound } from '../../domain/shared/domain-error';
import { returnedRows } from '../../infrastructure/database/query-result';
import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { Application } from '../applications/applications.service';
import { MAX_MINUTES_TO_EXPIRE } from './dto/connect-session.dto';

export const AUTHORIZATION_CODE_TTL_MS = 10 * 60_000;

export type SessionKind = 'connect' | 'reauthenticate';

export interface ConnectSession {
  id: string;
  applicationId: string;
  kind: SessionKind;
  customerId: string | null;
  customerName: string | null;
  customerEmail: string | null;
  connectionId: string | null;
  products: string[];
  redirectUri: string | null;
  sandbox: string | null;
  manual: boolean;
  providerId: string | null;
  authMethod: string | null;
  status: 'staged' | 'completed' | 'expired';
  expiresAt: Date;
}

export interface SessionInput {
  customerId: string | null;
  customerName: string | null;
  customerEmail: string | null;
  products: string[];
  redirectUri: string | null;
  sandbox: string | null;
  manual: boolean;
  providerId: string | null;
  authMethod: string | null;
  minutesToExpire: number;
}

export interface CompletedFlow {
  code: string;
  redirectUri: string | null;
  connection: Connection;
}

export interface FlowChoice {
  providerId: string;
  authenticationType: string;
  manual: boolean;
  /** Entities of the employer account the user signed in to, and the ones they picked. */
  entityNames: string[];
  employeeSize?: number | null;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
const toSession = (row: any): ConnectSession => ({
  id: row.id,
  applicationId: row.application_id,
  kind: row.kind,
  customerId: row.customer_id,
  customerName: row.customer_name,
  customerEmail: row.customer_email,
  connectionId: row.connection_id,
  products: row.products,
  redirectUri: row.redirect_uri,
  sandbox: row.sandbox,
  manual: row.manual,
  providerId: row.provider_id,
  authMethod: row.auth_method,
  status: row.status,
  expiresAt: new Date(row.expires_at),
});
/* eslint-enable @typescript-eslint/no-explicit-any */

export function assertRegisteredRedirectUri(application: Application, redirectUri: string | null | undefined): void {
  if (redirectUri && !application.redirectUris.includes(redirectUri)) {
    throw invalidRequest(`redirect_uri ${redirectUri} is not registered for this application`);
  }
}

/**
 * Connect sessions and the flow that completes them. A customer's staged session is reused
 * until the flow completes; completing it creates (or, for reauthentication, updates) the
 * connection and issues a single-use authorization code, all in one transaction.
 */
@Injectable()
export class ConnectSessionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly connections: ConnectionsRepository,
    private readonly notifications: ChangeNotifications,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async createSession(application: Application, input: SessionInput): Promise<ConnectSession> {
    assertRegisteredRedirectUri(application, input.redirectUri);
    return this.dataSource.transaction(async (manager) => {
      if (input.customerId !== null) {
        // Serializes concurrent creates for one customer, so two requests share one session.
        await manager.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`connect:${application.id}:${input.customerId}`]);
        const live = await this.connections.findLiveForCustomer(application.id, input.customerId, manager);
        if (live) {
          throw new DomainError(
            'invalid_request_error',
            'A connection already exists for this customer_id; create a reauthentication session instead',
            { serviceCode: 'connection_already_exists', details: { context: { customer_id: input.customerId, connection_id: live.id } } },
          );
        }
        await manager.query(
          `UPDATE connect_sessions SET status = 'expired', updated_at = now()
           WHERE application_id = $1 AND customer_id = $2 AND kind = 'connect' AND status = 'staged' AND expires_at <= $3`,
          [application.id, input.customerId, this.clock.now()],
        );
        const [staged] = returnedRows(
          await manager.query(
            `UPDATE connect_sessions SET customer_name = $3, customer_email = $4, products = $5, redirect_uri = $6,
               sandbox = $7, manual = $8, provider_id = $9, auth_method = $10, expires_at = $11, updated_at = now()
             WHERE application_id = $1 AND customer_id = $2 AND kind = 'connect' AND status = 'staged'
             RETURNING *`,
            [application.id, input.customerId, ...this.sessionValues(input)],
          ),
        );
        if (staged) return toSession(staged);
      }
      return this.insertSession(manager, application.id, 'connect', null, input);
    });
  }

  async reauthenticate(
    application: Application,
    connectionId: string,
    input: Omit<SessionInput, 'products'> & { products?: string[] },
  ): Promise<ConnectSession> {
    assertRegisteredRedirectUri(application, input.redirectUri);
    const connection = await this.connections.find(connectionId);
    if (!connection || connection.applicationId !== application.id || connection.status === 'disconnected') {
      // 400, as the public document answers it: the body names a connection this application cannot reauthenticate.
      throw invalidRequest(`No connection ${connectionId} for this application`, 'connection_not_found');
    }
    return this.dataSource.transaction((manager) =>
      this.insertSession(manager, application.id, 'reauthenticate', connection.id, {
        ...input,
        customerId: connection.customerId,
        customerName: connection.customerName,
        customerEmail: connection.customerEmail,
        products: input.products ?? connection.products,
        providerId: connection.providerId,
        authMethod: connection.authenticationType,
      }),
    );
  }

  /** A session for the `/authorize` flow, which starts without one. */
  async createAuthorizeSession(application: Application, input: SessionInput): Promise<ConnectSession> {
    assertRegisteredRedirectUri(application, input.redirectUri);
    return this.dataSource.transaction((manager) => this.insertSession(manager, application.id, 'connect', null, input));
  }

  async find(sessionId: string): Promise<ConnectSession | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(sessionId)) return undefined;
    const [row] = await this.dataSource.query(`SELECT * FROM connect_sessions WHERE id = $1`, [sessionId]);
    return row ? toSession(row) : undefined;
  }

  /** The session a page step acts on: it must exist, be staged and not have expired. */
  async findOpen(sessionId: string): Promise<ConnectSession> {
    const session = await this.find(sessionId);
    if (!session) throw notFound('This connect session does not exist', 'session_not_found');
    if (session.status === 'completed') throw invalidRequest('This connect session has already been completed', 'session_completed');
    if (session.status === 'expired' || session.expiresAt <= this.clock.now()) {
      throw invalidRequest('This connect session has expired; ask the application for a new link', 'session_expired');
    }
    return session;
  }

  /**
   * The end of the flow: connection created or updated, session closed, code issued.
   * `alongside` runs in the same transaction once the connection exists (a real provider's grant
   * is stored with it): if it throws, nothing of the completion is kept.
   */
  async complete(
    sessionId: string,
    choice: FlowChoice,
    alongside?: (connection: Connection, manager: EntityManager) => Promise<void>,
  ): Promise<CompletedFlow> {
    const code = mintOpaqueSecret('');
    const connection = await this.dataSource.transaction(async (manager) => {
      const [row] = await manager.query(`SELECT * FROM connect_sessions WHERE id = $1 FOR UPDATE`, [sessionId]);
      if (!row) throw notFound('This connect session does not exist', 'session_not_found');
      const session = toSession(row);
      if (session.status !== 'staged' || session.expiresAt <= this.clock.now()) {
        throw invalidRequest('This connect session is no longer open', 'session_expired');
      }
      const result =
        session.kind === 'reauthenticate'
          ? await this.completeReauthentication(manager, session, choice)
          : await this.completeConnect(manager, session, choice);
      await alongside?.(result, manager);
      await manager.query(`UPDATE connect_sessions SET status = 'completed', updated_at = now() WHERE id = $1`, [sessionId]);
      await manager.query(
        `INSERT INTO authorization_codes (code_hash, application_id, connection_id, redirect_uri, expires_at) VALUES ($1, $2, $3, $4, $5)`,
        [digestOf(code), session.applicationId, result.id, session.redirectUri, new Date(this.clock.now().getTime() + AUTHORIZATION_CODE_TTL_MS)],
      );
      return result;
    });
    // A reauthentication changes the connection's status, products and entities: cached tokens must see it.
    await this.notifications.caughtUp();
    const session = (await this.find(sessionId))!;
    return { code, redirectUri: session.redirectUri, connection };
  }

  private async completeConnect(manager: EntityManager, session: ConnectSession, choice: FlowChoice): Promise<Connection> {
    if (session.customerId !== null) {
      const live = await this.connections.findLiveForCustomer(session.applicationId, session.customerId, manager);
      if (live) throw invalidRequest('A connection already exists for this customer', 'connection_already_exists');
    }
    if (choice.entityNames.length === 0) throw invalidRequest('Choose at least one entity to connect');
    // A sandbox application's connections are sandbox connections (sandbox edits and jobs).
    const [application] = (await manager.query(`SELECT sandbox FROM applications WHERE id = $1`, [session.applicationId])) as { sandbox: boolean }[];
    return this.connections.create(
      {
        applicationId: session.applicationId,
        customerId: session.customerId,
        customerName: session.customerName ?? choice.entityNames[0],
        customerEmail: session.customerEmail,
        providerId: choice.providerId,
        authenticationType: choice.authenticationType,
        products: session.products,
        sandbox: application?.sandbox ?? false,
        manual: choice.manual,
        employeeSize: choice.employeeSize ?? null,
        entityNames: choice.entityNames,
      },
      manager,
    );
  }

  private async completeReauthentication(manager: EntityManager, session: ConnectSession, choice: FlowChoice): Promise<Connection> {
    const connection = await this.connections.find(session.connectionId!, manager, { lock: true });
    if (!connection || connection.status === 'disconnected') throw invalidRequest('The connection was disconnected');
    const known = new Set(connection.entities.map((e) => e.name));
    await this.connections.addEntities(connection.id, choice.entityNames.filter((name) => !known.has(name)), manager);
    await this.connections.update(connection.id, { status: 'connected', products: session.products }, manager);
    return (await this.connections.find(connection.id, manager))!;
  }

  private sessionValues(input: SessionInput): unknown[] {
    const minutes = Math.min(input.minutesToExpire, MAX_MINUTES_TO_EXPIRE);
    return [
      input.customerName,
      input.customerEmail,
      input.products,
      input.redirectUri,
      input.sandbox,
      input.manual,
      input.providerId,
      input.authMethod,
      new Date(this.clock.now().getTime() + minutes * 60_000),
    ];
  }

  private async insertSession(
    manager: EntityManager,
    applicationId: string,
    kind: SessionKind,
    connectionId: string | null,
    input: SessionInput,
  ): Promise<ConnectSession> {
    const [row] = await manager.query(
      `INSERT INTO connect_sessions (id, application_id, kind, customer_id, connection_id, customer_name, customer_email,
         products, redirect_uri, sandbox, manual, provider_id, auth_method, expires_at, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'staged') RETURNING *`,
      [randomUUID(), applicationId, kind, input.customerId, connectionId, ...this.sessionValues(input)],
    );
    return toSession(row);
  }
}
