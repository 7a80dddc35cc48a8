import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Applications, connections with their entities, connect sessions, authorization codes and
 * access tokens. Secrets are never stored: client secrets as a slow hash, codes and tokens as
 * SHA-256 of 256 random bits (a slow hash adds nothing to values that cannot be guessed).
 */
export class Connections1795400000000 implements MigrationInterface {
  name = 'Connections1795400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE applications (
        id             uuid PRIMARY KEY,
        name           text        NOT NULL,
        secret_hash    text        NOT NULL,
        redirect_uris  text[]      NOT NULL DEFAULT '{}',
        sandbox        boolean     NOT NULL DEFAULT false,
        created_at     timestamptz NOT NULL DEFAULT now(),
        updated_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE connections (
        id                   uuid PRIMARY KEY,
        application_id       uuid        NOT NULL REFERENCES applications (id),
        customer_id          text,
        customer_name        text,
        customer_email       text,
        provider_id          text        NOT NULL,
        authentication_type  text        NOT NULL,
        account_id           uuid        NOT NULL,
        company_id           uuid        NOT NULL,
        products             text[]      NOT NULL,
        status               text        NOT NULL CHECK (status IN ('connected', 'reauth', 'disconnected')),
        sandbox              boolean     NOT NULL,
        manual               boolean     NOT NULL DEFAULT false,
        employee_size        integer,
        created_at           timestamptz NOT NULL DEFAULT now(),
        updated_at           timestamptz NOT NULL DEFAULT now(),
        disconnected_at      timestamptz
      )`);
    // One live connection per customer of an application: the rule behind connection_already_exists.
    await q.query(
      `CREATE UNIQUE INDEX connections_live_customer_idx ON connections (application_id, customer_id) WHERE status <> 'disconnected'`,
    );
    await q.query(`
      CREATE TABLE connection_entities (
        id               uuid PRIMARY KEY,
        connection_id    uuid        NOT NULL REFERENCES connections (id),
        name             text        NOT NULL,
        status           text        NOT NULL CHECK (status IN ('active', 'disconnected')),
        created_at       timestamptz NOT NULL DEFAULT now(),
        disconnected_at  timestamptz
      )`);
    await q.query(`CREATE INDEX connection_entities_connection_idx ON connection_entities (connection_id)`);
    await q.query(`
      CREATE TABLE connect_sessions (
        id              uuid PRIMARY KEY,
        application_id  uuid        NOT NULL REFERENCES applications (id),
        kind            text        NOT NULL CHECK (kind IN ('connect', 'reauthenticate')),
        customer_id     text,
        customer_name   text,
        customer_email  text,
        connection_id   uuid REFERENCES connections (id),
        products        text[]      NOT NULL,
        redirect_uri    text,
        sandbox         text,
        manual          boolean     NOT NULL DEFAULT false,
        provider_id     text,
        auth_method     text,
        status          text        NOT NULL CHECK (status IN ('staged', 'completed', 'expired')),
        expires_at      timestamptz NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now()
      )`);
    // The staged session of a customer is reused (same session_id) until the flow completes.
    await q.query(
      `CREATE UNIQUE INDEX connect_sessions_staged_customer_idx ON connect_sessions (application_id, customer_id)
       WHERE status = 'staged' AND kind = 'connect' AND customer_id IS NOT NULL`,
    );
    await q.query(`
      CREATE TABLE authorization_codes (
        code_hash       text PRIMARY KEY,
        application_id  uuid        NOT NULL REFERENCES applications (id),
        connection_id   uuid        NOT NULL REFERENCES connections (id),
        redirect_uri    text,
        expires_at      timestamptz NOT NULL,
        used_at         timestamptz,
        created_at      timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE access_tokens (
        id              uuid PRIMARY KEY,
        token_hash      text        NOT NULL UNIQUE,
        connection_id   uuid        NOT NULL REFERENCES connections (id),
        application_id  uuid        NOT NULL REFERENCES applications (id),
        created_at      timestamptz NOT NULL DEFAULT now(),
        revoked_at      timestamptz
      )`);
    await q.query(`CREATE INDEX access_tokens_connection_idx ON access_tokens (connection_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['access_tokens', 'authorization_codes', 'connect_sessions', 'connection_entities', 'connections', 'applications']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
