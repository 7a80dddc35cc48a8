import { Message, PartitionMetadata, Partitioners, Producer, ProducerBatch, ProducerRecord } from 'kafkajs';
import { sendPartitionWise } from './partition-wise-send';

const partitionsOf = (count: number, replicas = [0, 1, 2]) => (): Promise<PartitionMetadata[]> =>
  Promise.resolve(Array.from({ length: count }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: partitionId % 3, replicas, isr: replicas })));

/** A producer that records what it was asked to send and answers like a broker would. */
function recordingProducer(): { producer: Producer; sends: ProducerRecord[]; batches: ProducerBatch[] } {
  const sends: ProducerRecord[] = [];
  const batches: ProducerBatch[] = [];
  const producer = {
    send: (record: ProducerRecord) => {
      sends.push(record);
      return Promise.resolve(record.messages.map(() => ({ topicName: record.topic, partition: record.messages[0].partition!, errorCode: 0 })));
    },
    sendBatch: (batch: ProducerBatch) => {
      batches.push(batch);
      return Promise.resolve([]);
    },
  } as unknown as Producer;
  return { producer, sends, batches };
}

describe('sendPartitionWise', () => {
  const keyed = (n: number): Message[] => Array.from({ length: n }, (_, i) => ({ key: `connection-${i % 17}`, value: `m${i}` }));

  it('sends one request per partition, each with only that partition, acknowledged by all replicas', async () => {
    const { producer, sends } = recordingProducer();
    await sendPartitionWise(producer, partitionsOf(6), [{ topic: 't', messages: keyed(200) }]);

    const partitions = sends.map((s) => s.messages[0].partition);
    expect(new Set(partitions).size).toBe(sends.length);
    for (const send of sends) {
      expect(send.acks).toBe(-1);
      expect(new Set(send.messages.map((m) => m.partition)).size).toBe(1);
    }
    expect(sends.reduce((n, s) => n + s.messages.length, 0)).toBe(200);
  });

  it("puts each key where kafkajs's default partitioner would, keeping each partition's messages in order", async () => {
    const { producer, sends } = recordingProducer();
    const messages = keyed(300);
    await sendPartitionWise(producer, partitionsOf(6), [{ topic: 't', messages }]);

    const reference = Partitioners.DefaultPartitioner();
    const metadata = await partitionsOf(6)();
    for (const send of sends) {
      for (const m of send.messages) expect(m.partition).toBe(reference({ topic: 't', partitionMetadata: metadata, message: { key: m.key, value: m.value } }));
      const sent = send.messages.map((m) => Number(String(m.value).slice(1)));
      expect(sent).toEqual([...sent].sort((a, b) => a - b));
    }
  });

  it('keeps a partition the caller chose and sends every topic', async () => {
    const { producer, sends } = recordingProducer();
    await sendPartitionWise(producer, partitionsOf(3), [
      { topic: 'a', messages: [{ key: 'k', value: '1', partition: 2 }] },
      { topic: 'b', messages: [{ key: null, value: '2' }, { key: null, value: '3' }] },
      { topic: 'c', messages: [] },
    ]);
    expect(sends.find((s) => s.topic === 'a')!.messages[0].partition).toBe(2);
    expect(sends.filter((s) => s.topic === 'b').flatMap((s) => s.messages.map((m) => m.value))).toHaveLength(2);
    expect(sends.some((s) => s.topic === 'c')).toBe(false);
  });

  it('sends everything in one request when every partition has a single replica (no leader can move)', async () => {
    const { producer, sends, batches } = recordingProducer();
    await sendPartitionWise(producer, partitionsOf(6, [0]), [{ topic: 't', messages: keyed(50) }]);
    expect(sends).toEqual([]);
    expect(batches).toHaveLength(1);
    expect(batches[0].acks).toBe(-1);
    const sent = batches[0].topicMessages!.flatMap((t) => t.messages);
    expect(sent).toHaveLength(50);
    const reference = Partitioners.DefaultPartitioner();
    const metadata = await partitionsOf(6, [0])();
    for (const m of sent) expect(m.partition).toBe(reference({ topic: 't', partitionMetadata: metadata, message: { key: m.key, value: m.value } }));
  });

  it('refuses a topic with no partitions instead of dropping its messages', async () => {
    const { producer } = recordingProducer();
    await expect(sendPartitionWise(producer, () => Promise.resolve([]), [{ topic: 'gone', messages: keyed(1) }])).rejects.toThrow('no partitions');
  });
});
