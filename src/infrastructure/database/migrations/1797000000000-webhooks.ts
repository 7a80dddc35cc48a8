import { MigrationInterface, QueryRunner } from 'typeorm';

/** Job types whose completion is a `job.<type>.completed` webhook (the API family's list). */
const WEBHOOK_JOB_TYPES = `'benefit_create', 'benefit_register', 'benefit_update', 'benefit_enroll', 'benefit_unenroll', 'data_sync_all'`;
const FINAL_JOB_STATUSES = `'complete', 'error', 'reauth_error', 'permissions_error'`;
const HRIS_SAGA_TYPES = `'new_hire', 'contribution_change', 'termination'`;

/**
 * Webhooks: endpoints per application, the events to deliver and the delivery of each event to
 * each subscribed endpoint, with every attempt recorded.
 *
 * Events are written by the database itself, in the transaction that makes the change they
 * report: statement-level triggers on `jobs`, `connections`, `sagas` and `dead_letters` (with
 * their transition tables, so a set-wise statement costs one insert, not one per row), and
 * `webhook_enqueue()` called by the sync for the changes it finds. A job's status is set final by
 * several code paths (workers, the set-wise HRIS pipeline, ops retries, Assisted tasks); one
 * trigger sees them all, and an event exists if and only if its change committed. With no enabled
 * endpoint anywhere, each trigger ends after one probe of a small table.
 *
 * Signing secrets cannot be hashed (they sign); they are stored encrypted under
 * WEBHOOK_SECRETS_KEY, which is not in the database.
 */
export class Webhooks1797000000000 implements MigrationInterface {
  name = 'Webhooks1797000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id                          uuid PRIMARY KEY,
        application_id              uuid        NOT NULL REFERENCES applications (id),
        url                         text        NOT NULL,
        description                 text,
        event_types                 text[]      NOT NULL,
        enabled                     boolean     NOT NULL DEFAULT true,
        ordered_by_connection       boolean     NOT NULL DEFAULT false,
        max_concurrency             integer     NOT NULL DEFAULT 4 CHECK (max_concurrency BETWEEN 1 AND 64),
        secret_sealed               text        NOT NULL,
        previous_secret_sealed      text,
        previous_secret_expires_at  timestamptz,
        failing_since               timestamptz,
        disabled_at                 timestamptz,
        disabled_reason             text,
        created_at                  timestamptz NOT NULL DEFAULT now(),
        updated_at                  timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_endpoints_application_idx ON webhook_endpoints (application_id, created_at)`);
    await q.query(`CREATE INDEX webhook_endpoints_enabled_idx ON webhook_endpoints (application_id) WHERE enabled`);

    // One row per event per application that had a subscriber when it happened; `id` is the
    // webhook-id every delivery and retry of it carries, so receivers dedupe on it.
    await q.query(`
      CREATE TABLE webhook_events (
        id              uuid PRIMARY KEY,
        application_id  uuid        NOT NULL,
        connection_id   uuid        NOT NULL,
        company_id      uuid        NOT NULL,
        account_id      uuid        NOT NULL,
        entity_id       uuid,
        event_type      text        NOT NULL,
        data            jsonb,
        created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX webhook_events_created_idx ON webhook_events (created_at)`);

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        endpoint_id       uuid        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        event_id          uuid        NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
        connection_id     uuid        NOT NULL,
        status            text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts          integer     NOT NULL DEFAULT 0,
        next_attempt_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
        -- Retries end a window after this: the delivery's creation, or the last Resend.
        retry_from        timestamptz NOT NULL DEFAULT clock_timestamp(),
        leased_by         text,
        lease_until       timestamptz,
        last_status_code  integer,
        last_error        text,
        created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
        completed_at      timestamptz,
        UNIQUE (endpoint_id, event_id)
      )`);
    // Leasing reads each endpoint's due deliveries in order, and counts its leased ones for the
    // cap: both by index, whatever the statistics say (a burst into a table analysed empty).
    await q.query(`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (endpoint_id, lease_until) WHERE status = 'pending' AND leased_by IS NOT NULL`);
    await q.query(`CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id DESC)`);
    await q.query(`CREATE INDEX webhook_deliveries_order_idx ON webhook_deliveries (endpoint_id, connection_id, id) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX webhook_deliveries_failed_idx ON webhook_deliveries (completed_at DESC) WHERE status = 'failed'`);
    await q.query(`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`);
    await q.query(`
      CREATE TABLE webhook_attempts (
        id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        delivery_id       bigint      NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        attempted_at      timestamptz NOT NULL,
        status_code       integer,
        latency_ms        integer     NOT NULL,
        response_excerpt  text,
        error             text
      )`);
    await q.query(`CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id)`);
    // Queue tables: vacuumed by rows changed, not by a share of a table that only grows.
    for (const table of ['webhook_deliveries', 'webhook_attempts', 'webhook_events']) {
      await q.query(`ALTER TABLE ${table} SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000)`);
    }

