import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Saga state (what the ops dashboard reads), the jobs each saga waits on, auto-enrollment
 * policies for new hires, and the audit trail of every ops action.
 */
export class SagasPoliciesAudit1795900000000 implements MigrationInterface {
  name = 'SagasPoliciesAudit1795900000000';

  async up(q: QueryRunner): Promise<void> {
    // One row per saga instance. steps: [{at, name, detail?}] in the order they happened.
    // source_event_id: the HRIS event that started it (null for REST-started sagas).
    await q.query(`
      CREATE TABLE sagas (
        id               uuid PRIMARY KEY,
        type             text        NOT NULL CHECK (type IN ('enrollment', 'new_hire', 'contribution_change', 'termination', 'assisted_fulfilment')),
        state            text        NOT NULL CHECK (state IN ('started', 'waiting', 'completed', 'failed')),
        outcome          text,
        connection_id    uuid        NOT NULL REFERENCES connections (id),
        entity_id        uuid,
        source_event_id  text,
        steps            jsonb       NOT NULL DEFAULT '[]'::jsonb,
        attempts         integer     NOT NULL DEFAULT 1,
        last_error       text,
        created_at       timestamptz NOT NULL,
        updated_at       timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX sagas_list_idx ON sagas (created_at DESC, id)`);
    await q.query(`CREATE INDEX sagas_state_idx ON sagas (state, type, created_at)`);
    await q.query(`CREATE INDEX sagas_connection_idx ON sagas (connection_id, created_at)`);
    await q.query(`CREATE UNIQUE INDEX sagas_source_event_idx ON sagas (source_event_id, type) WHERE source_event_id IS NOT NULL`);

    // The jobs a saga started; a saga is done when every job it waits on has ended.
    await q.query(`
      CREATE TABLE saga_jobs (
        saga_id  uuid NOT NULL REFERENCES sagas (id) ON DELETE CASCADE,
        job_id   uuid NOT NULL REFERENCES jobs (id),
        status   text,
        PRIMARY KEY (saga_id, job_id)
      )`);
    await q.query(`CREATE INDEX saga_jobs_job_idx ON saga_jobs (job_id)`);

    // Auto-enrollment of new hires: one policy per (entity, benefit). configuration is an enroll
    // body's configuration without effective_date; escalation: {increase, cap} in basis points
    // (or cents) a year.
    await q.query(`
      CREATE TABLE enrollment_policies (
        id                    uuid PRIMARY KEY,
        connection_id         uuid        NOT NULL REFERENCES connections (id),
        entity_id             uuid        NOT NULL REFERENCES connection_entities (id),
        benefit_id            uuid        NOT NULL REFERENCES benefits (id),
        configuration         jsonb       NOT NULL,
        waiting_period_days   integer     NOT NULL CHECK (waiting_period_days BETWEEN 0 AND 3650),
        escalation            jsonb,
        active                boolean     NOT NULL DEFAULT true,
        created_by            text        NOT NULL,
        created_at            timestamptz NOT NULL,
        updated_at            timestamptz NOT NULL
      )`);
    await q.query(`CREATE UNIQUE INDEX enrollment_policies_benefit_idx ON enrollment_policies (entity_id, benefit_id)`);
    await q.query(`CREATE INDEX enrollment_policies_connection_idx ON enrollment_policies (connection_id, entity_id) WHERE active`);

    // Who did what, when, through the ops API.
    await q.query(`
      CREATE TABLE ops_audit (
        id           bigserial PRIMARY KEY,
        actor        text        NOT NULL,
        action       text        NOT NULL,
        target_type  text        NOT NULL,
        target_id    text        NOT NULL,
        detail       jsonb,
        at           timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX ops_audit_target_idx ON ops_audit (target_type, target_id, at)`);
    await q.query(`CREATE INDEX ops_audit_at_idx ON ops_audit (at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ops_audit`);
    await q.query(`DROP TABLE enrollment_policies`);
    await q.query(`DROP TABLE saga_jobs`);
    await q.query(`DROP TABLE sagas`);
  }
}
