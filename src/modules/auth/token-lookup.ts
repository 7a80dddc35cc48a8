import { Injectable } from '@nestjs/common';
import { Principal } from '../../domain/connections/connection';
import { NotifiedCache } from '../../infrastructure/caching/notified-cache';
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
  private readonly cache: NotifiedCache<string, Principal | undefined>;
  /** The digests kept of each connection: a change to the connection drops them all. */
  private readonly digestsOf = new Map<string, Set<string>>();

  constructor(connections: ConnectionsRepository, notifications: ChangeNotifications) {
    this.cache = new NotifiedCache({
      max: TOKEN_CACHE_ENTRIES,
      ttlMs: TOKEN_CACHE_TTL_MS,
      refreshAheadMs: REFRESH_AHEAD_MS,
      live: () => notifications.live,
      read: (digest) => connections.findByTokenDigest(digest),
      keeps: (found) => found !== undefined,
      onKept: (digest, found) => {
        const digests = this.digestsOf.get(found!.connection.id) ?? new Set<string>();
        digests.add(digest);
        this.digestsOf.set(found!.connection.id, digests);
      },
      onGone: (digest, found) => this.digestsOf.get(found!.connection.id)?.delete(digest),
    });
    notifications.on('auth_changed', (connectionId) => {
      this.cache.forget([...(this.digestsOf.get(connectionId) ?? [])]);
      this.digestsOf.delete(connectionId);
    });
    notifications.onReset(() => {
      this.cache.clear();
      this.digestsOf.clear();
    });
  }

  /** The token's principal when it is cached and notifications are live; no database access. */
  cached(digest: string): Principal | undefined {
    return this.cache.cached(digest)?.value;
  }

  find(digest: string): Promise<Principal | undefined> {
    return this.cache.find(digest);
  }
}
