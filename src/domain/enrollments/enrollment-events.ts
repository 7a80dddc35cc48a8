import { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import { EnrollmentJobKind, EnrollmentJobStatus, EnrollmentOperation, IndividualResult } from './enrollment-change';

/**
 * What the enrollment ledger emits. Each commits with the rows it reports: the repository writes
 * them to the outbox (their versioned `benefits.events` messages) and hands them to in-transaction
 * subscribers (saga progress, Assisted tasks) before the commit.
 */
interface EnrollmentScope {
  connectionId: string;
  entityId: string;
  benefitId: string;
  at: Date;
}

export interface OpenedGroup {
  id: string;
  effectiveDate: string;
  items: { individualId: string; configuration: EnrollmentConfigurationParams | null }[];
}

/** A request was accepted: its job and one group per effective date wait for their dates. */
export class EnrollmentJobOpened {
  constructor(
    readonly scope: EnrollmentScope,
    readonly job: { id: string; kind: EnrollmentJobKind; operation: EnrollmentOperation },
    readonly groups: readonly OpenedGroup[],
    /**
     * The sagas the request's individuals belong to (HRIS sagas: the events of one batch may
     * share a job), each with its own; none: the request is a saga of its own.
     */
    readonly sagas: readonly { sagaId: string; individualIds: readonly string[] }[],
  ) {}
}

/** A later request took individuals out of a waiting group of an earlier job. */
export class EnrollmentChangesSuperseded {
  constructor(
    readonly scope: EnrollmentScope,
    readonly jobId: string,
    readonly groupId: string,
    readonly effectiveDate: string,
    readonly byJobId: string,
    readonly individualIds: readonly string[],
    /** Changes of the group still waiting after this; 0 when nothing of it is left to do. */
    readonly remaining: number,
  ) {}
}

/** An Assisted provider's staff are given the group as a task: its date came, and it goes first. */
export class EnrollmentGroupHandedToOps {
  constructor(
    readonly scope: EnrollmentScope,
    readonly jobId: string,
    readonly groupId: string,
    readonly operation: EnrollmentOperation,
    readonly effectiveDate: string,
    readonly items: readonly { individualId: string; configuration: EnrollmentConfigurationParams | null }[],
  ) {}
}

/** A group reached the provider (or was given up on, or failed by ops): each individual's result. */
export class EnrollmentGroupProcessed {
  constructor(
    readonly scope: EnrollmentScope,
    readonly jobId: string,
    readonly groupId: string,
    readonly operation: EnrollmentOperation,
    readonly effectiveDate: string,
    readonly results: readonly IndividualResult[],
  ) {}

  get succeeded(): number {
    return this.results.filter((r) => r.code === 200).length;
  }
}

/** The job ended: no change of it waits any more. */
export class EnrollmentJobEnded {
  constructor(
    readonly scope: EnrollmentScope,
    readonly job: { id: string; kind: EnrollmentJobKind; operation: EnrollmentOperation },
    readonly status: Exclude<EnrollmentJobStatus, 'pending'>,
    readonly counts: { succeeded: number; failed: number; superseded: number },
    /** Why it ended in error, when a person said so (an Assisted task failed with this note). */
    readonly reason: string | null,
  ) {}

  /** Every individual was taken over by later requests: cancelled, not failed. */
  get superseded(): boolean {
    return this.counts.superseded > 0 && this.counts.succeeded === 0 && this.counts.failed === 0;
  }
}

export type EnrollmentEvent =
  | EnrollmentJobOpened
  | EnrollmentChangesSuperseded
  | EnrollmentGroupHandedToOps
  | EnrollmentGroupProcessed
  | EnrollmentJobEnded;
