import { EntityManager } from 'typeorm';

export type MessageHeaders = Record<string, string>;

/** A message to publish; written to the outbox in the caller's transaction. */
export interface OutboundMessage {
  topic: string;
  /** Partition key: messages of one key are published and consumed in order. */
  key: string;
  type: string;
  payload: unknown;
  headers?: MessageHeaders;
  /** Defaults to a fresh UUID; consumers dedupe on it. */
  messageId?: string;
}

/** A message as a transport hands it over, before anything is trusted about its content. */
export interface InboundMessage {
  topic: string;
  key: string | null;
  /** Raw body text: it may not even be JSON. */
  value: string;
  headers: MessageHeaders;
  partition?: number;
  offset?: string;
  /**
   * Set by the transport when the message as sent could not be kept as is (U+0000 in its key,
   * body or headers, which PostgreSQL cannot store): it was made storable, and is dead-lettered.
   */
  unreadable?: string;
}

type ParsedBody = { ok: true; value: unknown } | { ok: false; problem: string };
const PARSED_BODIES = new WeakMap<InboundMessage, ParsedBody>();

/**
 * The message's body parsed as JSON, once however many ask (its id, its scope, the JSON check,
 * the handler): an HRIS event was parsed four times on its way in. Readers must not change what
 * it answers. `problem` says why the body is not JSON.
 */
export function parsedBody(message: InboundMessage): ParsedBody {
  let parsed = PARSED_BODIES.get(message);
  if (parsed === undefined) {
    try {
      parsed = { ok: true, value: JSON.parse(message.value) as unknown };
    } catch (error) {
      parsed = { ok: false, problem: `body is not valid JSON: ${(error as Error).message}` };
    }
    PARSED_BODIES.set(message, parsed);
  }
  return parsed;
}

/** Consumes one logical topic. Its effect commits in the same transaction as its inbox row. */
export interface MessageHandler {
  /** Stable name; the inbox dedupes per consumer, so two handlers may see the same message. */
  readonly consumer: string;
  readonly topic: string;
  /** Message id for dedupe; default: header `message-id`, then a JSON body's `id`. */
  messageIdOf?(message: InboundMessage): string | undefined;
  /**
   * What the message id is unique within, when not the whole consumer (an HRIS event's id is
   * its connection's): the inbox key is (consumer, scope, id). Default '': ids the service mints
   * itself (outbox UUIDs) are unique everywhere.
   */
  messageScopeOf?(message: InboundMessage): string;
  /**
   * When the message was sent, as the message itself says (an HRIS event's `occurred_at`): no
   * copy of it can have been received more than a day before, so the inbox looks for earlier
   * copies only from then, one daily partition per day rather than every retained day's.
   * Undefined (the default): it looks in every day kept.
   */
  sentAtOf?(message: InboundMessage): Date | undefined;
  handle(message: InboundMessage, manager: EntityManager): Promise<void>;
  /**
   * Applies a run of messages (already claimed in the inbox, in their order) set-wise, in the
   * caller's transaction: answers, per message, null when it was applied, or why it is poison.
   * A poison message must leave no write behind (the others commit); any thrown error is
   * transient and rolls the whole run back. Without it, the messages are applied one by one.
   */
  handleBatch?(messages: readonly InboundMessage[], manager: EntityManager): Promise<(string | null)[]>;
}

/**
 * A message that can never be applied (bad JSON, unknown type, invalid data). It goes to the
 * dead letters with the reason instead of being retried, and consumption goes on.
 */
export class PoisonMessageError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'PoisonMessageError';
  }
}

export const HEADER = {
  messageId: 'message-id',
  messageType: 'message-type',
  contentType: 'content-type',
  deadLetterReason: 'dead-letter-reason',
  deadLetterConsumer: 'dead-letter-consumer',
  originalTopic: 'original-topic',
  originalPartition: 'original-partition',
  originalOffset: 'original-offset',
} as const;
