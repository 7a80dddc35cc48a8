import { Command } from '@nestjs/cqrs';
import { BenefitScope } from '../../benefits/benefits-lookup.service';

/** Where an enrollment command comes from, beyond the REST request it may be. */
export interface EnrollmentCommandContext {
  /** The saga this work belongs to (an HRIS saga); without, the command starts an enrollment saga. */
  sagaId?: string;
  /**
   * When the change happened at its source (an HRIS event's `occurred_at`). With it, an
   * individual whose enrollment already reflects a later change is left alone: the newer wins.
   */
  occurredAt?: Date;
}

export interface EnrollmentElement {
  individual_id: string;
  configuration: unknown;
}

/** What an enrollment command did: the job to poll (null when there was nothing left to do). */
export interface EnrollmentCommandResult {
  jobId: string | null;
  /** Individuals left alone because their enrollment reflects a later change (context.occurredAt). */
  stale: string[];
}

/** `POST /employer/benefits/{id}/individuals`: enroll (overwrite), grouped by effective date. */
export class EnrollIndividualsCommand extends Command<EnrollmentCommandResult> {
  constructor(
    readonly scope: BenefitScope,
    readonly benefitId: string,
    readonly elements: EnrollmentElement[],
    readonly context: EnrollmentCommandContext = {},
  ) {
    super();
  }
}

/** `DELETE /employer/benefits/{id}/individuals`: end enrollments from a date (default: today). */
export class UnenrollIndividualsCommand extends Command<EnrollmentCommandResult> {
  constructor(
    readonly scope: BenefitScope,
    readonly benefitId: string,
    readonly individualIds: string[],
    /** `YYYY-MM-DD`; absent or past → the request date. */
    readonly effectiveDate?: string,
    readonly context: EnrollmentCommandContext = {},
  ) {
    super();
  }
}
