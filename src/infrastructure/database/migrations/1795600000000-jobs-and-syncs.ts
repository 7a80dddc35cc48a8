import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Jobs (automated and manual, polled by clients, leased by workers) and the employer data
 * copied by syncs. Synced data is kept by generation: a sync writes a new generation, then
 * switches the entity to it in the transaction that completes the job, so a read sees one
 * whole sync or the one before, never a mix.
 */
export class JobsAndSyncs1795600000000 implements MigrationInterface {
  name = 'JobsAndSyncs1795600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE jobs (
        id             uuid PRIMARY KEY,
        -- Creation order, for listings newest first when several jobs share a created_at.
        seq            bigint      GENERATED ALWAYS AS IDENTITY,
        connection_id  uuid        NOT NULL REFERENCES connections (id),
        entity_id      uuid REFERENCES connection_entities (id),
        -- internal: work without a pollable id (an Assisted sandbox connection's POST /sandbox/jobs).
        kind           text        NOT NULL CHECK (kind IN ('automated', 'manual', 'internal')),
        type           text        NOT NULL,
        status         text        NOT NULL CHECK (status IN ('pending', 'in_progress', 'complete', 'error', 'reauth_error', 'permissions_error')),
        params         jsonb,
        result         jsonb,
        attempts       integer     NOT NULL DEFAULT 0,
        leased_by      text,
        leased_until   timestamptz,
        created_at     timestamptz NOT NULL,
        scheduled_at   timestamptz NOT NULL,
        started_at     timestamptz,
        completed_at   timestamptz
      )`);
    await q.query(`CREATE INDEX jobs_connection_idx ON jobs (connection_id, kind, created_at DESC, seq DESC)`);
    await q.query(`CREATE INDEX jobs_due_idx ON jobs (scheduled_at) WHERE status IN ('pending', 'in_progress')`);
    // At most one sync of a connection queued or running: a second request gets the running one.
    await q.query(
      `CREATE UNIQUE INDEX jobs_one_open_sync_idx ON jobs (connection_id) WHERE type = 'data_sync_all' AND status IN ('pending', 'in_progress')`,
    );
    await q.query(`
      CREATE TABLE sandbox_job_configurations (
        connection_id      uuid PRIMARY KEY REFERENCES connections (id),
        type               text        NOT NULL DEFAULT 'data_sync_all',
        completion_status  text        NOT NULL CHECK (completion_status IN ('complete', 'reauth_error', 'permissions_error', 'error')),
        updated_at         timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE SEQUENCE employer_data_generation_seq`);
    await q.query(`
      CREATE TABLE employer_syncs (
        entity_id      uuid PRIMARY KEY REFERENCES connection_entities (id),
        connection_id  uuid        NOT NULL REFERENCES connections (id),
        generation     bigint      NOT NULL,
        job_id         uuid REFERENCES jobs (id),
        completed_at   timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE employer_data (
        entity_id   uuid   NOT NULL,
        generation  bigint NOT NULL,
        kind        text   NOT NULL CHECK (kind IN ('company', 'individual', 'employment', 'directory', 'pay_group', 'payment', 'pay_statement', 'pay_statement_item')),
        record_id   text   NOT NULL,
        parent_id   text,
        pay_date    date,
        sort_key    text   NOT NULL DEFAULT '',
        body        jsonb  NOT NULL,
        PRIMARY KEY (entity_id, generation, kind, record_id)
      )`);
    await q.query(`CREATE INDEX employer_data_sort_idx ON employer_data (entity_id, generation, kind, sort_key)`);
    await q.query(
      `CREATE INDEX employer_data_parent_idx ON employer_data (entity_id, generation, kind, parent_id, sort_key) WHERE parent_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX employer_data_pay_date_idx ON employer_data (entity_id, generation, kind, pay_date) WHERE pay_date IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE employer_data`);
    await q.query(`DROP TABLE employer_syncs`);
    await q.query(`DROP SEQUENCE employer_data_generation_seq`);
    await q.query(`DROP TABLE sandbox_job_configurations`);
    await q.query(`DROP TABLE jobs`);
  }
}
