import { Clock, SystemClock } from '../../../domain/shared/clock';
import { DomainError, ErrorFamily } from '../../../domain/shared/domain-error';
import { GustoRateLimiter } from './gusto-rate-limiter';

export type GustoMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Methods repeated after a 5xx, a network error or a timeout. Gusto's PUTs carry the resource's
 * `version`, so a PUT repeated after it was applied answers 409 instead of writing twice; a
 * repeated DELETE answers 404. POST and PATCH may create or change twice: never repeated blindly.
 */
const IDEMPOTENT: ReadonlySet<GustoMethod> = new Set(['GET', 'PUT', 'DELETE']);

export type GustoQuery = Record<string, string | number | boolean | undefined>;

export interface GustoRequest {
  method: GustoMethod;
  /** From the API root, with its leading slash: `/v1/companies/{uuid}/employees`. */
  path: string;
  query?: GustoQuery;
  /** Sent as JSON. */
  body?: unknown;
  /** The company (or system) access token; omitted only for `/oauth/token`, which takes the client secret in its body. */
  accessToken?: string;
  /** The rate-limit key: the OAuth grant (company) the token belongs to. */
  key: string;
  signal?: AbortSignal;
}

export interface GustoResponse<T> {
  status: number;
  /** Parsed JSON; undefined for an empty body (204). */
  body: T;
  /** Lower-cased names. */
  headers: Record<string, string>;
}

export interface GustoHttpOptions {
  /** https://api.gusto.com or https://api.gusto-demo.com */
  baseUrl: string;
  /** Sent as `X-Gusto-API-Version`, so a change of Gusto's default version does not change our wire format. */
  apiVersion: string;
  /** Per attempt, body included. Default 30 s. */
  timeoutMs?: number;
  /** Attempts of an idempotent request failing with a 5xx, a network error or a timeout. Default 3. */
  maxAttempts?: number;
  /** 429 answers waited out before giving up, for any method. Default 3. */
  maxRateLimitRetries?: number;
  /** Exponential backoff with full jitter: random(0, min(max, base * 2^(n-1))). Defaults 250 ms, 8 s. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /**
   * The longest server-requested wait (Retry-After) sat out in process. Longer, the request fails
   * with a transient error carrying `retry_after` and the job worker retries it later. Default
   * 60 s, Gusto's window length.
   */
  maxRetryAfterMs?: number;
  limiter?: GustoRateLimiter;
  clock?: Clock;
  /** Injected for tests; defaults to Math.random. */
  random?: () => number;
  fetch?: typeof fetch;
}

/**
 * One error object of Gusto's `errors` array (Entity-Error-Object in the OpenAPI document);
 * `nested_errors` carry their own `errors`.
 */
export interface GustoEntityError {
  error_key: string;
  category: string;
  message?: string;
  metadata?: Record<string, unknown>;
  errors?: GustoEntityError[];
}

export interface GustoApiErrorOptions {
  /** Gusto's status; undefined when no answer came (network error, timeout). */
  status?: number;
  errors?: GustoEntityError[];
  /** Requests sent for this call, retries included. */
  attempts: number;
  /**
   * A write (POST/PATCH) failed without an answer saying it was refused (5xx, network error,
   * timeout): it may have been applied. Look the resource up before sending it again.
   */
  outcomeUnknown?: boolean;
  serviceCode?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** A failed Gusto call. The family says what the caller (and the job worker) should do. */
export class GustoApiError extends DomainError {
  readonly status?: number;
  readonly errors: GustoEntityError[];
  readonly attempts: number;
  readonly outcomeUnknown: boolean;

  constructor(family: ErrorFamily, message: string, options: GustoApiErrorOptions) {
    super(family, message, { serviceCode: options.serviceCode, details: options.details, cause: options.cause });
    this.name = 'GustoApiError';
    this.status = options.status;
    this.errors = options.errors ?? [];
    this.attempts = options.attempts;
    this.outcomeUnknown = options.outcomeUnknown ?? false;
  }

