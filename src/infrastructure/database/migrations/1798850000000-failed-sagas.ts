import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The failed sagas, kept beside `sagas` in a table of their own, so that the ops dashboard lists
 * them newest first without walking every saga. `sagas` has no index on its state (1798310000000
 * dropped it so that a saga's moves are HOT updates), and it is kept for good: listing the few
 * failed among millions read them all, newest first, until a page was full.
 *
 * Row triggers keep it, and fire only for a saga that fails or stops being failed (their WHEN is
 * checked per row without calling anything): the HRIS stream's sagas, which start, wait and
 * complete, pay nothing more. A saga that fails is written here once, and leaves when it is
 * retried: the table holds only the sagas failed now.
 */
export class FailedSagas1798850000000 implements MigrationInterface {
  name = 'FailedSagas1798850000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE failed_sagas (
        saga_id    uuid PRIMARY KEY REFERENCES sagas (id) ON DELETE CASCADE,
        type       text NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX failed_sagas_list_idx ON failed_sagas (created_at DESC, saga_id)`);
    await q.query(`
      CREATE FUNCTION failed_sagas_kept() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.state = 'failed' THEN
          INSERT INTO failed_sagas (saga_id, type, created_at) VALUES (NEW.id, NEW.type, NEW.created_at) ON CONFLICT DO NOTHING;
        ELSE
          DELETE FROM failed_sagas WHERE saga_id = NEW.id;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER failed_sagas_inserted AFTER INSERT ON sagas FOR EACH ROW WHEN (NEW.state = 'failed') EXECUTE FUNCTION failed_sagas_kept()`);
    await q.query(
      `CREATE TRIGGER failed_sagas_updated AFTER UPDATE OF state ON sagas FOR EACH ROW
       WHEN ((OLD.state = 'failed') IS DISTINCT FROM (NEW.state = 'failed')) EXECUTE FUNCTION failed_sagas_kept()`,
    );
    await q.query(`INSERT INTO failed_sagas (saga_id, type, created_at) SELECT id, type, created_at FROM sagas WHERE state = 'failed'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER failed_sagas_updated ON sagas`);
    await q.query(`DROP TRIGGER failed_sagas_inserted ON sagas`);
    await q.query(`DROP FUNCTION failed_sagas_kept()`);
    await q.query(`DROP TABLE failed_sagas`);
  }
}