    // Fan-out: one event per application with an enabled endpoint subscribed to its type, one
    // delivery per such endpoint. Arrays in (one element per event), so a caller with many
    // events makes one call. Answers the deliveries queued.
    await q.query(`
      CREATE FUNCTION webhook_enqueue(p_connection_ids uuid[], p_entity_ids uuid[], p_types text[], p_data jsonb[])
      RETURNS integer LANGUAGE plpgsql AS $$
      DECLARE queued integer;
      BEGIN
        IF coalesce(cardinality(p_types), 0) = 0 OR NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled) THEN RETURN 0; END IF;
        WITH candidate AS MATERIALIZED (
          SELECT gen_random_uuid() AS id, c.application_id, c.company_id, c.account_id, u.connection_id, u.entity_id, u.event_type, u.data, u.ord
          FROM unnest(p_connection_ids, p_entity_ids, p_types, p_data) WITH ORDINALITY AS u (connection_id, entity_id, event_type, data, ord)
          JOIN connections c ON c.id = u.connection_id
        ), target AS MATERIALIZED (
          SELECT c.*, e.id AS endpoint_id
          FROM candidate c JOIN webhook_endpoints e
            ON e.application_id = c.application_id AND e.enabled AND c.event_type = ANY (e.event_types)
        ), written AS (
          INSERT INTO webhook_events (id, application_id, connection_id, company_id, account_id, entity_id, event_type, data)
          SELECT DISTINCT ON (id) id, application_id, connection_id, company_id, account_id, entity_id, event_type, data FROM target
        )
        INSERT INTO webhook_deliveries (endpoint_id, event_id, connection_id)
        SELECT endpoint_id, id, connection_id FROM target ORDER BY ord, endpoint_id;
        GET DIAGNOSTICS queued = ROW_COUNT;
        RETURN queued;
      END $$`);

    // Leasing: due deliveries up to each endpoint's free room (its cap less what is leased),
    // endpoints locked while counted (`FOR UPDATE SKIP LOCKED`: another instance leasing from one
    // skips it), ordered endpoints one delivery per connection at a time. `enable_seqscan = off`
    // for this statement only: a queue analysed while empty would otherwise be scanned whole
    // per leased row (measured: 300 deliveries/s instead of 5,000) until autovacuum analyses it.
    await q.query(`
      CREATE FUNCTION webhook_lease(p_holder text, p_lease_ms bigint, p_limit integer)
      RETURNS TABLE (id text, endpoint_id uuid, url text, sandbox boolean, secret_sealed text, previous_secret_sealed text,
                     attempts integer, retry_from timestamptz, leased_at timestamptz, event_id uuid, event_type text,
                     connection_id uuid, company_id uuid, account_id uuid, entity_id uuid, data jsonb, event_created_at timestamptz)
      LANGUAGE sql SET enable_seqscan = off AS $$
        WITH room AS (
          SELECT e.id, e.ordered_by_connection,
                 e.max_concurrency - (SELECT count(*) FROM webhook_deliveries f
                                      WHERE f.endpoint_id = e.id AND f.status = 'pending' AND f.leased_by IS NOT NULL AND f.lease_until > now())::int AS free
          FROM webhook_endpoints e
          WHERE e.enabled AND EXISTS (
            SELECT 1 FROM webhook_deliveries d
            WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now()))
          ORDER BY random()
          LIMIT 100
          FOR UPDATE OF e SKIP LOCKED
        ), due AS (
          SELECT d.id, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS n
          FROM room r
          CROSS JOIN LATERAL (
            SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
            WHERE d.endpoint_id = r.id AND d.status = 'pending' AND d.next_attempt_at <= now()
              AND (d.lease_until IS NULL OR d.lease_until < now())
              AND (NOT r.ordered_by_connection OR NOT EXISTS (
                SELECT 1 FROM webhook_deliveries p
                WHERE p.endpoint_id = d.endpoint_id AND p.connection_id = d.connection_id AND p.status = 'pending' AND p.id < d.id))
            ORDER BY d.next_attempt_at, d.id
            LIMIT greatest(r.free, 0)) d
        )
        UPDATE webhook_deliveries w SET leased_by = p_holder, lease_until = now() + p_lease_ms * interval '1 millisecond'
        FROM due, webhook_endpoints e, applications a, webhook_events v
        WHERE w.id = due.id AND due.n <= p_limit AND e.id = w.endpoint_id AND a.id = e.application_id AND v.id = w.event_id
        RETURNING w.id::text, w.endpoint_id, e.url, a.sandbox, e.secret_sealed,
          CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_sealed END,
          w.attempts, w.retry_from, now(),
          v.id, v.event_type, v.connection_id, v.company_id, v.account_id, v.entity_id, v.data, v.created_at
      $$`);

