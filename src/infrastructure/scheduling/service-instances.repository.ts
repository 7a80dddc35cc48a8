import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { returnedRows } from '../database/query-result';

/** Who a running process is: `id` is what its leases record; `name` stays the same across its restarts. */
export interface InstanceIdentity {
  id: string;
  name: string;
  host: string;
  pid: number;
}

/** An instance taken for gone, as its row was. */
export interface GoneInstance {
  id: string;
  name: string;
  heartbeat_at: Date;
}

/** Which instances are gone besides those silent for `deadAfterMs`. */
export type PastInstances =
  /** None: only silence counts. */
  | { kind: 'silent_only' }
  /** Earlier processes of this name: this process replaces them. */
  | { kind: 'named'; name: string }
  /** Every other: no other process uses this database. */
  | { kind: 'all' };

/**
 * `service_instances`: one row per running process. Heartbeats are database time, like the
 * leases they guard, because they measure real time between processes.
 */
@Injectable()
export class ServiceInstancesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Records a beat; true when the row had to be created (the first beat, or it was removed as gone). */
  async beat(me: InstanceIdentity): Promise<boolean> {
    const [row] = returnedRows<{ created: boolean }>(
      await this.dataSource.query(
        `INSERT INTO service_instances (id, name, host, pid) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()
         RETURNING (xmax = 0) AS created`,
        [me.id, me.name, me.host, me.pid],
      ),
    );
    return row.created;
  }

  /**
   * Removes the instances that are gone (silent for `deadAfterMs`, and `past`), never `selfId`,
   * and runs `release` with them in the same transaction, so their leases are freed exactly when
   * their rows go. Rows another sweep is removing are skipped.
   */
  removeGone<T>(
    selfId: string,
    deadAfterMs: number,
    past: PastInstances,
    release: (gone: GoneInstance[], manager: EntityManager) => Promise<T>,
  ): Promise<{ gone: GoneInstance[]; released: T | undefined }> {
    return this.dataSource.transaction(async (manager) => {
      const gone = returnedRows<GoneInstance>(
        await manager.query(
          `DELETE FROM service_instances WHERE id IN (
             SELECT id FROM service_instances
             WHERE id <> $1
               AND (heartbeat_at < now() - ($2 || ' milliseconds')::interval OR $3::text = 'all' OR ($3::text = 'named' AND name = $4::text))
             ORDER BY id
             FOR UPDATE SKIP LOCKED)
           RETURNING id, name, heartbeat_at`,
          [selfId, String(deadAfterMs), past.kind, past.kind === 'named' ? past.name : null],
        ),
      );
      return { gone, released: gone.length === 0 ? undefined : await release(gone, manager) };
    });
  }

  /** Removes this process's row and runs `release` for it, in one transaction (a graceful stop). */
  remove<T>(id: string, release: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`DELETE FROM service_instances WHERE id = $1`, [id]);
      return release(manager);
    });
  }
}
