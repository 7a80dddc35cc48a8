/** Every topic the service reads or writes, in one place. Names get KAFKA_TOPIC_PREFIX in front. */
export const TOPICS = {
  /** HRIS events published by benefits platforms; key = connection_id keeps an employer in order. */
  hrisEvents: 'hris.events',
  /** Poison HRIS events, with the reason and the original payload and headers. */
  hrisEventsDeadLetter: 'hris.events.dlq',
  /** Domain events this service publishes through the outbox. */
  benefitsEvents: 'benefits.events',
} as const;

export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];

export const deadLetterTopicOf = (topic: string): string => `${topic}.dlq`;

export class TopicNames {
  constructor(private readonly prefix: string) {}

  /** The broker-side name of a logical topic. */
  physical(topic: string): string {
    return `${this.prefix}${topic}`;
  }

  /** The logical name of a broker-side topic, or undefined when it is not ours. */
  logical(physical: string): string | undefined {
    return physical.startsWith(this.prefix) ? physical.slice(this.prefix.length) : undefined;
  }
}
