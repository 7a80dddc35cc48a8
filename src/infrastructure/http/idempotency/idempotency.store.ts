import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../../config/app-config';
import { Clock, CLOCK } from '../../../domain/shared/clock';
import { affectedCount } from '../../database/query-result';
import { IDEMPOTENCY_TTL_MS, IN_FLIGHT_TIMEOUT_MS } from './idempotency-key';

/** How often this instance sweeps expired keys away (reads already ignore them). */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

export interface StoredAnswer {
  statusCode: number;
  /** The JSON body as it was sent; null when there was none, or when it was not kept. */
  body: string | null;
  /** Why the body was not kept (too large, or past the application's allowance); null when it was. */
  notKept: string | null;
}

export type Claim =
  | { kind: 'claimed'; attempt: string }
  | { kind: 'in_flight'; requestHash: string }
  | { kind: 'answered'; requestHash: string; answer: StoredAnswer }
  /** The owner has taken all its keys for its day; the next one may be taken in `retryAfterSeconds`. */
  | { kind: 'exhausted'; keysPerOwner: number; retryAfterSeconds: number };

/** Whose key: the scope it lives in (`connection:…`) and the owner whose allowance it uses (`application:…`). */
export interface KeyHolder {
  scope: string;
  owner: string;
}

interface ClaimRow {
  attempt: string | null;
  keys: number | null;
  window_start: Date | null;
}

interface KeyRow {
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  response_not_kept: string | null;
}

/**
 * `idempotency_keys`: one row per (caller scope, key). Every statement is its own autocommit
 * statement; nothing is held open while the handler runs (the embedded database has one
 * connection, and the handler needs it).
 *
 * What one owner (an application, over all its connections; or an ops user) may keep is bounded
 * by `idempotency_allowances`, one row per owner counting the keys it took and the answer bytes
 * it kept in its current day (a fixed window from its first key). The count is kept by the
 * claiming and the completing statements themselves, so it costs no statement of its own. Keys
 * live a day, so at most two days' allowances are ever stored at once.
 */
