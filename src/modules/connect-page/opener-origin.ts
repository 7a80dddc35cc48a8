import { invalidRequest } from '../../domain/shared/domain-error';
import { ORIGIN_FORM, parseOrigin } from '../../domain/applications/application-origins';

export const originNotRegistered = (origin: string) =>
  invalidRequest(
    `origin ${origin} is not registered for this application, so this page cannot hand it the result.`,
    'origin_not_registered',
  );

/**
 * Where the embedded flow (no redirect_uri) posts its result: the `origin` of the connect
 * link, which must be one of the application's registered origins, or, when the link names
 * none, the application's only registered origin. Never `*`: a page on any other origin that
 * opened the flow must not receive the code.
 */
export function openerOrigin(allowedOrigins: string[], given: string | undefined): string {
  if (given === undefined || given === '') {
    if (allowedOrigins.length === 1) return allowedOrigins[0];
    if (allowedOrigins.length === 0) {
      throw invalidRequest(
        'This application has registered no origins for the embedded flow, so this page could not hand it the result. ' +
          'The application must register the origin of its page first.',
        'origin_not_registered',
      );
    }
    throw invalidRequest(
      'origin is required: this application has registered several origins, and the link must name the one of the page that opened this window.',
      'origin_required',
    );
  }
  const parsed = parseOrigin(given);
  if ('problem' in parsed) throw invalidRequest(`origin ${given} ${parsed.problem}; it must be ${ORIGIN_FORM}.`, 'invalid_origin');
  if (!allowedOrigins.includes(parsed.origin)) throw originNotRegistered(parsed.origin);
  return parsed.origin;
}
