import { Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { KafkaClient } from '../../infrastructure/messaging/kafka/kafka-client';

/** Kafka is part of readiness only when the service is configured to use it. */
@Injectable()
export class KafkaHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Optional() private readonly kafka?: KafkaClient,
  ) {}

  get configured(): boolean {
    return this.kafka !== undefined;
  }

  async check(key = 'kafka') {
    const indicator = this.indicators.check(key);
    if (!this.kafka) return indicator.up({ mode: 'in-process' });
    try {
      await this.kafka.ping(2_000);
      // Answering is not enough: a partition that cannot take writes fails the outbox and the
      // dead letters until its replicas are back, so readiness says so instead of requests failing.
      const problems = await this.kafka.writeProblems();
      if (problems.length > 0) return indicator.down({ message: `the cluster cannot take writes: ${problems.slice(0, 5).join('; ')}`, partitions: problems.length });
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    }
  }
}
