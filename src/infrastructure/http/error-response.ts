import { HttpException, HttpStatus } from '@nestjs/common';
import { DomainError, ErrorFamily } from '../../domain/shared/domain-error';
import { isDatabaseBusyError } from '../database/transient-errors';

/** The spec's error object: `code`, `name`, optional `service_code`, `message` (+ listed extras). */
export interface ErrorBody {
  code: number;
  name: string;
  service_code?: string;
  message: string;
  [extra: string]: unknown;
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers?: Record<string, string>;
}

/** How each family reaches HTTP; `name` on the wire is the family except where noted. */
const FAMILY_STATUS: Record<ErrorFamily, number> = {
  bad_request_error: 400,
  invalid_request_error: 400,
  authentication_error: 401,
  forbidden_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  payload_too_large: 413,
  unprocessable_request_error: 422,
  rate_limit_error: 429,
  server_error: 500,
  provider_error: 502,
  provider_timeout: 504,
};

/** 413 and 504 have no family of their own in the spec: they render as the family clients know. */
const FAMILY_NAME: Partial<Record<ErrorFamily, string>> = {
  payload_too_large: 'invalid_request_error',
  provider_timeout: 'provider_error',
};

const STATUS_FAMILY: Record<number, ErrorFamily> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'forbidden_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'payload_too_large',
  422: 'unprocessable_request_error',
  429: 'rate_limit_error',
  502: 'provider_error',
  504: 'provider_timeout',
};

export const INTERNAL_ERROR_MESSAGE = 'An unexpected error occurred. It has been logged; retrying later may succeed.';

export function domainErrorResponse(error: DomainError): ErrorResponse {
  const status = FAMILY_STATUS[error.family];
  const body: ErrorBody = {
    code: status,
    name: FAMILY_NAME[error.family] ?? error.family,
    ...(error.serviceCode === undefined ? {} : { service_code: error.serviceCode }),
    message: error.message,
    ...error.details,
  };
  const retryAfter = error.details?.retry_after;
  return { status, body, headers: typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : undefined };
}

function httpExceptionResponse(error: HttpException): ErrorResponse {
  const status = error.getStatus();
  // Raised by Fastify while reading the body (FST_ERR_CTP_BODY_TOO_LARGE), before any controller.
  if (status === HttpStatus.PAYLOAD_TOO_LARGE) {
    return domainErrorResponse(
      new DomainError('payload_too_large', 'Request body is larger than this service accepts', {
        serviceCode: 'payload_too_large',
      }),
    );
  }
  const family = STATUS_FAMILY[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
  if (family === 'server_error') return internalError();
  const response = error.getResponse();
  let message = error.message;
  if (typeof response === 'object' && response !== null && 'message' in response) {
    const m = (response as { message: unknown }).message;
    message = Array.isArray(m) ? m.join('; ') : String(m);
  }
  // Nest's unknown-route message is "Cannot GET /x"; say it the way the rest of the API speaks.
  if (status === HttpStatus.NOT_FOUND && /^Cannot [A-Z]+ /.test(message)) {
    message = `No route for ${message.slice('Cannot '.length)}`;
  }
  const rendered = domainErrorResponse(new DomainError(family, message));
  return { ...rendered, status, body: { ...rendered.body, code: status } };
}

export const internalError = (): ErrorResponse =>
  domainErrorResponse(new DomainError('server_error', INTERNAL_ERROR_MESSAGE));

/** Maps anything thrown while serving a request to the spec's error object; unknown → 500. */
export function toErrorResponse(error: unknown): ErrorResponse & { unexpected: boolean } {
  if (error instanceof DomainError) return { ...domainErrorResponse(error), unexpected: error.family === 'server_error' };
  if (error instanceof HttpException) {
    const r = httpExceptionResponse(error);
    return { ...r, unexpected: r.status >= 500 };
  }
  if (isNoConnectionInTime(error) || isDatabaseBusyError(error)) return { ...domainErrorResponse(serverBusy()), unexpected: false };
  return { ...internalError(), unexpected: true };
}

/**
 * node-postgres's pool gave no connection within its wait: every one stayed busy, or a new one
 * was not established in time (a server slow to accept under load). No statement of the request
 * ran, and the instance or its database is overloaded, not broken: answered as a request to come
 * back (429 and Retry-After: the spec has no 503). So is a transaction the database refused or
 * undid for want of a turn (a deadlock, a lock or statement timeout, no connection slot left:
 * isDatabaseBusyError): nothing of it stayed, and the same request shortly after may well
 * succeed. A connection lost during the work is not one of these (its transaction may have
 * committed): that stays a 500.
 */
const NO_CONNECTION_IN_TIME = new Set(['timeout exceeded when trying to connect', 'Connection terminated due to connection timeout']);

function isNoConnectionInTime(error: unknown): boolean {
  return error instanceof Error && NO_CONNECTION_IN_TIME.has(error.message);
}

export const serverBusy = (message = 'The service is busy; retry shortly') =>
  new DomainError('rate_limit_error', message, { serviceCode: 'server_busy', details: { retry_after: 1 } });
