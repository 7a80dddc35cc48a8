import { Injectable } from '@nestjs/common';
import { NotifiedCache } from '../../infrastructure/caching/notified-cache';
import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { EmployerDataRepository } from '../../infrastructure/database/repositories/employer-data.repository';

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
  private readonly cache: NotifiedCache<string, string | null>;

  constructor(
    data: EmployerDataRepository,
    private readonly notifications: ChangeNotifications,
  ) {
    this.cache = new NotifiedCache({
      max: 100_000,
      ttlMs: 60_000,
      refreshAheadMs: 5_000,
      live: () => notifications.live,
      read: (entityId) => data.currentGeneration(entityId),
    });
    notifications.on('employer_sync', (entityId) => this.cache.forget([entityId]));
    notifications.onReset(() => this.cache.clear());
  }

  /** The entity's generation when cached and notifications are live; no database access. */
  cached(entityId: string): string | null | undefined {
    return this.cache.cached(entityId)?.value;
  }

  async find(entityId: string): Promise<GenerationSeen> {
    const changes = this.cache.changeCount;
    return { generation: await this.cache.find(entityId), changes };
  }

  /** Whether a change was heard since `seen` was read (then an answer built on it is not kept). */
  changedSince(seen: GenerationSeen): boolean {
    return !this.notifications.live || seen.changes !== this.cache.changeCount;
  }
}
