import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { hostileValueProblem, jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../../domain/shared/hostile-input';
import { invalidRequest, malformedRequest } from '../../domain/shared/domain-error';

/**
 * The API speaks JSON only. Parses JSON bodies itself so an unparsable body fails as the spec's 400
 * `bad_request_error` / `malformed_request`. Before any handler sees a body, it passes the
 * rules of hostile-input.ts: nesting bounded before parsing (recursive validation would run out of
 * stack), text PostgreSQL can store, and no prototype or constructor keys.
 */
export function useJsonBodyParser(fastify: FastifyInstance): void {
  // Only JSON is accepted: any other media type is refused with 415 instead of reaching a DTO as text.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') {
      done(malformedRequest('Request body is empty but Content-Type is application/json'), undefined);
      return;
    }
    if (jsonNestsDeeperThan(text)) {
      done(malformedRequest(`Request body nests objects or arrays deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      return;
    }
    let parsed: unknown;
    try {
      parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch (error) {
      done(malformedRequest(`Request body is not valid JSON: ${(error as Error).message}`), undefined);
      return;
    }
    const problem = hostileValueProblem(parsed);
    done(problem === undefined ? null : invalidRequest(`Invalid request: ${problem}`), problem === undefined ? parsed : undefined);
  });
}
