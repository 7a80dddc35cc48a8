import { MigrationInterface, QueryRunner } from 'typeorm';

/** Outbox (with ordered lanes), inbox and dead letters: the messaging every feature relies on. */
export class Messaging1795392000000 implements MigrationInterface {
  name = 'Messaging1795392000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbox_messages (
        id            bigserial PRIMARY KEY,
        message_id    uuid        NOT NULL UNIQUE,
        topic         text        NOT NULL,
        message_key   text        NOT NULL,
        lane          smallint    NOT NULL,
        type          text        NOT NULL,
        payload       jsonb       NOT NULL,
        headers       jsonb       NOT NULL DEFAULT '{}'::jsonb,
        created_at    timestamptz NOT NULL DEFAULT now(),
        published_at  timestamptz,
        attempts      integer     NOT NULL DEFAULT 0,
        last_error    text
      )`);
    await q.query(
      `CREATE INDEX outbox_messages_pending_idx ON outbox_messages (lane, id) WHERE published_at IS NULL`,
    );
    await q.query(`CREATE INDEX outbox_messages_published_idx ON outbox_messages (published_at) WHERE published_at IS NOT NULL`);
    // A relay leases whole lanes; messages of one key share a lane, so they publish in order.
    await q.query(`
      CREATE TABLE outbox_lanes (
        lane         smallint PRIMARY KEY,
        leased_by    text,
        lease_until  timestamptz NOT NULL DEFAULT 'epoch'
      )`);
    await q.query(`INSERT INTO outbox_lanes (lane) SELECT generate_series(0, 63)`);
    await q.query(`
      CREATE TABLE inbox_messages (
        consumer     text        NOT NULL,
        message_id   text        NOT NULL,
        topic        text        NOT NULL,
        received_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (consumer, message_id)
      )`);
    await q.query(`CREATE INDEX inbox_messages_received_idx ON inbox_messages (received_at)`);
    await q.query(`
      CREATE TABLE dead_letters (
        id            uuid        PRIMARY KEY,
        consumer      text        NOT NULL,
        topic         text        NOT NULL,
        partition     integer,
        "offset"      text,
        message_key   text,
        message_id    text,
        payload       text        NOT NULL,
        headers       jsonb       NOT NULL DEFAULT '{}'::jsonb,
        reason        text        NOT NULL,
        status        text        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'replayed', 'discarded')),
        created_at    timestamptz NOT NULL DEFAULT now(),
        resolved_at   timestamptz,
        resolved_by   text,
        note          text
      )`);
    await q.query(`CREATE INDEX dead_letters_open_idx ON dead_letters (created_at) WHERE status = 'open'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE dead_letters`);
    await q.query(`DROP TABLE inbox_messages`);
    await q.query(`DROP TABLE outbox_lanes`);
    await q.query(`DROP TABLE outbox_messages`);
  }
}
