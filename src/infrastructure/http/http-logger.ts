import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import { AppConfig } from '../../config/app-config';
import { requestIdOf } from './request-id';

const QUIET_ROUTES = /^\/(health\/|metrics)/;

/** JSON logs (pino), one line per request with its id; secrets never reach the log. */
export function httpLoggerOptions(config: AppConfig): Params {
  return {
    // At `silent` nothing would be logged: no request logger is made for every request.
    ...(config.LOG_LEVEL === 'silent' && { forRoutes: [] }),
    pinoHttp: {
      level: config.LOG_LEVEL,
      transport: config.LOG_PRETTY ? { target: 'pino-pretty', options: { singleLine: true } } : undefined,
      genReqId: (request: IncomingMessage) => requestIdOf(request),
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]'],
        censor: '[redacted]',
      },
      autoLogging: { ignore: (request: IncomingMessage) => QUIET_ROUTES.test(request.url ?? '') },
      customLogLevel: (_request: IncomingMessage, response: ServerResponse, error?: Error) =>
        error || response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info',
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
  };
}
