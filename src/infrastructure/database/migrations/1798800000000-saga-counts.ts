import { MigrationInterface, QueryRunner } from 'typeorm';
import { createKeptCountTriggers, dropKeptCountTriggers, KeptCountTriggers } from './kept-count-triggers';

const SAGAS: KeptCountTriggers = { table: 'sagas', prefix: 'saga', columns: 'type, state', keyOf: (row) => `${row}.type, ${row}.state`, counted: () => 'true' };

/**
 * Sagas counted by type and state without reading `sagas`, which is kept for good (about 4,000
 * rows a year per 1,000 employees): the ops overview counted them with a scan of the whole table
 * on every refresh, 0.6–0.8 s of the database's time at 2,000,000 sagas (bench/README.md, "Ops
 * reads over a long history").
 *
 * Statement triggers (beside the webhook ones, sharing their transition tables) append what
 * each statement changed to `saga_count_changes`, in its transaction, so a count is exact at
 * any snapshot: `saga_counts` plus the changes not yet folded into it. Writers never update a
 * shared row (no contention between concurrent batches); KeptCounts folds the changes into
 * `saga_counts` in the background. No index on `sagas` is added: one on `state` would make
 * every saga's state change a non-HOT update.
 */
export class SagaCounts1798800000000 implements MigrationInterface {
  name = 'SagaCounts1798800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE saga_counts (type text NOT NULL, state text NOT NULL, n bigint NOT NULL, PRIMARY KEY (type, state))`);
    // Append-only between folds, read whole: no index.
    await q.query(`CREATE TABLE saga_count_changes (type text NOT NULL, state text NOT NULL, n bigint NOT NULL)`);
    await q.query(`INSERT INTO saga_counts (type, state, n) SELECT type, state, count(*) FROM sagas GROUP BY type, state`);
    await createKeptCountTriggers(q, SAGAS);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropKeptCountTriggers(q, SAGAS);
    await q.query(`DROP TABLE saga_count_changes`);
    await q.query(`DROP TABLE saga_counts`);
  }
}
