import { ChangeStatus, EnrollmentChange, EnrollmentGroup, EnrollmentJob } from './enrollment-change';
import { EnrollmentLedger, IndividualEnrollment, LedgerBenefit } from './enrollment-ledger';

/** A group about to be worked, with what working it needs. */
export interface GroupWork {
  ledger: EnrollmentLedger;
  group: EnrollmentGroup;
  /** Its changes still waiting, in request order. */
  changes: EnrollmentChange[];
  job: EnrollmentJob;
}

/**
 * Where enrollment ledgers are kept. Every method runs in the ambient unit of work (the
 * command's transaction). Loading for a change locks the individuals it names first, in one
 * order for every caller (so two changes of one individual serialize and no two callers wait
 * on each other in a cycle), then the jobs their waiting changes belong to.
 */
export interface EnrollmentLedgerRepository {
  /** One ledger per benefit, holding the named individuals, locked. */
  lockForRequests(requests: readonly { benefit: LedgerBenefit; individualIds: readonly string[] }[]): Promise<Map<string, EnrollmentLedger>>;
  /** The ledgers holding these groups and their waiting individuals, locked; by group id (unknown groups are left out). */
  lockForGroups(groupIds: readonly string[]): Promise<Map<string, GroupWork>>;
  /**
   * As lockForGroups, without the individuals' enrollment rows: enough to check the groups'
   * order and claim them before a provider call, not to record results.
   */
  lockGroupsToClaim(groupIds: readonly string[]): Promise<Map<string, GroupWork>>;
  /** As lockForGroups, without locks: for checks before a provider call. */
  readGroups(groupIds: readonly string[]): Promise<Map<string, GroupWork>>;
  /**
   * Writes what the ledgers changed (jobs, groups, changes, rows, ended jobs' results) and their
   * events (outbox and in-transaction subscribers), in the ambient transaction.
   */
  save(ledgers: Iterable<EnrollmentLedger>): Promise<void>;
  /**
   * How each individual of these jobs came out, by job and individual: `done` when any of its
   * changes in the job (one per date) succeeded, else `failed` when any failed, else `superseded`
   * (`waiting` while one still waits).
   */
  individualOutcomes(jobIds: readonly string[]): Promise<Map<string, Map<string, ChangeStatus>>>;
  /** The benefit's enrollments (optionally of some individuals), without locks: for reads. */
  individualsOf(benefitId: string, individualIds?: readonly string[]): Promise<IndividualEnrollment[]>;
  /** Each individual's enrollments in their entity's benefits, by `entity/individual` then benefit id: for terminations. */
  enrollmentsOfIndividuals(individuals: readonly { entityId: string; individualId: string }[]): Promise<Map<string, Map<string, IndividualEnrollment>>>;
  /**
   * Work put back to wait for these benefits' creation at the provider (a group whose date has
   * come, or an Assisted group's completed task to apply): due now that the creation has ended,
   * in the ambient transaction (the one that ends it).
   */
  wakeGroupsWaitingForBenefits(benefitIds: readonly string[]): Promise<void>;
}

export const ENROLLMENT_LEDGER_REPOSITORY = Symbol('EnrollmentLedgerRepository');