@Injectable()
export class IdempotencyStore {
  private lastSweep = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Takes the key for this request (a new row, or one that expired or was abandoned in
   * flight) while the owner has keys left for its day, or reports what the key already holds.
   */
  async claim({ scope, owner }: KeyHolder, key: string, requestHash: string): Promise<Claim> {
    await this.sweepNowAndThen();
    const keysPerOwner = this.config.IDEMPOTENCY_KEYS_PER_APPLICATION;
    // A key released between the two statements below is simply claimed on the next turn.
    for (let turn = 0; turn < 3; turn++) {
      const now = this.clock.now();
      const attempt = randomUUID();
      const expired = new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
      const abandoned = new Date(now.getTime() - IN_FLIGHT_TIMEOUT_MS);
      const [claim]: ClaimRow[] = await this.dataSource.query(
        `WITH allowance AS (
           SELECT keys, window_start FROM idempotency_allowances WHERE owner = $8 AND window_start > $6
         ), claimed AS (
           INSERT INTO idempotency_keys (scope, key, request_hash, attempt, created_at)
           SELECT $1::text, $2::text, $3::text, $4::uuid, $5::timestamptz
            WHERE coalesce((SELECT keys FROM allowance), 0) < $9
           ON CONFLICT (scope, key) DO UPDATE
             SET request_hash = EXCLUDED.request_hash, attempt = EXCLUDED.attempt, status_code = NULL,
                 response_body = NULL, response_not_kept = NULL, created_at = EXCLUDED.created_at
             WHERE idempotency_keys.created_at <= $6
                OR (idempotency_keys.status_code IS NULL AND idempotency_keys.created_at <= $7)
           RETURNING attempt
         ), counted AS (
           INSERT INTO idempotency_allowances (owner, window_start, keys, answer_bytes)
           SELECT $8::text, $5::timestamptz, 1, 0 FROM claimed
           ON CONFLICT (owner) DO UPDATE SET
             keys = CASE WHEN idempotency_allowances.window_start <= $6 THEN 1 ELSE idempotency_allowances.keys + 1 END,
             answer_bytes = CASE WHEN idempotency_allowances.window_start <= $6 THEN 0 ELSE idempotency_allowances.answer_bytes END,
             window_start = CASE WHEN idempotency_allowances.window_start <= $6 THEN EXCLUDED.window_start ELSE idempotency_allowances.window_start END
         )
         SELECT (SELECT attempt FROM claimed) AS attempt, (SELECT keys FROM allowance) AS keys, (SELECT window_start FROM allowance) AS window_start`,
        [scope, key, requestHash, attempt, now, expired, abandoned, owner, keysPerOwner],
      );
      if (claim.attempt !== null) return { kind: 'claimed', attempt };
      const [row]: KeyRow[] = await this.dataSource.query(
        `SELECT request_hash, status_code, response_body, response_not_kept FROM idempotency_keys
          WHERE scope = $1 AND key = $2 AND created_at > $3 AND (status_code IS NOT NULL OR created_at > $4)`,
        [scope, key, expired, abandoned],
      );
      if (row) {
        if (row.status_code === null) return { kind: 'in_flight', requestHash: row.request_hash };
        return {
          kind: 'answered',
          requestHash: row.request_hash,
          answer: { statusCode: row.status_code, body: row.response_body, notKept: row.response_not_kept },
        };
      }
      // No live row, and none was made: the owner's keys for the day are taken.
      if (claim.keys !== null && claim.keys >= keysPerOwner && claim.window_start !== null) {
        const endsAt = new Date(claim.window_start).getTime() + IDEMPOTENCY_TTL_MS;
        return { kind: 'exhausted', keysPerOwner, retryAfterSeconds: Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000)) };
      }
    }
    throw new Error(`Idempotency-Key row kept disappearing for scope ${scope}`);
  }

  /**
   * Records the answer, unless another request has since taken the key over. The body is kept
   * only when it is at most IDEMPOTENCY_MAX_ANSWER_BYTES and fits the owner's bytes for the day
   * (charged in the same statement), and was not `withheld`; otherwise only the status and why
   * the body was not kept.
   */
  async complete(
    { scope, owner }: KeyHolder,
    key: string,
    attempt: string,
    answer: { statusCode: number; body: string | null; withheld?: string },
  ): Promise<void> {
    const size = answer.body === null ? 0 : Buffer.byteLength(answer.body, 'utf8');
    const { IDEMPOTENCY_MAX_ANSWER_BYTES: maxAnswer, IDEMPOTENCY_ANSWER_BYTES_PER_APPLICATION: perOwner } = this.config;
    const tooLarge = size > maxAnswer;
    // Withheld (`withheld` says why) or too large: only the status is kept, and nothing is charged.
    const notKept =
      answer.withheld ??
      (tooLarge
        ? `its body (${size} bytes) is larger than the ${maxAnswer} bytes kept for a replay`
        : `its application had kept the ${perOwner} bytes of answers it may keep in a day`);
    await this.dataSource.query(
      `WITH charged AS (
         INSERT INTO idempotency_allowances (owner, window_start, keys, answer_bytes)
         SELECT $5::text, $6::timestamptz, 0, $7::bigint
          WHERE NOT $8::boolean AND $7 <= $9 AND EXISTS (SELECT 1 FROM idempotency_keys WHERE scope = $1 AND key = $2 AND attempt = $3)
         ON CONFLICT (owner) DO UPDATE SET answer_bytes = idempotency_allowances.answer_bytes + EXCLUDED.answer_bytes
           WHERE idempotency_allowances.answer_bytes + EXCLUDED.answer_bytes <= $9
         RETURNING 1
       )
       UPDATE idempotency_keys
          SET status_code = $4,
              response_body = CASE WHEN EXISTS (SELECT 1 FROM charged) THEN $10::text END,
              response_not_kept = CASE WHEN EXISTS (SELECT 1 FROM charged) THEN NULL ELSE $11::text END
        WHERE scope = $1 AND key = $2 AND attempt = $3`,
      [scope, key, attempt, answer.statusCode, owner, this.clock.now(), size, tooLarge || answer.withheld !== undefined, perOwner, answer.body, notKept],
    );
  }

  /** Frees the key so a retry runs the request again (after a 5xx or an unexpected failure). */
  async release(scope: string, key: string, attempt: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND attempt = $3`, [scope, key, attempt]);
  }

  /** Deletes expired keys and allowances; they are already treated as absent, this only keeps the tables small. */
  async sweepExpired(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - IDEMPOTENCY_TTL_MS);
    await this.dataSource.query(`DELETE FROM idempotency_allowances WHERE window_start <= $1`, [cutoff]);
    return affectedCount(await this.dataSource.query(`DELETE FROM idempotency_keys WHERE created_at <= $1`, [cutoff]));
  }

  private async sweepNowAndThen(): Promise<void> {
    const now = this.clock.now().getTime();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    await this.sweepExpired();
  }
}
