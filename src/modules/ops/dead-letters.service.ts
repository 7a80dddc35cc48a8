import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, notFound } from '../../domain/shared/domain-error';
import { domainErrorResponse, ErrorBody } from '../../infrastructure/http/error-response';
import { MessageProcessor } from '../../infrastructure/messaging/inbox/message-processor';
import { MessageHandlerRegistry } from '../../infrastructure/messaging/message-handler-registry';
import { OpsAuditWriter } from '../ops-audit/ops-audit.writer';
import { DeadLetterFilter, DeadLettersRepository } from './dead-letters.repository';
import { DeadLetter, deadLetterDetailView, ReplayResultResponse } from './dto/dead-letter.dto';

const errorBodyOf = (error: DomainError): ErrorBody => domainErrorResponse(error).body;
const deadLetterNotFound = (id: string) => notFound(`No dead letter ${id}`, 'dead_letter_not_found');
const notOpen = (id: string, status: string) =>
  new DomainError('conflict_error', `Dead letter ${id} is already ${status}`, { serviceCode: 'dead_letter_not_open' });

/**
 * Messages a consumer refused: read them, replay them once their cause is fixed, or discard them
 * with a reason. Each action is audited in the transaction that carries it out; a replay that
 * fails changes nothing but is audited on its own, so the trail shows every attempt.
 */
@Injectable()
export class DeadLettersService {
  private readonly logger = new Logger(DeadLettersService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly deadLetters: DeadLettersRepository,
    private readonly processor: MessageProcessor,
    private readonly handlers: MessageHandlerRegistry,
    private readonly audit: OpsAuditWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  list(filter: DeadLetterFilter, page: { limit: number; offset: number }) {
    return this.deadLetters.list(filter, page);
  }

  async get(id: string): Promise<DeadLetter> {
    const deadLetter = await this.deadLetters.find(id);
    if (!deadLetter) throw deadLetterNotFound(id);
    return deadLetter;
  }

  /** One after the other, each in its own transaction: one id's failure leaves the others be. */
  async replay(ids: string[], note: string | null, actor: string): Promise<ReplayResultResponse[]> {
    const results: ReplayResultResponse[] = [];
    for (const id of ids) results.push(await this.replayOne(id, note, actor));
    return results;
  }

  private async replayOne(id: string, note: string | null, actor: string): Promise<ReplayResultResponse> {
    const failed = (error: DomainError) => ({ dead_letter_id: id, code: domainErrorResponse(error).status, body: errorBodyOf(error) });
    let outcome: Awaited<ReturnType<MessageProcessor['replay']>>;
    try {
      outcome = await this.processor.replay(id, {
        handlers: this.handlers,
        resolvedBy: actor,
        resolvedAt: this.clock.now(),
        note,
        alsoInTransaction: (manager) =>
          this.audit.record(manager, { actor, action: 'dead_letter.replay', targetType: 'dead_letter', targetId: id, detail: { outcome: 'replayed', note } }),
      });
    } catch (error) {
      // Not the message's fault (database, a provider, a bug): it may apply later.
      this.logger.warn(`replaying dead letter ${id} failed: ${(error as Error)?.stack ?? error}`);
      await this.auditFailedAttempt(id, actor, { outcome: 'error', note });
      return {
        dead_letter_id: id,
        code: 503,
        body: {
          code: 503,
          name: 'server_error',
          service_code: 'replay_unavailable',
          message: 'The message could not be applied now; the dead letter is unchanged and may be replayed again later',
        },
      };
    }
    switch (outcome.status) {
      case 'replayed':
        return { dead_letter_id: id, code: 200, body: deadLetterDetailView((await this.deadLetters.find(id))!) };
      case 'not_found':
        return failed(deadLetterNotFound(id));
      case 'not_open':
        return failed(notOpen(id, outcome.current));
      case 'no_handler':
        return failed(
          new DomainError(
            'unprocessable_request_error',
            `No consumer ${outcome.consumer} of ${outcome.topic} runs in this service: the dead letter cannot be replayed here`,
            { serviceCode: 'no_consumer' },
          ),
        );
      case 'poison':
        await this.auditFailedAttempt(id, actor, { outcome: 'refused', reason: outcome.reason, note });
        return failed(
          new DomainError('unprocessable_request_error', `The consumer still refuses the message: ${outcome.reason}. The dead letter stays open`, {
            serviceCode: 'still_poison',
          }),
        );
    }
  }

  private async auditFailedAttempt(id: string, actor: string, detail: Record<string, unknown>): Promise<void> {
    await this.dataSource.transaction((manager) =>
      this.audit.record(manager, { actor, action: 'dead_letter.replay', targetType: 'dead_letter', targetId: id, detail }),
    );
  }

  /** Drops an open dead letter for good, with the reason, audited. */
  async discard(id: string, note: string, actor: string): Promise<DeadLetter> {
    return this.dataSource.transaction(async (manager) => {
      const discarded = await this.deadLetters.discard(id, { resolvedBy: actor, resolvedAt: this.clock.now(), note }, manager);
      if (!discarded) {
        const existing = await this.deadLetters.find(id, manager);
        throw existing ? notOpen(id, existing.status) : deadLetterNotFound(id);
      }
      await this.audit.record(manager, { actor, action: 'dead_letter.discard', targetType: 'dead_letter', targetId: id, detail: { note } });
      return discarded;
    });
  }
}
