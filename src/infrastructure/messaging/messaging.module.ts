import { Global, Module, Provider } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { MessageProcessor } from './inbox/message-processor';
import { InProcessTransport } from './in-process-transport';
import { KafkaClient } from './kafka/kafka-client';
import { KafkaConsumerRunner } from './kafka/kafka-consumer-runner';
import { Metrics } from '../observability/metrics';
import { KafkaTransport } from './kafka/kafka-transport';
import { MessageHandlerRegistry } from './message-handler-registry';
import { MESSAGE_TRANSPORT } from './message-transport';
import { MessagingLifecycle } from './messaging-lifecycle';
import { OUTBOX_RELAY_SETTINGS, OutboxRelay, OutboxRelaySettings } from './outbox/outbox-relay';
import { OutboxSignal } from './outbox/outbox-signal';
import { BenefitEventsWriter } from './outbox/benefit-events.writer';
import { OutboxWriter } from './outbox/outbox-writer';
import { TopicNames } from './topics';

/** With KAFKA_BROKERS the relay publishes to Kafka and a consumer group reads; without, all stays in process. */
function transportProviders(config: AppConfig): Provider[] {
  if (!config.kafkaEnabled) {
    return [InProcessTransport, { provide: MESSAGE_TRANSPORT, useExisting: InProcessTransport }];
  }
  return [
    {
      provide: KafkaClient,
      inject: [TopicNames],
      useFactory: (topics: TopicNames) =>
        new KafkaClient(
          {
            brokers: config.kafkaBrokers,
            clientId: config.KAFKA_CLIENT_ID,
            topicPartitions: config.KAFKA_TOPIC_PARTITIONS,
            replicationFactor: config.KAFKA_REPLICATION_FACTOR,
            minInSyncReplicas: config.KAFKA_MIN_INSYNC_REPLICAS,
          },
          topics,
        ),
    },
    KafkaTransport,
    { provide: MESSAGE_TRANSPORT, useExisting: KafkaTransport },
    {
      provide: KafkaConsumerRunner,
      inject: [KafkaClient, MessageHandlerRegistry, MessageProcessor, Metrics],
      useFactory: (client: KafkaClient, registry: MessageHandlerRegistry, processor: MessageProcessor, metrics: Metrics) =>
        new KafkaConsumerRunner(client, registry, processor, {
          groupId: config.KAFKA_GROUP_ID,
          // Every partition of a fetch at once: their runs meet in one group commit (at most 3 transactions).
          partitionsConsumedConcurrently: Math.min(config.KAFKA_TOPIC_PARTITIONS, 12),
          batchMax: config.KAFKA_BATCH_MAX,
          sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
          fetchMinBytes: config.KAFKA_FETCH_MIN_BYTES,
          fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
        }, metrics),
    },
  ];
}

@Global()
@Module({})
export class MessagingModule {
  static forRoot(config: AppConfig) {
    const relaySettings: OutboxRelaySettings = {
      pollMs: config.OUTBOX_POLL_MS,
      batchSize: config.OUTBOX_BATCH_SIZE,
      leaseMs: config.OUTBOX_LEASE_MS,
      lanesPerRound: 16,
    };
    return {
      module: MessagingModule,
      providers: [
        { provide: TopicNames, useValue: new TopicNames(config.KAFKA_TOPIC_PREFIX) },
        { provide: OUTBOX_RELAY_SETTINGS, useValue: relaySettings },
        OutboxSignal,
        OutboxWriter,
        BenefitEventsWriter,
        OutboxRelay,
        MessageProcessor,
        MessageHandlerRegistry,
        ...transportProviders(config),
        MessagingLifecycle,
      ],
      exports: [
        OutboxWriter,
        BenefitEventsWriter,
        OutboxRelay,
        MessageProcessor,
        MessageHandlerRegistry,
        TopicNames,
        MESSAGE_TRANSPORT,
        ...(config.kafkaEnabled ? [KafkaClient] : []),
      ] as Provider[],
    };
  }
}
