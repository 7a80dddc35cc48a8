import { Injectable, Logger } from '@nestjs/common';
import { Admin, Kafka, logLevel, LogEntry, Producer } from 'kafkajs';
import { TopicNames } from '../topics';

export interface KafkaSettings {
  brokers: string[];
  clientId: string;
  topicPartitions: number;
}

export const KAFKA_SETTINGS = Symbol('KafkaSettings');

const toNestLevel = (level: logLevel): 'error' | 'warn' | 'log' | 'debug' => {
  switch (level) {
    case logLevel.ERROR:
    case logLevel.NOTHING:
      return 'error';
    case logLevel.WARN:
      return 'warn';
    case logLevel.INFO:
      return 'log';
    default:
      return 'debug';
  }
};

/** The connection to the broker: one idempotent producer, one admin, consumers on demand. */
@Injectable()
export class KafkaClient {
  private readonly logger = new Logger('Kafka');
  readonly kafka: Kafka;
  // Promises, not instances: two callers racing before the first connect share one connection
  // instead of leaking a second producer that close() never disconnects.
  private producerConnection: Promise<Producer> | undefined;
  private adminConnection: Promise<Admin> | undefined;

  constructor(
    readonly settings: KafkaSettings,
    readonly topics: TopicNames,
  ) {
    this.kafka = new Kafka({
      clientId: settings.clientId,
      brokers: settings.brokers,
      connectionTimeout: 3_000,
      requestTimeout: 30_000,
      retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 10_000 },
      logLevel: logLevel.WARN,
      logCreator:
        () =>
        ({ namespace, level, log }: LogEntry) => {
          const { message, ...extra } = log;
          this.logger[toNestLevel(level)](`${namespace}: ${message} ${JSON.stringify(extra)}`);
        },
    });
  }

  producer(): Promise<Producer> {
    // Idempotent with one request in flight: retries never duplicate or reorder a partition.
    this.producerConnection ??= this.connect(
      this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false }),
      () => (this.producerConnection = undefined),
    );
    return this.producerConnection;
  }

  admin(): Promise<Admin> {
    this.adminConnection ??= this.connect(this.kafka.admin(), () => (this.adminConnection = undefined));
    return this.adminConnection;
  }

  /** Connects; a failed connect is forgotten so the next call tries again. */
  private async connect<T extends Producer | Admin>(client: T, forget: () => void): Promise<T> {
    try {
      await client.connect();
      return client;
    } catch (error) {
      forget();
      throw error;
    }
  }

  /** Creates the logical topics that are missing; existing ones are left as they are. */
  async ensureTopics(logical: string[]): Promise<void> {
    const admin = await this.admin();
    const existing = new Set(await admin.listTopics());
    const missing = [...new Set(logical.map((t) => this.topics.physical(t)))].filter((t) => !existing.has(t));
    if (missing.length === 0) return;
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((topic) => ({ topic, numPartitions: this.settings.topicPartitions })),
    });
    this.logger.log(`created topics ${missing.join(', ')}`);
  }

  /** Answers whether the broker responds within `timeoutMs`; for readiness. */
  async ping(timeoutMs = 2_000): Promise<void> {
    const admin = await this.admin();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        admin.describeCluster(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`Kafka did not answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    const connections = [this.producerConnection, this.adminConnection];
    this.producerConnection = undefined;
    this.adminConnection = undefined;
    for (const connection of connections) {
      // A connection that never came up has nothing to disconnect.
      const client = await connection?.catch(() => undefined);
      await client?.disconnect();
    }
  }
}
