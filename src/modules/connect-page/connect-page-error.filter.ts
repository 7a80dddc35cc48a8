import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/shared/domain-error';
import { domainErrorResponse } from '../../infrastructure/http/error-response';
import { errorPage } from './connect-page.views';
import { sendPage } from './page-response';

/** A session that existed but can no longer be used is gone (410), not a bad request. */
const GONE = new Set(['session_expired', 'session_completed']);

/**
 * The connect page is for people, not API clients: where the API answers with the JSON error
 * object, these routes answer with an HTML page that says what happened. Expected errors show
 * their message; anything else is logged with the request id and shown as a generic 500,
 * never with internals.
 */
@Catch()
export class ConnectPageErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ConnectPage');

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    if (reply.sent) return;
    if (error instanceof DomainError && error.family !== 'server_error') {
      const status = GONE.has(error.serviceCode ?? '') ? 410 : domainErrorResponse(error).status;
      sendPage(reply, errorPage(status, error.message));
      return;
    }
    if (error instanceof HttpException && error.getStatus() < 500) {
      sendPage(reply, errorPage(error.getStatus(), 'The request could not be read. Open the link the application gave you again.'));
      return;
    }
    const request = http.getRequest<FastifyRequest>();
    this.logger.error({ err: error, reqId: request.id, method: request.method, url: request.url }, error instanceof Error ? error.stack : String(error));
    sendPage(reply, errorPage(500, `An unexpected error occurred. Reference: ${request.id}.`));
  }
}
