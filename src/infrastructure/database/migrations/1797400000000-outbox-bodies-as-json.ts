import { MigrationInterface, QueryRunner } from 'typeorm';

/** The outbox's body columns as `type`, their values converted and the headers' default kept. */
const bodiesAs = (type: 'json' | 'jsonb') => `
  ALTER TABLE outbox_messages
    ALTER COLUMN payload TYPE ${type} USING payload::${type},
    ALTER COLUMN headers DROP DEFAULT,
    ALTER COLUMN headers TYPE ${type} USING headers::${type},
    ALTER COLUMN headers SET DEFAULT '{}'::${type}`;

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
    await q.query(bodiesAs('json'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(bodiesAs('jsonb'));
  }
}
