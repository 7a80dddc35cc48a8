import { Type } from '@nestjs/common';
import helmet from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { AppConfig, trustProxyOption } from './config/app-config';
import { ServiceAddress } from './config/service-address';
import { Clock } from './domain/shared/clock';
import { EmbeddedPostgres } from './infrastructure/database/embedded-postgres';
import { migrateDatabase } from './infrastructure/database/migrations-runner';
import { setupApiDocs } from './infrastructure/http/api-docs';
import { ErrorFilter } from './infrastructure/http/error.filter';
import { answerClientError, answerUnmetExpectation, sendFrameworkError } from './infrastructure/http/framework-errors';
import { BodyBudget } from './infrastructure/http/body-budget';
import { useJsonBodyParser } from './infrastructure/http/json-body-parser';
import { boundRouteBodies, releaseWithAnswer, requestBoundsOptions } from './infrastructure/http/request-bounds';
import { REQUEST_ID_HEADER, requestIdOf } from './infrastructure/http/request-id';
import { checkRequestText } from './infrastructure/http/request-text-check';
import { createValidationPipe } from './infrastructure/http/validation';
import { recordHttpMetrics } from './infrastructure/observability/http-metrics';
import { Metrics } from './infrastructure/observability/metrics';
import { QuietBootLogger } from './infrastructure/observability/quiet-boot-logger';
import { ReadCache } from './modules/read-cache/read-cache';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { version } = require('../package.json') as { version: string };

export interface RunningService {
  app: NestFastifyApplication;
  config: AppConfig;
  /** Where the service listens, e.g. http://127.0.0.1:3000 */
  url: string;
  /** Set when the service runs on the embedded database. */
  embeddedDatabase?: EmbeddedPostgres;
  close(): Promise<void>;
}

export interface StartOptions {
  extraModules?: Type[];
  /** The service's time (default: the system clock); tests pass a ManualClock. */
  clock?: Clock;
}

/** Builds and starts the whole service: database (embedded when DATABASE_URL is unset), HTTP, workers. */
export async function startService(config: AppConfig, options: StartOptions = {}): Promise<RunningService> {
  const embeddedDatabase = config.embedded ? await EmbeddedPostgres.start(config.EMBEDDED_DATA_DIR) : undefined;
  if (!config.embedded) await migrateDatabase(config.databaseSessionUrl!);
  let app: NestFastifyApplication | undefined;
  try {
    app = await NestFactory.create<NestFastifyApplication>(
      AppModule.forRoot({
        config,
        databaseUrl: config.DATABASE_URL ?? embeddedDatabase!.url,
        extraModules: options.extraModules,
        clock: options.clock,
      }),
      new FastifyAdapter({
        ...requestBoundsOptions({ headersMs: config.HTTP_HEADERS_TIMEOUT_MS, requestMs: config.HTTP_REQUEST_TIMEOUT_MS }),
        genReqId: requestIdOf,
        return503OnClosing: true,
        trustProxy: trustProxyOption(config.TRUST_PROXY),
        frameworkErrors: sendFrameworkError,
        clientErrorHandler: answerClientError,
      }),
      { bufferLogs: true, abortOnError: false, bodyParser: false },
    );
    await configureHttp(app, config);
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    await app?.close().catch(() => undefined);
    await embeddedDatabase?.stop().catch(() => undefined);
    throw error;
  }
  const started = app;
  const address = started.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  const url = `http://${host}:${port}`;
  started.get(ServiceAddress).listeningAt(url);
  return {
    app: started,
    config,
    url,
    embeddedDatabase,
    close: async () => {
      await started.close();
      await embeddedDatabase?.stop();
    },
  };
}

async function configureHttp(app: NestFastifyApplication, config: AppConfig): Promise<void> {
  app.useLogger(new QuietBootLogger(app.get(Logger)));
  app.flushLogs();
  app.useGlobalFilters(new ErrorFilter());
  app.useGlobalPipes(createValidationPipe());

  const fastify = app.getHttpAdapter().getInstance();
  fastify.server.on('checkExpectation', answerUnmetExpectation);
  boundRouteBodies(fastify);
  releaseWithAnswer(fastify);
  useJsonBodyParser(fastify, new BodyBudget(config.BODY_BUDGET_MB * 1024 * 1024, config.BODY_WAIT_MS));
  checkRequestText(fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  recordHttpMetrics(fastify, app.get(Metrics));

  // Security headers from helmet, built once: @fastify/helmet built the middleware again for
  // every request (parsing the CSP directives each time), 5 % of a cached read's CPU.
  const securityHeaders = helmet({
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        // The docs page (Swagger UI) and server-rendered pages use inline bootstrapping.
        scriptSrc: ["'self'", "'unsafe-inline'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'self'"],
        // Plain-HTTP local runs would otherwise have every asset rewritten to https.
        upgradeInsecureRequests: null,
      },
    },
  });
  // Its headers depend on nothing in the request (no nonces): computed once, set on every reply.
  const headers = securityHeadersOf(securityHeaders);
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers);
    done();
  });
  // After the security headers: an answer from memory carries them too.
  app.get(ReadCache).install(fastify, headers);
  setupApiDocs(app, version);
}

/** The headers a helmet middleware sets, read once from a response that records them. */
function securityHeadersOf(middleware: ReturnType<typeof helmet>): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => delete headers[name.toLowerCase()],
  };
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return headers;
}
