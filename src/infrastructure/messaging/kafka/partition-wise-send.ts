import { CompressionTypes, Message, PartitionerArgs, Partitioners, Producer, RecordMetadata, TopicMessages } from 'kafkajs';
import { KeyedPartitioner } from './keyed-partitioner';

/** The partitions of a topic as the partitioner needs them (their ids and leaders). */
export type PartitionsOf = (topic: string) => Promise<PartitionerArgs['partitionMetadata']>;

/**
 * Sends with one request per partition, each partition's messages in order, acknowledged by
 * all in-sync replicas.
 *
 * Why not one `sendBatch`: kafkajs 2.2.4 retries a send that spanned several brokers only
 * towards the brokers that have not answered yet. When a partition's leader moves to a broker
 * that already acknowledged its own partitions (a broker restarted, a rolling restart), that
 * partition's messages are never sent again and the send still resolves: they are lost
 * without an error (tulios/kafkajs#1798, not released). A request that names one partition
 * has one broker, so its retry always goes to the partition's current leader.
 *
 * Topics whose partitions have one replica each (a single broker) go in one request: their
 * leaders cannot move to another broker, and a request per partition cost the relay a round
 * trip per partition (a 60,000-event HRIS run: 1,078 against 1,242 events/s, bench/README.md).
 *
 * Partitions are chosen as kafkajs's own default partitioner chooses them (murmur2 of the key,
 * as the Java client; KeyedPartitioner remembers them), so a key lands where a plain `send` would
 * put it.
 */
export async function sendPartitionWise(
  producer: Producer,
  partitionsOf: PartitionsOf,
  topicMessages: readonly TopicMessages[],
  partitioner: ReturnType<typeof Partitioners.DefaultPartitioner> = DEFAULT_PARTITIONER,
): Promise<RecordMetadata[]> {
  const sends: { topic: string; messages: Message[] }[] = [];
  let replicated = false;
  for (const { topic, messages } of topicMessages) {
    if (messages.length === 0) continue;
    const partitionMetadata = await partitionsOf(topic);
    if (partitionMetadata.length === 0) throw new Error(`Kafka topic ${topic} has no partitions`);
    replicated ||= partitionMetadata.some((p) => p.replicas.length > 1);
    const byPartition = new Map<number, Message[]>();
    for (const message of messages) {
      const partition = partitioner({ topic, partitionMetadata, message });
      const list = byPartition.get(partition) ?? [];
      list.push({ ...message, partition });
      byPartition.set(partition, list);
    }
    for (const list of byPartition.values()) sends.push({ topic, messages: list });
  }
  if (sends.length === 0) return [];
  if (!replicated) {
    // One replica per partition (a single broker, as by default): no leader can move to another
    // broker, so one request for everything cannot lose a partition's messages.
    return producer.sendBatch({ topicMessages: sends, acks: -1, compression: CompressionTypes.None });
  }
  const answers = await Promise.all(sends.map((s) => producer.send({ ...s, acks: -1, compression: CompressionTypes.None })));
  return answers.flat();
}

const DEFAULT_PARTITIONER = KeyedPartitioner();