  /** The call was sent more than once: a 409 or 404 may answer our own earlier attempt. */
  get retried(): boolean {
    return this.attempts > 1;
  }
}

/** 401: the access token is expired or revoked. Refresh it once and retry; if that fails too, the user must reconnect. */
export class GustoUnauthorized extends GustoApiError {
  constructor(message: string, options: GustoApiErrorOptions) {
    super('authentication_error', message, { serviceCode: 'reauthenticate_user', ...options });
    this.name = 'GustoUnauthorized';
  }
}

/** 409: a stale `version` or a resource that already exists. Read it again before deciding. */
export class GustoConflict extends GustoApiError {
  constructor(message: string, options: GustoApiErrorOptions) {
    super('conflict_error', message, options);
    this.name = 'GustoConflict';
  }
}

/** 422: Gusto refused the content; `errors` says which attributes and why. */
export class GustoUnprocessable extends GustoApiError {
  constructor(message: string, options: GustoApiErrorOptions) {
    super('unprocessable_request_error', message, options);
    this.name = 'GustoUnprocessable';
  }
}

/** Families of the other 4xx: all non-transient, retrying the same request cannot help. */
const CLIENT_ERROR_FAMILY: Record<number, ErrorFamily> = {
  400: 'invalid_request_error',
  403: 'forbidden_error',
  404: 'not_found_error',
};

export interface PaginateRequest extends Omit<GustoRequest, 'method' | 'body'> {
  /** Records per page. Default 100: fewer pages, fewer slots of the rate limit. */
  per?: number;
  /** A listing longer than this many pages fails instead of being cut short. Default 1000. */
  maxPages?: number;
  /** Where a page's records are, for endpoints that wrap them; default the body itself. */
  items?: (body: unknown) => unknown[] | undefined;
}

type Attempt =
  | { kind: 'answer'; status: number; statusText: string; headers: Record<string, string>; text: string }
  | { kind: 'timeout' }
  | { kind: 'network'; error: unknown };

/**
 * Gusto's HTTP layer: auth and version headers, JSON both ways, the per-grant rate limit, and
 * retries where they are safe. Its errors are DomainErrors: `provider_error`/`provider_timeout`
 * are transient (the job worker retries them), every other family is final.
 */
export class GustoHttp {
  private readonly baseUrl: string;
  private readonly apiVersion: string;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly maxRateLimitRetries: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly maxRetryAfterMs: number;
  readonly limiter: GustoRateLimiter;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: GustoHttpOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiVersion = options.apiVersion;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.maxRateLimitRetries = Math.max(0, options.maxRateLimitRetries ?? 3);
    this.backoffBaseMs = options.backoffBaseMs ?? 250;
    this.backoffMaxMs = options.backoffMaxMs ?? 8_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.clock = options.clock ?? new SystemClock();
    this.limiter = options.limiter ?? new GustoRateLimiter({ clock: this.clock });
    this.random = options.random ?? Math.random;
    this.fetchImpl = options.fetch ?? fetch;
  }

  async request<T>(request: GustoRequest): Promise<GustoResponse<T>> {
    const idempotent = IDEMPOTENT.has(request.method);
    const label = `${request.method} ${request.path}`;
    let attempts = 0;
    let failures = 0;
    let rateLimited = 0;
    for (;;) {
      await this.limiter.acquire(request.key, request.signal);
      attempts++;
      const attempt = await this.send(request);
      if (attempt.kind === 'answer' && attempt.status < 400) {
        return { status: attempt.status, body: parseJson(attempt.text, attempt.headers, label, attempts) as T, headers: attempt.headers };
      }

      if (attempt.kind === 'answer' && attempt.status === 429) {
        // A 429 is a refusal before any processing, so even a POST is safe to send again.
        // https://docs.gusto.com/embedded-payroll/v2024-04-01/docs/rate-limits
        rateLimited++;
        // Gusto documents Retry-After on every 429; without it, at least a second, never a hammering.
        const waitMs = retryAfterMs(attempt.headers['retry-after'], this.clock.now()) ?? Math.max(1_000, this.backoff(rateLimited));
        // Everyone queued on this grant would be refused too: hold them all, not just this call
        // (no longer than we would wait ourselves; they learn their own Retry-After after that).
        this.limiter.pause(request.key, Math.min(waitMs, this.maxRetryAfterMs));
        if (rateLimited > this.maxRateLimitRetries || waitMs > this.maxRetryAfterMs) {
          throw new GustoApiError('provider_error', `Gusto rate limit reached for ${label}; retry in ${Math.ceil(waitMs / 1000)} s`, {
            status: 429,
            attempts,
            serviceCode: 'provider_rate_limited',
            details: { retry_after: Math.ceil(waitMs / 1000) },
          });
        }
        continue;
      }

      const transient = attempt.kind !== 'answer' || (attempt.status >= 500 && attempt.status !== 501);
      if (!transient) throw this.clientError(attempt as Extract<Attempt, { kind: 'answer' }>, label, attempts);

      failures++;
      if (!idempotent || failures >= this.maxAttempts) throw this.transientError(attempt, label, attempts, !idempotent);
      const serverWait = attempt.kind === 'answer' ? retryAfterMs(attempt.headers['retry-after'], this.clock.now()) : undefined;
      const waitMs = serverWait ?? this.backoff(failures);
      if (waitMs > this.maxRetryAfterMs) throw this.transientError(attempt, label, attempts, false);
      await sleep(waitMs, request.signal);
    }
  }

