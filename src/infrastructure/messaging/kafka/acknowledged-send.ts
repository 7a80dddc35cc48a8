import { CompressionTypes, Message, PartitionerArgs, Partitioners, Producer, RecordMetadata, TopicMessages } from 'kafkajs';
import { KeyedPartitioner } from './keyed-partitioner';

/** The partitions of a topic as the partitioner needs them (their ids and leaders). */
export type PartitionsOf = (topic: string) => Promise<PartitionerArgs['partitionMetadata']>;

/** One topic-partition's messages, in the order given. */
export interface PartitionMessages {
  topic: string;
  partition: number;
  messages: Message[];
}

export interface AcknowledgedSendOptions {
  partitioner?: ReturnType<typeof Partitioners.DefaultPartitioner>;
  /** Told of each round's partitions that kafkajs resolved without a broker's answer for them, before they are sent again. */
  onUnanswered?: (unanswered: PartitionMessages[]) => void;
}

/** Sends of a partition left unanswered before the whole send fails (the relay then retries it). */
export const UNANSWERED_ATTEMPTS = 5;

/**
 * Sends with acks=all and resolves only once a broker has answered for every topic-partition
 * sent: kafkajs's own resolution is not trusted, its answers are.
 *
 * kafkajs 2.2.4 can resolve a send with partitions that no broker answered for, so they were
 * never written (producer/sendMessages.js: a retry goes only to the brokers without an answer
 * yet; a partition whose leader moved to a broker that already answered is sent nowhere again,
 * tulios/kafkajs#1798). Measured on the three-broker cluster with a leader SIGKILLed
 * (bench/kafka-acks.ts): every message a plain `send` lost was in a partition missing from the
 * answers, so each answer is checked here and the partitions without one are sent again, in a
 * new send (a fresh retry state), until all have one or UNANSWERED_ATTEMPTS have passed.
 *
 * A broker answering with error code 0 for a partition under acks=all has the batch in the log
 * of every in-sync replica (at least min.insync.replicas of them). The producer must not be
 * idempotent (kafka-client.ts): kafkajs then reuses sequence numbers and the broker answers
 * "written" for batches it dropped as duplicates, which no check of the answers can see.
 *
 * A partition sent again may already hold the batch (an earlier attempt whose answer was lost):
 * that is a duplicate, which consumers drop by message id (the inbox). Each partition's messages
 * go in one batch, in order, and nothing newer is sent before they are answered, so the first
 * copy of each message keeps its order.
 *
 * Partitions are chosen as kafkajs's own default partitioner chooses them (murmur2 of the key, as
 * the Java client; KeyedPartitioner remembers them), so a key lands where a plain `send` would
 * put it, and a partition sent again holds the same messages.
 */
export async function sendAcknowledged(
  producer: Producer,
  partitionsOf: PartitionsOf,
  topicMessages: readonly TopicMessages[],
  { partitioner = DEFAULT_PARTITIONER, onUnanswered }: AcknowledgedSendOptions = {},
): Promise<RecordMetadata[]> {
  let pending: PartitionMessages[] = [];
  for (const { topic, messages } of topicMessages) {
    if (messages.length === 0) continue;
    const partitionMetadata = await partitionsOf(topic);
    if (partitionMetadata.length === 0) throw new Error(`Kafka topic ${topic} has no partitions`);
    const byPartition = new Map<number, Message[]>();
    for (const message of messages) {
      const partition = partitioner({ topic, partitionMetadata, message });
      const list = byPartition.get(partition) ?? [];
      list.push({ ...message, partition });
      byPartition.set(partition, list);
    }
    for (const [partition, list] of byPartition) pending.push({ topic, partition, messages: list });
  }
  const answers: RecordMetadata[] = [];
  if (pending.length === 0) return answers;
  for (let attempt = 1; ; attempt++) {
    const said = await producer.sendBatch({
      topicMessages: pending.map(({ topic, messages }) => ({ topic, messages })),
      acks: -1,
      compression: CompressionTypes.None,
    });
    // kafkajs throws on a partition's error code; only answered partitions are in `said`.
    const answered = new Set(said.filter((r) => r.errorCode === 0).map((r) => `${r.topicName}\u0000${r.partition}`));
    answers.push(...said);
    pending = pending.filter((p) => !answered.has(`${p.topic}\u0000${p.partition}`));
    if (pending.length === 0) return answers;
    if (attempt >= UNANSWERED_ATTEMPTS) {
      throw new Error(`Kafka acknowledged no write for ${pending.map((p) => `${p.topic} partition ${p.partition}`).join(', ')} after ${UNANSWERED_ATTEMPTS} sends`);
    }
    onUnanswered?.(pending);
  }
}

const DEFAULT_PARTITIONER = KeyedPartitioner();
