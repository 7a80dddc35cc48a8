import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { malformedRequest } from '../../domain/shared/domain-error';

/**
 * The API speaks JSON only. Parses JSON bodies itself so an unparsable body fails as the spec's 400
 * `bad_request_error` / `malformed_request`. Prototype-poisoning keys are refused, as
 * Fastify's own parser does.
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
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      done(malformedRequest(`Request body is not valid JSON: ${(error as Error).message}`), undefined);
    }
  });
}
