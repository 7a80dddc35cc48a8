import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseBusyError, sqlStateOf } from '../database/transient-errors';
import { LogSampler } from '../observability/log-sampler';
import { toErrorResponse } from './error-response';

/** The one place errors become HTTP: every failure leaves as the spec's error object. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpError');

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), error, this.logger);
  }
}

/** One warning a second per SQL state for requests the database turned away (a lock storm refuses thousands). */
const BUSY_WARNINGS = new LogSampler(1_000);

export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown, logger: Logger, busyWarnings = BUSY_WARNINGS): void {
  if (clientWentAway(request, error)) {
    // Not the service's error: nobody is left to answer, and the log gets one quiet line.
    logger.log({ reqId: request.id, method: request.method, url: request.url }, 'the client closed the connection before its request had arrived');
    return;
  }
  const response = toErrorResponse(error);
  if (response.unexpected) {
    // The stack goes to the log with the request id; the client only gets the id to quote.
    logger.error(
      { err: error, reqId: request.id, method: request.method, url: request.url },
      error instanceof Error ? error.stack : String(error),
    );
  } else if (isDatabaseBusyError(error)) {
    // Answered 429, but a deadlock or a lock timeout is worth seeing beside a request it cost.
    const sqlState = sqlStateOf(error);
    const leftOut = busyWarnings.take(sqlState ?? '', Date.now());
    if (leftOut !== undefined) {
      const since = leftOut > 0 ? ` (and ${leftOut} more request(s) refused for it since the last such line)` : '';
      logger.warn({ reqId: request.id, method: request.method, url: request.url, sqlState, leftOut }, `the database refused the request's transaction for now: ${(error as Error).message}${since}`);
    }
  }
  if (reply.sent) return;
  void reply
    .status(response.status)
    .headers({ 'content-type': 'application/json; charset=utf-8', ...response.headers })
    .send(response.body);
}

/** The client dropped the connection while its body was being read (Node's "aborted", ECONNRESET). */
function clientWentAway(request: FastifyRequest, error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return request.raw.destroyed && (code === 'ECONNRESET' || code === 'ECONNABORTED' || (error instanceof Error && error.message === 'aborted'));
}
