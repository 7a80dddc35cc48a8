import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { KafkaClient } from './kafka/kafka-client';
import { KafkaConsumerRunner } from './kafka/kafka-consumer-runner';
import { MessageHandlerRegistry } from './message-handler-registry';
import { OutboxRelay } from './outbox/outbox-relay';
import { deadLetterTopicOf, TOPICS } from './topics';

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
    await this.consumers?.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumers?.stop();
    await this.relay.stop();
    await this.kafka?.close();
  }
}
