import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The deductions engine: benefits the service knows per entity, one enrollment per (benefit,
 * individual), the effective-date groups of enrollment jobs, Assisted providers' ops tasks,
 * and Idempotency-Key answers. Provider work itself runs as rows of `jobs`.
 */
export class BenefitsAndEnrollments1795800000000 implements MigrationInterface {
  name = 'BenefitsAndEnrollments1795800000000';

  async up(q: QueryRunner): Promise<void> {
    // origin: created (POST /employer/benefits), registered (Assisted register), provider (found
    // at the provider, e.g. a plan the employer already ran before connecting).
    await q.query(`
      CREATE TABLE benefits (
        id                    uuid PRIMARY KEY,
        connection_id         uuid        NOT NULL REFERENCES connections (id),
        entity_id             uuid        NOT NULL REFERENCES connection_entities (id),
        type                  text        NOT NULL,
        description           text        NOT NULL,
        frequency             text CHECK (frequency IN ('every_paycheck', 'monthly', 'one_time')),
        company_contribution  jsonb,
        origin                text        NOT NULL CHECK (origin IN ('created', 'registered', 'provider')),
        -- The job that made it at the provider; null for benefits found there.
        job_id                uuid REFERENCES jobs (id),
        created_at            timestamptz NOT NULL,
        updated_at            timestamptz NOT NULL
      )`);
    // Create dedupes on (entity, type, frequency, description): concurrent creates meet here.
    await q.query(
      `CREATE UNIQUE INDEX benefits_dedupe_idx ON benefits (entity_id, type, coalesce(frequency, ''), description)`,
    );
    await q.query(`CREATE INDEX benefits_entity_idx ON benefits (entity_id, created_at, id)`);

    // The service's record of each enrollment: its latest requested configuration, the date it
    // takes effect and whether the provider has it. occurred_at orders HRIS changes.
    await q.query(`
      CREATE TABLE enrollments (
        benefit_id      uuid        NOT NULL REFERENCES benefits (id),
        individual_id   uuid        NOT NULL,
        entity_id       uuid        NOT NULL REFERENCES connection_entities (id),
        configuration   jsonb       NOT NULL,
        effective_date  date        NOT NULL,
        status          text        NOT NULL CHECK (status IN ('pending', 'enrolled', 'unenrolled', 'error')),
        ended_on        date,
        job_id          uuid REFERENCES jobs (id),
        occurred_at     timestamptz,
        updated_at      timestamptz NOT NULL,
        PRIMARY KEY (benefit_id, individual_id)
      )`);

    // One row per effective date of an enrollment or unenrollment job; each is processed by a
    // job of its own (kind internal) scheduled on that date, so leasing, retries and crash
    // recovery are the job worker's.
    await q.query(`
      CREATE TABLE enrollment_groups (
        id              uuid PRIMARY KEY,
        job_id          uuid        NOT NULL REFERENCES jobs (id),
        benefit_id      uuid        NOT NULL REFERENCES benefits (id),
        operation       text        NOT NULL CHECK (operation IN ('enroll', 'unenroll')),
        effective_date  date        NOT NULL,
        items           jsonb       NOT NULL,
        status          text        NOT NULL CHECK (status IN ('pending', 'processed')),
        results         jsonb,
        processed_at    timestamptz
      )`);
    await q.query(`CREATE INDEX enrollment_groups_job_idx ON enrollment_groups (job_id, effective_date)`);

    // Work an Assisted provider's staff do by hand, due in 2 business days (due_date: a UTC
    // calendar date). One task per manual job; resolving it (who, when) is recorded once.
    await q.query(`
      CREATE TABLE ops_tasks (
        id             uuid PRIMARY KEY,
        connection_id  uuid        NOT NULL REFERENCES connections (id),
        entity_id      uuid        NOT NULL REFERENCES connection_entities (id),
        job_id         uuid        NOT NULL UNIQUE REFERENCES jobs (id),
        type           text        NOT NULL,
        payload        jsonb       NOT NULL,
        status         text        NOT NULL CHECK (status IN ('open', 'completed', 'failed')),
        due_date       date        NOT NULL,
        note           text,
        resolved_by    text,
        resolved_at    timestamptz,
        created_at     timestamptz NOT NULL,
        CHECK ((status = 'open') = (resolved_at IS NULL AND resolved_by IS NULL)),
        CHECK (status <> 'failed' OR note IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX ops_tasks_open_idx ON ops_tasks (due_date, created_at) WHERE status = 'open'`);
    await q.query(`CREATE INDEX ops_tasks_list_idx ON ops_tasks (status, due_date, created_at, id)`);

    // Idempotency-Key answers per caller (scope), kept 24 h. A row without status_code is in
    // flight; `attempt` fences its owner, so a request whose stale row was taken over cannot
    // overwrite the new owner's answer. The body is kept as sent (text), not re-ordered jsonb.
    await q.query(`
      CREATE TABLE idempotency_keys (
        scope          text        NOT NULL,
        key            text        NOT NULL,
        request_hash   text        NOT NULL,
        attempt        uuid        NOT NULL,
        status_code    integer,
        response_body  text,
        created_at     timestamptz NOT NULL,
        PRIMARY KEY (scope, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
    await q.query(`DROP TABLE ops_tasks`);
    await q.query(`DROP TABLE enrollment_groups`);
    await q.query(`DROP TABLE enrollments`);
    await q.query(`DROP TABLE benefits`);
  }
}
