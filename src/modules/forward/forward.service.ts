import { Inject, Injectable } from '@nestjs/common';
import { Connection } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { DomainError } from '../../domain/shared/domain-error';
import { employerRefOf, ForwardRequest, ForwardResponse, PROVIDER_PORT, ProviderPort } from '../../domain/providers/provider-port';

/** Forwarded headers whose values are secrets: passed to the provider, never echoed back. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization']);
export const REDACTED = '[REDACTED]';

/**
 * The provider's answer at the top level as the public document has it (`statusCode`, `headers`,
 * and `data` as the body's text), and again under `response` with `data` parsed.
 */
export interface ForwardResult {
  statusCode: number;
  headers: Record<string, string>;
  data: string | null;
  request: { method: string; route: string; data: unknown; headers: Record<string, string> | null; params: Record<string, unknown> | null };
  response: ForwardResponse;
}

/** `POST /forward`: one live call to the provider behind the token's connection and entity. */
@Injectable()
export class ForwardService {
  constructor(@Inject(PROVIDER_PORT) private readonly provider: ProviderPort) {}

  async forward(connection: Connection, entity: ConnectionEntity, request: ForwardRequest): Promise<ForwardResult> {
    // Forwarding reaches no product, so the guard lets it through; but it is a provider call,
    // and a connection whose provider sign-in lapsed cannot make one (as for the data calls).
    if (connection.status === 'reauth') {
      throw new DomainError('authentication_error', 'The connection needs reauthentication before the provider can be reached', {
        serviceCode: 'reauthenticate_user',
      });
    }
    const response = await this.provider.forward(employerRefOf(connection, entity), request);
    return {
      statusCode: response.status_code,
      headers: response.headers,
      data: response.data === null || response.data === undefined ? null : typeof response.data === 'string' ? response.data : JSON.stringify(response.data),
      request: {
        method: request.method,
        route: request.route,
        data: request.data ?? null,
        headers: request.headers === undefined ? null : redactSecrets(request.headers),
        params: request.params ?? null,
      },
      response,
    };
  }
}

export function redactSecrets(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, SECRET_HEADERS.has(name.toLowerCase()) ? REDACTED : value]));
}
