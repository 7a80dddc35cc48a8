import { BeforeApplicationShutdown, Injectable, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { ServiceAddress } from '../../config/service-address';
import { ServiceInstanceModule } from '../../infrastructure/scheduling/service-instance.module';
import { ApplicationsModule } from '../applications/applications.module';
import { OpsCredentialsGuard } from '../ops-auth/ops-credentials.guard';
import { OpsWebhooksController } from './ops-webhooks.controller';
import { WEBHOOK_DISPATCHER_SETTINGS, WebhookDispatcher, WebhookDispatcherSettings } from './webhook-dispatcher';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { WebhookQueueRepository } from './webhook-queue.repository';
import { WebhookSecrets } from './webhook-secrets';
import { WebhooksController } from './webhooks.controller';

/** Starts the dispatcher once the service is up (where this instance delivers); stops it on shutdown. */
@Injectable()
export class WebhookDelivery implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookDelivery.name);

  constructor(
    private readonly config: AppConfig,
    private readonly dispatcher: WebhookDispatcher,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.WORKERS_ENABLED || !this.config.WEBHOOK_DELIVERY) {
      this.logger.log('webhook delivery off on this instance: other instances deliver');
      return;
    }
    this.dispatcher.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.dispatcher.stop();
  }
}

/**
 * Webhooks: endpoints per application (`/webhooks`), their deliveries for ops
 * (`/ops/api/webhooks`), and the dispatcher that delivers what the database queued in the
 * transactions that made each change (migration 1797000000000).
 */
@Module({
  imports: [ApplicationsModule, ServiceInstanceModule],
  controllers: [WebhooksController, OpsWebhooksController],
  providers: [
    OpsCredentialsGuard,
    WebhookSecrets,
    WebhookEndpointsRepository,
    WebhookEndpointsService,
    WebhookQueueRepository,
    {
      provide: WEBHOOK_DISPATCHER_SETTINGS,
      inject: [AppConfig, ServiceAddress],
      useFactory: (config: AppConfig, address: ServiceAddress): WebhookDispatcherSettings => ({
        pollMs: config.WEBHOOK_POLL_MS,
        concurrency: config.WEBHOOK_CONCURRENCY,
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        maxResponseBytes: config.WEBHOOK_MAX_RESPONSE_BYTES,
        allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_ADDRESSES,
        retry: { baseDelayMs: config.WEBHOOK_RETRY_BASE_MS, maxDelayMs: config.WEBHOOK_RETRY_MAX_DELAY_MS, windowMs: config.WEBHOOK_RETRY_WINDOW_MS },
        disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS,
        retentionDays: config.WEBHOOK_RETENTION_DAYS,
        baseUrl: () => address.baseUrl,
      }),
    },
    WebhookDispatcher,
    WebhookDelivery,
  ],
  exports: [WebhookDispatcher],
})
export class WebhooksModule {}
