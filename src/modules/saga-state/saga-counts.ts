import { Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SagaState, SagaType } from '../../domain/sagas/saga';
import { PollingLoop } from '../../infrastructure/scheduling/polling-loop';
import { WakeSignal } from '../../infrastructure/scheduling/wake-signal';

/** How often the counts' changes are folded: what a count reads beyond `saga_counts` stays this short. */
export const SAGA_COUNTS_FOLD_MS = 15_000;

export interface SagaCount {
  type: SagaType;
  state: SagaState;
  n: number;
}

/**
 * Sagas counted by type and state without reading `sagas` (migration 1798800000000): the
 * folded counts plus the changes the sagas' statement triggers appended since, exact at the
 * reader's snapshot whatever the table's size. Every instance folds the changes in the
 * background; two folding at once take turns on the rows they delete, and each change is
 * folded once.
 */
@Injectable()
export class SagaCounts implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SagaCounts.name);
  private readonly signal = new WakeSignal();
  private loop: PollingLoop | undefined;

  constructor(private readonly dataSource: DataSource) {}

  onApplicationBootstrap(): void {
    this.loop = new PollingLoop({
      name: 'saga counts fold',
      pollMs: SAGA_COUNTS_FOLD_MS,
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

  /** Every type and state with sagas in it. */
  async all(): Promise<SagaCount[]> {
    const rows: { type: SagaType; state: SagaState; n: string }[] = await this.dataSource.query(
      `SELECT type, state, sum(n)::bigint AS n
       FROM (SELECT type, state, n FROM saga_counts UNION ALL SELECT type, state, n FROM saga_count_changes) AS c
       GROUP BY type, state HAVING sum(n) <> 0`,
    );
    return rows.map((r) => ({ type: r.type, state: r.state, n: Number(r.n) }));
  }

  /** How many sagas are of this type and in this state (either left out: any). */
  async count(filter: { type?: SagaType; state?: SagaState } = {}): Promise<number> {
    return (await this.all()).filter((c) => (filter.type === undefined || c.type === filter.type) && (filter.state === undefined || c.state === filter.state)).reduce((sum, c) => sum + c.n, 0);
  }

  /** Moves the changes appended so far into `saga_counts`, in one transaction. Answers how many change rows it folded. */
  async fold(): Promise<number> {
    const [{ folded }] = await this.dataSource.query(
      `WITH taken AS (DELETE FROM saga_count_changes RETURNING type, state, n),
            added AS (
              INSERT INTO saga_counts (type, state, n) SELECT type, state, sum(n) FROM taken GROUP BY type, state
              ON CONFLICT (type, state) DO UPDATE SET n = saga_counts.n + excluded.n)
       SELECT count(*)::int AS folded FROM taken`,
    );
    return folded;
  }
}

@Module({ providers: [SagaCounts], exports: [SagaCounts] })
export class SagaCountsModule {}
