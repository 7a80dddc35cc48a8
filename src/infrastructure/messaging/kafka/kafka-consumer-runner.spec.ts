import { Logger } from '@nestjs/common';
import { EachBatchPayload } from 'kafkajs';
import { MessageProcessor, ProcessOutcome } from '../inbox/message-processor';
import { InboundMessage, MessageHandler } from '../message';
import { MessageHandlerRegistry } from '../message-handler-registry';
import { TopicNames } from '../topics';
import { KafkaClient } from './kafka-client';
import { KafkaConsumerRunner } from './kafka-consumer-runner';

/**
 * A Kafka client whose consumer hands its eachBatch to the test and disconnects at once, as a
 * client that does not wait for the batch in flight would.
 */
function clientWithEagerDisconnect() {
  let eachBatch: ((payload: EachBatchPayload) => Promise<void>) | undefined;
  const consumer = {
    events: { CRASH: 'consumer.crash' },
    on: () => undefined,
    connect: async () => undefined,
    subscribe: async () => undefined,
    run: async (config: { eachBatch: (payload: EachBatchPayload) => Promise<void> }) => {
      eachBatch = config.eachBatch;
    },
    disconnect: jest.fn(async () => undefined),
  };
  const topics = new TopicNames('unit.');
  const client = { kafka: { consumer: () => consumer }, topics } as unknown as KafkaClient;
  return { client, consumer, topics, eachBatch: () => eachBatch! };
}

const handler: MessageHandler = { consumer: 'unit-consumer', topic: 'unit.topic', handle: async () => undefined };

const payload = (physicalTopic: string, messages: number): EachBatchPayload =>
  ({
    batch: {
      topic: physicalTopic,
      partition: 0,
      messages: Array.from({ length: messages }, (_, i) => ({ key: Buffer.from('k'), value: Buffer.from('{}'), headers: {}, offset: String(i) })),
    },
    resolveOffset: () => undefined,
    heartbeat: async () => undefined,
    commitOffsetsIfNecessary: async () => undefined,
    uncommittedOffsets: () => ({ topics: [] }),
    isRunning: () => true,
    isStale: () => false,
  }) as unknown as EachBatchPayload;

describe('KafkaConsumerRunner.stop', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('resolves only once the batch being applied has committed, even when the client disconnects at once', async () => {
    const kafka = clientWithEagerDisconnect();
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    let finished = false;
    const processor = {
      processBatch: async (_handler: MessageHandler, messages: InboundMessage[]): Promise<ProcessOutcome[]> => {
        await committed;
        finished = true;
        return messages.map(() => 'applied');
      },
    } as unknown as MessageProcessor;
    const registry = new MessageHandlerRegistry();
    registry.register(handler);
    const runner = new KafkaConsumerRunner(kafka.client, registry, processor, { groupId: 'g', partitionsConsumedConcurrently: 1 });
    await runner.start();

    const batch = kafka.eachBatch()(payload(kafka.topics.physical(handler.topic), 3));
    let stopped = false;
    const stopping = runner.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(kafka.consumer.disconnect).toHaveBeenCalled();
    expect(stopped).toBe(false);

    commit();
    await stopping;
    expect(finished).toBe(true);
    await batch;
  });

  it('resolves at once when no batch is in flight', async () => {
    const kafka = clientWithEagerDisconnect();
    const registry = new MessageHandlerRegistry();
    registry.register(handler);
    const runner = new KafkaConsumerRunner(kafka.client, registry, {} as MessageProcessor, { groupId: 'g', partitionsConsumedConcurrently: 1 });
    await runner.start();
    await runner.stop();
    expect(kafka.consumer.disconnect).toHaveBeenCalledTimes(1);
  });
});
