import { Injectable, Logger } from '@nestjs/common';
import { Consumer, EachBatchPayload, IHeaders, KafkaMessage } from 'kafkajs';
import { isStorableText, toStorableText } from '../../../domain/shared/hostile-input';
import { isDatabaseUnavailableError, isTransientDatabaseError } from '../../database/transient-errors';
import { Metrics } from '../../observability/metrics';
import { GroupCommit } from '../../scheduling/group-commit';
import { MessageProcessor, ProcessOutcome } from '../inbox/message-processor';
import { InboundMessage, MessageHandler, MessageHeaders } from '../message';
import { MessageHandlerRegistry } from '../message-handler-registry';
import { KafkaClient } from './kafka-client';

export interface KafkaConsumerSettings {
  groupId: string;
  /** Partitions processed at once; a partition stuck on a transient failure blocks only itself. */
  partitionsConsumedConcurrently: number;
  /**
   * Consecutive messages of a partition applied in one transaction (1: each in its own). Bounds
   * how long a transaction holds its locks and how much a transient failure sends back to
   * one-by-one processing. Default 500.
   */
  batchMax?: number;
  /**
   * A transaction that has run this long commits after the message in progress, even short of
   * `batchMax`: bounds how long a batch holds its locks and delays its messages; default 100 ms.
   */
  batchMaxMs?: number;
  /** How long the group waits for a silent member (a killed process) before giving its partitions to others; default 30 s. */
  sessionTimeoutMs?: number;
  /**
   * A broker answers a fetch once this many bytes wait on its partitions (Kafka's
   * `fetch.min.bytes`), or after `fetchMaxWaitMs`: keeping up, each fetch then brings what
   * arrived in the wait, applied in one transaction instead of several small ones. Default 1.
   */
  fetchMinBytes?: number;
  /** The longest a broker holds a fetch for `fetchMinBytes` (Kafka's `fetch.max.wait.ms`); default 100 ms. */
  fetchMaxWaitMs?: number;
}

export const KAFKA_CONSUMER_SETTINGS = Symbol('KafkaConsumerSettings');

/** Set-wise transactions of one handler at once (GroupCommit); partitions beyond it wait and join. */
const TRANSACTIONS_AT_ONCE = 3;

/** Runs of a batch that failed transiently before its messages are applied one by one. */
const BATCH_ATTEMPTS = 3;

/** The longest wait between runs of a batch while the database is unavailable. */
const UNAVAILABLE_RETRY_MAX_MS = 5_000;

/**
 * A producer may send any bytes; PostgreSQL stores no U+0000 (invalid UTF-8 already decodes to
 * U+FFFD). Such a message is kept with U+FFFD in place of each NUL, marked to be dead-lettered:
 * it cannot be applied as sent, and must not stop the partition.
 */
