/**
 * Webhook event types. The standard ones are the API family's own (its `WebhookEvent` schemas),
 * with the same names and payloads, so its SDKs parse them; an endpoint that names no types
 * gets all of them. The opt-in ones are this service's saga outcomes and dead letters, sent only
 * to endpoints that name them.
 */
export const JOB_COMPLETION_EVENT_TYPES = [
  'job.benefit_create.completed',
  'job.benefit_enroll.completed',
  'job.benefit_register.completed',
  'job.benefit_unenroll.completed',
  'job.benefit_update.completed',
  'job.data_sync_all.completed',
] as const;

export const DATA_CHANGE_EVENT_TYPES = [
  'company.updated',
  'directory.created',
  'directory.updated',
  'directory.deleted',
  'employment.created',
  'employment.updated',
  'employment.deleted',
  'individual.created',
  'individual.updated',
  'individual.deleted',
  'payment.created',
  'payment.updated',
  'payment.deleted',
  'pay_statement.created',
  'pay_statement.updated',
  'pay_statement.deleted',
] as const;

export const STANDARD_EVENT_TYPES = [...JOB_COMPLETION_EVENT_TYPES, 'account.updated', ...DATA_CHANGE_EVENT_TYPES] as const;

export const RECONCILIATION_EVENT_TYPES = ['deduction.discrepancy.opened', 'deduction.discrepancy.resolved', 'payment.contributions.ready'] as const;

export const OPT_IN_EVENT_TYPES = ['hris.saga.completed', 'hris.saga.failed', 'hris.event.dead_lettered', ...RECONCILIATION_EVENT_TYPES] as const;

export const WEBHOOK_EVENT_TYPES: readonly string[] = [...STANDARD_EVENT_TYPES, ...OPT_IN_EVENT_TYPES];

export type WebhookEventType = (typeof STANDARD_EVENT_TYPES)[number] | (typeof OPT_IN_EVENT_TYPES)[number];

export const EVENT_TYPE_DESCRIPTIONS: Record<WebhookEventType, string> = {
  'job.benefit_create.completed': 'A benefit_create job ended (complete or not): read job_url for its result',
  'job.benefit_enroll.completed': 'An enrollment job ended (complete or not): read job_url for its result',
  'job.benefit_register.completed': 'A benefit_register job ended',
  'job.benefit_unenroll.completed': 'An unenrollment job ended',
  'job.benefit_update.completed': 'A benefit_update job ended',
  'job.data_sync_all.completed': 'A data sync ended; reads serve its data when it completed',
  'account.updated': 'A connection changed status (connected, reauth)',
  'company.updated': 'A sync found the company changed',
  'directory.created': 'A sync found a new directory entry',
  'directory.updated': 'A sync found a directory entry changed',
  'directory.deleted': 'A sync found a directory entry gone',
  'employment.created': 'A sync found a new employment record',
  'employment.updated': 'A sync found an employment record changed',
  'employment.deleted': 'A sync found an employment record gone',
  'individual.created': 'A sync found a new individual',
  'individual.updated': 'A sync found an individual changed',
  'individual.deleted': 'A sync found an individual gone',
  'payment.created': 'A sync found a new payment',
  'payment.updated': 'A sync found a payment changed',
  'payment.deleted': 'A sync found a payment gone',
  'pay_statement.created': 'A sync found a new pay statement',
  'pay_statement.updated': 'A sync found a pay statement changed',
  'pay_statement.deleted': 'A sync found a pay statement gone',
  'hris.saga.completed': 'Opt-in: an HRIS event (hire, contribution change, termination) was carried out',
  'hris.saga.failed': 'Opt-in: an HRIS event could not be carried out',
  'hris.event.dead_lettered': 'Opt-in: an HRIS event was refused as poison (its key named a connection of yours)',
  'deduction.discrepancy.opened': 'Opt-in: reconciliation found payroll deducting other than enrolled (docs/reconciliation.md)',
  'deduction.discrepancy.resolved': 'Opt-in: a later pay statement or provider read agrees again',
  'payment.contributions.ready': "Opt-in: a payment's statements are reconciled; its contributions can be read",
};

export type EventTypesChoice = { ok: true; types: string[] } | { ok: false; message: string };

/**
 * The types an endpoint subscribes to: absent means every standard type; otherwise each named
 * type must exist and appear once. Answered in catalogue order.
 */
export function chooseEventTypes(requested: readonly string[] | undefined): EventTypesChoice {
  if (requested === undefined) return { ok: true, types: [...STANDARD_EVENT_TYPES] };
  if (requested.length === 0) return { ok: false, message: 'event_types must name at least one type (leave it out for every standard type)' };
  const unknown = requested.filter((t) => !WEBHOOK_EVENT_TYPES.includes(t));
  if (unknown.length > 0) {
    return { ok: false, message: `Unknown event type ${JSON.stringify(unknown[0].slice(0, 100))}; GET /webhooks/event-types lists them` };
  }
  if (new Set(requested).size !== requested.length) return { ok: false, message: 'event_types must not repeat a type' };
  return { ok: true, types: WEBHOOK_EVENT_TYPES.filter((t) => requested.includes(t)) };
}
