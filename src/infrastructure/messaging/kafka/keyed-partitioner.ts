import { ICustomPartitioner, Partitioners } from 'kafkajs';

/** Keys whose partition one partitioner remembers; past this it forgets them all and starts again. */
const MAX_REMEMBERED_KEYS = 10_000;

/**
 * kafkajs's default partitioner (murmur2 of the key, as the Java client), with two costs taken
 * out of the relay's path, where every message passes through it twice (once to group the
 * messages per partition, once more inside kafkajs's send):
 * - a message that already names its partition gets it back at once: the default copies the
 *   topic's partition list before it looks;
 * - a string key's partition is remembered: murmur2 in kafkajs runs on 64-bit `Long` objects
 *   and allocates on every message, and a stream's keys (connection ids) are few.
 * A key's partition depends on the partition count, so that is part of what is remembered.
 */
export const KeyedPartitioner: ICustomPartitioner = () => {
  const fallback = Partitioners.DefaultPartitioner();
  const known = new Map<string, number>();
  return (args) => {
    const { message, partitionMetadata } = args;
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    if (typeof message.key !== 'string') return fallback(args);
    const remembered = `${partitionMetadata.length}:${message.key}`;
    let partition = known.get(remembered);
    if (partition === undefined) {
      partition = fallback(args);
      if (known.size >= MAX_REMEMBERED_KEYS) known.clear();
      known.set(remembered, partition);
    }
    return partition;
  };
};
