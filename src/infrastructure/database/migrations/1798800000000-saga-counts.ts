import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sagas counted by type and state without reading `sagas`, which is kept for good (about 4,000
 * rows a year per 1,000 employees): the ops overview counted them with a scan of the whole table
 * on every refresh, 0.6–0.8 s of the database's time at 2,000,000 sagas (bench/README.md, "Ops
 * reads over a long history").
 *
 * Statement triggers (beside the webhook ones, sharing their transition tables) append what
 * each statement changed to `saga_count_changes`, in its transaction, so a count is exact at
 * any snapshot: `saga_counts` plus the changes not yet folded into it. Writers never update a
 * shared row (no contention between concurrent batches); SagaCounts folds the changes into
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

    await q.query(`
      CREATE FUNCTION saga_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO saga_count_changes (type, state, n) SELECT type, state, count(*) FROM new_rows GROUP BY type, state;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION saga_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        -- Each row counted again under its new key and taken off its old one: a row whose key
        -- stayed cancels out, with no join of the two transition tables.
        INSERT INTO saga_count_changes (type, state, n)
        SELECT type, state, sum(n) FROM (SELECT type, state, 1 AS n FROM new_rows UNION ALL SELECT type, state, -1 FROM old_rows) AS moved
        GROUP BY type, state HAVING sum(n) <> 0;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION saga_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO saga_count_changes (type, state, n) SELECT type, state, -count(*) FROM old_rows GROUP BY type, state;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION saga_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        DELETE FROM saga_count_changes;
        DELETE FROM saga_counts;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER saga_counts_inserted AFTER INSERT ON sagas REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION saga_counts_inserted()`);
    await q.query(
      `CREATE TRIGGER saga_counts_updated AFTER UPDATE ON sagas REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION saga_counts_updated()`,
    );
    await q.query(`CREATE TRIGGER saga_counts_deleted AFTER DELETE ON sagas REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION saga_counts_deleted()`);
    await q.query(`CREATE TRIGGER saga_counts_truncated AFTER TRUNCATE ON sagas FOR EACH STATEMENT EXECUTE FUNCTION saga_counts_truncated()`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of ['saga_counts_truncated', 'saga_counts_deleted', 'saga_counts_updated', 'saga_counts_inserted']) {
      await q.query(`DROP TRIGGER ${name} ON sagas`);
      await q.query(`DROP FUNCTION ${name}()`);
    }
    await q.query(`DROP TABLE saga_count_changes`);
    await q.query(`DROP TABLE saga_counts`);
  }
}
