import { MigrationInterface, QueryRunner } from 'typeorm';

/** As 1796300000000 sets on the queue tables: vacuumed after 1,000 dead rows or 1 %. */
const UPKEEP = `autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_vacuum_insert_threshold = 5000,
  autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_limit = 2000`;

/**
 * What is still to publish moves to a queue of its own, `outbox_pending (lane, id)`, and an
 * outbox message is never updated after its insert. Marking a message published used to
 * update its row: `published_at` moved it from the pending partial index to the published one,
 * so the update could never stay on its page (HOT) and wrote a whole new version of the row,
 * payload included, with a new entry in each of its four indexes. That was 7 index entries and
 * two versions of the largest row per message, about two messages per HRIS event. Now a message
 * costs its row, its key, its id and its time (3 entries), and a small pending row inserted with
 * it and deleted once published (1 entry). Delivery attempts and the last error belong to the
 * pending row, since they matter only until it is published; published messages are kept by
 * their `created_at` for the retention window (the dedupe of sandbox HRIS events and the ops
 * overview read them by `message_id` and `created_at`).
 */
export class OutboxPendingQueue1797600000000 implements MigrationInterface {
  name = 'OutboxPendingQueue1797600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbox_pending (
        lane        smallint NOT NULL,
        id          bigint   NOT NULL,
        attempts    integer  NOT NULL DEFAULT 0,
        last_error  text,
        PRIMARY KEY (lane, id)
      )`);
    await q.query(`ALTER TABLE outbox_pending SET (${UPKEEP}, fillfactor = 80)`);
    await q.query(`INSERT INTO outbox_pending (lane, id, attempts, last_error) SELECT lane, id, attempts, last_error FROM outbox_messages WHERE published_at IS NULL`);
    await q.query(`DROP INDEX outbox_messages_pending_idx`);
    await q.query(`DROP INDEX outbox_messages_published_idx`);
    await q.query(`ALTER TABLE outbox_messages DROP COLUMN published_at, DROP COLUMN attempts, DROP COLUMN last_error`);
    // Never updated now: pages stay full.
    await q.query(`ALTER TABLE outbox_messages RESET (fillfactor)`);
    await q.query(`CREATE INDEX outbox_messages_created_idx ON outbox_messages (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX outbox_messages_created_idx`);
    await q.query(`ALTER TABLE outbox_messages SET (fillfactor = 80)`);
    await q.query(`ALTER TABLE outbox_messages ADD COLUMN published_at timestamptz, ADD COLUMN attempts integer NOT NULL DEFAULT 0, ADD COLUMN last_error text`);
    await q.query(`UPDATE outbox_messages SET published_at = created_at, attempts = 1`);
    await q.query(`UPDATE outbox_messages m SET published_at = NULL, attempts = p.attempts, last_error = p.last_error FROM outbox_pending p WHERE p.lane = m.lane AND p.id = m.id`);
    await q.query(`CREATE INDEX outbox_messages_pending_idx ON outbox_messages (lane, id) WHERE published_at IS NULL`);
    await q.query(`CREATE INDEX outbox_messages_published_idx ON outbox_messages (published_at) WHERE published_at IS NOT NULL`);
    await q.query(`DROP TABLE outbox_pending`);
  }
}
