import { Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PollingLoop } from '../scheduling/polling-loop';
import { WakeSignal } from '../scheduling/wake-signal';

/** How often the counts' changes are folded: what a count reads beyond its table stays this short. */
export const KEPT_COUNTS_FOLD_MS = 15_000;

/**
 * A count kept beside a table that is kept for good, so that reading it does not scan the
 * table: statement triggers append each statement's changes (+n, −n by key) to `changes`, in
 * the writer's transaction, and the count at any snapshot is `table` plus `changes`. Writers
 * never update a shared row, so concurrent batches never wait on each other for it.
 */
export interface KeptCount {
  table: string;
  changes: string;
  key: readonly string[];
}

/** Sagas by type and state (migration 1798800000000). */
export const SAGA_COUNTS: KeptCount = { table: 'saga_counts', changes: 'saga_count_changes', key: ['type', 'state'] };
/** Jobs by status, kind and type, pending ones by when made and due (1798810000000; every status since 1798870000000, by kind and type since 1798930000000). */
export const JOB_COUNTS: KeptCount = { table: 'job_counts', changes: 'job_count_changes', key: ['status', 'kind', 'type', 'created_at', 'scheduled_at'] };
export const KEPT_COUNTS: readonly KeptCount[] = [SAGA_COUNTS, JOB_COUNTS];

/** The rows of a kept count at the reader's snapshot: its table plus the changes not folded yet, summed by key. */
export function keptCountRows(count: KeptCount): string {
  const key = count.key.join(', ');
  return `SELECT ${key}, sum(n) AS n FROM (SELECT ${key}, n FROM ${count.table} UNION ALL SELECT ${key}, n FROM ${count.changes}) AS c GROUP BY ${key} HAVING sum(n) <> 0`;
}

/**
 * Folds the appended changes of every kept count into its table, in the background on every
 * instance. Two folding at once take turns on the change rows they delete, so each change is
 * folded once; keys whose count came back to zero are dropped.
 */
@Injectable()
export class KeptCounts implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(KeptCounts.name);
  private readonly signal = new WakeSignal();
  private loop: PollingLoop | undefined;

  constructor(private readonly dataSource: DataSource) {}

  onApplicationBootstrap(): void {
    this.loop = new PollingLoop({
      name: 'kept counts fold',
      pollMs: KEPT_COUNTS_FOLD_MS,
      signal: this.signal,
      logger: this.logger,
      round: async () => {
        await this.fold();
        return 'wait';
      },
    });
    this.loop.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop?.stop();
  }

  /** One fold of every count, each in its own transaction. Answers how many change rows it folded. */
  async fold(): Promise<number> {
    let folded = 0;
    for (const { table, changes, key } of KEPT_COUNTS) {
      const columns = key.join(', ');
      folded += await this.dataSource.transaction(async (manager) => {
        const [{ n }] = await manager.query(
          `WITH taken AS (DELETE FROM ${changes} RETURNING ${columns}, n),
                added AS (
                  INSERT INTO ${table} (${columns}, n) SELECT ${columns}, sum(n) FROM taken GROUP BY ${columns}
                  ON CONFLICT (${columns}) DO UPDATE SET n = ${table}.n + excluded.n)
           SELECT count(*)::int AS n FROM taken`,
        );
        if (n > 0) await manager.query(`DELETE FROM ${table} WHERE n = 0`);
        return n as number;
      });
    }
    return folded;
  }
}

@Module({ providers: [KeptCounts], exports: [KeptCounts] })
export class KeptCountsModule {}
