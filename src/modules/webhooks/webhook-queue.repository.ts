import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { StoredWebhookEvent } from '../../domain/webhooks/webhook-body';
import { storedEventOf, WebhookEventColumns } from './webhook-event-row';
import { affectedCount, returnedRows } from '../../infrastructure/database/query-result';

/** A delivery leased for one attempt, with what the attempt needs to sign and send it. */
export interface LeasedDelivery {
  id: string;
  /**
   * Its partition key (the table is partitioned by day on it), exact to the microsecond as ISO
   * text: statements find the delivery by (id, createdAt).
   */
  createdAt: string;
  endpointId: string;
  url: string;
  sandbox: boolean;
  /** Sealed secrets that sign: the current one, and the previous one during a rotation's grace. */
  sealedSecrets: string[];
  /** Attempts made before this one. */
  attempts: number;
  retryFrom: Date;
  /** The database's time when the lease was taken: retries are scheduled on its clock. */
  leasedAt: Date;
  event: StoredWebhookEvent;
}

/** What one attempt ended in, and where it leaves the delivery. */
export interface AttemptResult {
  deliveryId: string;
  /** LeasedDelivery.createdAt. */
  deliveryCreatedAt: string;
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  excerpt: string;
  error: string | null;
  status: 'pending' | 'delivered' | 'failed';
  /** When a delivery left pending is tried again. */
  nextAttemptAt: Date | null;
}

export interface LeaseRequest {
  holder: string;
  /** Deliveries wanted at most (the instance's free slots). */
  limit: number;
  leaseMs: number;
}

interface LeasedRow extends WebhookEventColumns {
  id: string;
  endpoint_id: string;
  url: string;
  sandbox: boolean;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  attempts: number;
  retry_from: Date;
  leased_at: Date;
  created_at: string;
}

/**
 * The delivery queue: leasing due deliveries under each endpoint's concurrency cap (and its
 * per-connection order when it asks for one), and recording attempts set-wise.
 */
