import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A real payroll provider's OAuth grant per connection: the tokens sealed (AES-256-GCM under
 * the sealing key, which is not in the database), when the access token expires, and a
 * generation bumped by every refresh, so an instance that read the grant before another
 * refreshed it uses the new tokens rather than spending the single-use refresh token again.
 */
export class ProviderGrants1797960000000 implements MigrationInterface {
  name = 'ProviderGrants1797960000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE provider_grants (
        connection_id         uuid        PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
        provider_id           text        NOT NULL,
        -- The provider's own id of what the grant reaches (Gusto: the company's uuid).
        account_ref           text        NOT NULL,
        access_token_sealed   text        NOT NULL,
        refresh_token_sealed  text        NOT NULL,
        expires_at            timestamptz NOT NULL,
        generation            integer     NOT NULL DEFAULT 1,
        -- A refresh the provider refused for good: the connection needs its owner again.
        failed_at             timestamptz,
        failure               text,
        created_at            timestamptz NOT NULL DEFAULT now(),
        updated_at            timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE provider_grants`);
  }
}
