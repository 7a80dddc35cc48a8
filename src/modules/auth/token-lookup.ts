import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Principal } from '../../domain/connections/connection';
import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';

/** Longest a cached token answer is kept even when no change is heard: a bound, should a notification ever go missing. */
export const TOKEN_CACHE_TTL_MS = 10_000;
const TOKEN_CACHE_ENTRIES = 50_000;

/**
 * Access-token digests to their principal, cached in memory while change notifications are
 * live: a change to the token's connection, its entities or the token itself (disconnect,
 * disconnect-entity, reauth, product changes, revocation) is heard on every instance when it
 * commits and drops that connection's tokens at once. Unknown tokens are never cached (a new
 * token works at once), and an answer read while a change was being heard is not kept.
 */
@Injectable()
export class TokenLookup {
  private readonly cache: LRUCache<string, Principal>;
  private readonly digestsOf = new Map<string, Set<string>>();
  /** Bumped by every change heard: a lookup that started before one does not fill the cache. */
  private changes = 0;

  constructor(
    private readonly connections: ConnectionsRepository,
    private readonly notifications: ChangeNotifications,
  ) {
    this.cache = new LRUCache<string, Principal>({
      max: TOKEN_CACHE_ENTRIES,
      ttl: TOKEN_CACHE_TTL_MS,
      dispose: (principal, digest) => this.digestsOf.get(principal.connection.id)?.delete(digest),
    });
    notifications.on('auth_changed', (connectionId) => this.forget(connectionId));
    notifications.onReset(() => {
      this.changes++;
      this.cache.clear();
      this.digestsOf.clear();
    });
  }

  /** The token's principal when it is cached and notifications are live; no database access. */
  cached(digest: string): Principal | undefined {
    return this.notifications.live ? this.cache.get(digest) : undefined;
  }

  async find(digest: string): Promise<Principal | undefined> {
    const hit = this.cached(digest);
    if (hit) return hit;
    const changes = this.changes;
    const found = await this.connections.findByTokenDigest(digest);
    if (found && this.notifications.live && changes === this.changes) {
      this.cache.set(digest, found);
      const digests = this.digestsOf.get(found.connection.id) ?? new Set<string>();
      digests.add(digest);
      this.digestsOf.set(found.connection.id, digests);
    }
    return found;
  }

  private forget(connectionId: string): void {
    this.changes++;
    const digests = this.digestsOf.get(connectionId);
    if (!digests) return;
    for (const digest of [...digests]) this.cache.delete(digest);
    this.digestsOf.delete(connectionId);
  }
}
