import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A real provider's OAuth tokens between the connect page's callback and the employer's Allow:
 * one row per connect session (a second authorization replaces the first), sealed like
 * provider_grants, and discarded on Deny, on Allow (moved to provider_grants in the transaction
 * that creates the connection) or once `discard_after` has passed. The page itself only carries
 * the row's random `id`, signed.
 */
export class PendingProviderGrants1797990000000 implements MigrationInterface {
  name = 'PendingProviderGrants1797990000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE pending_provider_grants (
        id                    uuid        PRIMARY KEY,
        session_id            uuid        NOT NULL UNIQUE REFERENCES connect_sessions (id) ON DELETE CASCADE,
        provider_id           text        NOT NULL,
        account_ref           text        NOT NULL,
        access_token_sealed   text        NOT NULL,
        refresh_token_sealed  text        NOT NULL,
        expires_at            timestamptz NOT NULL,
        discard_after         timestamptz NOT NULL,
        created_at            timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX pending_provider_grants_discard_after ON pending_provider_grants (discard_after)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE pending_provider_grants`);
  }
}
