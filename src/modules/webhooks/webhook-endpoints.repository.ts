import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { StoredWebhookEvent } from '../../domain/webhooks/webhook-body';
import { affectedCount } from '../../infrastructure/database/query-result';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';
import { DeliveryStatus } from './dto/webhook-endpoint.dto';
import { storedEventOf } from './webhook-event-row';

export interface WebhookEndpoint {
  id: string;
  applicationId: string;
  applicationName: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  enabled: boolean;
  orderedByConnection: boolean;
  maxConcurrency: number;
  failingSince: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface EndpointCounts {
  pending: number;
  failed: number;
  delivered: number;
  lastDeliveredAt: Date | null;
}

export interface NewEndpoint {
  id: string;
  applicationId: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  enabled: boolean;
  orderedByConnection: boolean;
  maxConcurrency: number;
  secretSealed: string;
}

export interface EndpointChanges {
  url?: string;
  description?: string | null;
  eventTypes?: string[];
  enabled?: boolean;
  orderedByConnection?: boolean;
  maxConcurrency?: number;
}

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  applicationId: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  completedAt: Date | null;
  event: StoredWebhookEvent;
}

export interface WebhookAttempt {
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string;
  error: string | null;
}

export interface DeliveryFilter {
  applicationId?: string;
  endpointId?: string;
  status?: DeliveryStatus;
}

const ENDPOINT_COLUMNS = `e.id, e.application_id, a.name AS application_name, e.url, e.description, e.event_types, e.enabled,
  e.ordered_by_connection, e.max_concurrency, e.failing_since, e.disabled_at, e.disabled_reason,
  CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_expires_at END AS previous_secret_expires_at,
  e.created_at, e.updated_at`;

const DELIVERY_SELECT = `SELECT d.id::text AS id, d.endpoint_id, e.application_id, d.status, d.attempts,
  CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at, d.last_status_code, d.last_error, d.created_at, d.completed_at,
  v.id AS event_id, v.event_type, v.connection_id, v.company_id, v.account_id, v.entity_id, v.data, v.created_at AS event_created_at
  FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN webhook_events v ON v.id = d.event_id`;

/* eslint-disable @typescript-eslint/no-explicit-any -- rows as the driver returns them, mapped right here */
const endpointOf = (r: any): WebhookEndpoint => ({
  id: r.id,
  applicationId: r.application_id,
  applicationName: r.application_name,
  url: r.url,
  description: r.description,
  eventTypes: r.event_types,
  enabled: r.enabled,
  orderedByConnection: r.ordered_by_connection,
  maxConcurrency: r.max_concurrency,
  failingSince: r.failing_since,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
  previousSecretExpiresAt: r.previous_secret_expires_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const deliveryOf = (r: any): WebhookDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  applicationId: r.application_id,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  completedAt: r.completed_at,
  event: storedEventOf(r),
});
/* eslint-enable @typescript-eslint/no-explicit-any */

