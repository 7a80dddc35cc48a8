import { Logger } from '@nestjs/common';
import { Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { MessageProcessor } from '../../../src/infrastructure/messaging/inbox/message-processor';
import { KafkaClient } from '../../../src/infrastructure/messaging/kafka/kafka-client';
import { KafkaConsumerRunner } from '../../../src/infrastructure/messaging/kafka/kafka-consumer-runner';
import { MessageHandlerRegistry } from '../../../src/infrastructure/messaging/message-handler-registry';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { deadLetterTopicOf, TopicNames } from '../../../src/infrastructure/messaging/topics';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { describeWithKafka, testEnv } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createEffectsTable, EffectHandler, effects, randomSuffix } from './messaging-test-kit';

const TOPIC = 'restart.test';
const CONSUMER = 'restart-it';

/**
 * A consumer that crashes for real: its topic is deleted under it, so kafkajs gives up on it,
 * and a restart fails for as long as the topic is missing (the case kafkajs's own single
 * restart never recovers from). Once the topic is back, a new consumer joins and applies what
 * is produced.
 */
describeWithKafka('Kafka consumer restarted after a crash (real broker)', () => {
  const suffix = randomSuffix();
  const topics = new TopicNames(`r-${testEnv.runId}-${suffix}.`);
  const groupId = `rg-${testEnv.runId}-${suffix}`;
  let dataSource: DataSource;
  let database: TestDatabase;
  let client: KafkaClient;
  let producer: Producer;
  let runner: KafkaConsumerRunner | undefined;
  const metrics = new Metrics();

  beforeAll(async () => {
    // kafkajs logs every failed fetch and restart at error level: expected here.
    Logger.overrideLogger(false);
    ({ dataSource, database } = await openTestDataSource(4));
    await createEffectsTable(dataSource);
    client = new KafkaClient({ brokers: testEnv.kafkaBrokers!.split(','), clientId: `it-restart-${suffix}`, topicPartitions: 1 }, topics);
    await client.ensureTopics([TOPIC, deadLetterTopicOf(TOPIC)]);
    producer = client.kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
  });

  afterAll(async () => {
    await runner?.stop();
    await producer?.disconnect();
    if (client) {
      await (await client.admin()).deleteTopics({ topics: [topics.physical(TOPIC), topics.physical(deadLetterTopicOf(TOPIC))] }).catch(() => undefined);
      await client.close();
    }
    await dataSource?.destroy();
    await database?.drop();
  });

  const produce = (seq: number) =>
    producer.send({ topic: topics.physical(TOPIC), messages: [{ key: 'k', value: JSON.stringify({ key: 'k', seq }), headers: { 'message-id': `m-${suffix}-${seq}` } }] });
  const applied = async () => (await effects(dataSource, CONSUMER)).map((e) => e.message_id).sort();

  it('replaces a crashed consumer, trying again until it can join, and goes on consuming', async () => {
    const registry = new MessageHandlerRegistry();
    registry.register(new EffectHandler(TOPIC, CONSUMER));
    runner = new KafkaConsumerRunner(client, registry, new MessageProcessor(new UnitOfWork(dataSource), new OutboxWriter(new OutboxSignal()), metrics), { groupId, partitionsConsumedConcurrently: 1, sessionTimeoutMs: 6_000 }, metrics);
    await runner.start();
    await produce(1);
    await expectEventually(async () => expect(await applied()).toEqual([`m-${suffix}-1`]), { timeoutMs: 30_000 });

    const admin = await client.admin();
    await admin.deleteTopics({ topics: [topics.physical(TOPIC)] });
    // While the topic is gone the consumer crashes, and every restart fails at its subscribe.
    await expectEventually(async () => expect(runner!.crashes).toBeGreaterThan(0), { timeoutMs: 90_000, intervalMs: 500 });
    await new Promise((done) => setTimeout(done, 3_000));
    expect(runner.restarts).toBe(0);

    await client.ensureTopics([TOPIC]);
    await expectEventually(async () => expect(runner!.restarts).toBeGreaterThan(0), { timeoutMs: 60_000, intervalMs: 500 });
    await produce(2);
    await expectEventually(async () => expect(await applied()).toEqual([`m-${suffix}-1`, `m-${suffix}-2`]), { timeoutMs: 60_000 });
    expect((await metrics.consumerRestarts.get()).values[0].value).toBe(runner.restarts);
  }, 240_000);
});
