import { connect } from 'node:net';
import { Injectable, Logger } from '@nestjs/common';
import { Admin, ConfigResourceTypes, Kafka, logLevel, LogEntry, PartitionMetadata, Producer } from 'kafkajs';
import { TopicNames } from '../topics';
import { ReplicationSettings, replicationFor, writeProblems } from './replication';
import { KeyedPartitioner } from './keyed-partitioner';
// Every consumer this client makes runs on the guarded runner, and every connection on the
// fixed request queue (see the files).
import './kafkajs-stop-guard';
import './kafkajs-request-queue-timer';

export interface KafkaSettings extends ReplicationSettings {
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

/** The connection to the broker: one producer (not idempotent, see producer()), one admin, consumers on demand. */
@Injectable()
export class KafkaClient {
  private readonly logger = new Logger('Kafka');
  readonly kafka: Kafka;
  // Promises, not instances: two callers racing before the first connect share one connection
  // instead of leaking a second producer that close() never disconnects.
  private producerConnection: Promise<Producer> | undefined;
  private adminConnection: Promise<Admin> | undefined;
  /** The topics this service ensured, with each one's `min.insync.replicas` as the broker has it. */
  private readonly minInSync = new Map<string, number>();
  /** Each topic's partitions, for choosing a message's partition (acknowledged-send.ts); read again after PARTITIONS_MAX_AGE_MS. */
  private readonly partitions = new Map<string, { at: number; partitions: Promise<PartitionMetadata[]> }>();

