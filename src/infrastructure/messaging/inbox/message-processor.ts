import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { cutShort, toStorableText } from '../../../domain/shared/hostile-input';
import { newId } from '../../../domain/shared/new-id';
import { UnitOfWork } from '../../database/unit-of-work';
import { Metrics } from '../../observability/metrics';
import { HEADER, InboundMessage, MessageHandler, MessageHeaders, OutboundMessage, parsedBody, PoisonMessageError } from '../message';
import { MessageHandlerRegistry } from '../message-handler-registry';
import { OutboxWriter } from '../outbox/outbox-writer';
import { deadLetterTopicOf } from '../topics';

export type ProcessOutcome = 'applied' | 'duplicate' | 'dead_lettered';

/** When a batch commits before its last message: what it applied so far commits, the rest waits. */
export interface BatchLimits {
  /** Checked after each message: true ends the batch there (shutting down, partition revoked). */
  stop?: () => boolean;
  /** A batch that has run this long commits after the message in progress: bounds lock time and latency. */
  maxMs?: number;
}

/** Who replays a dead letter, when and why; recorded on it with the status `replayed`. */
export interface DeadLetterReplay {
  /** Where the handler of the dead letter's topic and consumer is found. */
  handlers: MessageHandlerRegistry;
  resolvedBy: string;
  resolvedAt: Date;
  note: string | null;
  /** More writes that commit with the replay, or not at all (the ops audit row). */
  alsoInTransaction?: (manager: EntityManager) => Promise<void>;
}

export type ReplayOutcome =
  | { status: 'replayed' }
  | { status: 'not_found' }
  | { status: 'not_open'; current: string }
  | { status: 'no_handler'; consumer: string; topic: string }
  | { status: 'poison'; reason: string };

interface DeadLetterRow {
  id: string;
  consumer: string;
  topic: string;
  partition: number | null;
  offset: string | null;
  message_key: string | null;
  payload: string;
  headers: MessageHeaders | null;
  status: string;
}

/**
 * What a message is deduplicated by: its id, unique within its scope (MessageHandler
 * messageScopeOf; '' for ids unique everywhere). The inbox key is (consumer, scope, id).
 */
export interface InboxKey {
  scope: string;
  id: string;
}

/** The earliest of the messages' send times; undefined when any is unknown (every day is then searched). */
const earliestOf = (sentAts: readonly (Date | undefined)[]): Date | undefined => {
  let earliest: Date | undefined;
  for (const at of sentAts) {
    if (at === undefined) return undefined;
    if (earliest === undefined || at < earliest) earliest = at;
  }
  return earliest;
};

/** One string per inbox key, for sets and maps (no text PostgreSQL stores holds a NUL). */
const keyText = (key: InboxKey): string => `${key.scope}\u0000${key.id}`;

/** The id a message is deduplicated by: header, then a JSON body's `id`, then its log position. */
export function defaultMessageId(message: InboundMessage): string | undefined {
  const header = message.headers[HEADER.messageId];
  if (header) return header;
  const parsed = parsedBody(message);
  // Not JSON: the log position.
  const body = parsed.ok ? (parsed.value as { id?: unknown } | null) : undefined;
  if (typeof body?.id === 'string' && body.id.length > 0 && body.id.length <= 200) return body.id;
  return message.partition !== undefined && message.offset !== undefined
    ? `${message.topic}/${message.partition}/${message.offset}`
    : undefined;
}

/** The dead-letter topic's message for a dead letter: the reason, and the original as it came. */
function deadLetterMessage(handler: MessageHandler, message: InboundMessage, messageId: string, id: string, reason: string): OutboundMessage {
  return {
    topic: deadLetterTopicOf(message.topic),
    key: message.key ?? messageId,
    type: 'DeadLetter',
    messageId: id,
    payload: {
      dead_letter_id: id,
      reason,
      consumer: handler.consumer,
      original: {
        topic: message.topic,
        partition: message.partition ?? null,
        offset: message.offset ?? null,
        key: message.key,
        headers: message.headers,
        value: message.value,
      },
    },
    headers: {
      [HEADER.deadLetterReason]: cutShort(reason, 500),
      [HEADER.deadLetterConsumer]: handler.consumer,
      [HEADER.originalTopic]: message.topic,
      ...(message.partition !== undefined && { [HEADER.originalPartition]: String(message.partition) }),
      ...(message.offset !== undefined && { [HEADER.originalOffset]: message.offset }),
    },
  };
}

