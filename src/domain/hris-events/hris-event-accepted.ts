import { Connection } from '../connections/connection';
import { ConnectionEntity } from '../connections/entity-scope';
import { HrisEvent } from './hris-event';

/** The employer an HRIS event is about, resolved and checked before a saga sees it. */
export interface HrisScope {
  connection: Connection;
  entity: ConnectionEntity;
}

/**
 * An HRIS event passed validation and its inbox check: the sagas act on it in its inbox
 * transaction. A saga refusing it (a command's 4xx) says why here; the event is then poison,
 * and the saga leaves nothing of it written.
 */
export class HrisEventAccepted {
  private refused: string | undefined;

  constructor(
    readonly event: HrisEvent,
    readonly scope: HrisScope,
  ) {}

  refuse(reason: string): void {
    this.refused ??= reason;
  }

  /** Why a saga refused the event; undefined when it was applied. */
  get refusal(): string | undefined {
    return this.refused;
  }
}
