import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Answers that may carry personal data (SSNs) are now kept sealed (secret-answers.ts,
 * `AnswerCarriesPersonalData`). Those kept before, in clear, keep only their status: a replay is
 * told the answer was not kept, as for one too large to keep. Found by the SSN itself, quoted as
 * JSON writes it, also inside a forwarded provider's body text (`\"ssn\":\"…`); keys live a day,
 * so this touches at most a day's answers.
 */
export class IdempotencyPersonalAnswers1798600000000 implements MigrationInterface {
  name = 'IdempotencyPersonalAnswers1798600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE idempotency_keys
          SET response_body = NULL,
              response_not_kept = 'it held personal data in clear, kept before such answers were sealed'
        WHERE response_body ~ 'ssn\\\\?":\\s*\\\\?"\\d'`,
    );
  }

  async down(): Promise<void> {
    // Nothing to restore: the personal data is gone, as intended.
  }
}
