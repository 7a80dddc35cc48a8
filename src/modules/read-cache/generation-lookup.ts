import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { EmployerDataRepository } from '../../infrastructure/database/repositories/employer-data.repository';

const ENTITIES = 100_000;
const SAFETY_TTL_MS = 60_000;
/** In its last this-many ms, an entity read is re-read in the background: it never expires under its readers (see TokenLookup). */
const REFRESH_AHEAD_MS = 5_000;

/** What a lookup answers: the generation, and the count of changes heard when it was read. */
export interface GenerationSeen {
  /** null: the entity has no completed sync, its reads are live. */
  generation: string | null;
  changes: number;
}

/**
 * Each entity's current sync generation, kept in memory while change notifications are live;
 * a sync that switches an entity's generation is heard when it commits (`employer_sync`) and
 * drops that entity's entry on every instance. As with tokens, an entity in steady use is
 * re-read before its entry expires, and readers missing it at once share one read.
 */
@Injectable()
export class GenerationLookup {
  private readonly cache = new LRUCache<string, { generation: string | null }>({
    max: ENTITIES,
    ttl: SAFETY_TTL_MS,
    // The clock read at each call, not the one lru-cache captured when it loaded: a test's fake clock moves it.
    perf: { now: () => performance.now() },
  });
  private changes = 0;
  /** Reads under way, by entity; dropped at every change heard, so no reader joins a read older than the change. */
  private readonly reading = new Map<string, Promise<string | null>>();

  constructor(
    private readonly data: EmployerDataRepository,
    private readonly notifications: ChangeNotifications,
  ) {
    notifications.on('employer_sync', (entityId) => {
      this.changes++;
      this.reading.clear();
      this.cache.delete(entityId);
    });
    notifications.onReset(() => {
      this.changes++;
      this.reading.clear();
      this.cache.clear();
    });
  }

  /** The entity's generation when cached and notifications are live; no database access. */
  cached(entityId: string): string | null | undefined {
    if (!this.notifications.live) return undefined;
    const hit = this.cache.get(entityId);
    if (hit && this.cache.getRemainingTTL(entityId) < REFRESH_AHEAD_MS) void this.read(entityId).catch(() => undefined);
    return hit?.generation;
  }

  async find(entityId: string): Promise<GenerationSeen> {
    const changes = this.changes;
    const hit = this.cached(entityId);
    if (hit !== undefined) return { generation: hit, changes };
    return { generation: await this.read(entityId), changes };
  }

  private read(entityId: string): Promise<string | null> {
    const pending = this.reading.get(entityId);
    if (pending) return pending;
    const changes = this.changes;
    const read = this.data
      .currentGeneration(entityId)
      .then((generation) => {
        if (this.notifications.live && changes === this.changes) this.cache.set(entityId, { generation });
        return generation;
      })
      .finally(() => {
        if (this.reading.get(entityId) === read) this.reading.delete(entityId);
      });
    this.reading.set(entityId, read);
    return read;
  }

  /** Whether a change was heard since `seen` was read (then an answer built on it is not kept). */
  changedSince(seen: GenerationSeen): boolean {
    return !this.notifications.live || seen.changes !== this.changes;
  }
}
