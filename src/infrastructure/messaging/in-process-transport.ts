import { Injectable } from '@nestjs/common';
import { MessageProcessor } from './inbox/message-processor';
import { MessageHandlerRegistry } from './message-handler-registry';
import { MessageTransport, RelayedMessage } from './message-transport';

/**
 * The embedded default has no broker: the relay hands messages straight to the same handlers a
 * Kafka consumer would, through the same inbox. A message no handler wants is simply dropped,
 * as a topic nobody consumes would keep it unread.
 */
@Injectable()
export class InProcessTransport implements MessageTransport {
  constructor(
    private readonly registry: MessageHandlerRegistry,
    private readonly processor: MessageProcessor,
  ) {}

  async publish(messages: RelayedMessage[]): Promise<void> {
    for (const m of messages) {
      for (const handler of this.registry.handlersFor(m.topic)) {
        await this.processor.process(handler, {
          topic: m.topic,
          key: m.key,
          value: m.value,
          headers: m.headers,
        });
      }
    }
  }
}
