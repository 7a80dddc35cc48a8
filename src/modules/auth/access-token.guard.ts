import { CanActivate, createParamDecorator, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { digestOf } from '../../domain/auth/opaque-secret';
import { Principal } from '../../domain/connections/connection';
import { entityIdsFromQuery, refuseForeignEntities, resolveEntity } from '../../domain/connections/entity-scope';
import { Product } from '../../domain/providers/provider';
import { DomainError } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { TokenRateLimiter } from './token-rate-limiter';

const TOKEN_REQUIREMENT = 'access-token-requirement';

interface TokenRequirement {
  product?: Product;
}

/** The operation takes a bearer access token; with a product, the token must have been granted it. */
export const RequiresAccessToken = (product?: Product) => SetMetadata(TOKEN_REQUIREMENT, { product } satisfies TokenRequirement);

type AuthenticatedRequest = FastifyRequest & { principal?: Principal };

const unauthenticated = (message: string, serviceCode?: string) =>
  new DomainError('authentication_error', message, { serviceCode });

/**
 * Resolves `Authorization: Bearer` to its connection and entities (one query), then enforces
 * connection status, product scope and the per-token rate limit.
 */
@Injectable()
export class AccessTokenGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly connections: ConnectionsRepository,
    private readonly rateLimiter: TokenRateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const requirement = this.reflector.getAllAndOverride<TokenRequirement | undefined>(TOKEN_REQUIREMENT, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!requirement) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const token = bearerTokenOf(request.headers.authorization);
    const found = await this.connections.findByTokenDigest(digestOf(token));
    if (!found || found.connection.status === 'disconnected') {
      throw unauthenticated('The access token is invalid or has been revoked', 'invalid_access_token');
    }
    const limit = this.rateLimiter.take(found.tokenId);
    if (!limit.allowed) {
      context.switchToHttp().getResponse<FastifyReply>().header('retry-after', String(limit.retryAfterSeconds));
      throw new DomainError('rate_limit_error', `Rate limit exceeded for this access token; retry in ${limit.retryAfterSeconds} s`, {
        serviceCode: 'rate_limit_exceeded',
        details: { retry_after: limit.retryAfterSeconds },
      });
    }
    if (requirement.product !== undefined) {
      if (found.connection.status === 'reauth') {
        throw unauthenticated('The connection needs reauthentication before data can be read or written', 'reauthenticate_user');
      }
      if (!found.connection.products.includes(requirement.product)) {
        throw new DomainError('forbidden_error', `The ${requirement.product} product was not granted to this connection`, {
          serviceCode: 'product_not_granted',
        });
      }
    }
    refuseForeignEntities(found.connection.entities, entityIdsFromQuery(request.query as Record<string, unknown>));
    request.principal = found;
    return true;
  }
}

function bearerTokenOf(header: string | undefined): string {
  if (header === undefined || header.trim() === '') {
    throw unauthenticated('Authorization: Bearer <access token> is required', 'missing_access_token');
  }
  const match = /^Bearer\s+(\S{1,500})\s*$/i.exec(header);
  if (!match) throw unauthenticated('Authorization header must be Bearer <access token>', 'invalid_access_token');
  return match[1];
}

/** The principal the guard resolved. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on an operation without @RequiresAccessToken()');
  return principal;
});

/** The one entity the operation acts on, from `entity_ids` (DECISIONS.md "Entities"). */
export const CurrentEntity = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.principal) throw new Error('CurrentEntity used on an operation without @RequiresAccessToken()');
  return resolveEntity(request.principal.connection.entities, entityIdsFromQuery(request.query as Record<string, unknown>));
});
