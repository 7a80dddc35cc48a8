import { BeforeApplicationShutdown, Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { GustoEventsPoller } from '../../infrastructure/providers/gusto/gusto-events-poller';
import { GustoHttp } from '../../infrastructure/providers/gusto/gusto-http';
import { GustoSystemTokens, GustoWebhookSubscriptions } from '../../infrastructure/providers/gusto/gusto-webhook-subscriptions';
import { SealingKey } from '../../infrastructure/secrets/sealing-key';
import { JobsModule } from '../jobs/jobs.module';
import { GustoEventIntake } from './gusto-event-intake';
import { captureGustoWebhookBodies, GUSTO_WEBHOOKS_PATH, GustoWebhooksController } from './gusto-webhooks.controller';
import { ProvidersModule } from './providers.module';

/** How often an instance looks whether upkeep is due (the cursor row says whether any instance did it lately). */
export const GUSTO_UPKEEP_TICK_MS = 15_000;
/** The events feed is read this often while no subscription is verified: it is then the only source. */
export const GUSTO_FALLBACK_POLL_MS = 60_000;
/** …and this often while one is: a safety net for deliveries Gusto gave up on. */
export const GUSTO_SAFETY_POLL_MS = 15 * 60_000;
const PRUNE_EVERY_MS = 3_600_000;

/**
 * The background side of Gusto's webhooks, on instances that run workers and only with a Gusto
 * application configured: subscribe PUBLIC_BASE_URL's webhook route (when set: Gusto only
 * delivers to a public address), offer kept verification tokens, read the events feed, forget
 * old events. One instance at a time does a round (the feed's lease); the others find it done.
 */
@Injectable()
export class GustoWebhooksUpkeep implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('GustoWebhooksUpkeep');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private prunedAt = 0;

  constructor(
    private readonly config: AppConfig,
    private readonly subscriptions: GustoWebhookSubscriptions,
    private readonly poller: GustoEventsPoller,
    private readonly intake: GustoEventIntake,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.gustoConfigured || !this.config.WORKERS_ENABLED) return;
    this.schedule(0);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort(new Error('shutting down'));
    clearTimeout(this.timer);
    await this.running;
  }

  /** One round: subscribe and verify (under the feed's lease), read the feed if due, prune. */
  async round(signal?: AbortSignal): Promise<void> {
    const verified = await this.subscriptions.hasVerified();
    await this.poller.pollOnce({
      minIntervalMs: verified ? GUSTO_SAFETY_POLL_MS : GUSTO_FALLBACK_POLL_MS,
      signal,
      whileLeased: () => this.subscribe(signal),
    });
    if (Date.now() - this.prunedAt >= PRUNE_EVERY_MS) {
      await this.intake.prune();
      this.prunedAt = Date.now();
    }
  }

  private async subscribe(signal?: AbortSignal): Promise<void> {
    const base = this.config.PUBLIC_BASE_URL?.replace(/\/+$/, '');
    try {
      if (base) await this.subscriptions.ensure(`${base}${GUSTO_WEBHOOKS_PATH}`, undefined, signal);
      else await this.subscriptions.verifyPending(signal);
    } catch (error) {
      // The feed is read all the same: it is the fallback for exactly this.
      this.logger.warn(`Gusto webhook subscription not settled yet: ${(error as Error).message}`);
    }
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.running = this.round(this.stopping.signal)
        .catch((error: unknown) => {
          // A background round: its state is in the database, the next round starts over from it.
          if (!this.stopping.signal.aborted) this.logger.warn(`Gusto events round failed: ${(error as Error).message}`);
        })
        .finally(() => {
          this.running = undefined;
          if (!this.stopping.signal.aborted) this.schedule(GUSTO_UPKEEP_TICK_MS);
        });
    }, ms);
    this.timer.unref();
  }
}

/**
 * Gusto's webhooks (docs/providers/gusto.md "Webhooks"): `POST /providers/gusto/webhooks`, the
 * subscription and its handshake, the events feed as the fallback, and the intake both feed.
 */
@Module({
  imports: [JobsModule, ProvidersModule],
  controllers: [GustoWebhooksController],
  providers: [
    // Its own instance (stateless but for the key read once): no reliance on another module exporting it.
    SealingKey,
    {
      provide: GustoSystemTokens,
      inject: [AppConfig, CLOCK],
      useFactory: (config: AppConfig, clock: Clock) =>
        new GustoSystemTokens(
          new GustoHttp({ baseUrl: config.GUSTO_BASE_URL, apiVersion: config.GUSTO_API_VERSION }),
          config.GUSTO_CLIENT_ID !== undefined && config.GUSTO_CLIENT_SECRET !== undefined
            ? { clientId: config.GUSTO_CLIENT_ID, clientSecret: config.GUSTO_CLIENT_SECRET }
            : undefined,
          clock,
        ),
    },
    {
      provide: GustoWebhookSubscriptions,
      inject: [DataSource, SealingKey, GustoSystemTokens],
      useFactory: (dataSource: DataSource, sealingKey: SealingKey, tokens: GustoSystemTokens) => new GustoWebhookSubscriptions(dataSource, sealingKey, tokens),
    },
    GustoEventIntake,
    {
      provide: GustoEventsPoller,
      inject: [DataSource, GustoSystemTokens, GustoEventIntake],
      useFactory: (dataSource: DataSource, tokens: GustoSystemTokens, intake: GustoEventIntake) => new GustoEventsPoller(dataSource, tokens, intake),
    },
    GustoWebhooksUpkeep,
  ],
  exports: [GustoEventIntake, GustoWebhookSubscriptions, GustoEventsPoller],
})
export class GustoWebhooksModule implements OnModuleInit {
  constructor(@Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost) {}

  /** Before the server is ready (routes get their hooks then), after the routes are registered. */
  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (fastify) captureGustoWebhookBodies(fastify);
  }
}