@Injectable()
export class WebhookQueueRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Leases up to `limit` due deliveries in one statement (`webhook_lease`, migration
   * 1797000000000): endpoints are locked while their room is counted, so two instances never
   * both fill one endpoint's cap; an ordered endpoint sends a connection's deliveries one at a
   * time, oldest first.
   */
  async lease({ holder, limit, leaseMs }: LeaseRequest): Promise<LeasedDelivery[]> {
    // The statement lives in the schema (webhook_lease): it must plan by index even while the
    // queue's statistics say it is empty, which a function's own settings can require.
    const rows: LeasedRow[] = await this.dataSource.query(`SELECT * FROM webhook_lease($1, $2, $3)`, [holder, leaseMs, limit]);
    return rows.map((r) => ({
      id: r.id,
      createdAt: r.created_at,
      endpointId: r.endpoint_id,
      url: r.url,
      sandbox: r.sandbox,
      sealedSecrets: r.previous_secret_sealed ? [r.secret_sealed, r.previous_secret_sealed] : [r.secret_sealed],
      attempts: r.attempts,
      retryFrom: r.retry_from,
      leasedAt: r.leased_at,
      event: storedEventOf(r),
    }));
  }

  /**
   * Records a set of attempts in one statement: each attempt's row, its delivery's new state
   * (only while this holder still leases it: a delivery whose lease lapsed and went to another
   * instance is that instance's now), and each endpoint's health. An endpoint whose deliveries
   * have all failed since longer than `disableAfterMs` is disabled. Answers the endpoints this
   * disabled.
   */
  async record(holder: string, results: AttemptResult[], disableAfterMs: number): Promise<{ id: string; reason: string }[]> {
    if (results.length === 0) return [];
    return this.dataSource.transaction(async (manager) => {
      // Endpoints first, in id order, as deleting an endpoint takes its row before its deliveries:
      // locking the deliveries first would deadlock against a delete of their endpoint.
      await manager.query(
        `SELECT 1 FROM webhook_endpoints WHERE id IN (
           SELECT d.endpoint_id FROM unnest($1::bigint[], $2::timestamptz[]) AS k(id, created_at)
           JOIN webhook_deliveries d ON d.id = k.id AND d.created_at = k.created_at)
         ORDER BY id FOR NO KEY UPDATE`,
        [results.map((r) => r.deliveryId), results.map((r) => r.deliveryCreatedAt)],
      );
      return this.recordLocked(manager, holder, results, disableAfterMs);
    });
  }

  private async recordLocked(
    manager: EntityManager,
    holder: string,
    results: AttemptResult[],
    disableAfterMs: number,
  ): Promise<{ id: string; reason: string }[]> {
    const rows = returnedRows<{ id: string; disabled_reason: string | null }>(
      await manager.query(
      `WITH r AS (
         SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $11::timestamptz[])
           AS r (delivery_id, attempted_at, status_code, latency_ms, excerpt, error, status, next_attempt_at, delivery_created_at)
         WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = r.delivery_id AND d.created_at = r.delivery_created_at)
       ), attempt AS (
         INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, response_excerpt, error)
         SELECT delivery_id, attempted_at, status_code, latency_ms, excerpt, error FROM r
       ), updated AS (
         UPDATE webhook_deliveries d SET status = r.status, attempts = d.attempts + 1,
           next_attempt_at = coalesce(r.next_attempt_at, d.next_attempt_at), leased_by = NULL, lease_until = NULL,
           last_status_code = r.status_code, last_error = r.error,
           completed_at = CASE WHEN r.status = 'pending' THEN NULL ELSE r.attempted_at END
         FROM r WHERE d.id = r.delivery_id AND d.created_at = r.delivery_created_at AND d.leased_by = $9 AND d.status = 'pending'
         RETURNING d.endpoint_id, r.status = 'delivered' AS ok, r.attempted_at
       ), health AS (
         SELECT endpoint_id, bool_or(ok) AS any_ok, min(attempted_at) FILTER (WHERE NOT ok) AS first_failure FROM updated GROUP BY endpoint_id
       ), judged AS (
         SELECT h.endpoint_id, h.any_ok, coalesce(e.failing_since, h.first_failure) AS failing_since,
                NOT h.any_ok AND e.enabled AND coalesce(e.failing_since, h.first_failure) < now() - ($10 || ' milliseconds')::interval AS disable
         FROM health h JOIN webhook_endpoints e ON e.id = h.endpoint_id
       )
       UPDATE webhook_endpoints e SET
         failing_since = CASE WHEN j.any_ok THEN NULL ELSE j.failing_since END,
         enabled = e.enabled AND NOT j.disable,
         disabled_at = CASE WHEN j.disable THEN now() ELSE e.disabled_at END,
         disabled_reason = CASE WHEN j.disable
           THEN 'Disabled automatically: no delivery has succeeded since ' || to_char(j.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
           ELSE e.disabled_reason END
       FROM judged j WHERE e.id = j.endpoint_id
       RETURNING e.id, CASE WHEN j.disable THEN e.disabled_reason END AS disabled_reason`,
      [
        results.map((r) => r.deliveryId),
        results.map((r) => r.attemptedAt),
        results.map((r) => r.statusCode),
        results.map((r) => r.latencyMs),
        results.map((r) => r.excerpt),
        results.map((r) => r.error),
        results.map((r) => r.status),
        results.map((r) => r.nextAttemptAt),
        holder,
        String(disableAfterMs),
        results.map((r) => r.deliveryCreatedAt),
        ],
      ),
    );
    return rows.flatMap((r) => (r.disabled_reason === null ? [] : [{ id: r.id, reason: r.disabled_reason }]));
  }

  /** Frees the leases of holders known to be gone; answers how many. */
  async releaseLeasesOf(holders: readonly string[], manager: EntityManager): Promise<number> {
    const result = await manager.query(
      `UPDATE webhook_deliveries SET leased_by = NULL, lease_until = NULL WHERE leased_by = ANY($1::text[]) AND status = 'pending' RETURNING id`,
      [holders],
    );
    return affectedCount(result);
  }

  /** Gives back leases this holder took but will not attempt (shutting down). */
  async release(holder: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.dataSource.query(
      `UPDATE webhook_deliveries SET leased_by = NULL, lease_until = NULL WHERE id = ANY($1::bigint[]) AND leased_by = $2 AND status = 'pending'`,
      [ids, holder],
    );
  }

  /** Whether any endpoint is enabled: with none, the dispatcher only looks now and then. */
  async anyEnabledEndpoint(): Promise<boolean> {
    const [row] = await this.dataSource.query(`SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled) AS any`);
    return row.any;
  }

  /**
   * Deletes events older than the retention that no delivery refers to any more, in chunks so no
   * statement runs long. Deliveries and attempts are not deleted here: they are dropped a day's
   * partition at a time (PartitionUpkeep), and their events follow on the next purge.
   */
  async purge(retentionDays: number): Promise<void> {
    for (let round = 0; round < 100; round++) {
      const result = await this.dataSource.query(
        `DELETE FROM webhook_events WHERE id IN (
           SELECT v.id FROM webhook_events v
           WHERE v.created_at < now() - ($1 || ' days')::interval AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = v.id)
           LIMIT 5000)`,
        [String(retentionDays)],
      );
      if (affectedCount(result) < 5000) break;
    }
  }
}