  /**
   * Every record of a `page`/`per` listing, page after page (page numbers start at 1).
   * Gusto sends X-Total-Pages when asked for a page (https://docs.gusto.com/embedded-payroll/v2022-12-07/docs/pagination);
   * without it, the listing ends at the first empty page, or at a short one when X-Per-Page says
   * how long a full page is. A short page alone is not trusted: Gusto may cap `per` below ours.
   */
  async paginate<T>(request: PaginateRequest): Promise<T[]> {
    const { per = 100, maxPages = 1000, items = (body: unknown) => (Array.isArray(body) ? body : undefined), ...rest } = request;
    const all: T[] = [];
    for (let page = 1; ; page++) {
      if (page > maxPages) {
        // Cutting a listing short would silently lose records; a bug or a runaway loop is not transient.
        throw new GustoApiError('server_error', `GET ${rest.path} has more than ${maxPages} pages of ${per}`, { attempts: 0 });
      }
      const response = await this.request<unknown>({ ...rest, method: 'GET', query: { ...rest.query, page, per } });
      const records = items(response.body);
      if (!records) {
        throw new GustoApiError('provider_error', `GET ${rest.path} page ${page} is not a list`, { status: response.status, attempts: 1 });
      }
      all.push(...(records as T[]));
      const totalPages = headerInt(response.headers, 'x-total-pages');
      const perPage = headerInt(response.headers, 'x-per-page');
      if (totalPages !== undefined) {
        if (page >= totalPages) return all;
      } else if (records.length === 0 || (perPage !== undefined && records.length < perPage)) {
        return all;
      }
    }
  }

