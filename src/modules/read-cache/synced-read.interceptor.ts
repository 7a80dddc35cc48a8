import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { from, Observable, switchMap } from 'rxjs';
import { entityIdsFromQuery, resolveEntity } from '../../domain/connections/entity-scope';
import { AuthenticatedRequest, tokenRequirementOf } from '../auth/access-token.guard';
import { ReadCache } from './read-cache';

/**
 * On a controller of synced reads (after the guards): marks each request with its entity's
 * current generation and the product it needs, so its answer gets an ETag and is kept
 * (ReadCache). An entity with no completed sync is read live: nothing is marked.
 */
@Injectable()
export class SyncedReadInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly cache: ReadCache,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const product = tokenRequirementOf(this.reflector, context)?.product;
    if (!request.principal || product === undefined) return next.handle();
    const entity = resolveEntity(request.principal.connection.entities, entityIdsFromQuery(request.query as Record<string, unknown>));
    return from(this.cache.markSynced(request, entity.id, product)).pipe(switchMap(() => next.handle()));
  }
}
