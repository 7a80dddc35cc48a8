import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { KafkaClient, whileUnknown } from './kafka/kafka-client';
import { KafkaConsumerRunner } from './kafka/kafka-consumer-runner';
import { MessageHandlerRegistry } from './message-handler-registry';
import { OutboxRelay } from './outbox/outbox-relay';
import { deadLetterTopicOf, TOPICS } from './topics';

/** How long the consumer's start is tried again while the brokers do not all know its topics yet. */
const CONSUMER_START_TIMEOUT_MS = 30_000;

/**
 * Starts the relay and consumers once every module has registered its handlers, and stops them
 * in the order that loses nothing: stop consuming (offsets of finished work committed), let the
 * relay finish its round, then close the broker connection.
 */
@Injectable()
export class MessagingLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MessagingLifecycle.name);

  constructor(
    private readonly config: AppConfig,
    private readonly relay: OutboxRelay,
    private readonly registry: MessageHandlerRegistry,
    @Optional() private readonly kafka?: KafkaClient,
    @Optional() private readonly consumers?: KafkaConsumerRunner,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.kafka) {
      const topics = [...Object.values(TOPICS), ...this.registry.topics().flatMap((t) => [t, deadLetterTopicOf(t)])];
      await this.kafka.ensureTopics(topics);
    }
    if (!this.config.WORKERS_ENABLED) {
      this.logger.log('workers disabled: this instance serves HTTP only');
      return;
    }
    this.relay.start();
    // A topic just created reaches the brokers one by one: the consumer's first metadata read
    // may ask one that does not know it yet. A failed start leaves no consumer behind; start again.
    if (this.consumers) await whileUnknown(() => this.consumers!.start(), CONSUMER_START_TIMEOUT_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumers?.stop();
    await this.relay.stop();
    await this.kafka?.close();
  }
}
