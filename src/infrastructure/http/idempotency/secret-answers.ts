import { applyDecorators, SetMetadata } from '@nestjs/common';
import { NoStore } from '../no-store';

/**
 * What the Idempotency-Key does with an answer that carries a secret. The service keeps tokens
 * only as hashes and signing secrets only sealed, so `idempotency_keys` must not keep them in
 * clear either, and a replay must never hand one out (perhaps after it was revoked or rotated):
 * - `withhold`: the answer is kept and replayed without these top-level fields (what was made,
 *   never its secret again; a lost secret is rotated, a lost sandbox token is minted anew);
 * - `not_kept`: the answer is nothing but a secret minted for a single-use grant (the token
 *   exchange): the key is not applied, so a retry is a second presentation of the grant, which
 *   the route's own rule refuses (a reused code is refused and revokes its token).
 */
export type SecretAnswerRule = { kind: 'withhold'; fields: readonly string[] } | { kind: 'not_kept' };

export const SECRET_ANSWER = Symbol('idempotency:secret-answer');

/** The answer's top-level `fields` are secrets: never kept, never replayed; never cached either. */
export const AnswerCarriesSecret = (...fields: [string, ...string[]]): MethodDecorator =>
  applyDecorators(SetMetadata(SECRET_ANSWER, { kind: 'withhold', fields } satisfies SecretAnswerRule), NoStore());

/** The answer is a secret issued for a single-use grant: the Idempotency-Key is not applied; never cached. */
export const AnswerIsSingleUseSecret = (): MethodDecorator =>
  applyDecorators(SetMetadata(SECRET_ANSWER, { kind: 'not_kept' } satisfies SecretAnswerRule), NoStore());

export const PERSONAL_ANSWER = Symbol('idempotency:personal-answer');

/**
 * The answer may carry personal data (SSNs): a kept answer is sealed (AES-256-GCM, the service's
 * sealing key) and opened only to be replayed; without a sealing key only its status is kept.
 * Never cached.
 */
export const AnswerCarriesPersonalData = (): MethodDecorator => applyDecorators(SetMetadata(PERSONAL_ANSWER, true), NoStore());

/** The body as it may be kept: `withhold` fields left out of a JSON object, key order kept. */
export function keepableBody(body: unknown, rule: SecretAnswerRule | undefined): unknown {
  if (rule?.kind !== 'withhold' || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([field]) => !rule.fields.includes(field)));
}