export function storableInbound(message: InboundMessage): InboundMessage {
  const texts = [message.key ?? '', message.value, ...Object.entries(message.headers).flat()];
  if (texts.every(isStorableText)) return message;
  return {
    ...message,
    key: message.key === null ? null : toStorableText(message.key),
    value: toStorableText(message.value),
    headers: Object.fromEntries(Object.entries(message.headers).map(([name, value]) => [toStorableText(name), toStorableText(value)])),
    unreadable: 'the message holds U+0000 (in its key, body or headers), which cannot be stored; it is kept with U+FFFD in its place',
  };
}

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
 * redelivers and the inbox drops what was already applied. A fetched batch is applied in runs of
 * up to `batchMax` messages (MessageProcessor.processBatch); a set-wise handler's runs from the
 * partitions of one fetch share a transaction through a group commit. A run that fails
 * transiently is tried again as a whole, then message by message, each retried with backoff in
 * place (keeping the partition's order); poison goes to the dead letters.
 */
@Injectable()
export class KafkaConsumerRunner {
  private readonly logger = new Logger(KafkaConsumerRunner.name);
  private consumer: Consumer | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;
  private readonly groupCommits = new Map<MessageHandler, GroupCommit<InboundMessage, ProcessOutcome>>();
  /** Backoff sleeps in progress; stop() cuts them short instead of waiting up to 10 s. */
  private readonly sleepers = new Set<() => void>();
  /**
   * Batches being applied, by any consumer this runner made (a crashed one's too): stop() waits
   * for them itself rather than trust the client's disconnect to, so that once it resolves no
   * transaction of this runner's is still going to commit.
   */
  private readonly inFlight = new Set<Promise<void>>();
  private heartbeatIntervalMs = 3_000;
  /** Crashes of this runner's consumers, and consumers started after one, since it was made. */
  crashes = 0;
  /** Why the consumer last crashed (what the warning said), for whoever watches it. */
  lastCrash: string | undefined;
  restarts = 0;

  constructor(
    private readonly client: KafkaClient,
    private readonly registry: MessageHandlerRegistry,
    private readonly processor: MessageProcessor,
    private readonly settings: KafkaConsumerSettings,
    private readonly metrics?: Metrics,
  ) {}

  async start(): Promise<void> {
    const topics = this.registry.topics();
    if (topics.length === 0 || this.consumer) return;
    this.stopped = false;
    const sessionTimeoutMs = this.settings.sessionTimeoutMs ?? 30_000;
    // Kafka's rule of thumb: at most a third of the session timeout.
    this.heartbeatIntervalMs = Math.min(3_000, Math.floor(sessionTimeoutMs / 3));
    const consumer = this.client.kafka.consumer({
      groupId: this.settings.groupId,
      sessionTimeout: sessionTimeoutMs,
      heartbeatInterval: this.heartbeatIntervalMs,
      minBytes: this.settings.fetchMinBytes ?? 1,
      maxWaitTimeInMs: this.settings.fetchMaxWaitMs ?? 100,
      allowAutoTopicCreation: false,
      // kafkajs restarts a crashed consumer once, from a timer whose failure nobody sees (a
      // broker still down then leaves the consumer dead, its partitions unread); this runner
      // restarts it itself until it is back (restartAfterCrash).
      retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) },
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => void this.restartAfterCrash(consumer, payload.error));
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
        eachBatch: (payload) => this.tracked(this.consumeBatch(payload)),
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

  /**
   * A crashed consumer (a broker gone longer than the client's retries, a coordinator lost
   * mid-rebalance) is replaced by a new one, tried with a growing pause until it joins the
   * group; its partitions resume from the committed offsets (the inbox drops what was applied).
   */
  private async restartAfterCrash(crashed: Consumer, error: Error): Promise<void> {
    if (this.stopped || this.consumer !== crashed) return;
    this.crashes++;
    this.lastCrash = String(error?.message ?? error);
    this.logger.warn(`the Kafka consumer crashed (${error?.message ?? error}); starting a new one`);
    this.consumer = undefined;
    this.starting = undefined;
    await crashed.disconnect().catch(() => undefined);
    for (let pause = 1_000; !this.stopped; pause = Math.min(pause * 2, 10_000)) {
      await this.sleep(pause);
      if (this.stopped || this.consumer) return;
      try {
        await this.start();
        this.restarts++;
        this.metrics?.consumerRestarts.inc();
        return;
      } catch (restartError) {
        this.logger.warn(`restarting the Kafka consumer failed (${(restartError as Error).message}); trying again in ${Math.min(pause * 2, 10_000)} ms`);
      }
    }
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
    if (this.inFlight.size > 0) {
      this.logger.warn(`the Kafka consumer disconnected with ${this.inFlight.size} batch(es) still being applied; waiting for them`);
      await Promise.allSettled([...this.inFlight]);
    }
  }

  private tracked(batch: Promise<void>): Promise<void> {
    this.inFlight.add(batch);
    const forget = () => this.inFlight.delete(batch);
    batch.then(forget, forget);
    return batch;
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
    const size = Math.max(1, this.settings.batchMax ?? 500);
    // kafkajs sends a heartbeat only when asked. A transaction that outlasts the session timeout
    // (a loaded host, a lock held by other work) would get this member evicted, and what it
    // applied since the last commit redelivered: while the batch is applied, ask on the interval.
    // A failed heartbeat (the group rebalancing) ends the batch at the next message, so the group
    // waits for this member no longer than it must; kafkajs has committed what was resolved.
    let heartbeatFailed = false;
    const keepAlive = setInterval(() => void heartbeat().catch(() => (heartbeatFailed = true)), this.heartbeatIntervalMs);
    const stop = () => this.stopped || heartbeatFailed || !isRunning() || isStale();
    try {
      for (let at = 0; at < batch.messages.length; ) {
        if (stop()) break;
        const run = batch.messages.slice(at, at + size).map((raw) => this.toInbound(topic, batch.partition, raw));
        const applied = await this.applyRun(handlers, run, resolveOffset, heartbeat, isRunning, stop);
        if (applied === 0) break;
        at += applied;
      }
    } finally {
      clearInterval(keepAlive);
    }
    if (this.stopped || !isRunning()) {
      // kafkajs does not commit on disconnect and the interval may not have elapsed: commit what
      // was applied now, or a restart redelivers it (harmless thanks to the inbox, but wasteful).
      await commitOffsetsIfNecessary(uncommittedOffsets());
    } else {
      await commitOffsetsIfNecessary();
    }
  }

  /**
   * Applies the start of a run of messages (one transaction per handler, which may commit before
   * the end of the run: BatchLimits) and resolves their offsets; answers how many messages were
   * applied, 0 when shutting down (what is not resolved is redelivered). A handler whose batch
   * failed gets the messages one by one, each retried until it is applied.
   */
  private async applyRun(
    handlers: readonly MessageHandler[],
    run: InboundMessage[],
    resolveOffset: (offset: string) => void,
    heartbeat: () => Promise<void>,
    isRunning: () => boolean,
    stop: () => boolean,
  ): Promise<number> {
    let length = run.length;
    let oneByOne: MessageHandler[] = [...handlers];
    if (run.length > 1) {
      oneByOne = [];
      for (const [i, handler] of handlers.entries()) {
        for (let attempt = 1; ; attempt++) {
          try {
            // The first handler decides where the batch ends; the others apply exactly as many.
            const outcomes = handler.handleBatch
              ? await this.groupCommitOf(handler).submit(run.slice(0, length))
              : await this.processor.processBatch(handler, run.slice(0, length), i === 0 ? { stop, maxMs: this.settings.batchMaxMs ?? 100 } : {});
            length = outcomes.length;
            break;
          } catch (error) {
            if (this.stopped || !isRunning()) return 0;
            // The database away (a restart, a failover, a pooler that cannot log in): nothing in
            // the batch failed, so one by one would isolate nothing and only apply it slower once
            // the database is back. The batch as a whole again, until it answers.
            if (isDatabaseUnavailableError(error)) {
              const delay = Math.min(UNAVAILABLE_RETRY_MAX_MS, 100 * 2 ** Math.min(attempt, 6));
              if (attempt === 1 || delay === UNAVAILABLE_RETRY_MAX_MS) {
                this.logger.warn(`${handler.consumer}: the database is unavailable (attempt ${attempt}), applying the batch of ${length} again in ${delay} ms: ${(error as Error).message}`);
              }
              await this.sleep(delay);
              if (this.stopped || !isRunning()) return 0;
              await heartbeat();
              continue;
            }
            // A deadlock with other work, a timeout: the batch as a whole again, a few times.
            if (isTransientDatabaseError(error) && attempt < BATCH_ATTEMPTS) {
              await this.sleep(50 * attempt);
              continue;
            }
            this.logger.warn(`${handler.consumer}: a batch of ${length} failed, applying it one by one: ${(error as Error).message}`);
            oneByOne.push(handler);
            break;
          }
        }
      }
    }
    if (oneByOne.length === 0) {
      resolveOffset(run[length - 1].offset!);
      await heartbeat();
      return length;
    }
    // One by one: a message at a time, so the failure is retried in place, in order.
    let applied = 0;
    for (const message of run.slice(0, length)) {
      for (const handler of oneByOne) {
        if (!(await this.applyWithRetry(handler.consumer, () => this.processor.process(handler, message), isRunning))) return applied;
      }
      resolveOffset(message.offset!);
      await heartbeat();
      applied++;
      // Shutting down between messages: what is applied is resolved, the rest is redelivered.
      if (stop()) break;
    }
    return applied;
  }

  /**
   * A set-wise handler's runs go through a group commit: the runs of partitions fetched together
   * (each small under a moderate load) are applied in one transaction, up to `batchMax` messages,
   * with at most as many transactions at once as partitions were consumed at once before.
   */
  private groupCommitOf(handler: MessageHandler): GroupCommit<InboundMessage, ProcessOutcome> {
    let commit = this.groupCommits.get(handler);
    if (!commit) {
      commit = new GroupCommit(
        async (runs) => {
          const outcomes = await this.processor.processBatch(handler, runs.flat());
          let at = 0;
          return runs.map((run) => outcomes.slice(at, (at += run.length)));
        },
        { maxItems: Math.max(1, this.settings.batchMax ?? 500), concurrency: TRANSACTIONS_AT_ONCE },
      );
      this.groupCommits.set(handler, commit);
    }
    return commit;
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
    const message: InboundMessage = {
      topic,
      key: raw.key?.toString() ?? null,
      value: raw.value?.toString() ?? '',
      headers: headersOf(raw.headers),
      partition,
      offset: raw.offset,
    };
    return storableInbound(message);
  }
}
