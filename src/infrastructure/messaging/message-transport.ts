import { MessageHeaders } from './message';

/** A committed outbox message on its way out. */
export interface RelayedMessage {
  messageId: string;
  topic: string;
  key: string;
  type: string;
  /** The payload as the JSON text it was written as: sent as it is. */
  value: string;
  headers: MessageHeaders;
}

/** Where the outbox relay delivers: Kafka in production, the in-process consumers when embedded. */
export interface MessageTransport {
  /** Resolves once every message is durably handed over, in order; throws to have all retried. */
  publish(messages: RelayedMessage[]): Promise<void>;
}

export const MESSAGE_TRANSPORT = Symbol('MessageTransport');
