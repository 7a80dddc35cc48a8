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
  /**
   * The effective dates were computed by the service from a policy's schedule (escalations
   * years ahead), not written by a caller: the two-year bound on written dates does not apply.
   */
  scheduledByPolicy?: boolean;
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

/** One request of a batch (an HRIS saga's), with who asked for it. */
export interface EnrollmentRequestOrder {
  /** Whose request it is (an HRIS event): refusing one of an owner's requests refuses them all. */
  owner: string;
  /** What a refusal names first: `${what}: ${message}`. */
  what: string;
  scope: BenefitScope;
  benefitId: string;
  work: { operation: 'enroll'; elements: EnrollmentElement[] } | { operation: 'unenroll'; individualIds: string[]; effectiveDate?: string };
  context: EnrollmentCommandContext;
}

export interface EnrollmentRequestsResult {
  /** Per request, in order; null for a refused owner's. */
  results: (EnrollmentCommandResult | null)[];
  /** Owners refused, with why (the REST API's own 4xx message). */
  refused: Map<string, string>;
}

/**
 * Many enroll and unenroll requests opened together (one transaction, set-wise): each is
 * validated as its REST command would be; an owner with a refused request has none opened, the
 * others are.
 */
export class OpenEnrollmentRequestsCommand extends Command<EnrollmentRequestsResult> {
  constructor(readonly requests: readonly EnrollmentRequestOrder[]) {
    super();
  }
}
