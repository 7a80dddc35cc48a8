import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { affectedCount, returnedRows } from '../../database/query-result';
import { Metrics } from '../../observability/metrics';
import { PollingLoop, RoundOutcome } from '../../scheduling/polling-loop';
import { ServiceInstance } from '../../scheduling/service-instance';
import { HEADER } from '../message';
import { MessageTransport, MESSAGE_TRANSPORT, RelayedMessage } from '../message-transport';
import { OutboxSignal } from './outbox-signal';

export interface OutboxRelaySettings {
  pollMs: number;
  batchSize: number;
  leaseMs: number;
  /** Lanes one relay leases per round; the rest stay free for other instances. */
  lanesPerRound: number;
}

export const OUTBOX_RELAY_SETTINGS = Symbol('OutboxRelaySettings');

/** The least time between the starts of two rounds. */
const LINGER_MS = 25;

/** A queued `outbox_batches` row (migration 1798500000000); null columns when the row is gone. */
interface OutboxRow {
  id: string;
  lane: number;
  topic: string | null;
  /** The JSON array of its payloads as stored, never parsed here. */
  payloads: string | null;
  /** JSON of [ids, keys, types, each message's own headers, where each payload ends in `payloads`]. */
  fields: string;
}

type RowFields = [ids: string[], keys: string[], types: string[], headers: Record<string, string>[], ends: number[]];

/**
 * Publishes committed outbox rows, at least once and in order per key. A relay leases whole
 * lanes (a key always maps to one lane) with `FOR UPDATE SKIP LOCKED`, so several relays share
 * the work without reordering a key. A relay that dies leaves a lease that expires, or is freed
 * at once when its instance is known gone (ServiceInstance).
 * No transaction is held while the transport runs: the embedded database has one connection
 * and in-process consumers need it.
 */
