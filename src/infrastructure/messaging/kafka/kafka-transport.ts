import { Injectable } from '@nestjs/common';
import { TopicMessages } from 'kafkajs';
import { MessageTransport, RelayedMessage } from '../message-transport';
import { KafkaClient } from './kafka-client';
import { sendPartitionWise } from './partition-wise-send';

/** Publishes relayed outbox messages to Kafka, acknowledged by all in-sync replicas, a request per partition (partition-wise-send.ts). */
@Injectable()
export class KafkaTransport implements MessageTransport {
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
    await sendPartitionWise(producer, (topic) => this.client.partitionsOf(topic), [...byTopic.values()]);
  }
}
