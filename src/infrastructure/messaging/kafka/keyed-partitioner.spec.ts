import { Message, PartitionMetadata, Partitioners } from 'kafkajs';
import { KeyedPartitioner } from './keyed-partitioner';

const partitions = (count: number, leaderless: number[] = []): PartitionMetadata[] =>
  Array.from({ length: count }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: leaderless.includes(partitionId) ? -1 : 0, replicas: [0], isr: [0] }));

describe('KeyedPartitioner', () => {
  const keys = Array.from({ length: 500 }, (_, i) => (i % 3 === 0 ? `connection-${i}` : `${i}-ü-€-${'x'.repeat(i % 40)}`));

  it("chooses the default partitioner's partition for every string key, first time and remembered, at any partition count", () => {
    const keyed = KeyedPartitioner();
    const plain = Partitioners.DefaultPartitioner();
    for (const count of [1, 3, 6, 7, 64]) {
      const partitionMetadata = partitions(count);
      for (let round = 0; round < 2; round++) {
        for (const key of keys) {
          const args = { topic: 't', partitionMetadata, message: { key, value: 'v' } };
          expect(keyed(args)).toBe(plain(args));
        }
      }
    }
  });

  it('gives a key its partition for the count asked about, when the same key was seen with another count', () => {
    const keyed = KeyedPartitioner();
    const plain = Partitioners.DefaultPartitioner();
    const message: Message = { key: 'connection-42', value: 'v' };
    const at = (count: number) => ({ topic: 't', partitionMetadata: partitions(count), message });
    const seen = [3, 6, 3, 12, 6].map((count) => keyed(at(count)));
    expect(seen).toEqual([3, 6, 3, 12, 6].map((count) => plain(at(count))));
    expect(new Set(seen).size).toBeGreaterThan(1);
  });

  it('returns a partition the message names, whatever its key', () => {
    const keyed = KeyedPartitioner();
    expect(keyed({ topic: 't', partitionMetadata: partitions(6), message: { key: 'connection-1', value: 'v', partition: 4 } })).toBe(4);
    expect(keyed({ topic: 't', partitionMetadata: partitions(6), message: { key: 'connection-1', value: 'v', partition: 0 } })).toBe(0);
  });

  it('leaves buffer keys to the default partitioner, and spreads keyless messages over partitions with a leader', () => {
    const keyed = KeyedPartitioner();
    const plain = Partitioners.DefaultPartitioner();
    const buffer = { topic: 't', partitionMetadata: partitions(6), message: { key: Buffer.from('connection-1'), value: 'v' } };
    expect(keyed(buffer)).toBe(plain(buffer));
    const chosen = new Set(Array.from({ length: 60 }, () => keyed({ topic: 't', partitionMetadata: partitions(6, [1, 4]), message: { value: 'v' } })));
    expect([...chosen].sort()).toEqual([0, 2, 3, 5]);
  });
});
