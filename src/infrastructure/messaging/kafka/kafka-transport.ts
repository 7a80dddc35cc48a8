import { Injectable, Logger } from '@nestjs/common';
import { TopicMessages } from 'kafkajs';
import { MessageTransport, RelayedMessage } from '../message-transport';
import { sendAcknowledged } from './acknowledged-send';
import { KafkaClient } from './kafka-client';

/**
 * Publishes relayed outbox messages to Kafka, acknowledged by all in-sync replicas, and resolves
 * only once a broker has answered for every partition (acknowledged-send.ts): the relay marks a
 * row published on that answer alone.
 */
@Injectable()
export class KafkaTransport implements MessageTransport {
  private readonly logger = new Logger(KafkaTransport.name);

  constructor(private readonly client: KafkaClient) {}

  async publish(messages: RelayedMessage[]): Promise<void> {
    const byTopic = new Map<string, TopicMessages>();
    for (const m of messages) {
      const topic = this.client.topics.physical(m.topic);
      let entry = byTopic.get(topic);
      if (!entry) {
        entry = { topic, messages: [] };
        byTopic.set(topic, entry);
      }
      entry.messages.push({
        key: m.key,
        value: m.value,
        headers: { ...m.headers, 'content-type': 'application/json' },
      });
    }
    const producer = await this.client.producer();
    await sendAcknowledged(producer, (topic) => this.client.partitionsOf(topic), [...byTopic.values()], {
      onUnanswered: (unanswered) =>
        this.logger.warn(`kafkajs resolved a send without an answer for ${unanswered.map((p) => `${p.topic} partition ${p.partition}`).join(', ')}; sending those again`),
    });
  }
}
