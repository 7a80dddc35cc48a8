import { CanActivate, createParamDecorator, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { digestOf } from '../../domain/auth/opaque-secret';
import { Principal } from '../../domain/connections/connection';
import { entityIdsFromQuery, refuseForeignEntities, resolveEntity } from '../../domain/connections/entity-scope';
import { Product } from '../../domain/providers/provider';
import { DomainError } from '../../domain/shared/domain-error';
import { TokenLookup } from './token-lookup';
import { RateLimitDecision, TokenRateLimiter } from './token-rate-limiter';

const TOKEN_REQUIREMENT = 'access-token-requirement';

export interface TokenRequirement {
  product?: Product;
}

/** The operation takes a bearer access token; with a product, the token must have been granted it. */
export const RequiresAccessToken = (product?: Product) => SetMetadata(TOKEN_REQUIREMENT, { product } satisfies TokenRequirement);

/** `rateLimit`: the decision a cached read already took for this request (read-cache), not taken twice. */
export type AuthenticatedRequest = FastifyRequest & { principal?: Principal; rateLimit?: RateLimitDecision };

const unauthenticated = (message: string, serviceCode?: string) =>
  new DomainError('authentication_error', message, { serviceCode });

/**
 * Resolves `Authorization: Bearer` to its connection and entities (TokenLookup: cached, or one query), then enforces
 * connection status, product scope and the per-token rate limit.
 */
@Injectable()
export class AccessTokenGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokenLookup,
    private readonly rateLimiter: TokenRateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const requirement = tokenRequirementOf(this.reflector, context);
    if (!requirement) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const token = bearerTokenOf(request.headers.authorization);
    const found = await this.tokens.find(digestOf(token));
    if (!found || found.connection.status === 'disconnected') {
      throw unauthenticated('The access token is invalid or has been revoked', 'invalid_access_token');
    }
    const limit = request.rateLimit ?? this.rateLimiter.take(found.tokenId);
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

/** What the operation asks of the token (undefined: no token needed). */
export function tokenRequirementOf(reflector: Reflector, context: ExecutionContext): TokenRequirement | undefined {
  return reflector.getAllAndOverride<TokenRequirement | undefined>(TOKEN_REQUIREMENT, [context.getHandler(), context.getClass()]);
}

/** The token of an `Authorization: Bearer` header, or undefined when the header is not one. */
export function bearerTokenIn(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

const BEARER = /^Bearer\s+(\S{1,500})\s*$/i;

function bearerTokenOf(header: string | undefined): string {
  if (header === undefined || header.trim() === '') {
    throw unauthenticated('Authorization: Bearer <access token> is required', 'missing_access_token');
  }
  const match = BEARER.exec(header);
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
