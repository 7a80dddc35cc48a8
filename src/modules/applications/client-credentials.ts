import { DomainError } from '../../domain/shared/domain-error';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * Application credentials come as HTTP Basic (`client_id:client_secret`) or, where the
 * operation allows it, as `client_id`/`client_secret` body fields. A malformed Basic header
 * is refused outright rather than falling back to the body.
 */
export function clientCredentialsOf(
  authorization: string | undefined,
  body: { client_id?: unknown; client_secret?: unknown } | undefined,
  { allowBody }: { allowBody: boolean },
): ClientCredentials {
  if (authorization !== undefined && authorization.trim() !== '') {
    const match = /^Basic\s+([A-Za-z0-9+/=._-]+)\s*$/i.exec(authorization);
    if (!match) throw malformedBasic();
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0 || colon === decoded.length - 1) throw malformedBasic();
    return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
  }
  if (allowBody && typeof body?.client_id === 'string' && typeof body?.client_secret === 'string') {
    return { clientId: body.client_id, clientSecret: body.client_secret };
  }
  throw new DomainError(
    'authentication_error',
    allowBody
      ? 'Application credentials are required: HTTP Basic client_id:client_secret, or client_id and client_secret in the body'
      : 'Application credentials are required: HTTP Basic client_id:client_secret',
    { serviceCode: 'invalid_client' },
  );
}

const malformedBasic = () =>
  new DomainError('authentication_error', 'Authorization header must be Basic base64(client_id:client_secret)', {
    serviceCode: 'invalid_client',
  });
