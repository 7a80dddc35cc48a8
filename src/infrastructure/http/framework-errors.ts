import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/shared/domain-error';
import { domainErrorResponse, ErrorResponse } from './error-response';

/**
 * Refusals the framework makes before any route runs, as the spec's error object: a path that
 * is not valid percent-encoding, an over-long path parameter, and what Node's HTTP parser
 * refuses (oversized headers or query string, malformed requests, timeouts).
 */
export function frameworkErrorResponse(code: string | undefined): ErrorResponse {
  switch (code) {
    case 'FST_ERR_BAD_URL':
      return invalid(400, 'The request path is not valid percent-encoded UTF-8', 'malformed_request', 'bad_request_error');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return invalid(414, 'A path parameter is longer than this service accepts (100 characters)', 'uri_too_long');
    case 'HPE_HEADER_OVERFLOW':
      return invalid(431, 'The request line and headers are larger than this service accepts (16 KiB)', 'headers_too_large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return invalid(408, 'The request was not received in time', 'request_timeout');
    case 'EXPECTATION_FAILED':
      return invalid(417, 'The Expect header is not supported: only Expect: 100-continue is', 'expectation_failed');
    default:
      return invalid(400, 'The request is not valid HTTP', 'malformed_request', 'bad_request_error');
  }
}

function invalid(status: number, message: string, serviceCode: string, family: 'invalid_request_error' | 'bad_request_error' = 'invalid_request_error'): ErrorResponse {
  const rendered = domainErrorResponse(new DomainError(family, message, { serviceCode }));
  return { ...rendered, status, body: { ...rendered.body, code: status } };
}

/** Fastify's `frameworkErrors` option: routing refusals, sent as the error object. */
export function sendFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const response = frameworkErrorResponse(error.code);
  void reply.status(response.status).header('content-type', 'application/json; charset=utf-8').send(response.body);
}

/** Fastify's `clientErrorHandler` option: what the HTTP parser refuses, answered on the raw socket. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const { status, body } = frameworkErrorResponse(error.code);
    const text = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}

/**
 * The HTTP server's `checkExpectation` event: an `Expect` other than 100-continue, which Node
 * would answer with a bare 417 before any route; answered as the error object instead.
 */
export function answerUnmetExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const { status, body } = frameworkErrorResponse('EXPECTATION_FAILED');
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), connection: 'close' });
  response.end(text);
}
