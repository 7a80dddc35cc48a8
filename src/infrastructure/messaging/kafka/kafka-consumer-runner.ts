import { Injectable, Logger } from '@nestjs/common';
import { Consumer, EachBatchPayload, IHeaders, KafkaMessage } from 'kafkajs';
import { MessageProcessor } from '../inbox/message-processor';
import { InboundMessage, MessageHeaders } from '../message';
import { MessageHandlerRegistry } from '../message-handler-registry';
import { KafkaClient } from './kafka-client';

export interface KafkaConsumerSettings {
  groupId: string;
  /** Partitions processed at once; a partition stuck on a transient failure blocks only itself. */
  partitionsConsumedConcurrently: number;
}

export const KAFKA_CONSUMER_SETTINGS = Symbol('KafkaConsumerSettings');

const headersOf = (headers: IHeaders | undefined): MessageHeaders => {
  const out: MessageHeaders = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.map(String).join(',') : value.toString();
  }
  return out;
};

/**
 * Runs the consumer group over every topic that has registered handlers. Each message is applied
 * through the inbox before its offset is resolved; offsets are committed after, so a crash
 * redelivers and the inbox drops what was already applied. Transient failures are retried with
 * backoff in place (keeping the partition's order); poison goes to the dead letters.
 */
@Injectable()
export class KafkaConsumerRunner {
  private readonly logger = new Logger(KafkaConsumerRunner.name);
  private consumer: Consumer | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;
  /** Backoff sleeps in progress; stop() cuts them short instead of waiting up to 10 s. */
  private readonly sleepers = new Set<() => void>();

  constructor(
    private readonly client: KafkaClient,
    private readonly registry: MessageHandlerRegistry,
    private readonly processor: MessageProcessor,
    private readonly settings: KafkaConsumerSettings,
  ) {}

  async start(): Promise<void> {
    const topics = this.registry.topics();
    if (topics.length === 0 || this.consumer) return;
    this.stopped = false;
    const consumer = this.client.kafka.consumer({
      groupId: this.settings.groupId,
      sessionTimeout: 30_000,
      heartbeatInterval: 3_000,
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
    });
    // Recorded before the first await: a second start() is a no-op, and a stop() that comes while
    // the broker is still being reached waits for it and then disconnects (no consumer outlives stop).
    this.consumer = consumer;
    this.starting = (async () => {
      await consumer.connect();
      await consumer.subscribe({ topics: topics.map((t) => this.client.topics.physical(t)), fromBeginning: true });
      await consumer.run({
        autoCommit: true,
        autoCommitInterval: 1_000,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.settings.partitionsConsumedConcurrently,
        eachBatch: (payload) => this.consumeBatch(payload),
      });
    })();
    try {
      await this.starting;
    } catch (error) {
      if (this.consumer === consumer) this.consumer = undefined;
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
    this.logger.log(`consuming ${topics.join(', ')} as group ${this.settings.groupId}`);
  }

  /** Stops fetching, lets the batch in flight finish, commits its offsets and leaves the group. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of [...this.sleepers]) wake();
    const consumer = this.consumer;
    const starting = this.starting;
    this.consumer = undefined;
    this.starting = undefined;
    await starting?.catch(() => undefined);
    await consumer?.disconnect();
  }

  private async consumeBatch({
    batch,
    resolveOffset,
    heartbeat,
    commitOffsetsIfNecessary,
    uncommittedOffsets,
    isRunning,
    isStale,
  }: EachBatchPayload): Promise<void> {
    const topic = this.client.topics.logical(batch.topic) ?? batch.topic;
    const handlers = this.registry.handlersFor(topic);
    messages: for (const raw of batch.messages) {
      if (!isRunning() || isStale() || this.stopped) break;
      const message = this.toInbound(topic, batch.partition, raw);
      for (const handler of handlers) {
        if (!(await this.applyWithRetry(handler.consumer, () => this.processor.process(handler, message), isRunning))) {
          break messages; // shutting down: leave the offset unresolved, the message is redelivered
        }
      }
      resolveOffset(raw.offset);
      await heartbeat();
    }
    if (this.stopped || !isRunning()) {
      // kafkajs does not commit on disconnect and the interval may not have elapsed: commit what
      // was applied now, or a restart redelivers it (harmless thanks to the inbox, but wasteful).
      await commitOffsetsIfNecessary(uncommittedOffsets());
    } else {
      await commitOffsetsIfNecessary();
    }
  }

  private async applyWithRetry(consumer: string, apply: () => Promise<unknown>, isRunning: () => boolean): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await apply();
        return true;
      } catch (error) {
        if (this.stopped || !isRunning()) return false;
        const delay = Math.min(10_000, 100 * 2 ** Math.min(attempt, 7));
        this.logger.warn(`${consumer}: transient failure (attempt ${attempt}), retrying in ${delay} ms: ${(error as Error).message}`);
        await this.sleep(delay);
        if (this.stopped || !isRunning()) return false;
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  private toInbound(topic: string, partition: number, raw: KafkaMessage): InboundMessage {
    return {
      topic,
      key: raw.key?.toString() ?? null,
      value: raw.value?.toString() ?? '',
      headers: headersOf(raw.headers),
      partition,
      offset: raw.offset,
    };
  }
}
