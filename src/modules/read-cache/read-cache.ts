import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parse as parseQuery } from 'fast-querystring';
import { PinoLogger } from 'nestjs-pino';
import { AppConfig } from '../../config/app-config';
import { digestOf } from '../../domain/auth/opaque-secret';
import { entityIdsFromQuery, refuseForeignEntities, resolveEntity } from '../../domain/connections/entity-scope';
import { Product } from '../../domain/providers/provider';
import { API_VERSION_HEADER, FAMILY_API_VERSION_HEADER } from '../../infrastructure/http/api-version';
import { REQUEST_ID_HEADER, requestIdOf } from '../../infrastructure/http/request-id';
import { Metrics } from '../../infrastructure/observability/metrics';
import { AuthenticatedRequest, bearerTokenIn } from '../auth/access-token.guard';
import { TokenLookup } from '../auth/token-lookup';
import { RateLimitDecision, TokenRateLimiter } from '../auth/token-rate-limiter';
import { GenerationLookup, GenerationSeen } from './generation-lookup';
import { CachedAnswer, etagOf, ifNoneMatchHolds, ResponseCache } from './response-cache';

const SYNCED_READ = Symbol('synced-read');
const NOT_KEPT = Symbol('synced-read-not-kept');

interface SyncedRead {
  entityId: string;
  seen: GenerationSeen;
  product: Product;
}

type ReadRequest = AuthenticatedRequest & { [SYNCED_READ]?: SyncedRead; [NOT_KEPT]?: true };

/** What memory holds for a request: nothing, a refusal by the token's rate limit, or its answer. */
type FromMemory = { kind: 'miss' } | { kind: 'limited'; limit: RateLimitDecision } | { kind: 'answer'; answer: CachedAnswer; notModified: boolean };

/** The parts of a request its answer from memory depends on, whichever layer read them. */
interface ReadRequestParts {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  query: unknown;
  body: unknown;
}

/** On a raw request: what the early look found, so the framework's path does not look (or take the rate limit) again. */
const LOOKED = Symbol('read-cache-looked');
type LookedAtRequest = IncomingMessage & { [LOOKED]?: FromMemory };
const MISS: FromMemory = { kind: 'miss' };

/** Synced answers may be kept by the client, revalidated every time: they are private to the token. */
const CACHE_CONTROL = 'private, no-cache';
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Synced employer reads served from memory. A synced read is a function of the entity, its sync
 * generation and the request (route, query, body, API version), so its answer is kept under
 * that key (ResponseCache) and is exact for as long as the generation stands: no time-to-live.
 * Every synced answer carries a strong ETag (a hash of its bytes) and answers 304 to a matching
 * `If-None-Match`, cached or not.
 *
 * A repeated GET is answered before the framework sees it (on the HTTP server's `request`
 * event, ahead of Fastify's handler), a repeated POST batch read once its body is parsed (a
 * Fastify `preHandler`), when everything it needs is in memory: its token (TokenLookup), its
 * entity's generation (GenerationLookup) and the answer; the token's status, product and
 * entities are checked and its rate limit taken as the guard does. Anything missing, or change
 * notifications down, and the request takes the ordinary path, whose answer is then kept (an
 * `onSend` hook), unless a change to the entity's generation was heard while it was read.
 */
@Injectable()
export class ReadCache {
  readonly answers: ResponseCache;

  constructor(
    config: AppConfig,
    private readonly tokens: TokenLookup,
    private readonly generations: GenerationLookup,
    private readonly limiter: TokenRateLimiter,
    private readonly metrics: Metrics,
  ) {
    this.answers = new ResponseCache(config.READ_CACHE_MB * 1024 * 1024);
  }

  /** Marks a request the interceptor found to be a synced read: its answer gets an ETag and may be kept. */
  async markSynced(request: FastifyRequest, entityId: string, product: Product): Promise<void> {
    const seen = await this.generations.find(entityId);
    if (seen.generation !== null) (request as ReadRequest)[SYNCED_READ] = { entityId, seen, product };
  }

