/**
 * What a topic really holds, against what a producer was told it wrote: every message read back
 * from the brokers, never the client's word. For the cluster fault scenarios (bench/faults.ts),
 * the broker-kill benchmark (bench/kafka-acks.ts) and the relay test on the three-broker cluster
 * (test/e2e/kafka-cluster.e2e-spec.ts).
 */
import { randomBytes } from 'node:crypto';
import { Kafka } from 'kafkajs';

export interface LoggedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  /** The value's bytes in base64, so any payload (poison ones too) compares exactly. */
  value: string | null;
  headers: Record<string, string>;
}

/**
 * Every message of the topics, from the start of each partition to its end as the brokers give
 * it when this is called (a topic missing on the brokers reads as empty). One consumer of a
 * group of its own, deleted after.
 */
export async function readTopics(kafka: Kafka, topics: string[], timeoutMs = 120_000): Promise<LoggedMessage[]> {
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `read-back-${randomBytes(5).toString('hex')}`;
  const logged: LoggedMessage[] = [];
  try {
    const existing = new Set(await admin.listTopics());
    const wanted = topics.filter((t) => existing.has(t));
    /** Per topic-partition: the next offset to read, and the end to reach. */
    const left = new Map<string, { next: number; end: number }>();
    for (const topic of wanted) {
      for (const p of await admin.fetchTopicOffsets(topic)) {
        if (Number(p.high) > Number(p.low)) left.set(`${topic}\u0000${p.partition}`, { next: Number(p.low), end: Number(p.high) });
      }
    }
    if (left.size === 0) return logged;
    const done = () => [...left.values()].every((p) => p.next >= p.end);
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, maxWaitTimeInMs: 500 });
    await consumer.connect();
    try {
      for (const topic of wanted) await consumer.subscribe({ topic, fromBeginning: true });
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((finish, fail) => {
        timer = setTimeout(() => fail(new Error(`reading back ${wanted.join(', ')} did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
        consumer
          .run({
            eachBatch: async ({ batch }) => {
              for (const m of batch.messages) {
                const headers: Record<string, string> = {};
                for (const [name, value] of Object.entries(m.headers ?? {})) if (value !== undefined) headers[name] = String(value);
                logged.push({
                  topic: batch.topic,
                  partition: batch.partition,
                  offset: m.offset,
                  key: m.key === null ? null : m.key.toString(),
                  value: m.value === null ? null : m.value.toString('base64'),
                  headers,
                });
              }
              const last = batch.messages[batch.messages.length - 1];
              const place = left.get(`${batch.topic}\u0000${batch.partition}`);
              if (last && place) place.next = Math.max(place.next, Number(last.offset) + 1);
              if (done()) finish();
            },
          })
          .catch(fail);
      }).finally(() => clearTimeout(timer));
    } finally {
      await consumer.disconnect();
    }
    return logged;
  } finally {
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
}

/** A message as produced: its key and value (the value as sent, a string). */
export interface Produced {
  key: string | null;
  value: string;
}

const copyKey = (key: string | null, value: string | null) => `${key ?? ''}\u0000${value ?? ''}`;

/**
 * The acknowledged messages the log does not hold, counted copy by copy: a message acknowledged
 * twice must be there twice (a stream's duplicates are separate messages); extra copies in the
 * log (a retry that wrote twice) are not a gap.
 */
export function missingCopies(acknowledged: readonly Produced[], logged: readonly LoggedMessage[]): Produced[] {
  const inLog = new Map<string, number>();
  for (const m of logged) inLog.set(copyKey(m.key, m.value), (inLog.get(copyKey(m.key, m.value)) ?? 0) + 1);
  const missing: Produced[] = [];
  for (const m of acknowledged) {
    const k = copyKey(m.key, Buffer.from(m.value).toString('base64'));
    const left = inLog.get(k) ?? 0;
    if (left > 0) inLog.set(k, left - 1);
    else missing.push(m);
  }
  return missing;
}

/** The ids (header `message-id`) acknowledged but not in the log. */
export function missingIds(acknowledged: readonly string[], logged: readonly LoggedMessage[]): string[] {
  const inLog = new Set(logged.map((m) => m.headers['message-id']?.toLowerCase()));
  return acknowledged.filter((id) => !inLog.has(id.toLowerCase()));
}
