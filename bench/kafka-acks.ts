/**
 * Acknowledged against present: does a producer's acknowledged write stay in the log through a
 * broker failover? On the three-broker cluster (`scripts/kafka/run up --brokers 3`; replication
 * factor 3, min.insync.replicas 2), each producer mode sends numbered messages in chunks of 250,
 * one chunk after another, while node 2 and then node 3 are SIGKILLed and restarted 12 s later;
 * afterwards every message of the topic is read back and matched by id against what the
 * producer said it wrote. For a chunk with lost messages it prints what the client answered
 * (partition@baseOffset) and what the log holds at those offsets.
 *
 *   npx ts-node --transpile-only bench/kafka-acks.ts [--rounds 2] [--modes a,b] [--kills 2,3]
 *       [--signal KILL|STOP] [--down 12000] [--retries 8] [--request-timeout 10000] [--no-throughput]
 *
 * `--signal STOP --retries 1 --request-timeout 3000` pauses the leaders instead, past the client's
 * retries, so sends fail: what an idempotent kafkajs producer does after a failed send.
 * Prints per mode: acknowledged, present, missing (acknowledged but not in the log), failed sends,
 * the longest send and, from a fault-free phase in the same run (the modes taking turns), messages
 * per second and the ratio to the relay's previous send (partition-wise). Client settings as the
 * service's (kafka-client.ts) unless changed here.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { CompressionTypes, Kafka, logLevel, Message, PartitionMetadata, Producer, RecordMetadata } from 'kafkajs';
import { sendAcknowledged } from '../src/infrastructure/messaging/kafka/acknowledged-send';
import { KeyedPartitioner } from '../src/infrastructure/messaging/kafka/keyed-partitioner';
import { ensureKafkaCluster, kafkaClusterBrokers, sleep } from './hris-kit';
import { readTopics } from './topic-audit';

const PARTITIONS = 6;

interface Mode {
  name: string;
  what: string;
  idempotent: boolean;
  /** After a send that failed, a new producer (a new producer id, so no sequence number is used twice). */
  resetOnFailure?: boolean;
  /** Sends one chunk; answers what the client said it wrote. */
  send(producer: Producer, partitionsOf: (topic: string) => Promise<PartitionMetadata[]>, topic: string, messages: Message[]): Promise<RecordMetadata[]>;
}

/** Partition sends found unanswered and sent again by sendAcknowledged, in all. */
let unanswered = 0;
const verified = (producer: Producer, partitionsOf: (topic: string) => Promise<PartitionMetadata[]>, topic: string, messages: Message[]) =>
  sendAcknowledged(producer, partitionsOf, [{ topic, messages }], { onUnanswered: (u) => (unanswered += u.length) });

const MODES: Mode[] = [
  {
    name: 'send-idem',
    what: 'kafkajs send(), idempotent, acks -1, 1 in flight (the issue)',
    idempotent: true,
    send: (producer, _p, topic, messages) => producer.send({ topic, messages, acks: -1 }),
  },
  {
    name: 'send-plain',
    what: 'kafkajs send(), not idempotent, acks -1, 1 in flight',
    idempotent: false,
    send: (producer, _p, topic, messages) => producer.send({ topic, messages, acks: -1 }),
  },
  {
    name: 'partition-wise',
    what: 'the relay before: a send() per partition, idempotent',
    idempotent: true,
    send: (producer, partitionsOf, topic, messages) => partitionWise(producer, partitionsOf, topic, messages),
  },
  {
    name: 'verified-idem',
    what: 'sendAcknowledged (every partition answered, the rest sent again), idempotent',
    idempotent: true,
    send: verified,
  },
  {
    name: 'verified-idem-reset',
    what: 'sendAcknowledged, idempotent, a new producer after a send that failed',
    idempotent: true,
    resetOnFailure: true,
    send: verified,
  },
  {
    name: 'verified',
    what: 'sendAcknowledged, not idempotent (the relay now)',
    idempotent: false,
    send: verified,
  },
];

const partitioner = KeyedPartitioner();

