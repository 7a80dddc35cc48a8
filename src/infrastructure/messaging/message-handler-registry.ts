import { Injectable } from '@nestjs/common';
import { MessageHandler } from './message';

/** Consumers register here at module init; transports deliver each message to every handler of its topic. */
@Injectable()
export class MessageHandlerRegistry {
  private readonly byTopic = new Map<string, MessageHandler[]>();

  register(handler: MessageHandler): void {
    const handlers = this.byTopic.get(handler.topic) ?? [];
    if (handlers.some((h) => h.consumer === handler.consumer)) {
      throw new Error(`consumer ${handler.consumer} is already registered on ${handler.topic}`);
    }
    this.byTopic.set(handler.topic, [...handlers, handler]);
  }

  handlersFor(topic: string): readonly MessageHandler[] {
    return this.byTopic.get(topic) ?? [];
  }

  topics(): string[] {
    return [...this.byTopic.keys()];
  }
}
