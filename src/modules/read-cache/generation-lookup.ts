import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { EmployerDataRepository } from '../../infrastructure/database/repositories/employer-data.repository';

const ENTITIES = 100_000;
const SAFETY_TTL_MS = 60_000;

/** What a lookup answers: the generation, and the count of changes heard when it was read. */
export interface GenerationSeen {
  /** null: the entity has no completed sync, its reads are live. */
  generation: string | null;
  changes: number;
}

/**
 * Each entity's current sync generation, kept in memory while change notifications are live;
 * a sync that switches an entity's generation is heard when it commits (`employer_sync`) and
 * drops that entity's entry on every instance.
 */
@Injectable()
export class GenerationLookup {
  private readonly cache = new LRUCache<string, { generation: string | null }>({ max: ENTITIES, ttl: SAFETY_TTL_MS });
  private changes = 0;

  constructor(
    private readonly data: EmployerDataRepository,
    private readonly notifications: ChangeNotifications,
  ) {
    notifications.on('employer_sync', (entityId) => {
      this.changes++;
      this.cache.delete(entityId);
    });
    notifications.onReset(() => {
      this.changes++;
      this.cache.clear();
    });
  }

  /** The entity's generation when cached and notifications are live; no database access. */
  cached(entityId: string): string | null | undefined {
    return this.notifications.live ? this.cache.get(entityId)?.generation : undefined;
  }

  async find(entityId: string): Promise<GenerationSeen> {
    const changes = this.changes;
    const hit = this.cached(entityId);
    if (hit !== undefined) return { generation: hit, changes };
    const generation = await this.data.currentGeneration(entityId);
    if (this.notifications.live && changes === this.changes) this.cache.set(entityId, { generation });
    return { generation, changes };
  }

  /** Whether a change was heard since `seen` was read (then an answer built on it is not kept). */
  changedSince(seen: GenerationSeen): boolean {
    return !this.notifications.live || seen.changes !== this.changes;
  }
}