/** The relay's send before this measurement (partition-wise-send.ts): one send() per partition, all at once. */
async function partitionWise(producer: Producer, partitionsOf: (topic: string) => Promise<PartitionMetadata[]>, topic: string, messages: Message[]): Promise<RecordMetadata[]> {
  const partitionMetadata = await partitionsOf(topic);
  const byPartition = new Map<number, Message[]>();
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    byPartition.set(partition, [...(byPartition.get(partition) ?? []), { ...message, partition }]);
  }
  const answers = await Promise.all([...byPartition.values()].map((list) => producer.send({ topic, messages: list, acks: -1, compression: CompressionTypes.None })));
  return answers.flat();
}

function argument(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * As hris-kit's kafkaNode (signals a node of the local cluster, or starts it again and waits until
 * it serves), without blocking the event loop: producers in this process go on meanwhile.
 */
export function kafkaNodeAsync(command: 'stop-node' | 'start-node', node: number, signal?: 'KILL' | 'TERM' | 'STOP' | 'CONT'): Promise<void> {
  const args = [command, String(node), ...(signal ? ['--signal', signal] : [])];
  return new Promise((done, fail) => {
    const child = spawn('bash', [resolve(__dirname, '../scripts/kafka/run'), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.once('error', fail);
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`scripts/kafka/run ${args.join(' ')} failed (${code}): ${stderr}`))));
  });
}

const brokers = () => kafkaClusterBrokers().split(',');

function client(label: string): Kafka {
  // The service's client settings (src/infrastructure/messaging/kafka/kafka-client.ts).
  return new Kafka({
    clientId: `${label}-${randomBytes(3).toString('hex')}`,
    brokers: brokers(),
    connectionTimeout: 3_000,
    requestTimeout: Number(argument('request-timeout') ?? 10_000),
    retry: { initialRetryTime: 200, retries: Number(argument('retries') ?? 8), maxRetryTime: 10_000 },
    logLevel: process.env.KAFKA_ACKS_LOG ? logLevel.WARN : logLevel.NOTHING,
  });
}

/**
 * Creates the topic (replication factor 3, min.insync.replicas 2) and waits until all its
 * partitions have a leader and three replicas in sync; answers its partitions. Not kafkajs's own
 * wait: it asks one broker, and fails when that one does not know the new topic yet.
 */
async function createTopic(kafka: Kafka, topic: string): Promise<PartitionMetadata[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ waitForLeaders: false, topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }] });
  } finally {
    await admin.disconnect();
  }
  await inSync(kafka, topic);
  const again = kafka.admin();
  await again.connect();
  try {
    return (await again.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions;
  } finally {
    await again.disconnect();
  }
}

/** Waits until every partition of the topic has a leader and three replicas in sync. */
async function inSync(kafka: Kafka, topic: string, timeoutMs = 120_000): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ok = await admin
        .fetchTopicMetadata({ topics: [topic] })
        .then((m) => m.topics[0].partitions.length === PARTITIONS && m.topics[0].partitions.every((p) => p.leader >= 0 && p.isr.length === 3))
        .catch(() => false);
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`${topic}: not back in sync within ${timeoutMs / 1000} s`);
      await sleep(500);
    }
  } finally {
    await admin.disconnect();
  }
}

interface Result {
  mode: string;
  acknowledged: number;
  failedSends: number;
  present: number;
  missing: number;
  duplicates: number;
  seconds: number;
  /** Per missing message, when its chunk was acknowledged (seconds into the run) and what the client said of it. */
  examples: string[];
  /** Partition sends the verified modes found unanswered (and sent again). */
  resent: number;
  /** The longest wait for one chunk's answer (success or failure), in seconds: how long a failover held the producer. */
  longestSend: number;
}

/**
 * One mode through one round of kills: chunks of `chunk` messages, one after another, a pause of
 * `gapMs` between them, for as long as the kills last; `kills` nodes SIGKILLed one at a time,
 * each restarted after `downMs` and back in sync before the next.
 */
