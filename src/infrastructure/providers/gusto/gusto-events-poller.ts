import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { affectedCount, returnedRows } from '../../database/query-result';
import { GustoSystemTokens } from './gusto-webhook-subscriptions';
import { GustoEventSink, parseGustoEvent } from './gusto-webhooks';

export interface GustoEventsPollerOptions {
  /** Events per page: the document allows 1 to 100. Default 100. */
  pageSize?: number;
  /** Pages read per poll at most (the next poll goes on from there). Default 20. */
  maxPages?: number;
  /** How long a poll holds the feed against other instances, renewed with every page. Default 2 min. */
  leaseMs?: number;
  /** Names this process in the lease. */
  instanceId?: string;
}

export interface PollResult {
  /** False: another instance holds the feed, or it was read less than `minIntervalMs` ago. */
  polled: boolean;
  pages: number;
  /** Events read from the feed (duplicates of delivered ones included). */
  read: number;
  /** Of those, events not seen before (not delivered by a webhook, nor read by an earlier poll). */
  taken: number;
}

/** Gusto keeps 30 days of events; a cursor older than that may name an event the feed no longer has. */
const FEED_RETENTION_MS = 29 * 24 * 3_600_000;

/**
 * Reads Gusto's events feed (GET /v1/events, system token; "going back up to 30 days"), oldest
 * first, from the last event read (`starting_after_uuid`, the document's cursor, exclusive), and
 * hands each event to the same sink as the webhook route: the sink's dedupe by uuid makes an
 * event delivered by a webhook and read here again count once. It is the source of events while
 * no subscription is verified, and the safety net for deliveries Gusto gave up on while it is.
 *
 * One instance reads at a time: the cursor row is leased (not locked: the lease outlives no
 * crash, and no transaction stays open across Gusto's answers). The cursor moves after a page's
 * events are all taken in, so a crash repeats part of a page, never skips one.
 */
export class GustoEventsPoller {
  private readonly logger = new Logger('GustoEventsPoller');
  private readonly pageSize: number;
  private readonly maxPages: number;
  private readonly leaseMs: number;
  private readonly instanceId: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly tokens: GustoSystemTokens,
    private readonly sink: GustoEventSink,
    options: GustoEventsPollerOptions = {},
  ) {
    this.pageSize = Math.min(100, Math.max(1, options.pageSize ?? 100));
    this.maxPages = Math.max(1, options.maxPages ?? 20);
    this.leaseMs = Math.max(1_000, options.leaseMs ?? 120_000);
    this.instanceId = options.instanceId ?? randomUUID();
  }

  /**
   * One poll, if the feed is free and was last read at least `minIntervalMs` ago (0: now).
   * `whileLeased` runs first, under the same lease: work one instance at a time should do
   * (creating the subscription), without a lease of its own.
   */
  async pollOnce({
    minIntervalMs = 0,
    signal,
    whileLeased,
  }: { minIntervalMs?: number; signal?: AbortSignal; whileLeased?: () => Promise<void> } = {}): Promise<PollResult> {
    const result: PollResult = { polled: false, pages: 0, read: 0, taken: 0 };
    const [lease] = returnedRows<{ last_event_uuid: string | null; stale: boolean }>(
      await this.dataSource.query(
        `UPDATE gusto_event_cursor SET leased_by = $1, leased_until = now() + $2 * interval '1 millisecond'
         WHERE id = 1 AND (leased_until IS NULL OR leased_until < now() OR leased_by = $1)
           AND (polled_at IS NULL OR polled_at <= now() - $3 * interval '1 millisecond')
         RETURNING last_event_uuid, coalesce(last_event_at < now() - $4 * interval '1 millisecond', false) AS stale`,
        [this.instanceId, this.leaseMs, minIntervalMs, FEED_RETENTION_MS],
      ),
    );
    if (!lease) return result;
    result.polled = true;
    let cursor = lease.last_event_uuid;
    try {
      await whileLeased?.();
      while (result.pages < this.maxPages) {
        const query = { limit: String(this.pageSize), sort_order: 'asc', starting_after_uuid: cursor ?? undefined };
        const { body } = await this.tokens.call<unknown>('GET', '/v1/events', { query, signal });
        const page = Array.isArray(body) ? body : [];
        result.pages++;
        if (page.length === 0) {
          if (result.pages === 1 && cursor !== null && lease.stale) {
            // The cursor's event may have left the feed, and a cursor the feed does not know reads
            // as nothing new: start from the feed's oldest again (the dedupe drops what was seen).
            await this.dataSource.query(`UPDATE gusto_event_cursor SET last_event_uuid = NULL, last_event_at = NULL WHERE id = 1 AND leased_by = $1`, [
              this.instanceId,
            ]);
          }
          break;
        }
        let last: { uuid: string; at: Date | null } | undefined;
        for (const item of page) {
          const uuid = typeof (item as { uuid?: unknown })?.uuid === 'string' ? (item as { uuid: string }).uuid : undefined;
          let event;
          try {
            event = parseGustoEvent(item);
          } catch (error) {
            // One malformed event must not stop the feed for good: it is passed over, named in the log.
            this.logger.warn(`passed over a malformed Gusto event ${uuid ?? '(no uuid)'}: ${(error as Error).message}`);
            if (uuid !== undefined) last = { uuid, at: null };
            continue;
          }
          result.read++;
          const outcome = await this.sink.receive(event, 'poll');
          if (outcome.kind !== 'duplicate') result.taken++;
          last = { uuid: event.uuid, at: event.occurredAt };
        }
        // Nothing parseable with a uuid on the page: the cursor cannot move, so stop here.
        if (!last) break;
        cursor = last.uuid;
        if (!(await this.advance(cursor, last.at))) break;
        if (page.length < this.pageSize) break;
      }
    } finally {
      await this.dataSource.query(
        `UPDATE gusto_event_cursor SET polled_at = now(), leased_by = NULL, leased_until = NULL WHERE id = 1 AND leased_by = $1`,
        [this.instanceId],
      );
    }
    return result;
  }

  /** Moves the cursor and renews the lease; false when the lease was lost (another instance took over). */
  private async advance(uuid: string, at: Date | null): Promise<boolean> {
    const moved = await this.dataSource.query(
      `UPDATE gusto_event_cursor SET last_event_uuid = $2, last_event_at = coalesce($3, now()), leased_until = now() + $4 * interval '1 millisecond'
       WHERE id = 1 AND leased_by = $1`,
      [this.instanceId, uuid, at, this.leaseMs],
    );
    return affectedCount(moved) > 0;
  }
}
