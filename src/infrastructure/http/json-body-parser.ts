import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { hostileValueProblem, MAX_JSON_DEPTH, measureJson } from '../../domain/shared/hostile-input';
import { invalidRequest, malformedRequest } from '../../domain/shared/domain-error';
import { serverBusy } from './error-response';
import { BodyBudget } from './body-budget';
import { bodyTooLarge, holdUntilAnswered, routeBodyLimitOf } from './request-bounds';

/**
 * Heap a parsed JSON value takes beyond its text, per value (object, array, member or element),
 * measured on V8: small values cost tens of bytes each, parsed and then copied into DTOs.
 */
const HEAP_PER_VALUE = 64;

/**
 * The API speaks JSON only. Parses JSON bodies itself so that an unparsable body fails as the spec's 400
 * `bad_request_error` / `malformed_request`. The body arrives as bytes (outside the JavaScript
 * heap) within its route's byte limit; before it becomes text it passes the route's bound on
 * values and the nesting bound (recursive validation would run out of stack), and waits for
 * room in the process's body budget. Then it is parsed, and before any handler sees it, it
 * passes the rules of hostile-input.ts: text PostgreSQL can store, no prototype or constructor keys.
 */
export function useJsonBodyParser(fastify: FastifyInstance, budget: BodyBudget): void {
  // Only JSON is accepted: any other media type is refused with 415 instead of reaching a DTO as text.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer) => {
    if (isBlank(body)) throw malformedRequest('Request body is empty but Content-Type is application/json');
    const limit = routeBodyLimitOf(request);
    const { beyond, values } = measureJson(body, { depth: MAX_JSON_DEPTH, values: limit.values });
    if (beyond === 'depth') throw malformedRequest(`Request body nests objects or arrays deeper than ${MAX_JSON_DEPTH} levels`);
    if (beyond === 'values') {
      throw bodyTooLarge(`Request body holds more JSON values than this route accepts (${limit.values})`);
    }
    const parsing = body.length * 2 + values * HEAP_PER_VALUE;
    const handling = (limit.handlingHeapPerValue ?? 0) * values;
    await admit(request, budget, Math.max(parsing, handling));
    let parsed: unknown;
    try {
      parsed = secureJson.parse(body.toString('utf8'), undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch (error) {
      throw malformedRequest(`Request body is not valid JSON: ${(error as Error).message}`);
    }
    const problem = hostileValueProblem(parsed);
    if (problem !== undefined) throw invalidRequest(`Invalid request: ${problem}`);
    return parsed;
  });
}

/**
 * Reserves the body's cost in the budget until its answer is sent (or its connection closes);
 * refused with 429 and Retry-After when no room comes in time (the spec has no 503 family; 429
 * tells a client to come back, which is what it should do).
 */
async function admit(request: FastifyRequest, budget: BodyBudget, cost: number): Promise<void> {
  const release = await budget.reserve(cost);
  if (release === undefined) {
    throw serverBusy('Too many large request bodies are being handled at once; retry shortly');
  }
  holdUntilAnswered(request, release);
}

function isBlank(body: Buffer): boolean {
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return true;
}
