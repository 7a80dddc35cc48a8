import { performance } from 'node:perf_hooks';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { renderWebhookBody } from '../../domain/webhooks/webhook-body';
import { nextWebhookAttemptAt, WebhookRetryPolicy } from '../../domain/webhooks/webhook-retry';
import { Metrics } from '../../infrastructure/observability/metrics';
import { ServiceInstance } from '../../infrastructure/scheduling/service-instance';
import { WakeSignal } from '../../infrastructure/scheduling/wake-signal';
import { sendWebhook, WebhookResponse, WebhookSendPolicy } from '../../infrastructure/webhooks/webhook-http';
import { signatureHeaders } from '../../infrastructure/webhooks/webhook-signer';
import { WebhookSecrets } from './webhook-secrets';
import { AttemptResult, LeasedDelivery, WebhookQueueRepository } from './webhook-queue.repository';

export interface WebhookDispatcherSettings {
  pollMs: number;
  /** Deliveries in flight in this instance at once. */
  concurrency: number;
  timeoutMs: number;
  maxResponseBytes: number;
  allowPrivate: boolean;
  retry: WebhookRetryPolicy;
  disableAfterMs: number;
  retentionDays: number;
  /** The base of the absolute `job_url` in job events. */
  baseUrl: () => string;
}

export const WEBHOOK_DISPATCHER_SETTINGS = Symbol('WebhookDispatcherSettings');

/** With no enabled endpoint anywhere, how often to look again. */
const IDLE_POLL_MS = 2_000;

/**
 * Delivers webhooks from the queue: leases due deliveries up to its free slots, sends each on its
 * own (a slow receiver holds only its own slots, capped per endpoint by the lease), and writes
 * the attempts in batches. At least once: a crash between the send and the write leaves a lease
 * that lapses (or is freed when the instance is known gone), and the delivery goes again with
 * the same id.
 */
@Injectable()
export class WebhookDispatcher {
  private readonly logger = new Logger(WebhookDispatcher.name);
  readonly holder: string;
  private readonly signal = new WakeSignal();
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly inFlight = new Map<string, Promise<void>>();
  private results: AttemptResult[] = [];
  private waiting: (() => void)[] = [];
  private flushing: Promise<void> | undefined;
  private lastPurge = 0;

  constructor(
    private readonly queue: WebhookQueueRepository,
    private readonly secrets: WebhookSecrets,
    private readonly metrics: Metrics,
    @Inject(WEBHOOK_DISPATCHER_SETTINGS) private readonly settings: WebhookDispatcherSettings,
    @Optional() instance?: ServiceInstance,
  ) {
    this.holder = instance?.id ?? `webhooks/${process.pid}/${Math.random().toString(36).slice(2, 10)}`;
    instance?.holdsLeases({
      what: 'webhook deliveries',
      release: (holders, manager) => this.queue.releaseLeasesOf(holders, manager),
      onFreed: () => this.signal.nudge(),
    });
  }

  get leaseMs(): number {
    // Long enough for a whole attempt and its write, so a live instance never loses its lease.
    return this.settings.timeoutMs + 30_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops leasing, lets attempts in flight end (each is bounded by the timeout) and writes them. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.signal.nudge();
    await this.loop;
    await Promise.allSettled(this.inFlight.values());
    await this.flushing;
  }

  /** Wakes the loop: work may be due (a resend, a new endpoint). */
  nudge(): void {
    this.signal.nudge();
  }

  private async run(): Promise<void> {
    let failures = 0;
    let idle = false;
    while (this.running) {
      try {
        idle = !(await this.queue.anyEnabledEndpoint());
        const leased = idle ? 0 : await this.leaseRound();
        await this.purgeIfDue();
        failures = 0;
        // A full round may have left more behind: go again as soon as a slot frees.
        if (leased > 0 && this.inFlight.size >= this.settings.concurrency) await this.signal.wait(this.settings.pollMs);
        else if (leased === 0) await this.signal.wait(idle ? IDLE_POLL_MS : this.settings.pollMs);
      } catch (error) {
        failures++;
        this.logger.warn(`webhook round failed: ${(error as Error).message}`);
        await this.signal.wait(Math.min(30_000, this.settings.pollMs * 2 ** Math.min(failures, 8)));
      }
    }
  }

