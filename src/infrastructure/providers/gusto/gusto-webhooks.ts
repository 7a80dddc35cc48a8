import { createHmac, timingSafeEqual } from 'node:crypto';
import { Product } from '../../../domain/providers/provider';
import { DomainError } from '../../../domain/shared/domain-error';

/**
 * What Gusto sends to the application's webhook URL, checked and read: the signature of a
 * delivery, the verification-token handshake, and an event with the unified data it affects.
 * Pure: no I/O, no framework.
 *   webhook guide:  https://docs.gusto.com/app-integrations/docs/webhooks
 *   best practices: https://docs.gusto.com/app-integrations/docs/best-practices
 */

/** The header Gusto signs every event delivery with (`x_gusto_signature` in Gusto's Rack example). */
export const GUSTO_SIGNATURE_HEADER = 'x-gusto-signature';

/** HMAC-SHA256 as hex: 32 bytes, 64 hex digits. */
const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/i;

/**
 * The signature of a delivery: the hex HMAC-SHA256 of the raw request body keyed with the
 * subscription's verification token. Gusto's guide names the key and the hash, not the encoding;
 * hex is what its example computes.
 */
export function gustoSignatureOf(rawBody: Buffer | string, verificationToken: string): string {
  return createHmac('sha256', verificationToken).update(rawBody).digest('hex');
}

/**
 * Whether `signature` signs exactly these bytes under one of the tokens (several while a
 * subscription is being replaced). Over the raw bytes as they arrived: parsed and serialized
 * again, a body may differ in spacing or escapes and fail. Compared in constant time, so the
 * time taken tells nothing about how much of a guess was right.
 */
export function verifyGustoSignature(rawBody: Buffer, signature: string | string[] | undefined, verificationTokens: readonly string[]): boolean {
  if (typeof signature !== 'string') return false;
  const given = signature.trim();
  if (!SIGNATURE_PATTERN.test(given)) return false;
  const givenBytes = Buffer.from(given, 'hex');
  let valid = false;
  for (const token of verificationTokens) {
    const expected = createHmac('sha256', token).update(rawBody).digest();
    // No early exit: every token costs the same whichever matches.
    if (timingSafeEqual(expected, givenBytes)) valid = true;
  }
  return valid;
}

/** A Gusto event (the document's `Event`), as the service reads it. */
export interface GustoEvent {
  /** Unique per event: redeliveries and the events feed repeat it, so it deduplicates. */
  uuid: string;
  /** `payroll.paid`, `employee.updated`, `employee.bank_account.created`, … */
  eventType: string;
  /** The company the event is about: `resource_uuid` (`resource_type` is always `Company`). */
  companyUuid: string;
  entityType: string | null;
  entityUuid: string | null;
  /** When it happened (`timestamp`, Unix seconds); null when not given. */
  occurredAt: Date | null;
}

/** What Gusto POSTs to the webhook URL: the handshake after a subscription is created, or an event. */
export type GustoWebhookPayload = { kind: 'verification_token'; verificationToken: string } | { kind: 'event'; event: GustoEvent };

/** A payload that is not one Gusto sends: refused with 400, which tells nothing a guess could use. */
export const malformedGustoPayload = (reason: string) =>
  new DomainError('invalid_request_error', `Not a Gusto webhook payload: ${reason}`, { serviceCode: 'invalid_gusto_webhook' });

const UUID_LIKE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
const EVENT_TYPE = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+){0,5}$/;
const ENTITY_TYPE = /^[A-Za-z][A-Za-z0-9_]{0,99}$/;
/** Gusto's verification tokens are opaque; a bound keeps a stranger's megabyte out of the database. */
const MAX_TOKEN_LENGTH = 500;

/**
 * The handshake body is `{"verification_token": "…"}` and nothing else (Gusto documents no
 * signature on it: the token is what later signatures are keyed with).
 */
export function isVerificationTokenPayload(body: unknown): body is { verification_token: string } {
  if (!isRecord(body)) return false;
  const keys = Object.keys(body);
  return keys.length === 1 && keys[0] === 'verification_token';
}

export function parseVerificationToken(body: unknown): string {
  if (!isVerificationTokenPayload(body)) throw malformedGustoPayload('expected {"verification_token": "..."}');
  const token = body.verification_token;
  if (typeof token !== 'string' || token.trim() === '' || token.length > MAX_TOKEN_LENGTH) {
    throw malformedGustoPayload(`verification_token must be a non-empty string of at most ${MAX_TOKEN_LENGTH} characters`);
  }
  return token;
}

/**
 * An event as the webhook guide and the document's `Event` show it. The document requires only
 * `uuid`; the service needs `event_type` and the company (`resource_uuid`, with `resource_type`
 * `Company`, the only value the document allows) too. Unknown members (the older `resource_id`,
 * `entity_id`) are ignored.
 */
