import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What one owner of Idempotency-Keys (an application over all its connections, or an ops user)
 * may keep: `idempotency_allowances` counts the keys it took and the answer bytes it kept in its
 * current day (a fixed window from its first key), updated by the statements that claim a key
 * and record its answer. `response_not_kept` says why an answer was sent but not kept (too large,
 * or past the allowance): a retry with its key is told so rather than run again.
 */
export class IdempotencyAllowances1797940000000 implements MigrationInterface {
  name = 'IdempotencyAllowances1797940000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_keys ADD COLUMN response_not_kept text`);
    await q.query(`
      CREATE TABLE idempotency_allowances (
        owner         text        PRIMARY KEY,
        window_start  timestamptz NOT NULL,
        keys          integer     NOT NULL,
        answer_bytes  bigint      NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_allowances`);
    await q.query(`ALTER TABLE idempotency_keys DROP COLUMN response_not_kept`);
  }
}
