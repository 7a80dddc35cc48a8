import { AppConfig } from '../../config/app-config';
import { KafkaClient } from './kafka/kafka-client';
import { KafkaConsumerRunner } from './kafka/kafka-consumer-runner';
import { MessageHandlerRegistry } from './message-handler-registry';
import { MessagingLifecycle } from './messaging-lifecycle';
import { OutboxRelay } from './outbox/outbox-relay';

/** The lifecycle over a consumer whose start fails with `errors` first, in turn. */
function lifecycleWhoseConsumerFails(errors: Error[]) {
  const start = jest.fn(async () => {
    const error = errors.shift();
    if (error) throw error;
  });
  const lifecycle = new MessagingLifecycle(
    { WORKERS_ENABLED: true } as AppConfig,
    { start: jest.fn() } as unknown as OutboxRelay,
    new MessageHandlerRegistry(),
    { ensureTopics: jest.fn(async () => undefined) } as unknown as KafkaClient,
    { start } as unknown as KafkaConsumerRunner,
  );
  return { lifecycle, start };
}

// kafkajs's error for a topic a broker does not know yet.
const unknownTopic = () => Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });

describe('MessagingLifecycle, the consumer at start-up', () => {
  it('starts the consumer again while a broker does not know its topics yet', async () => {
    const { lifecycle, start } = lifecycleWhoseConsumerFails([unknownTopic(), unknownTopic()]);

    await lifecycle.onApplicationBootstrap();

    expect(start).toHaveBeenCalledTimes(3);
  });

  it('fails the start-up at once on any other error', async () => {
    const refused = Object.assign(new Error('Not authorized to access group'), { type: 'GROUP_AUTHORIZATION_FAILED' });
    const { lifecycle, start } = lifecycleWhoseConsumerFails([refused]);

    await expect(lifecycle.onApplicationBootstrap()).rejects.toBe(refused);
    expect(start).toHaveBeenCalledTimes(1);
  });
});
