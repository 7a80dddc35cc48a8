import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { defaultMessageId } from '../../../src/infrastructure/messaging/inbox/message-processor';
import { InboundMessage, MessageHandler, PoisonMessageError } from '../../../src/infrastructure/messaging/message';
import { MessageTransport, RelayedMessage } from '../../../src/infrastructure/messaging/message-transport';
import { OutboxRelaySettings } from '../../../src/infrastructure/messaging/outbox/outbox-relay';

/** Relay settings for tests: fast polling, short leases. */
export const relaySettings = (overrides: Partial<OutboxRelaySettings> = {}): OutboxRelaySettings => ({
  pollMs: 20,
  batchSize: 100,
  leaseMs: 30_000,
  lanesPerRound: 64,
  ...overrides,
});

export const randomSuffix = () => randomBytes(4).toString('hex');

/**
 * A transport that records what it is handed, in publish order. It can be told to fail the next
 * calls, or to hang until released (a relay that died mid-publish).
 */
export class RecordingTransport implements MessageTransport {
  readonly published: RelayedMessage[] = [];
  calls = 0;
  private failures: Error[] = [];
  private hold: Promise<void> | undefined;
  private releaseHold: (() => void) | undefined;

  /** `log`, when given, also receives every message (several relays, one record of order). */
  constructor(
    private readonly delay?: () => Promise<void>,
    private readonly log?: RelayedMessage[],
  ) {}

  failNext(times: number, message = 'broker unavailable'): void {
    for (let i = 1; i <= times; i++) this.failures.push(new Error(`${message} #${i}`));
  }

  /** Publishes block until `release()`; models a relay that hangs (or dies) mid-publish. */
  hang(): void {
    this.hold = new Promise((resolve) => (this.releaseHold = resolve));
  }

  release(): void {
    this.releaseHold?.();
    this.hold = undefined;
  }

  async publish(messages: RelayedMessage[]): Promise<void> {
    this.calls++;
    if (this.hold) await this.hold;
    const failure = this.failures.shift();
    if (failure) throw failure;
    await this.delay?.();
    this.published.push(...messages);
    this.log?.push(...messages);
  }
}

/** Creates the table a test handler writes its effect to. */
export async function createEffectsTable(dataSource: DataSource): Promise<void> {
  await dataSource.query(`
    CREATE TABLE IF NOT EXISTS test_effects (
      id          bigserial PRIMARY KEY,
      consumer    text NOT NULL,
      message_id  text NOT NULL,
      key         text,
      seq         integer,
      -- The top-level transaction that wrote it (a savepoint's row too): tells batches apart.
      tx          bigint NOT NULL DEFAULT txid_current()
    )`);
}

export interface EffectRow {
  consumer: string;
  message_id: string;
  key: string | null;
  seq: number | null;
}

/** Effects in the order they were applied. */
export async function effects(dataSource: DataSource, consumer?: string): Promise<EffectRow[]> {
  return dataSource.query(
    `SELECT consumer, message_id, key, seq FROM test_effects WHERE $1::text IS NULL OR consumer = $1 ORDER BY id`,
    [consumer ?? null],
  );
}

export interface TestBody {
  key: string;
  seq: number;
  /** Handler rejects it as poison. */
  poison?: boolean;
  /** The poison's reason, when not the default one. */
  reason?: string;
}

/**
 * Applies a message by inserting one effect row through the inbox's transaction. Bodies are plain
 * JSON.parse'd, as a real handler would; `poison: true` is rejected; `failTransiently(id, n)`
 * makes the next n attempts write their effect and then throw a transient error.
 */
export class EffectHandler implements MessageHandler {
  readonly seen: InboundMessage[] = [];
  private readonly transient = new Map<string, number>();
  /** Simulated work per message (to stop a consumer mid-stream). */
  workMs = 0;

  constructor(
    readonly topic: string,
    readonly consumer: string,
  ) {}

  failTransiently(messageId: string, times: number): void {
    this.transient.set(messageId, times);
  }

  async handle(message: InboundMessage, manager: EntityManager): Promise<void> {
    this.seen.push(message);
    const body = JSON.parse(message.value) as TestBody;
    if (body.poison) throw new PoisonMessageError(body.reason ?? `seq ${body.seq} is not acceptable`);
    const messageId = defaultMessageId(message) ?? 'none';
    await manager.query(`INSERT INTO test_effects (consumer, message_id, key, seq) VALUES ($1, $2, $3, $4)`, [
      this.consumer,
      messageId,
      body.key,
      body.seq,
    ]);
    const left = this.transient.get(messageId) ?? 0;
    if (left > 0) {
      this.transient.set(messageId, left - 1);
      throw new Error(`database blip while applying ${messageId}`);
    }
    if (this.workMs > 0) await new Promise((r) => setTimeout(r, this.workMs));
  }
}

/** Keys whose messages were not seen in ascending `seq` order. */
export function keysOutOfOrder(rows: { key: string | null; seq: number | null }[]): string[] {
  const last = new Map<string, number>();
  const bad = new Set<string>();
  for (const r of rows) {
    const key = r.key ?? '';
    const seq = r.seq ?? -1;
    if ((last.get(key) ?? -1) >= seq) bad.add(key);
    last.set(key, seq);
  }
  return [...bad];
}

/** Values that occur more than once. */
export function duplicates<T>(values: T[]): T[] {
  const seen = new Set<T>();
  const dup = new Set<T>();
  for (const v of values) (seen.has(v) ? dup : seen).add(v);
  return [...dup];
}
