import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { ServiceAddress } from '../../config/service-address';
import { invalidRequest, notFound } from '../../domain/shared/domain-error';
import { renderWebhookBody } from '../../domain/webhooks/webhook-body';
import { chooseEventTypes } from '../../domain/webhooks/webhook-event-types';
import { checkWebhookUrl } from '../../domain/webhooks/webhook-url';
import { judgeWebhookAddress } from '../../infrastructure/webhooks/webhook-address';
import { OpsAuditWriter } from '../ops-audit/ops-audit.writer';
import {
  CreateWebhookEndpointDto,
  UpdateWebhookEndpointDto,
  WebhookDeliveryDetailResponse,
  WebhookDeliveryResponse,
  WebhookEndpointResponse,
  WebhookEndpointWithSecretResponse,
} from './dto/webhook-endpoint.dto';
import { WebhookDispatcher } from './webhook-dispatcher';
import { DeliveryFilter, WebhookDelivery, WebhookEndpoint, WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { WebhookSecrets } from './webhook-secrets';

/** Endpoints one application may have: enough for every environment and team, not a fan-out tool. */
export const MAX_ENDPOINTS_PER_APPLICATION = 20;
/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_GRACE_MS = 24 * 3_600_000;

/** Who asks: an application (its own endpoints only) or ops (every endpoint). */
export type WebhookCaller = { kind: 'application'; applicationId: string; sandbox: boolean } | { kind: 'ops'; user: string };

@Injectable()
export class WebhookEndpointsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly secrets: WebhookSecrets,
    private readonly dispatcher: WebhookDispatcher,
    private readonly audit: OpsAuditWriter,
    private readonly address: ServiceAddress,
    private readonly config: AppConfig,
  ) {}

  async create(applicationId: string, sandbox: boolean, input: CreateWebhookEndpointDto): Promise<WebhookEndpointWithSecretResponse> {
    const url = this.checkedUrl(input.url, sandbox);
    const eventTypes = this.checkedTypes(input.event_types);
    const { secret, sealed } = this.secrets.issue();
    const id = randomUUID();
    await this.dataSource.transaction(async (manager) => {
      // The application's row is the lock that keeps two concurrent creations within the limit.
      await manager.query(`SELECT 1 FROM applications WHERE id = $1 FOR UPDATE`, [applicationId]);
      if ((await this.endpoints.countOf(applicationId, manager)) >= MAX_ENDPOINTS_PER_APPLICATION) {
        throw invalidRequest(`An application has at most ${MAX_ENDPOINTS_PER_APPLICATION} webhook endpoints; delete one first`, 'too_many_webhook_endpoints');
      }
      await this.endpoints.insert(
        {
          id,
          applicationId,
          url,
          description: input.description ?? null,
          eventTypes,
          enabled: input.enabled ?? true,
          orderedByConnection: input.ordered_by_connection ?? false,
          maxConcurrency: input.max_concurrency ?? 4,
          secretSealed: sealed,
        },
        manager,
      );
    });
    // An idle dispatcher looks for endpoints only now and then: this one may have work soon.
    this.dispatcher.nudge();
    return { ...endpointView((await this.endpoints.find(id))!), secret };
  }

  async list(applicationId: string): Promise<WebhookEndpointResponse[]> {
    return (await this.endpoints.list(applicationId)).map(endpointView);
  }

  async get(applicationId: string, id: string): Promise<WebhookEndpointResponse> {
    return endpointView(await this.owned(id, applicationId));
  }

  async update(applicationId: string, sandbox: boolean, id: string, input: UpdateWebhookEndpointDto): Promise<WebhookEndpointResponse> {
    if (Object.values(input).every((v) => v === undefined)) {
      throw invalidRequest('Send at least one of url, event_types, description, enabled, ordered_by_connection, max_concurrency');
    }
    const url = input.url === undefined ? undefined : this.checkedUrl(input.url, sandbox);
    const eventTypes = input.event_types === undefined ? undefined : this.checkedTypes(input.event_types);
    await this.dataSource.transaction(async (manager) => {
      if (!isUuid(id) || !(await this.endpoints.find(id, applicationId, manager, true))) throw endpointNotFound(id);
      await this.endpoints.update(
        id,
        {
          url,
          eventTypes,
          description: input.description,
          enabled: input.enabled,
          orderedByConnection: input.ordered_by_connection,
          maxConcurrency: input.max_concurrency,
        },
        manager,
      );
    });
    if (input.enabled) this.dispatcher.nudge();
    return this.get(applicationId, id);
  }

  /** Deletes the endpoint; its pending deliveries are dropped with it. */
  async delete(applicationId: string, id: string): Promise<{ id: string; deleted: true }> {
    await this.dataSource.transaction(async (manager) => {
      if (!isUuid(id) || !(await this.endpoints.find(id, applicationId, manager, true))) throw endpointNotFound(id);
      await this.endpoints.delete(id, manager);
    });
    return { id, deleted: true };
  }

  async rotateSecret(applicationId: string, id: string): Promise<WebhookEndpointWithSecretResponse> {
    const { secret, sealed } = this.secrets.issue();
    await this.dataSource.transaction(async (manager) => {
      if (!isUuid(id) || !(await this.endpoints.find(id, applicationId, manager, true))) throw endpointNotFound(id);
      await this.endpoints.rotate(id, sealed, ROTATION_GRACE_MS, manager);
    });
    return { ...(await this.get(applicationId, id)), secret };
  }

  async deliveries(filter: DeliveryFilter, page: { limit: number; offset: number }): Promise<{ count: number; deliveries: WebhookDeliveryResponse[] }> {
    const { count, deliveries } = await this.endpoints.deliveries(filter, page);
    return { count, deliveries: deliveries.map(deliveryView) };
  }

  async delivery(id: string, applicationId?: string): Promise<WebhookDeliveryDetailResponse> {
    const found = /^\d{1,18}$/.test(id) ? await this.endpoints.delivery(id, applicationId) : null;
    if (!found) throw notFound(`No webhook delivery ${JSON.stringify(id.slice(0, 100))}`, 'webhook_delivery_not_found');
    return {
      ...deliveryView(found.delivery),
      body: renderWebhookBody(found.delivery.event, this.baseUrl()),
      recent_attempts: found.attempts.map((a) => ({
        attempted_at: a.attemptedAt.toISOString(),
        status_code: a.statusCode,
        latency_ms: a.latencyMs,
        response_excerpt: a.responseExcerpt,
        error: a.error,
      })),
    };
  }

  /** Sends a delivered or failed delivery again with the same event id; recorded in the ops audit when ops asks. */
  async resend(id: string, caller: WebhookCaller): Promise<WebhookDeliveryDetailResponse> {
    const applicationId = caller.kind === 'application' ? caller.applicationId : undefined;
    const current = await this.delivery(id, applicationId);
    await this.dataSource.transaction(async (manager) => {
      if (!(await this.endpoints.resend(id, manager))) {
        throw invalidRequest(`Webhook delivery ${id} is still pending: it is tried again by itself`, 'webhook_delivery_pending');
      }
      if (caller.kind === 'ops') {
        await this.audit.record(manager, {
          actor: caller.user,
          action: 'webhook_delivery.resend',
          targetType: 'webhook_delivery',
          targetId: id,
          detail: { endpoint_id: current.endpoint_id, event_id: current.event_id, was: current.status },
        });
      }
    });
    this.dispatcher.nudge();
    return this.delivery(id, applicationId);
  }

  /** Every endpoint, for ops. */
  async all(): Promise<WebhookEndpoint[]> {
    return this.endpoints.list();
  }

  baseUrl(): string {
    return this.address.baseUrl;
  }

  private async owned(id: string, applicationId: string): Promise<WebhookEndpoint> {
    const endpoint = isUuid(id) ? await this.endpoints.find(id, applicationId) : null;
    if (!endpoint) throw endpointNotFound(id);
    return endpoint;
  }

  private checkedUrl(raw: string, sandbox: boolean): string {
    const checked = checkWebhookUrl(raw, { sandbox, allowPrivate: this.config.WEBHOOK_ALLOW_PRIVATE_ADDRESSES, addressRule: judgeWebhookAddress });
    if (!checked.ok) throw invalidRequest(checked.message, 'invalid_webhook_url');
    return checked.url;
  }

  private checkedTypes(requested: string[] | undefined): string[] {
    const chosen = chooseEventTypes(requested);
    if (!chosen.ok) throw invalidRequest(chosen.message, 'invalid_event_types');
    return chosen.types;
  }
}

const isUuid = (value: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);

const endpointNotFound = (id: string) => notFound(`No webhook endpoint ${JSON.stringify(id.slice(0, 100))}`, 'webhook_endpoint_not_found');

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function endpointView(e: WebhookEndpoint): WebhookEndpointResponse {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    event_types: e.eventTypes,
    enabled: e.enabled,
    ordered_by_connection: e.orderedByConnection,
    max_concurrency: e.maxConcurrency,
    failing_since: iso(e.failingSince),
    disabled_at: iso(e.disabledAt),
    disabled_reason: e.disabledReason,
    previous_secret_expires_at: iso(e.previousSecretExpiresAt),
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

export function deliveryView(d: WebhookDelivery): WebhookDeliveryResponse {
  return {
    id: d.id,
    endpoint_id: d.endpointId,
    event_id: d.event.id,
    event_type: d.event.eventType,
    connection_id: d.event.connectionId,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: iso(d.nextAttemptAt),
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    completed_at: iso(d.completedAt),
  };
}
