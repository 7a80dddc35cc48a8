import { Logger } from '@nestjs/common';
import { Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { MessageProcessor } from '../../../src/infrastructure/messaging/inbox/message-processor';
import { KafkaClient } from '../../../src/infrastructure/messaging/kafka/kafka-client';
import { KafkaConsumerRunner, KafkaConsumerSettings } from '../../../src/infrastructure/messaging/kafka/kafka-consumer-runner';
import { MessageHandlerRegistry } from '../../../src/infrastructure/messaging/message-handler-registry';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { deadLetterTopicOf, TopicNames } from '../../../src/infrastructure/messaging/topics';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { testEnv } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createEffectsTable, EffectHandler, randomSuffix } from './messaging-test-kit';

/**
 * One topic of one partition (and its dead letters) on the real broker, a database with the
 * effects table, a producer, and a KafkaConsumerRunner made on demand over an EffectHandler:
 * set up before the describe's tests and torn down after. kafkajs logs rejoins and failed
 * fetches at error level; the tests using this assert on what happened instead.
 */
export function kafkaConsumerTestbed(topic: string, consumer: string, sessionTimeoutMs: number) {
  const suffix = randomSuffix();
  const topics = new TopicNames(`${consumer}-${testEnv.runId}-${suffix}.`);
  const bed = {
    suffix,
    topics,
    metrics: new Metrics(),
    dataSource: undefined as unknown as DataSource,
    client: undefined as unknown as KafkaClient,
    producer: undefined as unknown as Producer,
    runner: undefined as KafkaConsumerRunner | undefined,
    /** A runner of its own group over a new EffectHandler of the topic (`settings` over the bed's). */
    runnerFor(settings: Partial<KafkaConsumerSettings> = {}): { runner: KafkaConsumerRunner; handler: EffectHandler } {
      const handler = new EffectHandler(topic, consumer);
      const registry = new MessageHandlerRegistry();
      registry.register(handler);
      const processor = new MessageProcessor(new UnitOfWork(bed.dataSource), new OutboxWriter(new OutboxSignal()), bed.metrics);
      const groupId = `g-${consumer}-${testEnv.runId}-${suffix}`;
      bed.runner = new KafkaConsumerRunner(bed.client, registry, processor, { groupId, partitionsConsumedConcurrently: 1, sessionTimeoutMs, ...settings }, bed.metrics);
      return { runner: bed.runner, handler };
    },
  };
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    let dataSource: DataSource;
    ({ dataSource, database } = await openTestDataSource(4));
    bed.dataSource = dataSource;
    await createEffectsTable(dataSource);
    bed.client = new KafkaClient({ brokers: testEnv.kafkaBrokers!.split(','), clientId: `it-${consumer}-${suffix}`, topicPartitions: 1 }, topics);
    await bed.client.ensureTopics([topic, deadLetterTopicOf(topic)]);
    bed.producer = bed.client.kafka.producer({ allowAutoTopicCreation: false });
    await bed.producer.connect();
  });

  afterAll(async () => {
    await bed.runner?.stop();
    await bed.producer?.disconnect();
    if (bed.client) {
      await (await bed.client.admin()).deleteTopics({ topics: [topics.physical(topic), topics.physical(deadLetterTopicOf(topic))] }).catch(() => undefined);
      await bed.client.close();
    }
    await bed.dataSource?.destroy();
    await database?.drop();
  });

  return bed;
}