async function faultRound(mode: Mode, kills: number[], chunk: number, gapMs: number, downMs: number): Promise<Result> {
  const kafka = client(`acks-${mode.name}`);
  const topic = `kafka-acks-${mode.name}-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
  const partitions = await createTopic(kafka, topic);
  const newProducer = async () => {
    const created = kafka.producer({ idempotent: mode.idempotent, maxInFlightRequests: 1, allowAutoTopicCreation: false, metadataMaxAge: 10_000, createPartitioner: KeyedPartitioner });
    await created.connect();
    return created;
  };
  let producer = await newProducer();

  const started = Date.now();
  const unansweredBefore = unanswered;
  const acknowledged = new Map<string, { at: number; said: string }>();
  let failedSends = 0;
  let faultsDone = false;
  const faults = (async () => {
    await sleep(2_000);
    const signal = (argument('signal') ?? 'KILL') as 'KILL' | 'STOP';
    for (const node of kills) {
      await kafkaNodeAsync('stop-node', node, signal);
      await sleep(downMs);
      if (signal === 'STOP') await kafkaNodeAsync('stop-node', node, 'CONT');
      else await kafkaNodeAsync('start-node', node);
      await inSync(kafka, topic);
      await sleep(1_000);
    }
    faultsDone = true;
  })();
  let seq = 0;
  let longestSend = 0;
  while (!faultsDone) {
    const sendStarted = Date.now();
    const messages: Message[] = Array.from({ length: chunk }, () => {
      const id = `${seq++}`;
      return { key: `connection-${seq % 37}`, value: id };
    });
    try {
      const said = await mode.send(producer, () => Promise.resolve(partitions), topic, messages);
      const at = (Date.now() - started) / 1000;
      const sent = new Set(messages.map((m) => partitioner({ topic, partitionMetadata: partitions, message: m })));
      const answered = new Set(said.map((r) => r.partition));
      const uncovered = [...sent].filter((p) => !answered.has(p));
      const text = said.map((r) => `p${r.partition}@${r.baseOffset}`).join(' ') + (uncovered.length > 0 ? ` [no answer for p${uncovered.join(',p')}]` : '');
      for (const m of messages) acknowledged.set(String(m.value), { at, said: text });
    } catch (error) {
      failedSends++;
      console.log(`    send of ids ${messages[0].value}-${messages[messages.length - 1].value} failed at ${((Date.now() - started) / 1000).toFixed(1)} s: ${(error as Error).name}: ${(error as Error).message}`);
      if (mode.resetOnFailure) {
        await producer.disconnect().catch(() => undefined);
        producer = await newProducer().catch(async () => {
          await sleep(1_000);
          return newProducer();
        });
      }
    }
    longestSend = Math.max(longestSend, (Date.now() - sendStarted) / 1000);
    await sleep(gapMs);
  }
  await faults;
  await producer.disconnect();
  const seconds = (Date.now() - started) / 1000;
  const positions = new Map<string, string>();
  const seen = new Map<string, number>();
  for (const m of await readTopics(kafka, [topic])) {
    const id = Buffer.from(m.value ?? '', 'base64').toString();
    seen.set(id, (seen.get(id) ?? 0) + 1);
    positions.set(`p${m.partition}@${m.offset}`, id);
  }
  const missing = [...acknowledged].filter(([id]) => !seen.has(id));
  // What the log holds where the client said a lost message's chunk went.
  for (const said of new Set(missing.map(([, m]) => m.said))) {
    const at = said.split(' ').filter((w) => /^p\d+@\d+$/.test(w)).map((w) => `${w}=${positions.get(w) ?? 'nothing'}`);
    console.log(`    a chunk with lost messages was acknowledged as ${said}; the log has there: ${at.join(' ')}`);
  }
  const admin2 = kafka.admin();
  await admin2.connect();
  await admin2.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin2.disconnect();
  return {
    mode: mode.name,
    acknowledged: acknowledged.size,
    failedSends,
    present: [...acknowledged.keys()].filter((id) => seen.has(id)).length,
    missing: missing.length,
    duplicates: [...seen.values()].reduce((n, times) => n + times - 1, 0),
    seconds,
    examples: summarise(missing),
    resent: unanswered - unansweredBefore,
    longestSend,
  };
}

/** The missing ids as runs of consecutive ids, with when their chunk was acknowledged and what the client said. */
function summarise(missing: [string, { at: number; said: string }][]): string[] {
  const lines: string[] = [];
  let from: number | undefined;
  let last = -2;
  let info = '';
  const flush = () => from !== undefined && lines.push(`ids ${from}-${last} (acknowledged at ${info})`);
  for (const [id, { at, said }] of missing.sort((a, b) => Number(a[0]) - Number(b[0]))) {
    const n = Number(id);
    if (n !== last + 1) {
      flush();
      from = n;
      info = `${at.toFixed(1)} s: ${said}`;
    }
    last = n;
  }
  flush();
  return lines.slice(0, 8);
}

/** Messages per second of each mode without faults, the modes taking turns so drift strikes them alike. */
async function throughput(modes: Mode[], total: number, chunk: number, turns = 3): Promise<Map<string, number>> {
  const rates = new Map<string, number[]>();
  const kafka = client('acks-rate');
  const topic = `kafka-acks-rate-${Date.now().toString(36)}`;
  const partitions = await createTopic(kafka, topic);
  const admin = kafka.admin();
  await admin.connect();
  const producers = new Map<string, Producer>();
  for (const mode of modes) {
    const producer = kafka.producer({ idempotent: mode.idempotent, maxInFlightRequests: 1, allowAutoTopicCreation: false, metadataMaxAge: 10_000, createPartitioner: KeyedPartitioner });
    await producer.connect();
    producers.set(mode.name, producer);
    await mode.send(producer, () => Promise.resolve(partitions), topic, [{ key: 'warm', value: 'warm' }]);
  }
  for (let turn = 0; turn < turns; turn++) {
    for (const mode of modes) {
      const started = process.hrtime.bigint();
      for (let at = 0; at < total; at += chunk) {
        const messages = Array.from({ length: chunk }, (_, i) => ({ key: `connection-${(at + i) % 37}`, value: `${mode.name}-${turn}-${at + i}` }));
        await mode.send(producers.get(mode.name)!, () => Promise.resolve(partitions), topic, messages);
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      rates.set(mode.name, [...(rates.get(mode.name) ?? []), total / seconds]);
    }
  }
  for (const producer of producers.values()) await producer.disconnect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  // The median turn of each.
  return new Map([...rates].map(([name, r]) => [name, [...r].sort((a, b) => a - b)[Math.floor(r.length / 2)]]));
}

export async function main(modes: Mode[] = MODES): Promise<void> {
  const rounds = Number(argument('rounds') ?? 1);
  const kills = (argument('kills') ?? '2,3').split(',').map(Number);
  const chunk = Number(argument('chunk') ?? 250);
  const wanted = argument('modes')?.split(',');
  const selected = wanted ? modes.filter((m) => wanted.includes(m.name)) : modes;
  await ensureKafkaCluster();
  const results: Result[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const mode of selected) {
      console.log(`round ${round}, ${mode.name}: ${mode.what}; SIG${argument('signal') ?? 'KILL'} nodes ${kills.join(', ')} in turn ...`);
      const result = await faultRound(mode, kills, chunk, Number(argument('gap') ?? 50), Number(argument('down') ?? 12_000));
      results.push(result);
      console.log(
        `  acknowledged ${result.acknowledged}, present ${result.present}, missing ${result.missing}, duplicates ${result.duplicates}, failed sends ${result.failedSends}, partition sends resent ${result.resent}, longest send ${result.longestSend.toFixed(1)} s (${result.seconds.toFixed(0)} s)`,
      );
      for (const line of result.examples) console.log(`    ${line}`);
    }
  }
  const rates = process.argv.includes('--no-throughput') ? new Map<string, number>() : await throughput(selected, Number(argument('rate-total') ?? 6_000), chunk);
  const reference = rates.get('partition-wise') ?? [...rates.values()][0];
  console.log(`\nverified modes: ${unanswered} partition sends found unanswered and sent again`);
  console.log('\n| mode | rounds | kills each | acknowledged | present in topic | missing | failed sends | longest send | msg/s (no faults) | of partition-wise |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const mode of selected) {
    const mine = results.filter((r) => r.mode === mode.name);
    const sum = (f: (r: Result) => number) => mine.reduce((n, r) => n + f(r), 0);
    const rate = rates.get(mode.name);
    console.log(
      `| ${mode.name} | ${mine.length} | ${kills.length} | ${sum((r) => r.acknowledged)} | ${sum((r) => r.present)} | ${sum((r) => r.missing)} | ${sum((r) => r.failedSends)} | ${Math.max(...mine.map((r) => r.longestSend)).toFixed(1)} s | ${rate ? rate.toFixed(0) : '-'} | ${rate && reference ? `${((rate / reference) * 100).toFixed(0)} %` : '-'} |`,
    );
  }
}

if (require.main === module) {
  main()
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(() => setTimeout(() => process.exit(), 1_000).unref());
}
