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

const TOPIC = 'keepalive.test';
const CONSUMER = 'keepalive-it';
const SESSION_TIMEOUT_MS = 6_000;

/**
 * kafkajs sends a heartbeat only when it is asked to, between batches. A transaction that runs
 * longer than the session timeout (a loaded host, a lock held by other work) must not get the
 * only member of the group evicted: its resolved offsets would then never be committed, and
 * everything it applied since the last commit would come back as duplicates.
 */
describeWithKafka('Kafka consumer kept in its group while a batch is applied (real broker)', () => {
  const suffix = randomSuffix();
  const topics = new TopicNames(`k-${testEnv.runId}-${suffix}.`);
  const groupId = `kg-${testEnv.runId}-${suffix}`;
  let dataSource: DataSource;
  let database: TestDatabase;
  let client: KafkaClient;
  let producer: Producer;
  let runner: KafkaConsumerRunner | undefined;
  const metrics = new Metrics();

  beforeAll(async () => {
    // kafkajs logs a rejoin at error level; the assertions below say whether one happened.
    Logger.overrideLogger(false);
    ({ dataSource, database } = await openTestDataSource(4));
    await createEffectsTable(dataSource);
    client = new KafkaClient({ brokers: testEnv.kafkaBrokers!.split(','), clientId: `it-keepalive-${suffix}`, topicPartitions: 1 }, topics);
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

  const consumed = async (outcome: string) =>
    (await metrics.messagesConsumed.get()).values.find((v) => v.labels.consumer === CONSUMER && v.labels.outcome === outcome)?.value ?? 0;

  it('applies messages that each take longer than the session timeout once, with no rejoin and no redelivery', async () => {
    const registry = new MessageHandlerRegistry();
    const handler = new EffectHandler(TOPIC, CONSUMER);
    // Each message's transaction outlasts the session timeout by half.
    handler.workMs = SESSION_TIMEOUT_MS * 1.5;
    registry.register(handler);
    runner = new KafkaConsumerRunner(
      client,
      registry,
      new MessageProcessor(new UnitOfWork(dataSource), new OutboxWriter(new OutboxSignal()), metrics),
      { groupId, partitionsConsumedConcurrently: 1, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      metrics,
    );
    await runner.start();
    const ids = [1, 2].map((seq) => `m-${suffix}-${seq}`);
    await producer.send({
      topic: topics.physical(TOPIC),
      messages: ids.map((id, seq) => ({ key: 'k', value: JSON.stringify({ key: 'k', seq }), headers: { 'message-id': id } })),
    });

    await expectEventually(async () => expect((await effects(dataSource, CONSUMER)).map((e) => e.message_id)).toEqual(ids), { timeoutMs: 90_000, intervalMs: 500 });
    // A redelivery would show as a duplicate at once; give one more session timeout for it.
    await new Promise((done) => setTimeout(done, SESSION_TIMEOUT_MS));
    expect({ applied: await consumed('applied'), duplicate: await consumed('duplicate'), seen: handler.seen.length, crashes: runner.crashes }).toEqual({
      applied: 2,
      duplicate: 0,
      seen: 2,
      crashes: 0,
    });
  }, 180_000);
});
