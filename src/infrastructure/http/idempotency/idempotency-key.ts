import { createHash } from 'node:crypto';
import { DomainError } from '../../../domain/shared/domain-error';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** How long an answer is kept and replayed (DECISIONS.md "Idempotency"). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A request still in flight after this long is taken to have died with its instance: a retry
 * may take the key over instead of getting 409 for the rest of the day.
 */
export const IN_FLIGHT_TIMEOUT_MS = 10 * 60 * 1000;

const PRINTABLE_KEY = /^[\x20-\x7E]{1,255}$/;

/** The header's value, or a 400 naming the header; `undefined` when the header is absent. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(', ') : header;
  if (!PRINTABLE_KEY.test(value)) {
    throw new DomainError(
      'invalid_request_error',
      `Idempotency-Key must be 1 to 255 printable ASCII characters (got ${value.length === 0 ? 'an empty value' : `${value.length} characters`})`,
      { serviceCode: 'invalid_idempotency_key' },
    );
  }
  return value;
}

/**
 * JSON with object keys sorted at every depth, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the
 * same request; array order and every value are kept.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** What makes two requests "the same": method, path with query as sent, and the parsed body. */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  return createHash('sha256').update(`${method.toUpperCase()} ${url}\n${canonicalJson(body)}`, 'utf8').digest('hex');
}

/**
 * Answers worth replaying: successes and the caller's own mistakes. Server and provider
 * failures (5xx) are retried for real; 401 means the caller was never established and 429 is
 * a moment's state, so neither may stick to the key for a day.
 */
export function isStoredAnswer(status: number): boolean {
  return status >= 200 && status < 500 && status !== 401 && status !== 429;
}

export const idempotencyKeyReused = () =>
  new DomainError(
    'conflict_error',
    'This Idempotency-Key was already used with a different request (method, path or body); use a new key for a new request',
    { serviceCode: 'idempotency_key_reused' },
  );

export const idempotencyKeyInUse = () =>
  new DomainError(
    'conflict_error',
    'A request with this Idempotency-Key is still being processed; retry once it has finished',
    { serviceCode: 'idempotency_key_in_use' },
  );

export const idempotencyAnswerNotKept = (statusCode: number, why: string) =>
  new DomainError(
    'conflict_error',
    `The request with this Idempotency-Key was already processed (status ${statusCode}), but its answer was not kept: ${why}. ` +
      'It is not run again; send it with a new key to run it again',
    { serviceCode: 'idempotency_answer_not_kept' },
  );

export const idempotencyKeysExhausted = (keysPerOwner: number, retryAfterSeconds: number) =>
  new DomainError(
    'rate_limit_error',
    `This application has taken the ${keysPerOwner} Idempotency-Keys it may take in a day; a new key is accepted again in ${retryAfterSeconds} s ` +
      '(keys already taken still replay; a request without the header is not held back)',
    { serviceCode: 'idempotency_keys_exhausted', details: { retry_after: retryAfterSeconds } },
  );
