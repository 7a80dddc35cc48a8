import { BenefitJobParams, EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import { EnrollmentGroup, EnrollmentJobKind, EnrollmentOperation, IndividualResult } from '../enrollments/enrollment-change';
import { Job, JobKind } from '../jobs/job';
import { EmployerRef, ProviderBenefit } from './provider-port';

/** The employer a piece of work is for. */
export interface WorkScope {
  connectionId: string;
  entityId: string;
}

/** An effective-date group whose date has come, with the changes it still carries. */
export interface GroupToWork {
  groupId: string;
  operation: EnrollmentOperation;
  effectiveDate: string;
  changes: readonly { individualId: string; configuration: EnrollmentConfigurationParams | null }[];
}

/** How a group's date came out: the provider's answers, or the group handed to people. */
export type GroupWorkOutcome = { results: IndividualResult[] } | 'handed_to_ops';

/**
 * How a provider's benefit and enrollment work is done, chosen once per connection from the
 * catalogue: Automated providers are called by the service's workers; Assisted providers' staff
 * do the work by hand from ops tasks. Everything that differs between the two is here, so the
 * services and the enrollment lifecycle hold no branch on it.
 */
export interface ProviderBehaviour {
  readonly mode: 'automated' | 'assisted';
  /** The pollable kind of the jobs carrying benefit and enrollment work (/jobs/automated or /jobs/manual). */
  readonly jobKind: EnrollmentJobKind;
  /** `POST /employer/benefits/register` is for providers whose staff set benefits up by hand. */
  readonly registersBenefits: boolean;
  /** Data syncs: the kind of job they run as, and whether clients may enqueue them on `/jobs/automated`. */
  readonly syncs: { jobKind: JobKind; onRequest: boolean };

  /** The deductions the provider runs, live; null where it has no API and the service's record is the truth. */
  benefitsAtProvider(ref: EmployerRef): Promise<ProviderBenefit[] | null>;
  /** One deduction, live (undefined: not there); null where it cannot be asked. */
  benefitAtProvider(ref: EmployerRef, benefitId: string): Promise<ProviderBenefit | undefined | null>;
  /**
   * Opens benefit work (create, register, update) in the ambient transaction: a job the workers
   * run, or a manual job with its ops task.
   */
  openBenefitWork(scope: WorkScope, work: BenefitJobParams): Promise<Job>;
  /**
   * New effective-date groups (today or later, in the ambient transaction): which get a work job
   * due on their date, and which are handed to ops at once.
   */
  planGroups(groups: readonly EnrollmentGroup[], today: string): { scheduled: EnrollmentGroup[]; handedToOps: EnrollmentGroup[] };
  /**
   * Groups of one benefit whose date has come (each individual in at most one): submitted in one
   * provider call (the provider's per-individual answers, by group), or handed to ops.
   */
  workGroups(ref: EmployerRef, benefitId: string, groups: readonly GroupToWork[]): Promise<Map<string, GroupWorkOutcome>>;
  /** Enrollments in force on `date`: live from the provider, or the service's record of what the provider holds. */
  enrollmentsInForce(ref: EmployerRef, benefitId: string, date: string, individualIds?: readonly string[]): Promise<{ individualId: string; configuration: EnrollmentConfigurationParams }[]>;
}

/** Picks the behaviour of a connection's provider. */
export interface ProviderBehaviours {
  of(connection: { providerId: string; authenticationType: string; manual: boolean }): ProviderBehaviour;
}

export const PROVIDER_BEHAVIOURS = Symbol('ProviderBehaviours');