  constructor(
    readonly settings: KafkaSettings,
    readonly topics: TopicNames,
  ) {
    this.kafka = new Kafka({
      clientId: settings.clientId,
      brokers: settings.brokers,
      connectionTimeout: 3_000,
      // A broker that stops answering (paused, cut off) holds a produce request this long before
      // it is retried; Kafka's own default (30 s) held the relay half a minute per attempt.
      requestTimeout: 10_000,
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
    // Not idempotent: kafkajs 2.2.4 takes a partition's sequence numbers back when a request fails
    // on its side (timed out, connection closed) although the broker may have written it; the next
    // batch of the same size then reuses them, and the broker answers it "written" with the
    // earlier batch's offset, as a duplicate, without writing it (a loss no answer shows; otherwise
    // OUT_OF_ORDER_SEQUENCE_NUMBER on every later send). Measured: bench/kafka-acks.ts. Without
    // sequence numbers a retry can only duplicate, which consumers drop by message id.
    // One request in flight per broker: a retry is written before anything sent after it, so a
    // partition's first copies keep their order.
    this.producerConnection ??= this.connect(
      // kafkajs retries a timed-out produce request to the leader it knew, reading metadata again
      // only once it is older than `metadataMaxAge`: kept short, a retry finds the new leader.
      this.kafka.producer({
        idempotent: false,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        metadataMaxAge: PRODUCER_METADATA_MAX_AGE_MS,
        createPartitioner: KeyedPartitioner,
      }),
      () => (this.producerConnection = undefined),
    );
    return this.producerConnection;
  }

  /** The topic's partitions, as the broker last said (kept PARTITIONS_MAX_AGE_MS, as a producer keeps its metadata). */
  partitionsOf(topic: string): Promise<PartitionMetadata[]> {
    const known = this.partitions.get(topic);
    if (known && Date.now() - known.at < PARTITIONS_MAX_AGE_MS) return known.partitions;
    const partitions = this.admin().then(async (admin) => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions ?? []);
    this.partitions.set(topic, { at: Date.now(), partitions });
    // A failed read is not kept: the next send asks again.
    partitions.catch(() => this.partitions.get(topic)?.partitions === partitions && this.partitions.delete(topic));
    return partitions;
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

  /**
   * Creates the logical topics that are missing, replicated as the settings and the cluster's
   * size say (replication.ts); existing ones are left as they are, with a warning when they have
   * fewer replicas than wanted. Learns each topic's `min.insync.replicas` for `writeProblems`.
   */
  async ensureTopics(logical: string[]): Promise<void> {
    const admin = await this.admin();
    const { brokers } = await admin.describeCluster();
    const replication = replicationFor(brokers.length, this.settings);
    if ('error' in replication) throw new Error(replication.error);
    const wanted = [...new Set(logical.map((t) => this.topics.physical(t)))];
    const existing = new Set(await admin.listTopics());
    const missing = wanted.filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({
        // Waited for below: kafkajs's own wait asks one broker, and gives up at once when that
        // broker does not know the new topic yet ("This server does not host this topic-partition").
        waitForLeaders: false,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: this.settings.topicPartitions,
          replicationFactor: replication.replicationFactor,
          configEntries: [{ name: 'min.insync.replicas', value: String(replication.minInSyncReplicas) }],
        })),
      });
      this.logger.log(
        `created topics ${missing.join(', ')} (replication factor ${replication.replicationFactor}, min.insync.replicas ${replication.minInSyncReplicas})`,
      );
    }
    // Read until every partition of a topic just created has a leader; the same read tells the replicas.
    const created = new Set(missing);
    const metadata = await whileUnknown(async () => {
      const read = await admin.fetchTopicMetadata({ topics: wanted });
      const leaderless = read.topics.filter((t) => created.has(t.name) && (t.partitions.length === 0 || t.partitions.some((p) => p.leader < 0)));
      if (leaderless.length > 0) {
        throw Object.assign(new Error(`topics ${leaderless.map((t) => t.name).join(', ')} have partitions without a leader yet`), { type: 'LEADER_NOT_AVAILABLE' });
      }
      return read;
    });
    for (const topic of metadata.topics) {
      const replicas = Math.min(...topic.partitions.map((p) => p.replicas.length));
      if (replicas < replication.replicationFactor) {
        this.logger.warn(`topic ${topic.name} has ${replicas} replica(s) per partition, fewer than the ${replication.replicationFactor} wanted: it was made before; reassign its partitions to replicate it`);
      }
    }
    const configs = await whileUnknown(() =>
      admin.describeConfigs({
        includeSynonyms: false,
        resources: wanted.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['min.insync.replicas'] })),
      }),
    );
    for (const resource of configs.resources) {
      const entry = resource.configEntries.find((e) => e.configName === 'min.insync.replicas');
      this.minInSync.set(resource.resourceName, Number(entry?.configValue ?? 1));
    }
  }

  /**
   * Why the service's topics cannot take writes now (no leader, or fewer replicas in sync than
   * `min.insync.replicas`: with `acks=all` the broker refuses such writes); empty when they can.
   * Each leader and in-sync broker must also answer now: without a controller quorum the
   * metadata stops changing and keeps dead brokers as leaders and in sync (replication.ts).
   */
  async writeProblems(timeoutMs = 2_000): Promise<string[]> {
    if (this.minInSync.size === 0) return [];
    const admin = await this.admin();
    const [metadata, cluster] = await withTimeout(Promise.all([admin.fetchTopicMetadata({ topics: [...this.minInSync.keys()] }), admin.describeCluster()]), timeoutMs);
    const partitions = metadata.topics.flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.name, partition: p.partitionId, leader: p.leader, isr: p.isr })),
    );
    const needed = new Set(partitions.flatMap((p) => [p.leader, ...p.isr]));
    // A broker the cluster no longer lists is not asked, and so counts as not answering.
    const answering = new Set<number>();
    await Promise.all(
      cluster.brokers
        .filter((b) => needed.has(b.nodeId))
        .map(async (b) => {
          if (await brokerAnswers(b.host, b.port, timeoutMs)) answering.add(b.nodeId);
        }),
    );
    return writeProblems(partitions, (topic) => this.minInSync.get(topic) ?? 1, (broker) => answering.has(broker));
  }

  /** Answers whether the broker responds within `timeoutMs`; for readiness. */
  async ping(timeoutMs = 2_000): Promise<void> {
    const admin = await this.admin();
    await withTimeout(admin.describeCluster(), timeoutMs);
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

const PARTITIONS_MAX_AGE_MS = 60_000;
const PRODUCER_METADATA_MAX_AGE_MS = 10_000;

/**
 * `read` again while the broker asked does not know the topics yet, or they have no leader yet:
 * a new topic reaches the brokers' metadata one by one, a moment after it is created.
 */
export async function whileUnknown<T>(read: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await read();
    } catch (error) {
      const type = (error as { type?: string }).type;
      if (Date.now() >= deadline || (type !== 'UNKNOWN_TOPIC_OR_PARTITION' && type !== 'LEADER_NOT_AVAILABLE')) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** The promise's answer, or an error once `timeoutMs` has passed without one. */
async function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Kafka did not answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** ApiVersions v0 (key 18), correlation id 1, client id "readiness": the smallest request every broker answers. */
const API_VERSIONS_REQUEST = (() => {
  const clientId = Buffer.from('readiness');
  const request = Buffer.alloc(14 + clientId.length);
  request.writeInt32BE(10 + clientId.length, 0);
  request.writeInt16BE(18, 4);
  request.writeInt16BE(0, 6);
  request.writeInt32BE(1, 8);
  request.writeInt16BE(clientId.length, 12);
  clientId.copy(request, 14);
  return request;
})();

/**
 * Whether the broker answers a request within `timeoutMs`, on a connection of its own so a
 * stuck one of the client's cannot hide it. Connecting is not enough: a paused broker's kernel
 * still accepts connections. Plaintext, as the service's client speaks to its brokers.
 */
function brokerAnswers(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let received = Buffer.alloc(0);
    const done = (answered: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answered);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => socket.write(API_VERSIONS_REQUEST));
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      // Size, then the correlation id sent: a Kafka broker's answer, whatever it says.
      if (received.length >= 8) done(received.readInt32BE(4) === 1);
    });
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}