/** Why a body is not JSON, or undefined when it parses. */
function jsonProblemOf(message: InboundMessage): string | undefined {
  const parsed = parsedBody(message);
  return parsed.ok ? undefined : parsed.problem;
}

/**
 * Applies an inbound message exactly once per consumer and inbox key (its id within its scope):
 * the inbox row and the handler's effect commit in one transaction, so a redelivery finds the
 * row and is acknowledged without effect.
 * A poison message is recorded as a dead letter (with its own inbox row) and published to the
 * dead-letter topic through the outbox. Any other error is transient and is thrown for the
 * transport to retry. A run of messages may also be applied in one transaction (processBatch):
 * each message still commits with its own inbox row, only the commit is shared.
 */
@Injectable()
export class MessageProcessor {
  private readonly logger = new Logger(MessageProcessor.name);

  constructor(
    private readonly uow: UnitOfWork,
    private readonly outbox: OutboxWriter,
    private readonly metrics: Metrics,
  ) {}

  async process(handler: MessageHandler, message: InboundMessage): Promise<ProcessOutcome> {
    const { key, problem, sentAt } = this.inspect(handler, message);
    let outcome: ProcessOutcome;
    if (problem !== undefined) {
      outcome = await this.deadLetter(handler, message, key, problem);
    } else {
      try {
        outcome = await this.uow.transaction(async (manager) => {
          if (!(await this.claim(manager, handler, key, message.topic, sentAt))) return 'duplicate';
          await handler.handle(message, manager);
          return 'applied';
        });
      } catch (error) {
        if (!(error instanceof PoisonMessageError)) {
          this.metrics.messageRetries.inc({ consumer: handler.consumer });
          throw error;
        }
        outcome = await this.deadLetter(handler, message, key, error.message);
      }
    }
    this.metrics.messagesConsumed.inc({ consumer: handler.consumer, outcome });
    return outcome;
  }

  /**
   * Applies consecutive messages of one partition, in order, in ONE transaction: each message's
   * inbox claim and effect run under a savepoint of their own, so a duplicate is skipped, and a
   * poison message rolls back only itself and is dead-lettered in the same transaction; the
   * batch commits once. One commit instead of one per message is what lets a consumer keep up
   * with a busy topic. The batch may end early (see BatchLimits): the outcomes returned are
   * those of the messages applied, a prefix of `messages`, at least one. A transient error rolls
   * the whole batch back (nothing of it is applied) and is thrown: the caller applies the
   * messages one by one with process(), retrying there.
   */
  async processBatch(handler: MessageHandler, messages: InboundMessage[], limits: BatchLimits = {}): Promise<ProcessOutcome[]> {
    if (messages.length === 0) return [];
    if (handler.handleBatch) return this.processSetWise(handler, messages);
    return this.batchTransaction(handler, async (manager) => {
      const started = Date.now();
      const results: ProcessOutcome[] = [];
      for (const message of messages) {
        results.push(await this.applyInBatch(manager, handler, message));
        if (limits.stop?.() || (limits.maxMs !== undefined && Date.now() - started >= limits.maxMs)) break;
      }
      return results;
    });
  }

