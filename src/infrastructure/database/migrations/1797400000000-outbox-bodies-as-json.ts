import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Keeps an outbox message's payload and headers as the JSON text they are published as
 * (`json`), not parsed into `jsonb`. The service never queries inside them; each message is
 * written once and read once by the relay, which now hands the stored text to the transport as
 * it is. As `jsonb` every message was parsed and rebuilt on the way in, printed again on the way
 * out, parsed by the driver and serialised again for the broker.
 */
export class OutboxBodiesAsJson1797400000000 implements MigrationInterface {
  name = 'OutboxBodiesAsJson1797400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE outbox_messages
        ALTER COLUMN payload TYPE json USING payload::json,
        ALTER COLUMN headers DROP DEFAULT,
        ALTER COLUMN headers TYPE json USING headers::json,
        ALTER COLUMN headers SET DEFAULT '{}'::json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE outbox_messages
        ALTER COLUMN payload TYPE jsonb USING payload::jsonb,
        ALTER COLUMN headers DROP DEFAULT,
        ALTER COLUMN headers TYPE jsonb USING headers::jsonb,
        ALTER COLUMN headers SET DEFAULT '{}'::jsonb`);
  }
}
