import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { digestOf } from '../../domain/auth/opaque-secret';
import { entityIdsFromQuery, refuseForeignEntities, resolveEntity } from '../../domain/connections/entity-scope';
import { Product } from '../../domain/providers/provider';
import { API_VERSION_HEADER, FAMILY_API_VERSION_HEADER } from '../../infrastructure/http/api-version';
import { Metrics } from '../../infrastructure/observability/metrics';
import { AuthenticatedRequest, bearerTokenIn } from '../auth/access-token.guard';
import { TokenLookup } from '../auth/token-lookup';
import { TokenRateLimiter } from '../auth/token-rate-limiter';
import { GenerationLookup, GenerationSeen } from './generation-lookup';
import { etagOf, ifNoneMatchHolds, ResponseCache } from './response-cache';

const SYNCED_READ = Symbol('synced-read');
const NOT_KEPT = Symbol('synced-read-not-kept');

interface SyncedRead {
  entityId: string;
  seen: GenerationSeen;
  product: Product;
}

type ReadRequest = AuthenticatedRequest & { [SYNCED_READ]?: SyncedRead; [NOT_KEPT]?: true };

/** Synced answers may be kept by the client, revalidated every time: they are private to the token. */
const CACHE_CONTROL = 'private, no-cache';

/**
 * Synced employer reads served from memory. A synced read is a function of the entity, its sync
 * generation and the request (route, query, body, API version), so its answer is kept under
 * that key (ResponseCache) and is exact for as long as the generation stands: no time-to-live.
 * Every synced answer carries a strong ETag (a hash of its bytes) and answers 304 to a matching
 * `If-None-Match`, cached or not.
 *
 * A repeated request is answered before the framework's pipeline (a Fastify `preHandler`)
 * when everything it needs is in memory: its token (TokenLookup), its entity's generation
 * (GenerationLookup) and the answer; the token's status, product and entities are checked and
 * its rate limit taken as the guard does. Anything missing, or change notifications down, and
 * the request takes the ordinary path, whose answer is then kept (an `onSend` hook), unless a
 * change to the entity's generation was heard while it was read.
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

  /** Hooks into Fastify; call after the hooks whose headers every answer needs (security headers, request id). */
  install(fastify: FastifyInstance): void {
    // A GET is answered as soon as it is routed; a POST once its body is parsed.
    fastify.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'GET' || !request.url.startsWith('/employer/')) return;
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
        this.answers.set(keyOf(request, read.entityId, read.seen.generation!), { body: payload, etag, product: read.product });
      }
      this.metrics.readCacheRequests.inc({ outcome: 'miss' });
      if (ifNoneMatchHolds(request.headers['if-none-match'], etag)) {
        reply.code(304);
        return '';
      }
      return payload;
    });
  }

  private answerFromMemory(request: ReadRequest, reply: FastifyReply): boolean {
    const token = bearerTokenIn(request.headers.authorization);
    if (token === undefined) return false;
    const principal = this.tokens.cached(digestOf(token));
    if (!principal || principal.connection.status !== 'connected') return false;
    let entityId: string;
    try {
      const requested = entityIdsFromQuery(request.query as Record<string, unknown>);
      refuseForeignEntities(principal.connection.entities, requested);
      entityId = resolveEntity(principal.connection.entities, requested).id;
    } catch {
      return false;
    }
    const generation = this.generations.cached(entityId);
    if (generation === undefined || generation === null) return false;
    const answer = this.answers.get(keyOf(request, entityId, generation));
    if (!answer || !principal.connection.products.includes(answer.product)) return false;
    const limit = this.limiter.take(principal.tokenId);
    if (!limit.allowed) {
      // The guard answers the 429, with this decision rather than a second one.
      request.rateLimit = limit;
      return false;
    }
    reply.header('etag', answer.etag).header('cache-control', CACHE_CONTROL);
    if (ifNoneMatchHolds(request.headers['if-none-match'], answer.etag)) {
      this.metrics.readCacheRequests.inc({ outcome: 'not_modified' });
      void reply.code(304).send();
    } else {
      this.metrics.readCacheRequests.inc({ outcome: 'hit' });
      void reply.code(200).header('content-type', 'application/json; charset=utf-8').send(answer.body);
    }
    return true;
  }
}

/**
 * The request as far as its answer depends on it: entity, generation, method, path with its
 * query parameters in a fixed order, the API version headers and the body; hashed.
 */
function keyOf(request: FastifyRequest, entityId: string, generation: string): string {
  const [path, query = ''] = request.url.split('?', 2);
  const params = query === '' ? '' : query.split('&').sort().join('&');
  const versions = `${String(request.headers[API_VERSION_HEADER] ?? '')}|${String(request.headers[FAMILY_API_VERSION_HEADER] ?? '')}`;
  const body = request.method === 'POST' ? JSON.stringify(request.body ?? null) : '';
  return createHash('sha1').update(`${entityId}\n${generation}\n${request.method} ${path}?${params}\n${versions}\n${body}`).digest('base64url');
}