  /** One batch's transaction, counted: its outcomes when it commits, a retry when it throws. */
  private async batchTransaction(handler: MessageHandler, work: (manager: EntityManager) => Promise<ProcessOutcome[]>): Promise<ProcessOutcome[]> {
    let outcomes: ProcessOutcome[];
    try {
      outcomes = await this.uow.transaction(work);
    } catch (error) {
      this.metrics.messageRetries.inc({ consumer: handler.consumer });
      throw error;
    }
    const byOutcome = new Map<ProcessOutcome, number>();
    for (const outcome of outcomes) byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    for (const [outcome, count] of byOutcome) this.metrics.messagesConsumed.inc({ consumer: handler.consumer, outcome }, count);
    if (outcomes.length > 0) this.metrics.messagesPerTransaction.observe({ consumer: handler.consumer }, outcomes.length);
    return outcomes;
  }

  /**
   * A batch applied set-wise, in ONE transaction, with a statement per table rather than per
   * message: the inbox claims of the whole batch (a duplicate, also one repeated in the batch,
   * is skipped), the handler's handleBatch, and the dead letters of what it found poison (and of
   * what could not be read) with their outbox messages. A transient error rolls everything back
   * and is thrown, as processBatch does.
   */
  private async processSetWise(handler: MessageHandler, messages: InboundMessage[]): Promise<ProcessOutcome[]> {
    return this.batchTransaction(handler, async (manager) => {
      const inspected = messages.map((message) => this.inspect(handler, message));
      const results: ProcessOutcome[] = new Array(messages.length).fill('duplicate');
      const first = new Map<string, number>();
      inspected.forEach(({ key, problem }, i) => {
        if (problem === undefined && !first.has(keyText(key))) first.set(keyText(key), i);
      });
      const firsts = [...first.values()];
      const claimed = await this.claimMany(
        manager,
        handler,
        firsts.map((i) => inspected[i].key),
        messages[0].topic,
        earliestOf(firsts.map((i) => inspected[i].sentAt)),
      );
      const toApply = [...first].filter(([text]) => claimed.has(text)).map(([, i]) => i);
      const reasons = toApply.length === 0 ? [] : await handler.handleBatch!(toApply.map((i) => messages[i]), manager);
      const poison: { index: number; reason: string; claimed: boolean }[] = [];
      toApply.forEach((index, k) => {
        if (reasons[k] === null) results[index] = 'applied';
        else poison.push({ index, reason: reasons[k]!, claimed: true });
      });
      inspected.forEach(({ problem }, index) => {
        if (problem !== undefined) poison.push({ index, reason: problem, claimed: false });
      });
      const written = await this.writeDeadLetters(
        manager,
        handler,
        poison.map((p) => ({ message: messages[p.index], key: inspected[p.index].key, reason: p.reason, claimed: p.claimed })),
      );
      poison.forEach((p, k) => (results[p.index] = written[k] ? 'dead_lettered' : 'duplicate'));
      return results;
    });
  }

