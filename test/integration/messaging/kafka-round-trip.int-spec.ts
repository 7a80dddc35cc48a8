import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Consumer, KafkaMessage, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { MessageProcessor } from '../../../src/infrastructure/messaging/inbox/message-processor';
import { KafkaClient } from '../../../src/infrastructure/messaging/kafka/kafka-client';
import { KafkaConsumerRunner } from '../../../src/infrastructure/messaging/kafka/kafka-consumer-runner';
import { KafkaTransport } from '../../../src/infrastructure/messaging/kafka/kafka-transport';
import { MessageHandlerRegistry } from '../../../src/infrastructure/messaging/message-handler-registry';
import { OutboxRelay } from '../../../src/infrastructure/messaging/outbox/outbox-relay';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { deadLetterTopicOf, TopicNames } from '../../../src/infrastructure/messaging/topics';
import { describeWithKafka, testEnv } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import {
  createEffectsTable,
  duplicates,
  EffectHandler,
  effects,
  keysOutOfOrder,
  randomSuffix,
  relaySettings,
  TestBody,
} from './messaging-test-kit';

const TOPIC = 'kafka.test';
const CONSUMER = 'kafka-it';

describeWithKafka('outbox → Kafka → inbox (real broker)', () => {
  const suffix = randomSuffix();
  // Topics, groups and client ids unique to this file and run: runs never see each other's messages.
  const topics = new TopicNames(`t-${testEnv.runId}-${suffix}.`);
  const groupId = `g-${testEnv.runId}-${suffix}`;
  let dataSource: DataSource;
  let database: TestDatabase;
  let client: KafkaClient;
  let relay: OutboxRelay;
  let producer: Producer;
  let dlqConsumer: Consumer | undefined;
  const registry = new MessageHandlerRegistry();
  const handler = new EffectHandler(TOPIC, CONSUMER);
  const writer = new OutboxWriter(new OutboxSignal());
  const runners: KafkaConsumerRunner[] = [];

  /** A consumer-group member, as a fresh service instance would start one; `metrics` counts its outcomes. */
  const startRunner = async (metrics = new Metrics()) => {
    const processor = new MessageProcessor(new UnitOfWork(dataSource), writer, metrics);
    const runner = new KafkaConsumerRunner(client, registry, processor, { groupId, partitionsConsumedConcurrently: 3 });
    runners.push(runner);
    await runner.start();
    return runner;
  };

  const outcomes = async (metrics: Metrics) => {
    const { values } = await metrics.messagesConsumed.get();
    const count = (outcome: string) => values.filter((v) => v.labels.outcome === outcome).reduce((n, v) => n + v.value, 0);
    return { applied: count('applied'), duplicate: count('duplicate'), dead_lettered: count('dead_lettered') };
  };

  /** Writes `perKey` messages for each key through the outbox, a few per transaction. */
  const writeThroughOutbox = async (keys: string[], perKey: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let seq = 0; seq < perKey; seq += 5) {
      ids.push(
        ...(await dataSource.transaction((manager) =>
          writer.append(
            manager,
            keys.flatMap((key) =>
              Array.from({ length: Math.min(5, perKey - seq) }, (_, i) => ({
                topic: TOPIC,
                key,
                type: 'T',
                payload: { key, seq: seq + i },
              })),
            ),
          ),
        )),
      );
    }
    return ids;
  };

  /** Produces straight to the topic, bypassing the outbox (as a foreign producer or a replay would). */
  const produce = (key: string, value: string, messageId?: string) =>
    producer.send({
      topic: topics.physical(TOPIC),
      messages: [{ key, value, headers: messageId ? { 'message-id': messageId } : {} }],
    });

  const appliedIds = async () => (await effects(dataSource, CONSUMER)).map((e) => e.message_id);

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ dataSource, database } = await openTestDataSource(6));
    await createEffectsTable(dataSource);
    client = new KafkaClient(
      { brokers: testEnv.kafkaBrokers!.split(','), clientId: `it-${suffix}`, topicPartitions: 3 },
      topics,
    );
    await client.ensureTopics([TOPIC, deadLetterTopicOf(TOPIC)]);
    registry.register(handler);
    relay = new OutboxRelay(dataSource, new KafkaTransport(client), new OutboxSignal(), new Metrics(), relaySettings());
    relay.start();
    producer = client.kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
  });

  afterAll(async () => {
    for (const runner of runners) await runner.stop();
    await relay?.stop();
    await dlqConsumer?.disconnect();
    await producer?.disconnect();
    if (client) {
      await (await client.admin())
        .deleteTopics({ topics: [topics.physical(TOPIC), topics.physical(deadLetterTopicOf(TOPIC))] })
        .catch(() => undefined);
      await client.close();
    }
    await dataSource?.destroy();
    await database?.drop();
  });

  it('shares one producer connection between callers that race to open it', async () => {
    const racing = new KafkaClient(
      { brokers: testEnv.kafkaBrokers!.split(','), clientId: `it-race-${suffix}`, topicPartitions: 3 },
      topics,
    );
    try {
      const [a, b] = await Promise.all([racing.producer(), racing.producer()]);
      expect(a).toBe(b);
      const [c, d] = await Promise.all([racing.admin(), racing.admin()]);
      expect(c).toBe(d);
    } finally {
      await racing.close();
    }
  });

  it('delivers outbox messages through the broker to the handler once each, in order per key', async () => {
    const keys = ['emp-a', 'emp-b', 'emp-c', 'emp-d', 'emp-e', 'emp-f'];
    const ids = await writeThroughOutbox(keys, 10);
    await startRunner();

    await expectEventually(async () => expect((await appliedIds()).sort()).toEqual([...ids].sort()), { timeoutMs: 30_000 });
    const applied = await effects(dataSource, CONSUMER);
    expect(duplicates(applied.map((e) => e.message_id))).toEqual([]);
    expect(keysOutOfOrder(applied)).toEqual([]);
  });

  it('applies a message redelivered with the same id only once', async () => {
    const dupId = randomUUID();
    const markerId = randomUUID();
    const body = (seq: number): string => JSON.stringify({ key: 'dup', seq } satisfies TestBody);
    await produce('dup', body(1), dupId);
    await produce('dup', body(1), dupId);
    // Same key, same partition: once the marker is applied, both copies have been consumed.
    await produce('dup', body(2), markerId);

    await expectEventually(async () => expect(await appliedIds()).toContain(markerId));
    expect((await appliedIds()).filter((id) => id === dupId)).toEqual([dupId]);
    expect(handler.seen.filter((m) => m.headers['message-id'] === dupId)).toHaveLength(1);
  });

  it('dead-letters poison to the .dlq topic (reason, original) and keeps consuming', async () => {
    const badJsonId = randomUUID();
    const poisonId = randomUUID();
    const afterId = randomUUID();
    await produce('poison', '{"key": "poison", "seq": ', badJsonId);
    await produce('poison', JSON.stringify({ key: 'poison', seq: 1, poison: true } satisfies TestBody), poisonId);
    await produce('poison', JSON.stringify({ key: 'poison', seq: 2 } satisfies TestBody), afterId);

    await expectEventually(async () => expect(await appliedIds()).toContain(afterId));
    expect(
      await dataSource.query(`SELECT message_id, reason FROM dead_letters WHERE consumer = $1 ORDER BY created_at`, [CONSUMER]),
    ).toEqual([
      { message_id: badJsonId, reason: expect.stringMatching(/not valid JSON/) },
      { message_id: poisonId, reason: 'seq 1 is not acceptable' },
    ]);

    const dlq: KafkaMessage[] = [];
    dlqConsumer = client.kafka.consumer({ groupId: `${groupId}-dlq-reader`, maxWaitTimeInMs: 100 });
    await dlqConsumer.connect();
    await dlqConsumer.subscribe({ topic: topics.physical(deadLetterTopicOf(TOPIC)), fromBeginning: true });
    await dlqConsumer.run({ eachMessage: async ({ message }) => void dlq.push(message) });

    await expectEventually(() => expect(dlq).toHaveLength(2), { timeoutMs: 30_000 });
    const received = dlq.map((m) => ({
      key: m.key?.toString(),
      reason: m.headers?.['dead-letter-reason']?.toString(),
      originalTopic: m.headers?.['original-topic']?.toString(),
      body: JSON.parse(m.value!.toString()),
    }));
    const byOriginalId = new Map(received.map((r) => [r.body.original.headers['message-id'], r]));
    expect(byOriginalId.get(badJsonId)).toMatchObject({
      key: 'poison',
      reason: expect.stringMatching(/not valid JSON/),
      originalTopic: TOPIC,
      body: { consumer: CONSUMER, original: { topic: TOPIC, key: 'poison', value: '{"key": "poison", "seq": ' } },
    });
    expect(byOriginalId.get(poisonId)).toMatchObject({
      reason: 'seq 1 is not acceptable',
      body: { reason: 'seq 1 is not acceptable', original: { value: JSON.stringify({ key: 'poison', seq: 1, poison: true }) } },
    });
  });

  it('retries a transient failure in place, holding back the key, and stops promptly while backing off', async () => {
    const failingId = randomUUID();
    const followerId = randomUUID();
    handler.failTransiently(failingId, 1_000);
    await produce('transient', JSON.stringify({ key: 'transient', seq: 1 } satisfies TestBody), failingId);
    await produce('transient', JSON.stringify({ key: 'transient', seq: 2 } satisfies TestBody), followerId);

    const attempts = () => handler.seen.filter((m) => m.headers['message-id'] === failingId).length;
    await expectEventually(() => expect(attempts()).toBeGreaterThanOrEqual(4), { timeoutMs: 10_000 });
    // Same partition, so the follower waits behind the failing message.
    expect(await appliedIds()).not.toContain(followerId);

    // The next backoff is over a second long; stopping does not sit it out.
    const stopStarted = Date.now();
    await runners.at(-1)!.stop();
    expect(Date.now() - stopStarted).toBeLessThan(1_000);
    expect(await appliedIds()).not.toContain(failingId);

    handler.failTransiently(failingId, 0); // the outage is over
    await startRunner();
    await expectEventually(async () => expect(await appliedIds()).toEqual(expect.arrayContaining([failingId, followerId])), {
      timeoutMs: 30_000,
    });
    const applied = (await effects(dataSource, CONSUMER)).filter((e) => e.key === 'transient');
    expect(applied.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('re-reading the whole topic from offset 0 with a new member of the group applies nothing again', async () => {
    const before = await appliedIds();
    const deadLettersBefore = await dataSource.query(`SELECT count(*)::int AS n FROM dead_letters`);
    await runners.at(-1)!.stop();

    const admin = await client.admin();
    // Dropping the group's committed offsets sends the next member back to offset 0 (it subscribes
    // fromBeginning). kafkajs' resetOffsets does the same but joins the group and sits out a 5 s fetch.
    await admin.deleteGroups([groupId]);
    const partitions = await admin.fetchTopicOffsets(topics.physical(TOPIC));
    const total = partitions.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
    expect(total).toBeGreaterThan(before.length);

    const metrics = new Metrics();
    await startRunner(metrics);
    await expectEventually(
      async () => expect(await outcomes(metrics)).toEqual({ applied: 0, duplicate: total, dead_lettered: 0 }),
      { timeoutMs: 30_000 },
    );
    expect(await appliedIds()).toEqual(before);
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM dead_letters`)).toEqual(deadLettersBefore);
  });

  it('a consumer stopped mid-stream and restarted loses nothing and applies nothing twice', async () => {
    const before = new Set(await appliedIds());
    handler.workMs = 10;
    const keys = Array.from({ length: 10 }, (_, i) => `stream-${i}`);
    const ids = await writeThroughOutbox(keys, 30);
    const newlyApplied = async () => (await appliedIds()).filter((id) => !before.has(id));

    await expectEventually(async () => expect((await newlyApplied()).length).toBeGreaterThanOrEqual(20), { timeoutMs: 30_000 });
    await runners.at(-1)!.stop();
    const atStop = (await newlyApplied()).length;
    expect(atStop).toBeLessThan(ids.length); // really mid-stream

    handler.workMs = 0;
    const metrics = new Metrics();
    await startRunner(metrics);
    await expectEventually(async () => expect((await newlyApplied()).sort()).toEqual([...ids].sort()), { timeoutMs: 30_000 });
    // What was applied before the stop had its offset committed on the way out: nothing came back.
    expect(await outcomes(metrics)).toEqual({ applied: ids.length - atStop, duplicate: 0, dead_lettered: 0 });
    const applied = (await effects(dataSource, CONSUMER)).filter((e) => !before.has(e.message_id));
    expect(duplicates(applied.map((e) => e.message_id))).toEqual([]);
    expect(keysOutOfOrder(applied)).toEqual([]);
  });
});