/** Webhook endpoints and what was delivered to them, for the API and the ops dashboard. */
@Injectable()
export class WebhookEndpointsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(endpoint: NewEndpoint, manager: EntityManager): Promise<void> {
    await manager.query(
      `INSERT INTO webhook_endpoints (id, application_id, url, description, event_types, enabled, ordered_by_connection, max_concurrency, secret_sealed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        endpoint.id,
        endpoint.applicationId,
        endpoint.url,
        endpoint.description,
        endpoint.eventTypes,
        endpoint.enabled,
        endpoint.orderedByConnection,
        endpoint.maxConcurrency,
        endpoint.secretSealed,
      ],
    );
  }

  async countOf(applicationId: string, manager: EntityManager): Promise<number> {
    const [row] = await manager.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE application_id = $1`, [applicationId]);
    return row.n;
  }

  /** One endpoint; with `applicationId`, only if it is that application's. */
  async find(id: string, applicationId?: string, manager: EntityManager = this.dataSource.manager, lock = false): Promise<WebhookEndpoint | null> {
    const rows = await manager.query(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints e JOIN applications a ON a.id = e.application_id
       WHERE e.id = $1 AND ($2::uuid IS NULL OR e.application_id = $2) ${lock ? 'FOR UPDATE OF e' : ''}`,
      [id, applicationId ?? null],
    );
    return rows[0] ? endpointOf(rows[0]) : null;
  }

  /** An application's endpoints (or everyone's), oldest first. */
  async list(applicationId?: string): Promise<WebhookEndpoint[]> {
    const rows = await this.dataSource.query(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints e JOIN applications a ON a.id = e.application_id
       WHERE $1::uuid IS NULL OR e.application_id = $1 ORDER BY e.created_at, e.id`,
      [applicationId ?? null],
    );
    return rows.map(endpointOf);
  }

  /** Deliveries by status per endpoint, in one statement. */
  async countsOf(endpointIds: string[]): Promise<Map<string, EndpointCounts>> {
    const rows: { endpoint_id: string; pending: number; failed: number; delivered: number; last_delivered_at: Date | null }[] = await this.dataSource.query(
      `SELECT endpoint_id, count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'failed')::int AS failed,
              count(*) FILTER (WHERE status = 'delivered')::int AS delivered, max(completed_at) FILTER (WHERE status = 'delivered') AS last_delivered_at
       FROM webhook_deliveries WHERE endpoint_id = ANY($1::uuid[]) GROUP BY endpoint_id`,
      [endpointIds],
    );
    const counts = new Map<string, EndpointCounts>();
    for (const id of endpointIds) counts.set(id, { pending: 0, failed: 0, delivered: 0, lastDeliveredAt: null });
    for (const r of rows) counts.set(r.endpoint_id, { pending: r.pending, failed: r.failed, delivered: r.delivered, lastDeliveredAt: r.last_delivered_at });
    return counts;
  }

  async update(id: string, changes: EndpointChanges, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE webhook_endpoints SET
         url = coalesce($2, url),
         description = CASE WHEN $3 THEN $4 ELSE description END,
         event_types = coalesce($5, event_types),
         enabled = coalesce($6, enabled),
         ordered_by_connection = coalesce($7, ordered_by_connection),
         max_concurrency = coalesce($8, max_concurrency),
         -- Enabled again by its owner: the failing streak and the notice start over.
         failing_since = CASE WHEN $6 AND NOT enabled THEN NULL ELSE failing_since END,
         disabled_at = CASE WHEN $6 THEN NULL WHEN $6 = false AND enabled THEN now() ELSE disabled_at END,
         disabled_reason = CASE WHEN $6 THEN NULL WHEN $6 = false AND enabled THEN NULL ELSE disabled_reason END,
         updated_at = now()
       WHERE id = $1`,
      [
        id,
        changes.url ?? null,
        changes.description !== undefined,
        changes.description ?? null,
        changes.eventTypes ?? null,
        changes.enabled ?? null,
        changes.orderedByConnection ?? null,
        changes.maxConcurrency ?? null,
      ],
    );
  }

  /** The new secret signs from now; the replaced one also signs until `graceMs` from now. */
  async rotate(id: string, secretSealed: string, graceMs: number, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, secret_sealed = $2,
         previous_secret_expires_at = now() + ($3 || ' milliseconds')::interval, updated_at = now()
       WHERE id = $1`,
      [id, secretSealed, String(graceMs)],
    );
  }

  /** Deletes the endpoint and, with it, its deliveries and their attempts. */
  async delete(id: string, manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM webhook_endpoints WHERE id = $1`, [id]);
  }

  async deliveries(filter: DeliveryFilter, page: { limit: number; offset: number }): Promise<{ count: number; deliveries: WebhookDelivery[] }> {
    const where = new SqlFilter();
    if (filter.applicationId) where.and((p) => `e.application_id = ${p}`, filter.applicationId);
    if (filter.endpointId) where.and((p) => `d.endpoint_id = ${p}`, filter.endpointId);
    if (filter.status) where.and((p) => `d.status = ${p}`, filter.status);
    const { count, rows } = await countedPage(
      this.dataSource,
      { from: 'webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id', select: DELIVERY_SELECT, where, orderBy: 'd.id DESC' },
      page,
    );
    return { count, deliveries: rows.map(deliveryOf) };
  }

  async delivery(id: string, applicationId?: string): Promise<{ delivery: WebhookDelivery; attempts: WebhookAttempt[] } | null> {
    const rows = await this.dataSource.query(`${DELIVERY_SELECT} WHERE d.id = $1 AND ($2::uuid IS NULL OR e.application_id = $2)`, [
      id,
      applicationId ?? null,
    ]);
    if (!rows[0]) return null;
    const attempts: { attempted_at: Date; status_code: number | null; latency_ms: number; response_excerpt: string | null; error: string | null }[] =
      await this.dataSource.query(
        `SELECT * FROM (SELECT id, attempted_at, status_code, latency_ms, response_excerpt, error FROM webhook_attempts
         WHERE delivery_id = $1 ORDER BY id DESC LIMIT 100) AS recent ORDER BY id`,
        [id],
      );
    return {
      delivery: deliveryOf(rows[0]),
      attempts: attempts.map((a) => ({
        attemptedAt: a.attempted_at,
        statusCode: a.status_code,
        latencyMs: a.latency_ms,
        responseExcerpt: a.response_excerpt ?? '',
        error: a.error,
      })),
    };
  }

  /**
   * Sends a finished delivery again, same event id, with a fresh retry window. Answers false
   * when it is still pending (nothing to resend) or not found.
   */
  async resend(id: string, manager: EntityManager): Promise<boolean> {
    const result = await manager.query(
      `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(), retry_from = now(), completed_at = NULL,
         leased_by = NULL, lease_until = NULL
       WHERE id = $1 AND status <> 'pending' RETURNING id`,
      [id],
    );
    return affectedCount(result) > 0;
  }
}