  private async send(request: GustoRequest): Promise<Attempt> {
    // An abort listener added to an already aborted signal never fires.
    if (request.signal?.aborted) throw request.signal.reason;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    const onAbort = () => controller.abort(request.signal?.reason);
    request.signal?.addEventListener('abort', onAbort, { once: true });
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-gusto-api-version': this.apiVersion,
    };
    if (request.accessToken !== undefined) headers.authorization = `Bearer ${request.accessToken}`;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await this.fetchImpl(this.url(request.path, request.query), {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: controller.signal,
      });
      // The timeout covers the body too: a server that stalls mid-body is as dead as a silent one.
      const text = await response.text();
      return { kind: 'answer', status: response.status, statusText: response.statusText, headers: Object.fromEntries(response.headers), text };
    } catch (error) {
      // The caller gave up (shutdown, lease lost): not Gusto's failure, nothing to retry.
      if (request.signal?.aborted) throw request.signal.reason;
      return timedOut ? { kind: 'timeout' } : { kind: 'network', error };
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    }
  }

  private url(path: string, query: GustoQuery | undefined): string {
    if (!path.startsWith('/')) throw new Error(`Gusto paths start with /: ${path}`);
    const search = new URLSearchParams();
    Object.entries(query ?? {}).forEach(([name, value]) => {
      if (value !== undefined) search.append(name, String(value));
    });
    const qs = search.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  private backoff(failure: number): number {
    const ceiling = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** (failure - 1));
    return Math.round(this.random() * ceiling);
  }

  private clientError(answer: Extract<Attempt, { kind: 'answer' }>, label: string, attempts: number): GustoApiError {
    const { errors, detail } = errorBody(answer.text, answer.headers);
    const message = `Gusto refused ${label}: ${answer.status} ${answer.statusText}${detail ? ` - ${detail}` : ''}`;
    const options: GustoApiErrorOptions = { status: answer.status, errors, attempts };
    if (answer.status === 401) return new GustoUnauthorized(message, options);
    if (answer.status === 409) return new GustoConflict(message, options);
    if (answer.status === 422) return new GustoUnprocessable(message, options);
    return new GustoApiError(CLIENT_ERROR_FAMILY[answer.status] ?? 'invalid_request_error', message, options);
  }

  private transientError(attempt: Attempt, label: string, attempts: number, outcomeUnknown: boolean): GustoApiError {
    const unknown = outcomeUnknown ? '; it may have been applied, look it up before sending it again' : '';
    if (attempt.kind === 'timeout') {
      return new GustoApiError('provider_timeout', `Gusto did not answer ${label} within ${this.timeoutMs} ms${unknown}`, {
        attempts,
        outcomeUnknown,
      });
    }
    if (attempt.kind === 'network') {
      return new GustoApiError('provider_error', `Gusto could not be reached for ${label} (${networkReason(attempt.error)})${unknown}`, {
        attempts,
        outcomeUnknown,
        cause: attempt.error,
      });
    }
    const { errors, detail } = errorBody(attempt.text, attempt.headers);
    return new GustoApiError(
      'provider_error',
      `Gusto answered ${label} with ${attempt.status} ${attempt.statusText}${detail ? ` - ${detail}` : ''}${unknown}`,
      { status: attempt.status, errors, attempts, outcomeUnknown },
    );
  }
}

function parseJson(text: string, headers: Record<string, string>, label: string, attempts: number): unknown {
  if (text === '') return undefined;
  if (!/json/i.test(headers['content-type'] ?? 'application/json')) return text;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new GustoApiError('provider_error', `Gusto answered ${label} with malformed JSON`, { attempts, cause: error });
  }
}

/**
 * Gusto's `errors` array (422, 409, 404, 5xx), or an OAuth error (`error`, `error_description`)
 * from /oauth/token, or a bare `message`; a non-JSON body (a proxy's HTML page) is left out.
 */
function errorBody(text: string, headers: Record<string, string>): { errors: GustoEntityError[]; detail?: string } {
  let body: unknown;
  try {
    body = /json/i.test(headers['content-type'] ?? '') || /^\s*[{[]/.test(text) ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!body || typeof body !== 'object') return { errors: [] };
  const record = body as Record<string, unknown>;
  const errors = Array.isArray(record.errors) ? (record.errors.filter(isEntityError) as GustoEntityError[]) : [];
  if (errors.length > 0) return { errors, detail: flatten(errors).join('; ') };
  const detail = [record.error_description, record.message, record.error].find((v): v is string => typeof v === 'string' && v !== '');
  return { errors, detail };
}

function isEntityError(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as GustoEntityError).error_key === 'string';
}

/** Every message, nested ones included, after the attribute path Gusto names (`base` names none). */
function flatten(errors: GustoEntityError[], parent?: string): string[] {
  return errors.flatMap((error) => {
    const key = error.error_key === 'base' ? parent : parent ? `${parent}.${error.error_key}` : error.error_key;
    if (Array.isArray(error.errors) && error.errors.length > 0) return flatten(error.errors, key);
    const message = error.message ?? error.category;
    return [key ? `${key}: ${message}` : message];
  });
}

/** Retry-After as delta-seconds or an HTTP-date (RFC 9110 §10.2.3), in ms from now. */
export function retryAfterMs(value: string | undefined, now: Date): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

function headerInt(headers: Record<string, string>, name: string): number | undefined {
  const value = headers[name];
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/** fetch's "fetch failed" says nothing; its cause's code (ECONNREFUSED, ECONNRESET) does. Duck-typed: fetch's errors may come from another realm. */
function networkReason(error: unknown): string {
  const { cause, message } = (error ?? {}) as { cause?: { code?: unknown }; message?: unknown };
  if (typeof cause?.code === 'string') return cause.code;
  return typeof message === 'string' ? message : String(error);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