  /**
   * Claims many inbox keys for the consumer in one statement; answers those it claimed (keyText;
   * the rest were there). `sentAt`: the earliest the messages say they were sent, if all say so.
   */
  private async claimMany(manager: EntityManager, handler: MessageHandler, keys: InboxKey[], topic: string, sentAt?: Date): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    // inbox_claim (migrations 1798400000000, 1798700000000): the inbox is partitioned by day, so no
    // unique key spans the days; the function serialises claims of a key and looks in the
    // partitions from a day before `sentAt` (every one without it).
    const rows: InboxKey[] = await manager.query(
      `SELECT claimed_scope AS scope, claimed_id AS id FROM inbox_claim($1, $2, $3::text[], $4::text[], $5::timestamptz)`,
      [handler.consumer, topic, keys.map((k) => k.scope), keys.map((k) => k.id), sentAt ?? null],
    );
    return new Set(rows.map(keyText));
  }

  /**
   * Dead letters of many messages, with their outbox messages, set-wise; a message not claimed
   * yet is claimed first (one already in the inbox is a redelivery: written, false).
   */
  private async writeDeadLetters(
    manager: EntityManager,
    handler: MessageHandler,
    letters: { message: InboundMessage; key: InboxKey; reason: string; claimed: boolean }[],
  ): Promise<boolean[]> {
    if (letters.length === 0) return [];
    const toClaim = new Map(letters.filter((l) => !l.claimed).map((l) => [keyText(l.key), l.key]));
    const claimed = await this.claimMany(manager, handler, [...toClaim.values()], letters[0].message.topic);
    const seen = new Set<string>();
    const written = letters.map((l) => {
      const text = keyText(l.key);
      const write = (l.claimed || claimed.has(text)) && !seen.has(text);
      seen.add(text);
      return write;
    });
    // A reason may quote the message: made storable, or jsonb and text refuse the whole batch.
    const rows = letters.filter((_, i) => written[i]).map((l) => ({ ...l, reason: toStorableText(l.reason), id: newId() }));
    if (rows.length === 0) return written;
    for (const r of rows) this.logger.warn(`dead-lettering message ${r.key.id} from ${r.message.topic} for ${handler.consumer}: ${r.reason}`);
    await manager.query(
      `INSERT INTO dead_letters (id, consumer, topic, partition, "offset", message_key, scope, message_id, payload, headers, reason)
       SELECT u.id, $1, u.topic, u.partition, u.offset, u.message_key, u.scope, u.message_id, u.payload, u.headers, u.reason
       FROM unnest($2::uuid[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::jsonb[], $11::text[])
         AS u(id, topic, partition, "offset", message_key, scope, message_id, payload, headers, reason)`,
      [
        handler.consumer,
        rows.map((r) => r.id),
        rows.map((r) => r.message.topic),
        rows.map((r) => r.message.partition ?? null),
        rows.map((r) => r.message.offset ?? null),
        rows.map((r) => r.message.key),
        rows.map((r) => r.key.scope),
        rows.map((r) => r.key.id),
        rows.map((r) => r.message.value),
        rows.map((r) => JSON.stringify(r.message.headers)),
        rows.map((r) => r.reason),
      ],
    );
    await this.outbox.append(manager, rows.map((r) => deadLetterMessage(handler, r.message, r.key.id, r.id, r.reason)));
    return written;
  }

  /** One message of a batch, under its savepoint (see processBatch). */
  private async applyInBatch(manager: EntityManager, handler: MessageHandler, message: InboundMessage): Promise<ProcessOutcome> {
    const { key, problem, sentAt } = this.inspect(handler, message);
    if (problem !== undefined) return this.writeDeadLetter(manager, handler, message, key, problem);
    try {
      return await this.uow.savepoint(async () => {
        const claimed = await this.claim(manager, handler, key, message.topic, sentAt);
        if (claimed) await handler.handle(message, manager);
        return claimed ? 'applied' : 'duplicate';
      });
    } catch (error) {
      if (!(error instanceof PoisonMessageError)) throw error;
      // Only this message's writes went; the claim went with them and is taken again by the dead letter.
      return this.writeDeadLetter(manager, handler, message, key, error.message);
    }
  }

  /**
   * The id a message is deduplicated by, and why it cannot be applied at all (no id, or not
   * JSON) when that is so. Every transport carries JSON; a handler's own JSON.parse would throw
   * a SyntaxError that looks transient and would block the partition forever.
   */
  private inspect(handler: MessageHandler, message: InboundMessage): { key: InboxKey; problem?: string; sentAt?: Date } {
    const id = handler.messageIdOf?.(message) ?? defaultMessageId(message);
    const scope = handler.messageScopeOf?.(message) ?? '';
    const notJson = message.unreadable ?? jsonProblemOf(message);
    if (id === undefined) return { key: { scope, id: `no-id:${randomUUID()}` }, problem: notJson ?? 'message has no id' };
    return notJson === undefined ? { key: { scope, id }, sentAt: handler.sentAtOf?.(message) } : { key: { scope, id }, problem: notJson };
  }

  /** Records the inbox key for this consumer; false when it was already there. */
  private async claim(manager: EntityManager, handler: MessageHandler, key: InboxKey, topic: string, sentAt?: Date): Promise<boolean> {
    const rows: unknown[] = await manager.query(`SELECT 1 FROM inbox_claim($1, $2, ARRAY[$3::text], ARRAY[$4::text], $5::timestamptz)`, [
      handler.consumer,
      topic,
      key.scope,
      key.id,
      sentAt ?? null,
    ]);
    return rows.length > 0;
  }

  private deadLetter(handler: MessageHandler, message: InboundMessage, key: InboxKey, reason: string): Promise<ProcessOutcome> {
    return this.uow.transaction((manager) => this.writeDeadLetter(manager, handler, message, key, reason));
  }

  /** The dead letter, its inbox claim and its outbox message, in the caller's transaction. */
  private async writeDeadLetter(
    manager: EntityManager,
    handler: MessageHandler,
    message: InboundMessage,
    key: InboxKey,
    quotedReason: string,
  ): Promise<ProcessOutcome> {
    if (!(await this.claim(manager, handler, key, message.topic))) return 'duplicate';
    const reason = toStorableText(quotedReason);
    this.logger.warn(`dead-lettering message ${key.id} from ${message.topic} for ${handler.consumer}: ${reason}`);
    const id = newId();
    await manager.query(
      `INSERT INTO dead_letters (id, consumer, topic, partition, "offset", message_key, scope, message_id, payload, headers, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11)`,
      [
        id,
        handler.consumer,
        message.topic,
        message.partition ?? null,
        message.offset ?? null,
        message.key,
        key.scope,
        key.id,
        message.value,
        JSON.stringify(message.headers),
        reason,
      ],
    );
    await this.outbox.append(manager, [deadLetterMessage(handler, message, key.id, id, reason)]);
    return 'dead_lettered';
  }

  /**
   * Applies a dead letter's original message again, once its cause is fixed, through the handler
   * registered for its topic and consumer. The dead-lettering already claimed the message in the
   * inbox (that is what keeps redeliveries out), so the claim is not taken again: the row lock on
   * the dead letter is what makes a replay happen once. The handler's effect, the dead letter's
   * `replayed` status and `alsoInTransaction` commit together. Poison again: nothing changes and
   * the reason is returned. Any other error is thrown with nothing changed (transient: try later).
   */
  async replay(deadLetterId: string, replay: DeadLetterReplay): Promise<ReplayOutcome> {
    try {
      return await this.uow.transaction(async (manager): Promise<ReplayOutcome> => {
        const [row]: DeadLetterRow[] = await manager.query(
          `SELECT id, consumer, topic, partition, "offset", message_key, payload, headers, status
           FROM dead_letters WHERE id = $1 FOR UPDATE`,
          [deadLetterId],
        );
        if (!row) return { status: 'not_found' };
        if (row.status !== 'open') return { status: 'not_open', current: row.status };
        const handler = replay.handlers.handlersFor(row.topic).find((h) => h.consumer === row.consumer);
        if (!handler) return { status: 'no_handler', consumer: row.consumer, topic: row.topic };
        // As in process(): a handler's own JSON.parse failure would look transient.
        const message: InboundMessage = {
          topic: row.topic,
          key: row.message_key,
          value: row.payload,
          headers: row.headers ?? {},
          ...(row.partition !== null && { partition: row.partition }),
          ...(row.offset !== null && { offset: row.offset }),
        };
        const notJson = jsonProblemOf(message);
        if (notJson !== undefined) return { status: 'poison', reason: notJson };
        await handler.handle(message, manager);
        await manager.query(
          `UPDATE dead_letters SET status = 'replayed', resolved_by = $2, resolved_at = $3, note = $4 WHERE id = $1`,
          [deadLetterId, replay.resolvedBy, replay.resolvedAt, replay.note],
        );
        await replay.alsoInTransaction?.(manager);
        return { status: 'replayed' };
      });
    } catch (error) {
      if (error instanceof PoisonMessageError) return { status: 'poison', reason: error.message };
      throw error;
    }
  }
}
