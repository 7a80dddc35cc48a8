import type { FastifyInstance } from 'fastify';
import { Metrics } from './metrics';

/**
 * Times every request by its route template (never the raw URL, which would explode the
 * label set), so `/jobs/automated/:id` is one series however many jobs there are.
 */
export function recordHttpMetrics(fastify: FastifyInstance, metrics: Metrics): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    metrics.httpRequestDuration.observe(
      { method: request.method, route, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