    // Jobs: a job that reaches a final status (set by an update, or inserted already final).
    const jobEvents = (source: string, where: string) => `
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled) THEN RETURN NULL; END IF;
      PERFORM webhook_enqueue(array_agg(n.connection_id ORDER BY n.completed_at, n.id), array_agg(n.entity_id ORDER BY n.completed_at, n.id),
        array_agg('job.' || n.type || '.completed' ORDER BY n.completed_at, n.id),
        array_agg(jsonb_build_object('job_id', n.id, 'job_url', '/jobs/' || n.kind || '/' || n.id) ORDER BY n.completed_at, n.id))
      FROM ${source}
      WHERE n.status IN (${FINAL_JOB_STATUSES}) AND n.kind IN ('automated', 'manual') AND n.type IN (${WEBHOOK_JOB_TYPES}) ${where};
      RETURN NULL;`;
    await q.query(`CREATE FUNCTION webhook_jobs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${jobEvents('new_rows n', '')} END $$`);
    await q.query(
      `CREATE FUNCTION webhook_jobs_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
       ${jobEvents('new_rows n JOIN old_rows o ON o.id = n.id', `AND o.status NOT IN (${FINAL_JOB_STATUSES})`)} END $$`,
    );
    await q.query(
      `CREATE TRIGGER webhook_jobs_inserted AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION webhook_jobs_inserted()`,
    );
    await q.query(
      `CREATE TRIGGER webhook_jobs_updated AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION webhook_jobs_updated()`,
    );

    // Connections: account.updated when the status changes to one the API family reports
    // (a disconnection is made by the platform itself, and its enum has no such status).
    await q.query(`
      CREATE FUNCTION webhook_connections_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled) THEN RETURN NULL; END IF;
        PERFORM webhook_enqueue(array_agg(n.id), array_agg(NULL::uuid), array_agg('account.updated'::text),
          array_agg(jsonb_build_object('status', n.status, 'authentication_method', jsonb_build_object('type', n.authentication_type))))
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE n.status IS DISTINCT FROM o.status AND n.status IN ('connected', 'reauth');
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER webhook_connections_updated AFTER UPDATE ON connections REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION webhook_connections_updated()`,
    );

    // HRIS sagas (opt-in types): one event when a saga ends, completed or failed.
    const sagaEvents = (source: string, where: string) => `
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled) THEN RETURN NULL; END IF;
      PERFORM webhook_enqueue(array_agg(n.connection_id ORDER BY n.updated_at, n.id), array_agg(n.entity_id ORDER BY n.updated_at, n.id),
        array_agg('hris.saga.' || n.state ORDER BY n.updated_at, n.id),
        array_agg(jsonb_build_object('saga_id', n.id, 'saga_type', n.type, 'source_event_id', n.source_event_id, 'outcome', n.outcome,
          'error', n.last_error) ORDER BY n.updated_at, n.id))
      FROM ${source}
      WHERE n.state IN ('completed', 'failed') AND n.type IN (${HRIS_SAGA_TYPES}) ${where};
      RETURN NULL;`;
    await q.query(`CREATE FUNCTION webhook_sagas_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${sagaEvents('new_rows n', '')} END $$`);
    await q.query(
      `CREATE FUNCTION webhook_sagas_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
       ${sagaEvents('new_rows n JOIN old_rows o ON o.id = n.id', `AND o.state NOT IN ('completed', 'failed')`)} END $$`,
    );
    await q.query(
      `CREATE TRIGGER webhook_sagas_inserted AFTER INSERT ON sagas REFERENCING NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION webhook_sagas_inserted()`,
    );
    await q.query(
      `CREATE TRIGGER webhook_sagas_updated AFTER UPDATE ON sagas REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION webhook_sagas_updated()`,
    );

    // Dead letters (opt-in): an HRIS event refused as poison, when its key names a connection.
    await q.query(`
      CREATE FUNCTION webhook_dead_letters_inserted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled) THEN RETURN NULL; END IF;
        PERFORM webhook_enqueue(array_agg(n.message_key::uuid ORDER BY n.created_at, n.id), array_agg(NULL::uuid), array_agg('hris.event.dead_lettered'::text),
          array_agg(jsonb_build_object('dead_letter_id', n.id, 'message_id', n.message_id, 'topic', n.topic, 'reason', n.reason) ORDER BY n.created_at, n.id))
        FROM new_rows n
        WHERE n.message_key ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER webhook_dead_letters_inserted AFTER INSERT ON dead_letters REFERENCING NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION webhook_dead_letters_inserted()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER webhook_dead_letters_inserted ON dead_letters`);
    await q.query(`DROP TRIGGER webhook_sagas_updated ON sagas`);
    await q.query(`DROP TRIGGER webhook_sagas_inserted ON sagas`);
    await q.query(`DROP TRIGGER webhook_connections_updated ON connections`);
    await q.query(`DROP TRIGGER webhook_jobs_updated ON jobs`);
    await q.query(`DROP TRIGGER webhook_jobs_inserted ON jobs`);
    for (const fn of [
      'webhook_dead_letters_inserted',
      'webhook_sagas_updated',
      'webhook_sagas_inserted',
      'webhook_connections_updated',
      'webhook_jobs_updated',
      'webhook_jobs_inserted',
    ]) {
      await q.query(`DROP FUNCTION ${fn}()`);
    }
    await q.query(`DROP FUNCTION webhook_lease(text, bigint, integer)`);
    await q.query(`DROP FUNCTION webhook_enqueue(uuid[], uuid[], text[], jsonb[])`);
    await q.query(`DROP TABLE webhook_attempts`);
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhook_events`);
    await q.query(`DROP TABLE webhook_endpoints`);
  }
}
