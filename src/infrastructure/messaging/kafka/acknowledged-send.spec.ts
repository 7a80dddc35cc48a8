import { Message, PartitionMetadata, Partitioners, Producer, ProducerBatch, RecordMetadata } from 'kafkajs';
import { PartitionMessages, sendAcknowledged, UNANSWERED_ATTEMPTS } from './acknowledged-send';

const partitionsOf = (count: number) => (): Promise<PartitionMetadata[]> =>
  Promise.resolve(Array.from({ length: count }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: partitionId % 3, replicas: [0, 1, 2], isr: [0, 1, 2] })));

/**
 * A producer that records each sendBatch and answers like kafkajs: one answer per partition
 * sent, except the partitions `drop` leaves out of a call's answer (as kafkajs 2.2.4 does when a
 * partition's leader moved to a broker that had already answered).
 */
function recordingProducer(drop: (call: number, topic: string, partition: number) => boolean = () => false): { producer: Producer; batches: ProducerBatch[] } {
  const batches: ProducerBatch[] = [];
  const producer = {
    sendBatch: (batch: ProducerBatch) => {
      batches.push(batch);
      const call = batches.length;
      const answers: RecordMetadata[] = [];
      for (const { topic, messages } of batch.topicMessages!) {
        for (const partition of new Set(messages.map((m) => m.partition!))) {
          if (!drop(call, topic, partition)) answers.push({ topicName: topic, partition, errorCode: 0, baseOffset: String(call * 1000) });
        }
      }
      return Promise.resolve(answers);
    },
  } as unknown as Producer;
  return { producer, batches };
}

const keyed = (n: number): Message[] => Array.from({ length: n }, (_, i) => ({ key: `connection-${i % 17}`, value: `m${i}` }));
const sentIn = (batch: ProducerBatch) => batch.topicMessages!.flatMap((t) => t.messages.map((m) => ({ topic: t.topic, partition: m.partition!, value: String(m.value) })));

describe('sendAcknowledged', () => {
  it('sends everything in one request, acknowledged by all in-sync replicas, when every partition is answered', async () => {
    const { producer, batches } = recordingProducer();
    const answers = await sendAcknowledged(producer, partitionsOf(6), [{ topic: 't', messages: keyed(200) }]);

    expect(batches).toHaveLength(1);
    expect(batches[0].acks).toBe(-1);
    expect(sentIn(batches[0])).toHaveLength(200);
    expect(new Set(answers.map((a) => a.partition)).size).toBe(6);
  });

  it("puts each key where kafkajs's default partitioner would, keeping each partition's messages in order", async () => {
    const { producer, batches } = recordingProducer();
    await sendAcknowledged(producer, partitionsOf(6), [{ topic: 't', messages: keyed(300) }]);

    const reference = Partitioners.DefaultPartitioner();
    const metadata = await partitionsOf(6)();
    for (const t of batches[0].topicMessages!) {
      for (const m of t.messages) expect(m.partition).toBe(reference({ topic: 't', partitionMetadata: metadata, message: { key: m.key, value: m.value } }));
    }
    const sent = sentIn(batches[0]);
    for (const partition of new Set(sent.map((s) => s.partition))) {
      const order = sent.filter((s) => s.partition === partition).map((s) => Number(s.value.slice(1)));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
  });

  it('sends again, and only, the partitions kafkajs resolved without an answer for, with the same messages in the same order', async () => {
    // The first call answers for every partition but 2 and 5 of topic t.
    const { producer, batches } = recordingProducer((call, topic, partition) => call === 1 && topic === 't' && (partition === 2 || partition === 5));
    const told: PartitionMessages[][] = [];
    const answers = await sendAcknowledged(producer, partitionsOf(6), [{ topic: 't', messages: keyed(300) }, { topic: 'u', messages: keyed(20) }], {
      onUnanswered: (unanswered) => told.push(unanswered),
    });

    expect(batches).toHaveLength(2);
    const first = sentIn(batches[0]);
    const again = sentIn(batches[1]);
    expect(new Set(again.map((s) => `${s.topic}/${s.partition}`))).toEqual(new Set(['t/2', 't/5']));
    for (const partition of [2, 5]) {
      expect(again.filter((s) => s.partition === partition)).toEqual(first.filter((s) => s.topic === 't' && s.partition === partition));
    }
    expect(told.map((t) => t.map((p) => `${p.topic}/${p.partition}`).sort())).toEqual([['t/2', 't/5']]);
    // One answer per partition sent, the unanswered ones from the second call.
    expect(answers.filter((a) => a.topicName === 't').map((a) => a.partition).sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('fails, naming them, when partitions stay unanswered, so the relay keeps the rows and retries', async () => {
    const { producer, batches } = recordingProducer((_call, _topic, partition) => partition === 4);
    await expect(sendAcknowledged(producer, partitionsOf(6), [{ topic: 't', messages: keyed(100) }])).rejects.toThrow(
      `Kafka acknowledged no write for t partition 4 after ${UNANSWERED_ATTEMPTS} sends`,
    );
    expect(batches).toHaveLength(UNANSWERED_ATTEMPTS);
  });

  it('keeps a partition the caller chose and sends every topic', async () => {
    const { producer, batches } = recordingProducer();
    await sendAcknowledged(producer, partitionsOf(3), [
      { topic: 'a', messages: [{ key: 'k', value: '1', partition: 2 }] },
      { topic: 'b', messages: [{ key: null, value: '2' }, { key: null, value: '3' }] },
      { topic: 'c', messages: [] },
    ]);
    const sent = sentIn(batches[0]);
    expect(sent.find((s) => s.topic === 'a')!.partition).toBe(2);
    expect(sent.filter((s) => s.topic === 'b')).toHaveLength(2);
    expect(sent.some((s) => s.topic === 'c')).toBe(false);
  });

  it('refuses a topic with no partitions instead of dropping its messages', async () => {
    const { producer } = recordingProducer();
    await expect(sendAcknowledged(producer, () => Promise.resolve([]), [{ topic: 'gone', messages: keyed(1) }])).rejects.toThrow('no partitions');
  });
});
