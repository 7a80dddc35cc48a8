import { Transform, TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { IncomingMessage } from 'node:http';
import { Controller, HttpCode, Logger, Post, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/shared/domain-error';
import { bodyTooLarge } from '../../infrastructure/http/request-bounds';
import { GustoWebhookSubscriptions } from '../../infrastructure/providers/gusto/gusto-webhook-subscriptions';
import {
  GUSTO_SIGNATURE_HEADER,
  isVerificationTokenPayload,
  parseGustoEvent,
  parseVerificationToken,
  verifyGustoSignature,
} from '../../infrastructure/providers/gusto/gusto-webhooks';
import { GustoEventIntake } from './gusto-event-intake';

export const GUSTO_WEBHOOKS_PATH = '/providers/gusto/webhooks';

/**
 * Bytes a delivery may hold. An event is a few hundred bytes, the handshake less: 8 KiB, the
 * credentials routes' bound (body-limits.ts), leaves room and keeps strangers' bodies small.
 */
export const GUSTO_WEBHOOK_BODY_BYTES = 8 * 1024;

/** How long the handshake waits for Gusto to confirm its token: Gusto wants an answer within 10 s. */
const HANDSHAKE_VERIFY_MS = 5_000;

const rawBodies = new WeakMap<IncomingMessage, Buffer>();

/**
 * Keeps the bytes of this route's request bodies as they arrived: the signature is over them,
 * and the JSON parser (json-body-parser.ts) keeps only what it parsed. A pass-through on the
 * parser's input (a preParsing hook: the parser, its bounds and its budget stay as for every
 * route), which also holds the route to its own byte bound, refused as every route refuses a
 * body too large (413 payload_too_large). Installed before the server is ready: Fastify gives
 * routes their hooks then.
 */
export function captureGustoWebhookBodies(fastify: FastifyInstance): void {
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    if (request.method !== 'POST' || request.routeOptions.url !== GUSTO_WEBHOOKS_PATH) {
      done(null, payload);
      return;
    }
    const tooLarge = () => bodyTooLarge(`Request body is larger than this route accepts (${GUSTO_WEBHOOK_BODY_BYTES} bytes)`);
    if (Number(request.headers['content-length']) > GUSTO_WEBHOOK_BODY_BYTES) {
      done(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const capture = new Transform({
      transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
        size += chunk.length;
        if (size > GUSTO_WEBHOOK_BODY_BYTES) return callback(tooLarge());
        chunks.push(chunk);
        callback(null, chunk);
      },
      flush(callback: TransformCallback) {
        rawBodies.set(request.raw, Buffer.concat(chunks));
        callback();
      },
    });
    // A client going away errors the capture too, so the parser is not left waiting.
    pipeline(payload, capture).catch(() => undefined);
    done(null, capture);
  });
}

const invalidSignature = (message: string) => new DomainError('authentication_error', message, { serviceCode: 'invalid_webhook_signature' });

/**
 * Gusto's deliveries (https://docs.gusto.com/app-integrations/docs/webhooks). Not behind an access
 * token: a delivery's authenticity is its X-Gusto-Signature, checked against the raw body with
 * the verification tokens of the verified subscriptions. The one unsigned body taken is the
 * handshake, which only hands over a token for Gusto itself to confirm. Answers:
 * - handshake: 200, the token kept (sealed) and offered to the pending subscription;
 * - signature missing or wrong: 401, the API's error object, nothing read;
 * - event already taken in: 200, nothing done again;
 * - event: 200 once taken in, a data sync requested for each connection reaching its company.
 * Answered once recorded, never after the sync: Gusto retries a slow answer.
 */
@ApiExcludeController()
@Controller('providers/gusto/webhooks')
export class GustoWebhooksController {
  private readonly logger = new Logger('GustoWebhooks');

  constructor(
    private readonly subscriptions: GustoWebhookSubscriptions,
    private readonly intake: GustoEventIntake,
  ) {}

  @Post()
  @HttpCode(200)
  async receive(@Req() request: FastifyRequest): Promise<{ outcome: string; connections?: number }> {
    const body = request.body;
    if (isVerificationTokenPayload(body)) {
      await this.subscriptions.receiveVerificationToken(parseVerificationToken(body));
      await this.verifyWithin(HANDSHAKE_VERIFY_MS);
      return { outcome: 'verification_token_received' };
    }
    const signature = request.headers[GUSTO_SIGNATURE_HEADER];
    if (signature === undefined || signature === '') throw invalidSignature('X-Gusto-Signature is required');
    const raw = rawBodies.get(request.raw) ?? Buffer.alloc(0);
    if (!verifyGustoSignature(raw, signature, await this.subscriptions.verificationTokens())) {
      throw invalidSignature('X-Gusto-Signature does not sign this body');
    }
    const outcome = await this.intake.receive(parseGustoEvent(body), 'webhook');
    return outcome.kind === 'sync_requested' ? { outcome: outcome.kind, connections: outcome.syncs.length } : { outcome: outcome.kind };
  }

  /**
   * Offers the token to Gusto at once, so the subscription is live without waiting for the next
   * round of the background upkeep. The token is kept already: a failure here (Gusto slow or
   * down) is only logged, the upkeep (GustoWebhooksUpkeep) offers it again.
   */
  private async verifyWithin(ms: number): Promise<void> {
    try {
      await this.subscriptions.verifyPending(AbortSignal.timeout(ms));
    } catch (error) {
      this.logger.warn(`a Gusto verification token was kept but not confirmed yet: ${(error as Error).message}`);
    }
  }
}
