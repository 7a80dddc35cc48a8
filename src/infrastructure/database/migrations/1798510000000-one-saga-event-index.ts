import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One index for an HRIS saga's event instead of two: the unique guard (connection, event id,
 * type) and the ops lookup by event id alone (lower(event id), migration 1798000000000) become
 * one unique index leading with lower(event id). Every saga insert wrote an entry in each. The
 * guard now ignores case, as the inbox already did when it dedupes an event before its saga is
 * written (ids are lower-cased there), so no saga it lets through differs from another by case
 * alone.
 */
export class OneSagaEventIndex1798510000000 implements MigrationInterface {
  name = 'OneSagaEventIndex1798510000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX sagas_source_event_idx`);
    await q.query(`DROP INDEX sagas_source_event_lookup_idx`);
    await q.query(`CREATE UNIQUE INDEX sagas_source_event_idx ON sagas (lower(source_event_id), connection_id, type) WHERE source_event_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX sagas_source_event_idx`);
    await q.query(`CREATE UNIQUE INDEX sagas_source_event_idx ON sagas (connection_id, source_event_id, type) WHERE source_event_id IS NOT NULL`);
    await q.query(`CREATE INDEX sagas_source_event_lookup_idx ON sagas (lower(source_event_id)) WHERE source_event_id IS NOT NULL`);
  }
}
