import { MigrationInterface, QueryRunner } from 'typeorm';

/** The foreign keys from rows written per HRIS event to the few rows every event names. */
const HOT_PARENT_KEYS = [
  { table: 'jobs', constraint: 'jobs_connection_id_fkey', definition: 'FOREIGN KEY (connection_id) REFERENCES connections (id)' },
  { table: 'jobs', constraint: 'jobs_entity_id_fkey', definition: 'FOREIGN KEY (entity_id) REFERENCES connection_entities (id)' },
  { table: 'sagas', constraint: 'sagas_connection_id_fkey', definition: 'FOREIGN KEY (connection_id) REFERENCES connections (id)' },
  { table: 'enrollment_groups', constraint: 'enrollment_groups_benefit_id_fkey', definition: 'FOREIGN KEY (benefit_id) REFERENCES benefits (id)' },
];

/**
 * Drops the foreign keys from jobs, sagas and enrollment groups to their connection, entity and
 * benefit. Each inserted row checked its parent with a query of its own and share-locked the
 * parent row: a burst of events names a dozen connections and benefits, so every consumer, job
 * and relay transaction locked the same few rows, and each check cost about what the insert
 * did. Connections, entities and benefits are never deleted (a connection is disconnected, an
 * entity marked so), and every writer of these rows takes the ids from rows it has just read,
 * so the keys guarded nothing the service could do. The keys inside an enrollment's own rows
 * (group → job, saga step → saga and job) stay.
 */
export class QueueRowsWithoutHotParentKeys1797500000000 implements MigrationInterface {
  name = 'QueueRowsWithoutHotParentKeys1797500000000';

  async up(q: QueryRunner): Promise<void> {
    for (const key of HOT_PARENT_KEYS) await q.query(`ALTER TABLE ${key.table} DROP CONSTRAINT IF EXISTS ${key.constraint}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const key of HOT_PARENT_KEYS) await q.query(`ALTER TABLE ${key.table} ADD CONSTRAINT ${key.constraint} ${key.definition}`);
  }
}
