import { Injectable } from '@nestjs/common';
import { Command, CommandBus } from '@nestjs/cqrs';
import { DomainError } from '../../domain/shared/domain-error';
import { PoisonMessageError } from '../../infrastructure/messaging/message';

/** Families that mean "this event can never be applied as it is" rather than "try again". */
const TRANSIENT: ReadonlySet<DomainError['family']> = new Set(['provider_error', 'provider_timeout', 'server_error', 'rate_limit_error']);

/**
 * Runs a saga's commands through the same CommandBus the REST API uses. A command refusing the
 * event's data (a 4xx of the API) makes the event poison, with the API's message as the reason,
 * and its transaction rolls back whole; anything else is transient and is retried.
 */
@Injectable()
export class SagaCommands {
  constructor(private readonly commands: CommandBus) {}

  async execute<R>(command: Command<R>, what: string): Promise<R> {
    try {
      return await this.commands.execute(command);
    } catch (error) {
      if (error instanceof DomainError && !TRANSIENT.has(error.family)) {
        throw new PoisonMessageError(`${what}: ${error.message}`);
      }
      throw error;
    }
  }
}
