/**
 * Error families of the Unified API. A family fixes the HTTP status the edge renders; the
 * domain never speaks HTTP, it only says which family an error belongs to.
 */
export type ErrorFamily =
  | 'bad_request_error'
  | 'invalid_request_error'
  | 'authentication_error'
  | 'forbidden_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'payload_too_large'
  | 'unprocessable_request_error'
  | 'rate_limit_error'
  | 'server_error'
  | 'provider_error'
  | 'provider_timeout';

export interface DomainErrorOptions {
  /** Machine code clients match on; absent on some errors by contract. */
  serviceCode?: string;
  /** Extra fields rendered beside the error (e.g. `context` of connection_already_exists). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly serviceCode?: string;
  readonly details?: Record<string, unknown>;

  constructor(
    readonly family: ErrorFamily,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.serviceCode = options.serviceCode;
    this.details = options.details;
  }
}

export const invalidRequest = (message: string, serviceCode: string | undefined = 'invalid_request') =>
  new DomainError('invalid_request_error', message, { serviceCode });

export const malformedRequest = (message: string) =>
  new DomainError('bad_request_error', message, { serviceCode: 'malformed_request' });

export const notFound = (message: string, serviceCode?: string) =>
  new DomainError('not_found_error', message, { serviceCode });