  /** Leases what fits in the free slots and starts each attempt; answers how many it leased. */
  private async leaseRound(): Promise<number> {
    const free = this.settings.concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    const leased = await this.queue.lease({ holder: this.holder, limit: free, leaseMs: this.leaseMs });
    for (const delivery of leased) {
      const attempt = this.attempt(delivery).finally(() => {
        this.inFlight.delete(delivery.id);
        this.signal.nudge();
      });
      this.inFlight.set(delivery.id, attempt);
    }
    return leased.length;
  }

  private async attempt(delivery: LeasedDelivery): Promise<void> {
    const started = performance.now();
    let response: WebhookResponse;
    try {
      const body = renderWebhookBody(delivery.event, this.settings.baseUrl());
      const secrets = delivery.sealedSecrets.map((s) => this.secrets.open(s));
      const headers = signatureHeaders(delivery.event.id, new Date(), body, secrets);
      response = await sendWebhook({ url: delivery.url, headers, body }, this.policyFor(delivery));
    } catch (error) {
      // Nothing was sent (a secret that cannot be opened, say): a failed attempt, retried.
      response = { statusCode: null, latencyMs: 0, excerpt: '', error: (error as Error).message, outcome: 'retry' };
    }
    this.metrics.webhookAttempts.inc({ outcome: response.outcome });
    this.metrics.webhookAttemptDuration.observe(response.latencyMs / 1000);
    // The database's time now, from its time at the lease: retries are due on its clock.
    const attemptedAt = new Date(delivery.leasedAt.getTime() + Math.round(performance.now() - started));
    const next =
      response.outcome === 'retry' ? nextWebhookAttemptAt(attemptedAt, delivery.retryFrom, delivery.attempts + 1, this.settings.retry) : undefined;
    this.results.push({
      deliveryId: delivery.id,
      deliveryCreatedAt: delivery.createdAt,
      attemptedAt,
      statusCode: response.statusCode,
      latencyMs: response.latencyMs,
      excerpt: response.excerpt,
      error: response.error,
      status: response.outcome === 'delivered' ? 'delivered' : next ? 'pending' : 'failed',
      nextAttemptAt: next ?? null,
    });
    await this.scheduleFlush();
  }

  private policyFor(delivery: LeasedDelivery): WebhookSendPolicy {
    return {
      timeoutMs: this.settings.timeoutMs,
      maxResponseBytes: this.settings.maxResponseBytes,
      allowLoopback: delivery.sandbox,
      allowPrivate: this.settings.allowPrivate,
    };
  }

  /**
   * Waits for the write that carries this attempt's result. Group commit: with no write under
   * way, this result is written at once; results that end while one is under way go together in
   * the next, so a busy dispatcher writes in batches and an idle one adds no delay.
   */
  private scheduleFlush(): Promise<void> {
    const written = this.nextFlushed();
    this.flushing ??= this.flushLoop();
    return written;
  }

  /** Resolves once every result queued so far is written (or given up for this round). */
  private nextFlushed(): Promise<void> {
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private async flushLoop(): Promise<void> {
    while (this.results.length > 0) {
      const batch = this.results;
      const waiting = this.waiting;
      this.results = [];
      this.waiting = [];
      await this.flush(batch);
      for (const resolve of waiting) resolve();
    }
    // In the same turn as the last look at `results`: a result queued after it starts a new loop.
    this.flushing = undefined;
  }

  private async flush(batch: AttemptResult[]): Promise<void> {
    try {
      const disabled = await this.queue.record(this.holder, batch, this.settings.disableAfterMs);
      for (const d of disabled) this.logger.warn(`webhook endpoint ${d.id} disabled: ${d.reason}`);
    } catch (error) {
      // The slots are let go all the same: their leases lapse and the deliveries go again.
      this.logger.warn(`recording ${batch.length} webhook attempts failed: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  private async purgeIfDue(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurge < 10 * 60_000) return;
    this.lastPurge = now;
    await this.queue.purge(this.settings.retentionDays);
  }
}
