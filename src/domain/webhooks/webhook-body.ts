/** One event as stored; the body every delivery of it sends is rendered from this alone. */
export interface StoredWebhookEvent {
  id: string;
  eventType: string;
  connectionId: string;
  companyId: string;
  accountId: string;
  entityId: string | null;
  data: Record<string, unknown> | null;
  createdAt: Date;
}

/**
 * The JSON body of an event, in the API family's shape (`BaseWebhookEvent` and the type's
 * `data`). A job's `job_url` is stored as a path and made absolute with the service's base
 * URL. The same event always renders the same bytes, so a retry carries the same body.
 */
export function renderWebhookBody(event: StoredWebhookEvent, baseUrl: string): string {
  const data = event.data && typeof event.data.job_url === 'string' && event.data.job_url.startsWith('/')
    ? { ...event.data, job_url: `${baseUrl.replace(/\/+$/, '')}${event.data.job_url}` }
    : event.data;
  return JSON.stringify({
    event_type: event.eventType,
    connection_id: event.connectionId,
    company_id: event.companyId,
    // Deprecated by the API family, still required by its schema: the connection's account.
    account_id: event.accountId,
    ...(event.entityId === null ? {} : { entity_id: event.entityId }),
    data,
  });
}