  /** The answer depends on more than the generation (a not-found message naming the sync under way): not kept. */
  static doNotKeep(request: FastifyRequest): void {
    (request as ReadRequest)[NOT_KEPT] = true;
  }

  /**
   * Hooks into Fastify and its HTTP server. `headers` are those the pipeline puts on every
   * answer (the security headers); an answer from memory sent ahead of Fastify carries them too.
   * Call after the hooks that set them.
   */
  install(fastify: FastifyInstance, headers: Readonly<Record<string, string>>): void {
    let closing = false;
    fastify.addHook('preClose', (done) => {
      // Fastify answers 503 to requests once closing: the early path leaves them to it.
      closing = true;
      done();
    });
    const fixedHeaders = Object.entries(headers);
    answerFirst(fastify.server, (request, response) => !closing && this.answerEarly(request, response, fixedHeaders));
    // A GET the early path did not answer (or one injected, which skips the server) is looked at once more here.
    fastify.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'GET' || !request.url.startsWith('/employer/')) return;
      const looked = (request.raw as LookedAtRequest)[LOOKED];
      if (looked) {
        if (looked.kind === 'limited') (request as ReadRequest).rateLimit = looked.limit;
        return;
      }
      if (this.answerFromMemory(request as ReadRequest, reply)) return reply;
    });
    fastify.addHook('preHandler', async (request, reply) => {
      if (request.method !== 'POST' || !request.url.startsWith('/employer/')) return;
      if (this.answerFromMemory(request as ReadRequest, reply)) return reply;
    });
    fastify.addHook('onSend', async (request, reply, payload) => {
      const read = (request as ReadRequest)[SYNCED_READ];
      if (!read || reply.statusCode !== 200 || typeof payload !== 'string') return payload;
      const etag = etagOf(payload);
      reply.header('etag', etag).header('cache-control', CACHE_CONTROL);
      if (!(request as ReadRequest)[NOT_KEPT] && !this.generations.changedSince(read.seen)) {
        const route = request.routeOptions.url ?? 'unmatched';
        this.answers.set(keyOf(request, read.entityId, read.seen.generation!), { body: Buffer.from(payload), etag, product: read.product, route });
      }
      this.metrics.readCacheRequests.inc({ outcome: 'miss' });
      if (ifNoneMatchHolds(request.headers['if-none-match'], etag)) {
        reply.code(304);
        return '';
      }
      return payload;
    });
  }

  /**
   * A GET answered from memory on the raw request, before Fastify builds its request and reply,
   * routes it and runs its hooks: a hit then costs little more than writing its bytes. The
   * answer is the one Fastify would send (the pipeline's headers, a request id of its own) and
   * is timed in the HTTP metrics. Anything else is left to Fastify, with what was found.
   */
  private answerEarly(request: IncomingMessage, response: ServerResponse, fixedHeaders: readonly [string, string][]): boolean {
    const url = request.url ?? '';
    // A request with a body is Fastify's to read (and to refuse).
    if (request.method !== 'GET' || !url.startsWith('/employer/') || request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined) {
      return false;
    }
    const started = performance.now();
    const mark = url.indexOf('?');
    const found = this.lookUp({ method: 'GET', url, headers: request.headers, query: mark < 0 ? {} : parseQuery(url.slice(mark + 1)), body: undefined });
    (request as LookedAtRequest)[LOOKED] = found;
    if (found.kind !== 'answer') return false;
    const { answer, notModified } = found;
    const headers: OutgoingHttpHeaders = { [REQUEST_ID_HEADER]: requestIdOf(request) };
    for (const [name, value] of fixedHeaders) headers[name] = value;
    headers.etag = answer.etag;
    headers['cache-control'] = CACHE_CONTROL;
    if (notModified) {
      response.writeHead(304, headers).end();
    } else {
      headers['content-type'] = JSON_CONTENT_TYPE;
      headers['content-length'] = answer.body.length;
      response.writeHead(200, headers).end(answer.body);
    }
    const elapsedMs = performance.now() - started;
    this.metrics.httpRequestDuration.observe({ method: 'GET', route: answer.route, status_code: notModified ? '304' : '200' }, elapsedMs / 1000);
    logAnswered(request, response, headers[REQUEST_ID_HEADER] as string, elapsedMs);
    return true;
  }

  private answerFromMemory(request: ReadRequest, reply: FastifyReply): boolean {
    const found = this.lookUp(request);
    if (found.kind === 'limited') {
      // The guard answers the 429, with this decision rather than a second one.
      request.rateLimit = found.limit;
      return false;
    }
    if (found.kind === 'miss') return false;
    const { answer, notModified } = found;
    reply.header('etag', answer.etag).header('cache-control', CACHE_CONTROL);
    if (notModified) {
      void reply.code(304).send();
    } else {
      void reply.code(200).header('content-type', JSON_CONTENT_TYPE).send(answer.body);
    }
    return true;
  }

  /**
   * The answer memory holds for this request, checked as the guard checks it (the token's
   * status, its entities, the product the answer needs) and with the token's rate limit taken.
   */
  private lookUp(request: ReadRequestParts): FromMemory {
    const token = bearerTokenIn(request.headers.authorization);
    if (token === undefined) return MISS;
    const principal = this.tokens.cached(digestOf(token));
    if (!principal || principal.connection.status !== 'connected') return MISS;
    let entityId: string;
    try {
      const requested = entityIdsFromQuery(request.query as Record<string, unknown>);
      refuseForeignEntities(principal.connection.entities, requested);
      entityId = resolveEntity(principal.connection.entities, requested).id;
    } catch {
      return MISS;
    }
    const generation = this.generations.cached(entityId);
    if (generation === undefined || generation === null) return MISS;
    const answer = this.answers.get(keyOf(request, entityId, generation));
    if (!answer || !principal.connection.products.includes(answer.product)) return MISS;
    const limit = this.limiter.take(principal.tokenId);
    if (!limit.allowed) return { kind: 'limited', limit };
    const notModified = ifNoneMatchHolds(request.headers['if-none-match'], answer.etag);
    this.metrics.readCacheRequests.inc({ outcome: notModified ? 'not_modified' : 'hit' });
    return { kind: 'answer', answer, notModified };
  }
}