export function parseGustoEvent(body: unknown): GustoEvent {
  if (!isRecord(body)) throw malformedGustoPayload('the body is not a JSON object');
  const { uuid, event_type, resource_type, resource_uuid, entity_type, entity_uuid, timestamp } = body;
  if (typeof uuid !== 'string' || !UUID_LIKE.test(uuid)) throw malformedGustoPayload('uuid is missing or not an identifier');
  if (typeof event_type !== 'string' || !EVENT_TYPE.test(event_type)) throw malformedGustoPayload('event_type is missing or not like payroll.paid');
  if (resource_type !== 'Company') throw malformedGustoPayload('resource_type must be Company');
  if (typeof resource_uuid !== 'string' || !UUID_LIKE.test(resource_uuid)) throw malformedGustoPayload('resource_uuid is missing or not an identifier');
  if (entity_type !== undefined && entity_type !== null && (typeof entity_type !== 'string' || !ENTITY_TYPE.test(entity_type))) {
    throw malformedGustoPayload('entity_type is not a type name');
  }
  if (entity_uuid !== undefined && entity_uuid !== null && (typeof entity_uuid !== 'string' || !UUID_LIKE.test(entity_uuid))) {
    throw malformedGustoPayload('entity_uuid is not an identifier');
  }
  if (timestamp !== undefined && timestamp !== null && (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp) || timestamp < 0)) {
    throw malformedGustoPayload('timestamp is not Unix seconds');
  }
  return {
    uuid,
    eventType: event_type,
    companyUuid: resource_uuid,
    entityType: typeof entity_type === 'string' ? entity_type : null,
    entityUuid: typeof entity_uuid === 'string' ? entity_uuid : null,
    occurredAt: typeof timestamp === 'number' ? new Date(timestamp * 1000) : null,
  };
}

/** Either payload; which one by its shape (only the handshake is a lone `verification_token`). */
export function parseGustoWebhookPayload(body: unknown): GustoWebhookPayload {
  if (isVerificationTokenPayload(body)) return { kind: 'verification_token', verificationToken: parseVerificationToken(body) };
  return { kind: 'event', event: parseGustoEvent(body) };
}

const EMPLOYEE_DATA: readonly Product[] = ['directory', 'individual', 'employment'];
const PAY_DATA: readonly Product[] = ['payment', 'pay_statement'];

/**
 * The unified data an event's resource feeds, by the event type's first segment (Gusto names
 * events `<resource>.<change>` or `<resource>.<sub-resource>.<change>`,
 * https://docs.gusto.com/app-integrations/docs/webhook-events). A company's locations are part of
 * the company record; pay schedules are the pay groups of its payments.
 */
const AFFECTED_BY_RESOURCE: Readonly<Record<string, readonly Product[]>> = {
  company: ['company'],
  location: ['company'],
  employee: EMPLOYEE_DATA,
  employee_job_compensation: EMPLOYEE_DATA,
  job: EMPLOYEE_DATA,
  compensation: EMPLOYEE_DATA,
  payroll: PAY_DATA,
  pay_schedule: ['payment'],
  company_benefit: ['benefits'],
  employee_benefit: ['benefits'],
};

/** The same by `entity_type` (Gusto's subscription types), for an event type named otherwise. */
const AFFECTED_BY_ENTITY: Readonly<Record<string, readonly Product[]>> = {
  Company: ['company'],
  Location: ['company'],
  Employee: EMPLOYEE_DATA,
  EmployeeJobCompensation: EMPLOYEE_DATA,
  Payroll: PAY_DATA,
  PaySchedule: ['payment'],
  CompanyBenefit: ['benefits'],
  EmployeeBenefit: ['benefits'],
};

/** What an event asks the service to sync. */
export interface GustoSyncTarget {
  /** The Gusto company: connections whose grant reaches it are the ones to sync. */
  companyUuid: string;
  /** The unified data the change shows in. */
  affects: Product[];
}

/**
 * The sync an event implies, or undefined for events about nothing the service reads
 * (contractors, forms, notifications, bank accounts on their own, …).
 */
export function syncTargetOf(event: GustoEvent): GustoSyncTarget | undefined {
  const resource = event.eventType.split('.')[0];
  const affects = AFFECTED_BY_RESOURCE[resource] ?? (event.entityType ? AFFECTED_BY_ENTITY[event.entityType] : undefined);
  return affects ? { companyUuid: event.companyUuid, affects: [...affects] } : undefined;
}

/**
 * The entity types the service subscribes to (the document's `subscription_types`): those whose
 * events imply a sync. `employee.*` events come with the Employee subscription.
 */
export const GUSTO_SUBSCRIPTION_TYPES = ['Company', 'CompanyBenefit', 'Employee', 'EmployeeBenefit', 'EmployeeJobCompensation', 'Location', 'Payroll', 'PaySchedule'] as const;

/** How an event was taken in; the webhook answers it, the poller counts it. */
export type GustoEventOutcome =
  /** Seen before (a redelivery, or the feed repeating a delivered event): nothing done again. */
  | { kind: 'duplicate' }
  /** About nothing the service reads: recorded, nothing to sync. */
  | { kind: 'not_synced' }
  /** No connected connection reaches the company (disconnected, or never connected here). */
  | { kind: 'no_connection' }
  /** A data sync of each connection reaching the company was requested (`created`: a new job, else one already queued is shared). */
  | { kind: 'sync_requested'; syncs: { connectionId: string; jobId: string; created: boolean }[] };

/** Where events go, whichever way they came: the webhook route and the events poller share it. */
export interface GustoEventSink {
  receive(event: GustoEvent, via: 'webhook' | 'poll'): Promise<GustoEventOutcome>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
