import { MigrationInterface, QueryRunner } from 'typeorm';

interface KeptAnswer {
  scope: string;
  key: string;
  attempt: string;
  response_body: string;
}

/**
 * Clears the secrets that Idempotency-Key answers kept in clear before answers carrying one were
 * marked (src/infrastructure/http/idempotency/secret-answers.ts), while the rest of the service
 * keeps tokens only hashed and signing secrets only sealed:
 * - a token exchange's answer (`access_token` beside `client_type`) is deleted: an exchange is no
 *   longer replayed, its retry being a second use of the code;
 * - any other answer's top-level `access_token` (sandbox connections and accounts) and `secret`
 *   (webhook endpoint creation and rotation) is removed, the rest kept in its key order, as a
 *   replay now answers it.
 * Done in code, not SQL: a body that is not a JSON object must be left alone, and PostgreSQL 15
 * cannot test text for JSON without failing on it. Only bodies that name a field are read.
 */
export class IdempotencySecretAnswers1797930000000 implements MigrationInterface {
  name = 'IdempotencySecretAnswers1797930000000';

  async up(q: QueryRunner): Promise<void> {
    const rows: KeptAnswer[] = await q.query(
      `SELECT scope, key, attempt, response_body FROM idempotency_keys
        WHERE response_body LIKE '%"access_token"%' OR response_body LIKE '%"secret"%'`,
    );
    for (const row of rows) {
      const body = objectOf(row.response_body);
      if (!body || !('access_token' in body || 'secret' in body)) continue;
      const where = [row.scope, row.key, row.attempt];
      if ('access_token' in body && 'client_type' in body) {
        await q.query(`DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND attempt = $3`, where);
        continue;
      }
      const kept = Object.fromEntries(Object.entries(body).filter(([field]) => field !== 'access_token' && field !== 'secret'));
      await q.query(`UPDATE idempotency_keys SET response_body = $4 WHERE scope = $1 AND key = $2 AND attempt = $3`, [...where, JSON.stringify(kept)]);
    }
  }

  async down(): Promise<void> {
    // Nothing to restore: the secrets are gone, as intended.
  }
}

function objectOf(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
