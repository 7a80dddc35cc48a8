import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Buckets of the batch-size histograms, up to KAFKA_BATCH_MAX's largest value. */
const BATCH_SIZE_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];

/** Prometheus metrics of one process. One registry per app instance, so tests stay isolated. */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly outboxPublished = new Counter({
    name: 'outbox_messages_published_total',
    help: 'Outbox messages handed to the transport',
    labelNames: ['topic'] as const,
    registers: [this.registry],
  });

  /** Messages per relay round that published any: like a batch's size, the relay's cost per message falls as it grows. */
  readonly outboxRoundMessages = new Histogram({
    name: 'outbox_messages_per_round',
    help: 'Outbox messages published per relay round (rounds that published any)',
    buckets: BATCH_SIZE_BUCKETS,
    registers: [this.registry],
  });

  readonly outboxPublishFailures = new Counter({
    name: 'outbox_publish_failures_total',
    help: 'Outbox relay batches that failed to publish and will be retried',
    registers: [this.registry],
  });

  readonly outboxPending = new Gauge({
    name: 'outbox_messages_pending',
    help: 'Outbox messages committed but not yet published (sampled by the relay)',
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: 'webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome (delivered, retry, stop)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookAttemptDuration = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Webhook delivery attempts, request to answer (or timeout)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly messagesConsumed = new Counter({
    name: 'messages_consumed_total',
    help: 'Inbound messages by consumer and outcome (applied, duplicate, dead_lettered)',
    labelNames: ['consumer', 'outcome'] as const,
    registers: [this.registry],
  });

  /**
   * Inbound messages per committed batch transaction. Near KAFKA_BATCH_MAX the consumer is behind
   * its partitions and applies full batches, its cheapest per message; small batches mean it
   * keeps up, each batch's fixed cost (its statements and commit) spread over fewer messages.
   */
  readonly messagesPerTransaction = new Histogram({
    name: 'messages_applied_per_transaction',
    help: 'Inbound messages per committed batch transaction, by consumer',
    labelNames: ['consumer'] as const,
    buckets: BATCH_SIZE_BUCKETS,
    registers: [this.registry],
  });

  readonly messageRetries = new Counter({
    name: 'message_processing_retries_total',
    help: 'Transient failures while applying an inbound message (it is retried)',
    labelNames: ['consumer'] as const,
    registers: [this.registry],
  });

  readonly readCacheRequests = new Counter({
    name: 'read_cache_requests_total',
    help: 'Synced employer reads: answered from memory (hit), from memory with 304 (not_modified), or through the pipeline (miss)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly consumerRestarts = new Counter({
    name: 'kafka_consumer_restarts_total',
    help: 'Kafka consumers started again after a crash (a broker or the group coordinator unreachable longer than the client retries)',
    registers: [this.registry],
  });

  readonly tableUpkeep = new Counter({
    name: 'table_upkeep_total',
    help: 'Tables vacuumed or analyzed by the service (DATABASE_TABLE_UPKEEP), where the server\'s autovacuum is off',
    labelNames: ['table', 'action'] as const,
    registers: [this.registry],
  });

  /**
   * The event loop's busy time (running JavaScript or synchronous system calls, not waiting for
   * I/O), read from Node's event-loop utilization at each scrape. Its rate is the share of one
   * core the process's main thread uses: near 1, that thread is what limits the instance, and
   * another instance (with a core of its own) is what adds throughput.
   */
  private eventLoopBusyCounted = 0;
  readonly eventLoopBusy: Counter = new Counter({
    name: 'nodejs_eventloop_busy_seconds_total',
    help: 'Time the event loop was busy since the process started (its rate is the event loop utilization)',
    registers: [this.registry],
    collect: () => {
      const busy = performance.eventLoopUtilization().active / 1000;
      if (busy > this.eventLoopBusyCounted) this.eventLoopBusy.inc(busy - this.eventLoopBusyCounted);
      this.eventLoopBusyCounted = Math.max(busy, this.eventLoopBusyCounted);
    },
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
