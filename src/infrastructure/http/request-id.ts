import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

export const REQUEST_ID_HEADER = 'x-request-id';
const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Keeps a caller's `X-Request-Id` when it is sane, else mints one, and writes it back on the
 * raw request so the HTTP logger (which sees only the raw request) logs the same id.
 */
export function requestIdOf(request: IncomingMessage | Http2ServerRequest): string {
  const given = request.headers[REQUEST_ID_HEADER];
  const id = typeof given === 'string' && ACCEPTABLE.test(given) ? given : randomUUID();
  request.headers[REQUEST_ID_HEADER] = id;
  return id;
}
