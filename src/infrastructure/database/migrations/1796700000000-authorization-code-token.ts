import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An authorization code remembers the access token it was exchanged for, so that a second
 * exchange of the code can revoke that token (RFC 6749 §4.1.2). Codes used before this
 * migration are linked by the exchange's transaction time: the code's `used_at` and the token's
 * `created_at` are both `now()` of that one transaction.
 */
export class AuthorizationCodeToken1796700000000 implements MigrationInterface {
  name = 'AuthorizationCodeToken1796700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE authorization_codes ADD COLUMN access_token_id uuid REFERENCES access_tokens (id) ON DELETE SET NULL`);
    await q.query(
      `UPDATE authorization_codes c SET access_token_id = t.id
       FROM access_tokens t
       WHERE c.used_at IS NOT NULL AND t.connection_id = c.connection_id AND t.application_id = c.application_id
         AND t.created_at = c.used_at`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE authorization_codes DROP COLUMN access_token_id`);
  }
}
