import type { FastifyRequest } from 'fastify';
import { clientAddressOf } from '../client-address';

/**
 * Checks application credentials (client_id + client_secret); resolves when they are valid and
 * rejects otherwise. Bound in the app wiring to the applications service, which this layer may
 * not import.
 */
export interface ApplicationCredentialsVerifier {
  /** `from`: the client's address, which failed attempts are counted against as well as the id. */
  authenticate(clientId: string, clientSecret: string, from?: string): Promise<unknown>;
}

export const APPLICATION_CREDENTIALS_VERIFIER = Symbol('ApplicationCredentialsVerifier');

/**
 * Whose key it is. Keys live per caller, never globally: one caller's key can never reach
 * another caller's answer. `verify` proves the caller before a stored answer is given out.
 * `owner` is whose allowance of kept answers the key uses: an application's connections share
 * the application's, so opening more connections does not buy more storage.
 */
export interface IdempotencyCaller {
  scope: string;
  owner: string;
  verify(): Promise<boolean>;
}

/** What the guards (which run before interceptors) leave on a request they let through. */
type AuthenticatedRequest = FastifyRequest & {
  /** Set by the access-token guard. */
  principal?: { connection: { id: string; applicationId: string } };
  /** Set by the ops API's credentials guard. */
  opsUser?: string;
};

/**
 * - a bearer token the access-token guard resolved (guards run before interceptors): the
 *   token's connection, already proven;
 * - the ops user the ops API's guard let in, already proven;
 * - HTTP Basic, or `client_id`/`client_secret` body fields where there is no Authorization
 *   header: the application, proven here because those routes authenticate
 *   inside their handlers, after a replay would already have been sent;
 * - nothing else: there is no caller to scope the key to (the route refuses the request or
 *   needs no credentials), so the key is not applied.
 */
export function idempotencyCallerOf(
  request: FastifyRequest,
  verifier: ApplicationCredentialsVerifier,
): IdempotencyCaller | undefined {
  const { principal, opsUser } = request as AuthenticatedRequest;
  if (principal) {
    const { id, applicationId } = principal.connection;
    return { scope: `connection:${id}`, owner: `application:${applicationId}`, verify: async () => true };
  }
  if (opsUser !== undefined) return { scope: `ops:${opsUser}`, owner: `ops:${opsUser}`, verify: async () => true };

  const credentials = basicCredentialsOf(request.headers.authorization) ?? bodyCredentialsOf(request);
  if (!credentials) return undefined;
  return {
    scope: `application:${credentials.id}`,
    owner: `application:${credentials.id}`,
    verify: () =>
      verifier.authenticate(credentials.id, credentials.secret, clientAddressOf(request)).then(
        () => true,
        () => false,
      ),
  };
}

interface Credentials {
  id: string;
  secret: string;
}

function basicCredentialsOf(authorization: string | undefined): Credentials | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=._-]+)\s*$/i.exec(authorization ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) return undefined;
  return { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

function bodyCredentialsOf(request: FastifyRequest): Credentials | undefined {
  if (request.headers.authorization !== undefined && request.headers.authorization.trim() !== '') return undefined;
  const body = request.body as { client_id?: unknown; client_secret?: unknown } | undefined;
  if (typeof body !== 'object' || body === null) return undefined;
  if (typeof body.client_id !== 'string' || typeof body.client_secret !== 'string') return undefined;
  if (body.client_id === '' || body.client_secret === '') return undefined;
  return { id: body.client_id, secret: body.client_secret };
}
