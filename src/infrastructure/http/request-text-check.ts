import type { FastifyInstance } from 'fastify';
import { hostileValueProblem } from '../../domain/shared/hostile-input';
import { invalidRequest } from '../../domain/shared/domain-error';

/**
 * Query strings and path parameters pass the same rules as bodies (hostile-input.ts) before any
 * guard or handler: `?topic=%00` would otherwise reach a PostgreSQL filter and fail there.
 */
export function checkRequestText(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', (request, _reply, done) => {
    const problem = hostileValueProblem(request.query, 'query') ?? hostileValueProblem(request.params, 'path');
    done(problem === undefined ? undefined : invalidRequest(`Invalid request: ${problem}`));
  });
}
