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

describe('KafkaConsumerRunner, a batch that fails', () => {
  beforeAll(() => Logger.overrideLogger(false));

  /** A runner over a processor whose batches fail with `errors` first, in turn; what it was asked. */
  async function runnerFailingWith(errors: Error[]) {
    const kafka = clientWithEagerDisconnect();
    const calls = { batches: [] as number[], oneByOne: 0 };
    const processor = {
      processBatch: async (_handler: MessageHandler, messages: InboundMessage[]): Promise<ProcessOutcome[]> => {
        calls.batches.push(messages.length);
        const error = errors.shift();
        if (error) throw error;
        return messages.map(() => 'applied');
      },
      process: async (): Promise<ProcessOutcome> => {
        calls.oneByOne++;
        return 'applied';
      },
    } as unknown as MessageProcessor;
    const registry = new MessageHandlerRegistry();
    registry.register(handler);
    const runner = new KafkaConsumerRunner(kafka.client, registry, processor, { groupId: 'g', partitionsConsumedConcurrently: 1 });
    await runner.start();
    const heartbeats = jest.fn(async () => undefined);
    const resolved: string[] = [];
    const consume = (messages: number) =>
      kafka.eachBatch()({ ...payload(kafka.topics.physical(handler.topic), messages), heartbeat: heartbeats, resolveOffset: (o: string) => resolved.push(o) } as EachBatchPayload);
    return { runner, calls, heartbeats, resolved, consume };
  }
  const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

  it('applies the batch again as a whole while the database is unavailable, past the attempts a deadlock gets, beating meanwhile', async () => {
    const unavailable = [
      withCode('server login has been failing, try again later (server_login_retry)', '08P01'),
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      withCode('terminating connection due to administrator command', '57P01'),
      new Error('Connection terminated unexpectedly'),
    ];
    const { runner, calls, heartbeats, resolved, consume } = await runnerFailingWith(unavailable);

    await consume(5);

    expect(calls.batches).toEqual([5, 5, 5, 5, 5]);
    expect(calls.oneByOne).toBe(0);
    expect(heartbeats.mock.calls.length).toBeGreaterThanOrEqual(4);
    expect(resolved).toEqual(['4']);
    await runner.stop();
  });

  it('applies a batch one by one once it deadlocked as often as a batch is tried', async () => {
    const deadlocks = [1, 2, 3].map(() => withCode('deadlock detected', '40P01'));
    const { runner, calls, resolved, consume } = await runnerFailingWith(deadlocks);

    await consume(5);

    expect(calls.batches).toEqual([5, 5, 5]);
    expect(calls.oneByOne).toBe(5);
    expect(resolved).toEqual(['0', '1', '2', '3', '4']);
    await runner.stop();
  });
});

describe('KafkaConsumerRunner, a batch that takes long', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterEach(() => jest.useRealTimers());

  /** A runner (session timeout 6 s: a heartbeat every 2 s) whose batches wait for `release`. */
  async function runnerHeldOpen(heartbeat: () => Promise<void>) {
    jest.useFakeTimers();
    const kafka = clientWithEagerDisconnect();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let stopAsked: (() => boolean) | undefined;
    const processor = {
      processBatch: async (_handler: MessageHandler, messages: InboundMessage[], options: { stop?: () => boolean }): Promise<ProcessOutcome[]> => {
        stopAsked = options.stop;
        await held;
        return messages.map(() => 'applied');
      },
    } as unknown as MessageProcessor;
    const registry = new MessageHandlerRegistry();
    registry.register(handler);
    const runner = new KafkaConsumerRunner(kafka.client, registry, processor, { groupId: 'g', partitionsConsumedConcurrently: 1, sessionTimeoutMs: 6_000 });
    await runner.start();
    const consuming = kafka.eachBatch()({ ...payload(kafka.topics.physical(handler.topic), 5), heartbeat } as EachBatchPayload);
    return { runner, release, consuming, stop: () => stopAsked!() };
  }

  it('asks for a heartbeat every interval while the batch is applied, and stops asking once it is done', async () => {
    const heartbeats = jest.fn(async () => undefined);
    const { runner, release, consuming } = await runnerHeldOpen(heartbeats);

    await jest.advanceTimersByTimeAsync(7_000);
    expect(heartbeats).toHaveBeenCalledTimes(3);

    release();
    await consuming;
    const afterBatch = heartbeats.mock.calls.length;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(heartbeats).toHaveBeenCalledTimes(afterBatch);
    await runner.stop();
  });

  it('tells the batch in progress to stop once a heartbeat fails (the group is rebalancing)', async () => {
    const rebalancing = Object.assign(new Error('The group is rebalancing, so a rejoin is needed'), { type: 'REBALANCE_IN_PROGRESS' });
    let fail = false;
    const { runner, release, consuming, stop } = await runnerHeldOpen(async () => {
      if (fail) throw rebalancing;
    });

    await jest.advanceTimersByTimeAsync(2_000);
    expect(stop()).toBe(false);
    fail = true;
    await jest.advanceTimersByTimeAsync(2_000);
    expect(stop()).toBe(true);

    release();
    await expect(consuming).rejects.toBe(rebalancing);
    await runner.stop();
  });
});
