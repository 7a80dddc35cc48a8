import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock, CLOCK } from '../../../domain/shared/clock';
import { affectedCount } from '../../database/query-result';
import { IDEMPOTENCY_TTL_MS, IN_FLIGHT_TIMEOUT_MS } from './idempotency-key';

/** How often this instance sweeps expired keys away (reads already ignore them). */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

export interface StoredAnswer {
  statusCode: number;
  /** The JSON body as it was sent; null when there was none. */
  body: string | null;
}

export type Claim =
  | { kind: 'claimed'; attempt: string }
  | { kind: 'in_flight'; requestHash: string }
  | { kind: 'answered'; requestHash: string; answer: StoredAnswer };

interface KeyRow {
  request_hash: string;
  attempt: string;
  status_code: number | null;
  response_body: string | null;
}

/**
 * `idempotency_keys`: one row per (caller scope, key). Every statement is its own autocommit
 * statement; nothing is held open while the handler runs (the embedded database has one
 * connection, and the handler needs it).
 */
@Injectable()
export class IdempotencyStore {
  private lastSweep = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Takes the key for this request (a new row, or one that expired or was abandoned in
   * flight), or reports what the key already holds.
   */
  async claim(scope: string, key: string, requestHash: string): Promise<Claim> {
    await this.sweepNowAndThen();
    // A key released between the two statements below is simply claimed on the next turn.
    for (let turn = 0; turn < 3; turn++) {
      const now = this.clock.now();
      const attempt = randomUUID();
      const claimed: unknown[] = await this.dataSource.query(
        `INSERT INTO idempotency_keys (scope, key, request_hash, attempt, created_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (scope, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, attempt = EXCLUDED.attempt,
               status_code = NULL, response_body = NULL, created_at = EXCLUDED.created_at
           WHERE idempotency_keys.created_at <= $6
              OR (idempotency_keys.status_code IS NULL AND idempotency_keys.created_at <= $7)
         RETURNING attempt`,
        [scope, key, requestHash, attempt, now, new Date(now.getTime() - IDEMPOTENCY_TTL_MS), new Date(now.getTime() - IN_FLIGHT_TIMEOUT_MS)],
      );
      if (claimed.length === 1) return { kind: 'claimed', attempt };
      const [row]: KeyRow[] = await this.dataSource.query(
        `SELECT request_hash, attempt, status_code, response_body FROM idempotency_keys WHERE scope = $1 AND key = $2`,
        [scope, key],
      );
      if (!row) continue;
      if (row.status_code === null) return { kind: 'in_flight', requestHash: row.request_hash };
      return { kind: 'answered', requestHash: row.request_hash, answer: { statusCode: row.status_code, body: row.response_body } };
    }
    throw new Error(`Idempotency-Key row kept disappearing for scope ${scope}`);
  }

  /** Records the answer, unless another request has since taken the key over. */
  async complete(scope: string, key: string, attempt: string, answer: StoredAnswer): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_keys SET status_code = $4, response_body = $5 WHERE scope = $1 AND key = $2 AND attempt = $3`,
      [scope, key, attempt, answer.statusCode, answer.body],
    );
  }

  /** Frees the key so a retry runs the request again (after a 5xx or an unexpected failure). */
  async release(scope: string, key: string, attempt: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND attempt = $3`, [scope, key, attempt]);
  }

  /** Deletes expired keys; they are already treated as absent, this only keeps the table small. */
  async sweepExpired(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - IDEMPOTENCY_TTL_MS);
    return affectedCount(await this.dataSource.query(`DELETE FROM idempotency_keys WHERE created_at <= $1`, [cutoff]));
  }

  private async sweepNowAndThen(): Promise<void> {
    const now = this.clock.now().getTime();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    await this.sweepExpired();
  }
}
