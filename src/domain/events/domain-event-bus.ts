/**
 * Domain events delivered inside the transaction that produced them. `@nestjs/cqrs`' EventBus
 * dispatches to its handlers without awaiting them, after the caller has moved on: a saga moved
 * that way could miss a commit, or move for a change that rolled back. Here `publish` awaits
 * every subscriber, in subscription order, before the producer's transaction commits; a
 * subscriber that throws rolls the whole change back. Subscribers write through the ambient
 * unit of work, so they need no transaction handle.
 */
export type EventClass<E extends object = object> = abstract new (...args: never[]) => E;

/** Receives, in the order they were published, every event of the classes it subscribed to. */
export type EventSubscriber<E extends object> = (events: readonly E[]) => Promise<void>;

interface Subscription {
  classes: readonly EventClass[];
  handle: EventSubscriber<object>;
}

export class DomainEventBus {
  private readonly subscriptions: Subscription[] = [];

  /** One subscriber for several event classes: it sees them interleaved as they happened. */
  subscribe<E extends object>(classes: readonly EventClass<E>[], handle: EventSubscriber<E>): void {
    this.subscriptions.push({ classes, handle: handle as EventSubscriber<object> });
  }

  async publish(events: readonly object[]): Promise<void> {
    if (events.length === 0) return;
    for (const { classes, handle } of this.subscriptions) {
      const wanted = events.filter((event) => classes.some((c) => event instanceof c));
      if (wanted.length > 0) await handle(wanted);
    }
  }
}
