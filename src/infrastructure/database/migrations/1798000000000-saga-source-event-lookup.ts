import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Finding the saga of an event one sent (`GET /ops/api/sagas?source_event_id=`) without knowing
 * its connection: the unique index leads with the connection, so it cannot serve that lookup.
 * Event ids are compared without regard to case, as the inbox compares them.
 */
export class SagaSourceEventLookup1798000000000 implements MigrationInterface {
  name = 'SagaSourceEventLookup1798000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX sagas_source_event_lookup_idx ON sagas (lower(source_event_id)) WHERE source_event_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX sagas_source_event_lookup_idx`);
  }
}
