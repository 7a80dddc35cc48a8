import { MigrationInterface, QueryRunner } from 'typeorm';

/** The foreign keys of the rows every HRIS event writes (a job, a saga and its step, a group). */
const KEYS = [
  { table: 'jobs', constraint: 'jobs_connection_id_fkey', definition: 'FOREIGN KEY (connection_id) REFERENCES connections (id)' },
  { table: 'jobs', constraint: 'jobs_entity_id_fkey', definition: 'FOREIGN KEY (entity_id) REFERENCES connection_entities (id)' },
  { table: 'sagas', constraint: 'sagas_connection_id_fkey', definition: 'FOREIGN KEY (connection_id) REFERENCES connections (id)' },
  { table: 'saga_jobs', constraint: 'saga_jobs_saga_id_fkey', definition: 'FOREIGN KEY (saga_id) REFERENCES sagas (id) ON DELETE CASCADE' },
  { table: 'saga_jobs', constraint: 'saga_jobs_job_id_fkey', definition: 'FOREIGN KEY (job_id) REFERENCES jobs (id)' },
  { table: 'enrollment_groups', constraint: 'enrollment_groups_benefit_id_fkey', definition: 'FOREIGN KEY (benefit_id) REFERENCES benefits (id)' },
  { table: 'enrollment_groups', constraint: 'enrollment_groups_job_id_fkey', definition: 'FOREIGN KEY (job_id) REFERENCES jobs (id)' },
];

/**
 * Drops the foreign keys of the rows each HRIS event writes, as 1797100000000 did for the
 * enrollment rows. PostgreSQL checks a key with a query of its own per inserted row, about
 * 9 µs each; a saga step's two checks cost four times its insert. The checks of a job, a saga or
 * a group against its connection, entity or benefit also share-lock that row, and a burst of
 * events names a dozen of them, so the consumer, the job worker and the relay all locked the
 * same few rows. What the keys guarded cannot happen:
 * - connections, entities and benefits are never deleted (a connection is disconnected, an
 *   entity marked so), and every writer takes their ids from rows it has just read;
 * - a saga, its steps, the enrollment jobs they name and the groups of those jobs are written in
 *   one transaction from ids minted there, and none of them is ever deleted (only internal jobs
 *   are purged, and no saga step or group names one).
 */
export class QueueRowsWithoutForeignKeys1797500000000 implements MigrationInterface {
  name = 'QueueRowsWithoutForeignKeys1797500000000';

  async up(q: QueryRunner): Promise<void> {
    for (const key of KEYS) await q.query(`ALTER TABLE ${key.table} DROP CONSTRAINT IF EXISTS ${key.constraint}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const key of KEYS) await q.query(`ALTER TABLE ${key.table} ADD CONSTRAINT ${key.constraint} ${key.definition}`);
  }
}