/**
 * The line the HTTP logger (pino-http) writes for every request it sees, written for one it
 * never saw: the same logger, serializers and message, at the level it gives a success.
 */
function logAnswered(request: IncomingMessage, response: ServerResponse, id: string, elapsedMs: number): void {
  const logger = PinoLogger.root as PinoLogger['logger'] | undefined;
  if (!logger?.isLevelEnabled('info')) return;
  (request as IncomingMessage & { id?: string }).id = id;
  logger.info({ req: request, res: response, responseTime: Math.round(elapsedMs) }, 'request completed');
}

/**
 * Lets `first` answer requests on this server before the handlers already listening (Fastify's):
 * they get every request it leaves unanswered.
 */
function answerFirst(server: FastifyInstance['server'], first: (request: IncomingMessage, response: ServerResponse) => boolean): void {
  const handlers = server.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    let answered = false;
    try {
      answered = first(request, response);
    } catch {
      // Memory could not answer it: the framework will, as if it had never been looked at.
      answered = response.headersSent;
      if (!answered) delete (request as LookedAtRequest)[LOOKED];
    }
    if (!answered) for (const handler of handlers) handler.call(server, request, response);
  });
}

/**
 * The request as far as its answer depends on it: entity, generation, method, path with its
 * query parameters in a fixed order, the API version headers and the body; hashed.
 */
function keyOf(request: ReadRequestParts, entityId: string, generation: string): string {
  const [path, query = ''] = request.url.split('?', 2);
  const params = query === '' ? '' : query.split('&').sort().join('&');
  const versions = `${String(request.headers[API_VERSION_HEADER] ?? '')}|${String(request.headers[FAMILY_API_VERSION_HEADER] ?? '')}`;
  const body = request.method === 'POST' ? JSON.stringify(request.body ?? null) : '';
  return createHash('sha1').update(`${entityId}\n${generation}\n${request.method} ${path}?${params}\n${versions}\n${body}`).digest('base64url');
}
