import { parse } from 'node:querystring';
import { errorCodes, FastifyInstance } from 'fastify';
import { FORM_ROUTES } from './connect-page.controller';

const FORM = 'application/x-www-form-urlencoded';
const formRoutes = new Set<string>(FORM_ROUTES);

/**
 * Parses HTML form posts for the connect page's routes only. The API stays JSON-only: a form
 * body sent to any other route is refused with the same 415 Fastify gives for any media type
 * it has no parser for. (@fastify/formbody would accept forms on every route.) Repeated names
 * become arrays; the parsed object has no prototype.
 */
export function useFormBodyParser(fastify: FastifyInstance): void {
  if (fastify.hasContentTypeParser(FORM)) return;
  fastify.addContentTypeParser(FORM, { parseAs: 'string' }, (request, body, done) => {
    if (!formRoutes.has(request.routeOptions.url ?? '')) {
      done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(FORM), undefined);
      return;
    }
    done(null, parse(body as string));
  });
}
