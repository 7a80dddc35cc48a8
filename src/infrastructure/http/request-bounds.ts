import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { DomainError } from '../../domain/shared/domain-error';
import { BodyLimit, bodyLimitOf, LARGEST_BODY_BYTES } from './body-limits';

export interface RequestTimeouts {
  /** The request line and headers must have arrived within this. */
  headersMs: number;
  /** The whole request, body included, must have arrived within this. */
  requestMs: number;
}

/**
 * The HTTP server's options that bound what one request may hold: the largest body any route
 * takes (each route's own limit is set by boundRouteBodies), and the time a request may take to
 * arrive, so a client sending a byte now and then cannot keep a connection forever. Node checks
 * the deadlines every `connectionsCheckingInterval` and answers 408; a short interval keeps
 * a deadline close to what it says.
 */
export function requestBoundsOptions(timeouts: RequestTimeouts) {
  return {
    bodyLimit: LARGEST_BODY_BYTES,
    requestTimeout: timeouts.requestMs,
    http: {
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: 1_000,
    },
  };
}

const BODY_LIMIT_CONFIG = 'bodyLimitOfRoute';

/**
 * Gives each route its body limit (body-limits.ts) as it is registered: Fastify then refuses a
 * larger Content-Length with 413 before reading, and stops reading a body that grows past it.
 * Must be installed before the routes are registered.
 */
export function boundRouteBodies(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const method = Array.isArray(route.method) ? route.method[0] : route.method;
    const limit = bodyLimitOf(method, route.url);
    route.bodyLimit = limit.bytes;
    route.config = { ...(route.config as object | undefined), [BODY_LIMIT_CONFIG]: limit };
  });
  // A declared length over the limit is refused before a byte is read, naming the limit (Fastify
  // would refuse it too, without saying what the route takes).
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    const declared = Number(request.headers['content-length']);
    const limit = routeBodyLimitOf(request);
    if (declared > limit.bytes) done(bodyTooLarge(`Request body is larger than this route accepts (${limit.bytes} bytes)`));
    else done(null, payload);
  });
}

export const bodyTooLarge = (message: string) => new DomainError('payload_too_large', message, { serviceCode: 'payload_too_large' });

/** The body limit of the route a request was matched to. */
export function routeBodyLimitOf(request: FastifyRequest): BodyLimit {
  const config = request.routeOptions.config as unknown as Record<string, unknown> | undefined;
  return (config?.[BODY_LIMIT_CONFIG] as BodyLimit | undefined) ?? bodyLimitOf(request.method, request.routeOptions.url ?? '');
}

const releases = new WeakMap<FastifyRequest, () => void>();
const answered = new WeakSet<FastifyRequest>();

/**
 * Ties what a request holds (its body's share of the budget) to its answer: given back when the
 * answer is sent or the connection closes first, whichever comes first.
 */
export function releaseWithAnswer(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const { headers } = request;
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
      done();
      return;
    }
    reply.raw.once('close', () => {
      answered.add(request);
      releases.get(request)?.();
    });
    done();
  });
}

/** Holds `release` until the request's answer is done; at once when it already is. */
export function holdUntilAnswered(request: FastifyRequest, release: () => void): void {
  if (answered.has(request)) release();
  else releases.set(request, release);
}
