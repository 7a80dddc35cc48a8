import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Metrics } from '../../observability/metrics';
import { HEADER, InboundMessage, MessageHandler, MessageHeaders, PoisonMessageError } from '../message';
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

/** The id a message is deduplicated by: header, then a JSON body's `id`, then its log position. */
export function defaultMessageId(message: InboundMessage): string | undefined {
  const header = message.headers[HEADER.messageId];
  if (header) return header;
  try {
    const body = JSON.parse(message.value) as { id?: unknown };
    if (typeof body?.id === 'string' && body.id.length > 0 && body.id.length <= 200) return body.id;
  } catch {
    // not JSON: fall through to the log position
  }
  return message.partition !== undefined && message.offset !== undefined
    ? `${message.topic}/${message.partition}/${message.offset}`
    : undefined;
}

/** Why a body is not JSON, or undefined when it parses. */
function jsonProblemOf(value: string): string | undefined {
  try {
    JSON.parse(value);
    return undefined;
  } catch (error) {
    return `body is not valid JSON: ${(error as Error).message}`;
  }
}

/**
 * Applies an inbound message exactly once per consumer: the inbox row and the handler's effect
 * commit in one transaction, so a redelivery finds the row and is acknowledged without effect.
 * A poison message is recorded as a dead letter (with its own inbox row) and published to the
 * dead-letter topic through the outbox. Any other error is transient and is thrown for the
 * transport to retry. A run of messages may also be applied in one transaction (processBatch):
 * each message still commits with its own inbox row, only the commit is shared.
 */
@Injectable()
export class MessageProcessor {
  private readonly logger = new Logger(MessageProcessor.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly metrics: Metrics,
  ) {}

  async process(handler: MessageHandler, message: InboundMessage): Promise<ProcessOutcome> {
    const { messageId, problem } = this.inspect(handler, message);
    let outcome: ProcessOutcome;
    if (problem !== undefined) {
      outcome = await this.deadLetter(handler, message, messageId, problem);
    } else {
      try {
        outcome = await this.dataSource.transaction(async (manager) => {
          if (!(await this.claim(manager, handler, messageId, message.topic))) return 'duplicate';
          await handler.handle(message, manager);
          return 'applied';
        });
      } catch (error) {
        if (!(error instanceof PoisonMessageError)) {
          this.metrics.messageRetries.inc({ consumer: handler.consumer });
          throw error;
        }
        outcome = await this.deadLetter(handler, message, messageId, error.message);
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
    let outcomes: ProcessOutcome[];
    try {
      outcomes = await this.dataSource.transaction(async (manager) => {
        const started = Date.now();
        const results: ProcessOutcome[] = [];
        for (const message of messages) {
          results.push(await this.applyInBatch(manager, handler, message));
          if (limits.stop?.() || (limits.maxMs !== undefined && Date.now() - started >= limits.maxMs)) break;
        }
        return results;
      });
    } catch (error) {
      this.metrics.messageRetries.inc({ consumer: handler.consumer });
      throw error;
    }
    for (const outcome of outcomes) this.metrics.messagesConsumed.inc({ consumer: handler.consumer, outcome });
    return outcomes;
  }

  /** One message of a batch, under its savepoint (see processBatch). */
  private async applyInBatch(manager: EntityManager, handler: MessageHandler, message: InboundMessage): Promise<ProcessOutcome> {
    const { messageId, problem } = this.inspect(handler, message);
    await manager.query('SAVEPOINT inbox_message');
    if (problem !== undefined) {
      const outcome = await this.writeDeadLetter(manager, handler, message, messageId, problem);
      await manager.query('RELEASE SAVEPOINT inbox_message');
      return outcome;
    }
    try {
      const claimed = await this.claim(manager, handler, messageId, message.topic);
      if (claimed) await handler.handle(message, manager);
      await manager.query('RELEASE SAVEPOINT inbox_message');
      return claimed ? 'applied' : 'duplicate';
    } catch (error) {
      if (!(error instanceof PoisonMessageError)) throw error;
      // Only this message's writes go; the claim goes with them and is taken again by the dead letter.
      await manager.query('ROLLBACK TO SAVEPOINT inbox_message');
      const outcome = await this.writeDeadLetter(manager, handler, message, messageId, error.message);
      await manager.query('RELEASE SAVEPOINT inbox_message');
      return outcome;
    }
  }

  /**
   * The id a message is deduplicated by, and why it cannot be applied at all (no id, or not
   * JSON) when that is so. Every transport carries JSON; a handler's own JSON.parse would throw
   * a SyntaxError that looks transient and would block the partition forever.
   */
  private inspect(handler: MessageHandler, message: InboundMessage): { messageId: string; problem?: string } {
    const messageId = handler.messageIdOf?.(message) ?? defaultMessageId(message);
    const notJson = jsonProblemOf(message.value);
    if (messageId === undefined) return { messageId: `no-id:${randomUUID()}`, problem: notJson ?? 'message has no id' };
    return notJson === undefined ? { messageId } : { messageId, problem: notJson };
  }

  /** Records the message id for this consumer; false when it was already there. */
  private async claim(manager: EntityManager, handler: MessageHandler, messageId: string, topic: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO inbox_messages (consumer, message_id, topic) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [handler.consumer, messageId, topic],
    );
    return rows.length > 0;
  }

  private deadLetter(handler: MessageHandler, message: InboundMessage, messageId: string, reason: string): Promise<ProcessOutcome> {
    return this.dataSource.transaction((manager) => this.writeDeadLetter(manager, handler, message, messageId, reason));
  }

  /** The dead letter, its inbox claim and its outbox message, in the caller's transaction. */
  private async writeDeadLetter(
    manager: EntityManager,
    handler: MessageHandler,
    message: InboundMessage,
    messageId: string,
    reason: string,
  ): Promise<ProcessOutcome> {
    if (!(await this.claim(manager, handler, messageId, message.topic))) return 'duplicate';
    this.logger.warn(`dead-lettering message ${messageId} from ${message.topic} for ${handler.consumer}: ${reason}`);
    const id = randomUUID();
    await manager.query(
      `INSERT INTO dead_letters (id, consumer, topic, partition, "offset", message_key, message_id, payload, headers, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10)`,
      [
        id,
        handler.consumer,
        message.topic,
        message.partition ?? null,
        message.offset ?? null,
        message.key,
        messageId,
        message.value,
        JSON.stringify(message.headers),
        reason,
      ],
    );
    await this.outbox.append(manager, [
      {
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
          [HEADER.deadLetterReason]: reason.slice(0, 500),
          [HEADER.deadLetterConsumer]: handler.consumer,
          [HEADER.originalTopic]: message.topic,
          ...(message.partition !== undefined && { [HEADER.originalPartition]: String(message.partition) }),
          ...(message.offset !== undefined && { [HEADER.originalOffset]: message.offset }),
        },
      },
    ]);
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
      return await this.dataSource.transaction(async (manager): Promise<ReplayOutcome> => {
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
        const notJson = jsonProblemOf(row.payload);
        if (notJson !== undefined) return { status: 'poison', reason: notJson };
        await handler.handle(
          {
            topic: row.topic,
            key: row.message_key,
            value: row.payload,
            headers: row.headers ?? {},
            ...(row.partition !== null && { partition: row.partition }),
            ...(row.offset !== null && { offset: row.offset }),
          },
          manager,
        );
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
