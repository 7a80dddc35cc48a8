import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Metrics } from '../../observability/metrics';
import { MessageTransport, MESSAGE_TRANSPORT, RelayedMessage } from '../message-transport';
import { OutboxSignal } from './outbox-signal';

export interface OutboxRelaySettings {
  pollMs: number;
  batchSize: number;
  leaseMs: number;
  /** Lanes one relay leases per round; the rest stay free for other instances. */
  lanesPerRound: number;
  /** Published rows older than this are purged. */
  retentionDays: number;
}

export const OUTBOX_RELAY_SETTINGS = Symbol('OutboxRelaySettings');

interface OutboxRow {
  id: string;
  message_id: string;
  topic: string;
  message_key: string;
  type: string;
  payload: unknown;
  headers: Record<string, string>;
}

/**
 * Publishes committed outbox rows, at least once and in order per key. A relay leases whole
 * lanes (a key always maps to one lane) with `FOR UPDATE SKIP LOCKED`, so several relays share
 * the work without reordering a key; a relay that dies leaves a lease that simply expires.
 * No transaction is held while the transport runs: the embedded database has one connection
 * and in-process consumers need it.
 */
@Injectable()
export class OutboxRelay {
  private readonly logger = new Logger(OutboxRelay.name);
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private failures = 0;
  private lastPurge = 0;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(MESSAGE_TRANSPORT) private readonly transport: MessageTransport,
    private readonly signal: OutboxSignal,
    private readonly metrics: Metrics,
    @Inject(OUTBOX_RELAY_SETTINGS) private readonly settings: OutboxRelaySettings,
  ) {}

  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = this.run();
  }

  /** Finishes the round in flight, then stops; what is left is published by the next relay. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.signal.nudge();
    await this.loop;
    this.loop = undefined;
  }

  get running(): boolean {
    return this.loop !== undefined && !this.stopping;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let published = 0;
      try {
        published = await this.publishRound();
        this.failures = 0;
        await this.purgeIfDue();
      } catch (error) {
        this.failures++;
        this.metrics.outboxPublishFailures.inc();
        this.logger.warn(`outbox relay round failed (attempt ${this.failures}): ${(error as Error).message}`);
      }
      if (this.stopping) break;
      if (this.failures > 0) {
        await this.signal.wait(Math.min(30_000, this.settings.pollMs * 2 ** Math.min(this.failures, 8)));
      } else if (published === 0) {
        await this.signal.wait(this.settings.pollMs);
      }
    }
  }

  /** One round: lease free lanes that have work, publish their oldest rows, release. */
  async publishRound(): Promise<number> {
    const lanes: number[] = (
      await this.dataSource.query(
        `UPDATE outbox_lanes SET leased_by = $1, lease_until = now() + ($2 || ' milliseconds')::interval
         WHERE lane IN (
           SELECT l.lane FROM outbox_lanes l
           WHERE l.lease_until < now()
             AND EXISTS (SELECT 1 FROM outbox_messages m WHERE m.lane = l.lane AND m.published_at IS NULL)
           ORDER BY random()
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
         RETURNING lane`,
        [this.owner, String(this.settings.leaseMs), this.settings.lanesPerRound],
      )
    )[0].map((r: { lane: number }) => r.lane);
    if (lanes.length === 0) return 0;

    try {
      const rows: OutboxRow[] = await this.dataSource.query(
        `SELECT id, message_id, topic, message_key, type, payload, headers FROM outbox_messages
         WHERE lane = ANY($1::smallint[]) AND published_at IS NULL
         ORDER BY id LIMIT $2`,
        [lanes, this.settings.batchSize],
      );
      if (rows.length === 0) return 0;
      const messages: RelayedMessage[] = rows.map((r) => ({
        messageId: r.message_id,
        topic: r.topic,
        key: r.message_key,
        type: r.type,
        payload: r.payload,
        headers: r.headers,
      }));
      const ids = rows.map((r) => r.id);
      try {
        await this.transport.publish(messages);
      } catch (error) {
        await this.dataSource.query(
          `UPDATE outbox_messages SET attempts = attempts + 1, last_error = $2 WHERE id = ANY($1::bigint[])`,
          [ids, String((error as Error).message).slice(0, 2000)],
        );
        throw error;
      }
      await this.dataSource.query(
        `UPDATE outbox_messages SET published_at = now(), attempts = attempts + 1, last_error = NULL
         WHERE id = ANY($1::bigint[])`,
        [ids],
      );
      for (const m of messages) this.metrics.outboxPublished.inc({ topic: m.topic });
      return rows.length;
    } finally {
      await this.dataSource.query(
        `UPDATE outbox_lanes SET leased_by = NULL, lease_until = 'epoch' WHERE lane = ANY($1::smallint[]) AND leased_by = $2`,
        [lanes, this.owner],
      );
    }
  }

  /** Rows committed and not yet published. */
  async pendingCount(): Promise<number> {
    const [row] = await this.dataSource.query(`SELECT count(*)::int AS n FROM outbox_messages WHERE published_at IS NULL`);
    this.metrics.outboxPending.set(row.n);
    return row.n;
  }

  private async purgeIfDue(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurge < 10 * 60_000) return;
    this.lastPurge = now;
    await this.pendingCount();
    await this.dataSource.query(
      `DELETE FROM outbox_messages WHERE published_at < now() - ($1 || ' days')::interval`,
      [String(this.settings.retentionDays)],
    );
  }
}
