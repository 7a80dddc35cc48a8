import { StoredWebhookEvent } from '../../domain/webhooks/webhook-body';

/** An event's columns as the delivery queries name them (`v.id AS event_id`, …). */
export interface WebhookEventColumns {
  event_id: string;
  event_type: string;
  connection_id: string;
  company_id: string;
  account_id: string;
  entity_id: string | null;
  data: Record<string, unknown> | null;
  event_created_at: Date;
}

export const storedEventOf = (r: WebhookEventColumns): StoredWebhookEvent => ({
  id: r.event_id,
  eventType: r.event_type,
  connectionId: r.connection_id,
  companyId: r.company_id,
  accountId: r.account_id,
  entityId: r.entity_id,
  data: r.data,
  createdAt: r.event_created_at,
});
