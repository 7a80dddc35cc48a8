import { CallHandler, ExecutionContext, Inject, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { catchError, defer, from, mergeMap, Observable, of, switchMap } from 'rxjs';
import { toErrorResponse } from '../error-response';
import {
  APPLICATION_CREDENTIALS_VERIFIER,
  ApplicationCredentialsVerifier,
  IdempotencyCaller,
  idempotencyCallerOf,
} from './idempotency-caller';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyAnswerNotKept,
  idempotencyKeyInUse,
  idempotencyKeyOf,
  idempotencyKeyReused,
  idempotencyKeysExhausted,
  isStoredAnswer,
  requestFingerprint,
} from './idempotency-key';
import { IdempotencyStore, StoredAnswer } from './idempotency.store';
import { SealingKey } from '../../secrets/sealing-key';
import { keepableBody, PERSONAL_ANSWER, SECRET_ANSWER, SecretAnswerRule } from './secret-answers';

/** The sealing key's purpose for kept answers: its own key, apart from webhook secrets and provider tokens. */
const ANSWER_SEAL_PURPOSE = 'idempotent-answers';
/** How a sealed answer starts (SecretBox's form); no JSON text starts so. */
const SEALED_PREFIX = 'v1.';

/**
 * `Idempotency-Key` on every JSON POST (DECISIONS.md "Idempotency"): the same key and request
 * within 24 h get the first answer again, marked `Idempotent-Replayed: true`; the same key with
 * another request is 409. Runs after the guards (so bearer callers are known) and around the
 * pipes and the handler (so validation errors are answers like any other). Secrets in an answer
 * are never kept (secret-answers.ts), and what one application keeps is bounded (the store).
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Idempotency');

  constructor(
    private readonly store: IdempotencyStore,
    @Inject(APPLICATION_CREDENTIALS_VERIFIER) private readonly verifier: ApplicationCredentialsVerifier,
    private readonly reflector: Reflector,
    private readonly sealingKey: SealingKey,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    if (request.method !== 'POST' || !speaksJson(request)) return next.handle();
    const key = idempotencyKeyOf(request.headers[IDEMPOTENCY_KEY_HEADER]);
    if (key === undefined) return next.handle();
    const secret = this.reflector.get<SecretAnswerRule | undefined>(SECRET_ANSWER, context.getHandler());
    // An answer that is only a single-use secret is never kept, so the key cannot replay it.
    if (secret?.kind === 'not_kept') return next.handle();
    const caller = idempotencyCallerOf(request, this.verifier);
    if (!caller) return next.handle();
    const keep: AnswerRules = { secret, personal: this.reflector.get<boolean | undefined>(PERSONAL_ANSWER, context.getHandler()) === true };
    return defer(() => this.begin(caller, key, keep, request, reply, next)).pipe(switchMap((answer$) => answer$));
  }

  private async begin(
    caller: IdempotencyCaller,
    key: string,
    keep: AnswerRules,
    request: FastifyRequest,
    reply: FastifyReply,
    next: CallHandler,
  ): Promise<Observable<unknown>> {
    // Unproven credentials leave the key unused: the route itself refuses them.
    if (!(await caller.verify())) return next.handle();
    const requestHash = requestFingerprint(request.method, request.url, request.body);
    const claim = await this.store.claim(caller, key, requestHash);
    if (claim.kind === 'exhausted') throw idempotencyKeysExhausted(claim.keysPerOwner, claim.retryAfterSeconds);
    if (claim.kind !== 'claimed') {
      if (claim.requestHash !== requestHash) throw idempotencyKeyReused();
      if (claim.kind === 'in_flight') throw idempotencyKeyInUse();
      void reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
      // Only the outcome was kept: running the request again could repeat its effect.
      if (claim.answer.notKept !== null) throw idempotencyAnswerNotKept(claim.answer.statusCode, claim.answer.notKept);
      const body = this.opened(claim.answer.body, claim.answer.statusCode);
      void reply.status(claim.answer.statusCode);
      return of(body === null ? undefined : JSON.parse(body));
    }
    const { attempt } = claim;
    return next.handle().pipe(
      mergeMap((body) => from(this.finish(caller, key, attempt, reply, body, keep))),
      catchError((error: unknown) => from(this.fail(caller, key, attempt, error))),
    );
  }

  private async finish(
    holder: IdempotencyCaller,
    key: string,
    attempt: string,
    reply: FastifyReply,
    body: unknown,
    keep: AnswerRules,
  ): Promise<unknown> {
    try {
      // A handler that wrote the reply itself left nothing here to keep.
      if (reply.sent || !isStoredAnswer(reply.statusCode)) await this.store.release(holder.scope, key, attempt);
      else await this.store.complete(holder, key, attempt, { statusCode: reply.statusCode, ...this.kept(body, keep) });
    } catch (error) {
      // The work is done and its answer is due; failing it now would invite a second run. The
      // key stays in flight until IN_FLIGHT_TIMEOUT_MS, then a retry may run again.
      this.logger.error({ err: error, scope: holder.scope }, 'could not record an Idempotency-Key answer');
    }
    return body;
  }

  /**
   * The body as it is kept: secrets left out; an answer that may carry personal data sealed, or
   * withheld when the service has no sealing key (the database must not hold SSNs in clear).
   */
  private kept(body: unknown, { secret, personal }: AnswerRules): { body: string | null; withheld?: string } {
    const text = serialized(keepableBody(body, secret));
    if (!personal || text === null) return { body: text };
    const box = this.sealingKey.box(ANSWER_SEAL_PURPOSE);
    if (!box) return { body: null, withheld: 'it may carry personal data, kept only sealed, and no WEBHOOK_SECRETS_KEY is set to seal it' };
    return { body: box.seal(text) };
  }

  /** A kept body as it was sent: a sealed one opened; one that cannot be opened is as if not kept. */
  private opened(body: string | null, statusCode: number): string | null {
    if (body === null || !body.startsWith(SEALED_PREFIX)) return body;
    const box = this.sealingKey.box(ANSWER_SEAL_PURPOSE);
    try {
      if (box) return box.open(body);
    } catch {
      // Sealed under another key (WEBHOOK_SECRETS_KEY changed) or damaged: answered below.
    }
    throw idempotencyAnswerNotKept(statusCode, 'it was sealed under a sealing key this service no longer has');
  }

  /** The answer the global error filter is about to send, from the same mapping it uses. */
  private async fail(holder: IdempotencyCaller, key: string, attempt: string, error: unknown): Promise<never> {
    const response = toErrorResponse(error);
    try {
      if (isStoredAnswer(response.status)) {
        await this.store.complete(holder, key, attempt, { statusCode: response.status, body: JSON.stringify(response.body) });
      } else {
        await this.store.release(holder.scope, key, attempt);
      }
    } catch (storeError) {
      // The request's own error is the one to report; an unrecorded key only means a retry runs again.
      this.logger.error({ err: storeError, scope: holder.scope }, 'could not record an Idempotency-Key answer');
    }
    throw error;
  }
}

/** How a route's answer is kept: its secrets (secret-answers.ts), and whether it may carry personal data. */
interface AnswerRules {
  secret: SecretAnswerRule | undefined;
  personal: boolean;
}

/** The JSON API only: the connect page's form posts answer with HTML and are not replayed. */
function speaksJson(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return type === undefined || /^application\/json\b/i.test(type);
}

function serialized(body: unknown): StoredAnswer['body'] {
  return body === undefined ? null : JSON.stringify(body);
}