@Injectable()
export class OutboxRelay {
  private readonly logger = new Logger(OutboxRelay.name);
  /** The holder id its lanes record: this instance's, so they are freed at once if it dies. */
  readonly owner: string;
  private readonly loop: PollingLoop;
  private lastSample = 0;
  private lastRound = 0;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(MESSAGE_TRANSPORT) private readonly transport: MessageTransport,
    signal: OutboxSignal,
    private readonly metrics: Metrics,
    @Inject(OUTBOX_RELAY_SETTINGS) private readonly settings: OutboxRelaySettings,
    @Optional() instance?: ServiceInstance,
  ) {
    this.owner = instance?.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    instance?.holdsLeases({
      what: 'outbox lanes',
      release: (holders, manager) => this.releaseLanesOf(holders, manager),
      onFreed: () => signal.nudge(),
    });
    this.loop = new PollingLoop({
      name: 'outbox relay round',
      pollMs: settings.pollMs,
      signal,
      logger: this.logger,
      round: () => this.round(),
      onFailure: () => this.metrics.outboxPublishFailures.inc(),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Finishes the round in flight, then stops; what is left is published by the next relay. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  get running(): boolean {
    return this.loop.running;
  }

  private async round(): Promise<RoundOutcome> {
    // Linger: rows committed close together (a busy consumer commits many times a second) go in
    // one round rather than a round each, at the cost of a few milliseconds of delivery.
    const since = Date.now() - this.lastRound;
    if (since < LINGER_MS) await new Promise((resolve) => setTimeout(resolve, LINGER_MS - since));
    this.lastRound = Date.now();
    const { published, full } = await this.publishLanes();
    await this.samplePendingIfDue();
    // A round short of its limits left nothing behind: the next rows nudge the signal.
    return published > 0 && full ? 'more' : 'wait';
  }

  /** One round of publishing (publishLanes); answers how many rows it published. */
  async publishRound(): Promise<number> {
    return (await this.publishLanes()).published;
  }

  /**
   * Leases free lanes that have work, then reads their oldest rows (a statement each), publishes
   * their messages, then marks the rows published and releases the lanes (one statement).
   * `full` when the round hit its message or lane limit, so more may be waiting. The queue of
   * what is left to publish is `outbox_pending (lane, id)`, a row per outbox row with its count
   * of messages, read lane by lane in id order and merged (each row holds a message at least,
   * so no more rows than the limit of messages); the round takes rows in id order while fewer
   * than its limit of messages came before, so a lane's rows are always taken from its oldest
   * on. Only the round's rows, once chosen, are joined to their messages (a backlog of many lanes
   * would otherwise fetch every lane's whole share of payloads). Marking a row published deletes
   * its queue row and leaves the outbox row itself untouched.
   */
  private async publishLanes(): Promise<{ published: number; full: boolean }> {
    // Leased first, in a statement of its own: a lane another relay just published and released
    // is leased again only after its release (the lock's recheck sees it), but a read in the same
    // statement would still see that relay's deleted rows through the statement's older snapshot,
    // and publish them again. The read below starts after the lease, so it sees those deletes.
    const lanes = returnedRows<{ lane: number }>(
      await this.dataSource.query(
        `UPDATE outbox_lanes SET leased_by = $1, lease_until = now() + ($2 || ' milliseconds')::interval
         WHERE lane IN (
           SELECT l.lane FROM outbox_lanes l
           WHERE l.lease_until < now()
             AND EXISTS (SELECT 1 FROM outbox_pending p WHERE p.lane = l.lane)
           ORDER BY random()
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
         RETURNING lane`,
        [this.owner, String(this.settings.leaseMs), this.settings.lanesPerRound],
      ),
    ).map((r) => r.lane);
    if (lanes.length === 0) return { published: 0, full: false };
    const rows: OutboxRow[] = await this.dataSource.query(
      `SELECT q.id, q.lane, o.topic, o.payloads::text AS payloads,
              json_build_array(o.message_ids, o.message_keys, o.types, o.headers, o.payload_ends)::text AS fields
       FROM (
         SELECT p.id, p.created_at, p.lane, sum(p.messages) OVER (ORDER BY p.id) - p.messages AS before
         FROM (
           SELECT p.id, p.created_at, p.messages, k.lane FROM unnest($1::smallint[]) AS k(lane)
             CROSS JOIN LATERAL (SELECT p.id, p.created_at, p.messages FROM outbox_pending p WHERE p.lane = k.lane ORDER BY p.id LIMIT $2) AS p
           ORDER BY p.id LIMIT $2) AS p
         ) AS q
         LEFT JOIN outbox_batches o ON o.id = q.id AND o.created_at = q.created_at
       WHERE q.before < $2
       ORDER BY q.id`,
      [lanes, this.settings.batchSize],
    );
    // A queue row whose outbox row was deleted by hand has nothing to publish; it is dropped with the rest.
    const messages = rows.flatMap((r) => (r.payloads === null ? [] : messagesOf(r)));
    // outbox_pending's key, (lane, id), as two arrays.
    const keys = [rows.map((r) => r.lane), rows.map((r) => r.id)];
    try {
      if (messages.length > 0) await this.transport.publish(messages);
    } catch (error) {
      await this.dataSource.query(
        `WITH failed AS (
           UPDATE outbox_pending p SET attempts = p.attempts + 1, last_error = $3
           FROM unnest($1::smallint[], $2::bigint[]) AS k(lane, id) WHERE p.lane = k.lane AND p.id = k.id)
         UPDATE outbox_lanes SET leased_by = NULL, lease_until = 'epoch' WHERE lane = ANY($4::smallint[]) AND leased_by = $5`,
        [...keys, String((error as Error).message).slice(0, 2000), lanes, this.owner],
      );
      throw error;
    }
    await this.dataSource.query(
      `WITH published AS (
         DELETE FROM outbox_pending p USING unnest($1::smallint[], $2::bigint[]) AS k(lane, id) WHERE p.lane = k.lane AND p.id = k.id)
       UPDATE outbox_lanes SET leased_by = NULL, lease_until = 'epoch' WHERE lane = ANY($3::smallint[]) AND leased_by = $4`,
      [...keys, lanes, this.owner],
    );
    const perTopic = new Map<string, number>();
    for (const m of messages) perTopic.set(m.topic, (perTopic.get(m.topic) ?? 0) + 1);
    for (const [topic, count] of perTopic) this.metrics.outboxPublished.inc({ topic }, count);
    if (messages.length > 0) this.metrics.outboxRoundMessages.observe(messages.length);
    return { published: messages.length, full: messages.length >= this.settings.batchSize || lanes.length >= this.settings.lanesPerRound };
  }

  /** Frees the lanes of holders known to be dead; answers how many. */
  private async releaseLanesOf(holders: readonly string[], manager: EntityManager): Promise<number> {
    const result = await manager.query(`UPDATE outbox_lanes SET leased_by = NULL, lease_until = 'epoch' WHERE leased_by = ANY($1::text[]) RETURNING lane`, [
      holders,
    ]);
    return affectedCount(result);
  }

  /** Messages committed and not yet published. */
  async pendingCount(): Promise<number> {
    const [row] = await this.dataSource.query(`SELECT coalesce(sum(messages), 0)::int AS n FROM outbox_pending`);
    this.metrics.outboxPending.set(row.n);
    return row.n;
  }

  /** Samples the pending count for its gauge now and then. History is dropped by day (PartitionUpkeep), not here. */
  private async samplePendingIfDue(): Promise<void> {
    const now = Date.now();
    if (now - this.lastSample < 10 * 60_000) return;
    this.lastSample = now;
    await this.pendingCount();
  }
}

/**
 * The messages of an outbox row, in order, as the transport takes them: each payload cut out of
 * the stored array by where it ends (a row of one message, as migrated rows are, is the text
 * between the brackets).
 */
function messagesOf(row: OutboxRow): RelayedMessage[] {
  const [ids, keys, types, headers, ends] = JSON.parse(row.fields) as RowFields;
  const payloads = row.payloads!;
  return ids.map((messageId, i) => ({
    messageId,
    topic: row.topic!,
    key: keys[i],
    type: types[i],
    value: ids.length === 1 ? payloads.slice(1, -1) : payloads.slice(i === 0 ? 1 : ends[i - 1] + 1, ends[i]),
    headers: { ...headers[i], [HEADER.messageId]: messageId, [HEADER.messageType]: types[i] },
  }));
}
