import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Principal } from '../../domain/connections/connection';
import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';

/** Longest a cached token answer is kept even when no change is heard: a bound, should a notification ever go missing. */
export const TOKEN_CACHE_TTL_MS = 10_000;
/** In its last this-many ms, a token in use is read again in the background: it never expires under its callers. */
const REFRESH_AHEAD_MS = 2_000;
const TOKEN_CACHE_ENTRIES = 50_000;

/**
 * Access-token digests to their principal, cached in memory while change notifications are
 * live: a change to the token's connection, its entities or the token itself (disconnect,
 * disconnect-entity, reauth, product changes, revocation) is heard on every instance when it
 * commits and drops that connection's tokens at once. Unknown tokens are never cached (a new
 * token works at once), and an answer read while a change was being heard is not kept.
 *
 * A token in steady use is re-read in the background before its entry expires, and callers
 * missing the same token at once share one read: otherwise every expiry would send each
 * concurrent caller to the database at the same moment, each on a pool connection opened anew
 * after the idle reads let the pool drain, and those callers would make the latency's tail.
 */
@Injectable()
export class TokenLookup {
  private readonly cache: LRUCache<string, Principal>;
  private readonly digestsOf = new Map<string, Set<string>>();
  /** Reads under way, by digest; dropped at every change heard, so no caller joins a read older than the change. */
  private readonly reading = new Map<string, Promise<Principal | undefined>>();
  /** Bumped by every change heard: a lookup that started before one does not fill the cache. */
  private changes = 0;

  constructor(
    private readonly connections: ConnectionsRepository,
    private readonly notifications: ChangeNotifications,
  ) {
    this.cache = new LRUCache<string, Principal>({
      max: TOKEN_CACHE_ENTRIES,
      ttl: TOKEN_CACHE_TTL_MS,
      // The clock read at each call, not the one lru-cache captured when it loaded: a test's fake clock moves it.
      perf: { now: () => performance.now() },
      dispose: (principal, digest) => this.digestsOf.get(principal.connection.id)?.delete(digest),
    });
    notifications.on('auth_changed', (connectionId) => this.forget(connectionId));
    notifications.onReset(() => {
      this.changes++;
      this.reading.clear();
      this.cache.clear();
      this.digestsOf.clear();
    });
  }

  /** The token's principal when it is cached and notifications are live; no database access. */
  cached(digest: string): Principal | undefined {
    if (!this.notifications.live) return undefined;
    const hit = this.cache.get(digest);
    if (hit && this.cache.getRemainingTTL(digest) < REFRESH_AHEAD_MS) void this.read(digest).catch(() => undefined);
    return hit;
  }

  async find(digest: string): Promise<Principal | undefined> {
    return this.cached(digest) ?? this.read(digest);
  }

  private read(digest: string): Promise<Principal | undefined> {
    const pending = this.reading.get(digest);
    if (pending) return pending;
    const changes = this.changes;
    const read = this.connections
      .findByTokenDigest(digest)
      .then((found) => {
        if (this.notifications.live && changes === this.changes) {
          if (found) this.keep(digest, found);
          else this.cache.delete(digest);
        }
        return found;
      })
      .finally(() => {
        if (this.reading.get(digest) === read) this.reading.delete(digest);
      });
    this.reading.set(digest, read);
    return read;
  }

  private keep(digest: string, found: Principal): void {
    this.cache.set(digest, found);
    const digests = this.digestsOf.get(found.connection.id) ?? new Set<string>();
    digests.add(digest);
    this.digestsOf.set(found.connection.id, digests);
  }

  private forget(connectionId: string): void {
    this.changes++;
    this.reading.clear();
    const digests = this.digestsOf.get(connectionId);
    if (!digests) return;
    for (const digest of [...digests]) this.cache.delete(digest);
    this.digestsOf.delete(connectionId);
  }
}
