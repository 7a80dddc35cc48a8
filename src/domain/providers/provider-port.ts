import {
  CompanyRecord,
  DirectoryEntry,
  EmploymentRecord,
  IndividualRecord,
  PayGroupRecord,
  PaymentRecord,
  PayStatementRecord,
} from '../employer/unified-records';

/**
 * The employer behind one entity of a connection, as a provider adapter needs to address it.
 * In the sandbox payroll system an entity is one employer (company); its data is generated
 * from `seed` and `employeeSize` the first time it is reached.
 */
export interface EmployerRef {
  connectionId: string;
  entityId: string;
  /** Display name of the entity, used as the company's legal name by the sandbox. */
  entityName: string;
  providerId: string;
  authenticationType: string;
  /** Employees to generate (sandbox): default 20, at most 10,000. */
  employeeSize: number;
  /**
   * A sandbox application's connection: always the simulated payroll system. Only a connection
   * that is not (false) can reach a real provider; left out, the simulation is meant.
   */
  sandbox?: boolean;
}

export interface Page {
  limit: number;
  offset: number;
}

/** A page of a longer list: `count` is the total of the whole query (spec: paging.count). */
export interface Paged<T> {
  count: number;
  offset: number;
  items: T[];
}

/** One piece of a full export, in the order a sync stores them. */
export type SnapshotBatch =
  | { kind: 'company'; records: CompanyRecord[] }
  | { kind: 'individual'; records: IndividualRecord[] }
  | { kind: 'employment'; records: EmploymentRecord[] }
  | { kind: 'pay_group'; records: PayGroupRecord[] }
  | { kind: 'payment'; records: PaymentRecord[] }
  | { kind: 'pay_statement'; records: { payment_id: string; pay_date: string; statement: PayStatementRecord }[] };

/** A deduction as the provider runs it (company-wide; `company_contribution` is the match). */
export interface ProviderBenefit {
  benefit_id: string;
  type: string;
  description: string;
  frequency: 'every_paycheck' | 'monthly' | 'one_time' | null;
  company_contribution: { type: 'match'; tiers: { match: number; threshold: number }[] } | null;
}

/** One individual's configuration of a benefit at the provider (amounts in cents or basis points). */
export interface ProviderEnrollmentConfiguration {
  employee_deduction: { type: 'fixed' | 'percent'; amount: number } | null;
  company_contribution: { type: 'fixed' | 'percent'; amount: number } | null;
  annual_maximum: number | null;
  catch_up: boolean;
  hsa_contribution_limit: 'individual' | 'family' | null;
}

export interface ProviderEnrollment {
  benefit_id: string;
  individual_id: string;
  /** `YYYY-MM-DD` from which this configuration applies. */
  effective_date: string;
  configuration: ProviderEnrollmentConfiguration;
  /** `YYYY-MM-DD` from which the enrollment no longer applies, or null. */
  ended_on: string | null;
}

/** How the provider answered for one individual of an enroll or unenroll call. */
export interface ProviderIndividualResult {
  individual_id: string;
  /**
   * 200 done; 404 the provider has no such individual; 422 the provider refused this individual's
   * change (its reason in `message`). 404 and 422 are permanent, per-individual errors.
   */
  code: 200 | 404 | 422;
  message?: string;
}

/** One individual's change for applyChanges: enroll with a configuration, or end (null), from its date on. */
export interface ProviderChange {
  individual_id: string;
  effective_date: string;
  configuration: ProviderEnrollmentConfiguration | null;
}

/** How the provider answered one change of applyChanges. */
export interface ProviderChangeResult extends ProviderIndividualResult {
  effective_date: string;
}

/** `POST /forward`: a raw request passed to the provider's own API. */
export interface ForwardRequest {
  method: string;
  route: string;
  data?: unknown;
  headers?: Record<string, string>;
  params?: Record<string, unknown>;
}

export interface ForwardResponse {
  data: unknown;
  headers: Record<string, string>;
  status_code: number;
}

/**
 * What the service asks of a payroll provider. Every call is live: it takes the provider's
 * latency and may fail with a `provider_error`/`provider_timeout` DomainError. Records come
 * back in the Unified API's shape; an id the provider does not know is left out of a batch
 * answer (the caller reports it per item), and a lookup of one unknown id returns undefined.
 */
export interface ProviderPort {
  company(ref: EmployerRef): Promise<CompanyRecord>;
  directory(ref: EmployerRef, page: Page): Promise<Paged<DirectoryEntry>>;
  individuals(ref: EmployerRef, ids: string[]): Promise<IndividualRecord[]>;
  employments(ref: EmployerRef, ids: string[]): Promise<EmploymentRecord[]>;
  /** Payments whose pay date is within [startDate, endDate], oldest first. */
  payments(ref: EmployerRef, startDate: string, endDate: string): Promise<PaymentRecord[]>;
  /** Statements of one payment ordered by individual id; undefined for an unknown payment. */
  payStatements(ref: EmployerRef, paymentId: string, page: Page): Promise<Paged<PayStatementRecord> | undefined>;
  payGroups(ref: EmployerRef): Promise<PayGroupRecord[]>;
  payGroup(ref: EmployerRef, id: string): Promise<PayGroupRecord | undefined>;
  /** Everything, in batches, for a data sync. One live call's latency, however many batches. */
  snapshot(ref: EmployerRef): AsyncIterable<SnapshotBatch>;
  forward(ref: EmployerRef, request: ForwardRequest): Promise<ForwardResponse>;

  /** The deductions the provider runs for the employer, oldest first. */
  benefits(ref: EmployerRef): Promise<ProviderBenefit[]>;
  benefit(ref: EmployerRef, benefitId: string): Promise<ProviderBenefit | undefined>;
  /**
   * Creates the deduction under the given `benefit_id`. Idempotent: a benefit of that id already
   * there is answered as it is, so a retried call after a crash creates nothing twice.
   */
  createBenefit(ref: EmployerRef, benefit: ProviderBenefit): Promise<ProviderBenefit>;
  /** Changes the description; undefined for an unknown benefit. */
  updateBenefit(ref: EmployerRef, benefitId: string, patch: { description: string }): Promise<ProviderBenefit | undefined>;
  /**
   * Enrolls (overwrite: one enrollment per benefit and individual, its configuration replaced
   * from the effective date on). Idempotent. Unknown individuals are answered 404 each; the
   * others are enrolled. Throws invalid_request for an unknown benefit.
   */
  enroll(
    ref: EmployerRef,
    benefitId: string,
    elements: { individual_id: string; effective_date: string; configuration: ProviderEnrollmentConfiguration }[],
  ): Promise<ProviderIndividualResult[]>;
  /** Ends the enrollments from `onDate` on. Idempotent; an individual without one is answered 404. */
  unenroll(ref: EmployerRef, benefitId: string, individualIds: string[], onDate: string): Promise<ProviderIndividualResult[]>;
  /**
   * Many individuals' changes of one benefit in one call (the effective-date groups of a batch,
   * enrolls and ends alike, each individual at most once): answered per change, in order, as
   * enroll and unenroll answer them. Idempotent; throws invalid_request for an unknown benefit
   * when any change is an enroll.
   */
  applyChanges(ref: EmployerRef, benefitId: string, changes: ProviderChange[]): Promise<ProviderChangeResult[]>;
  /** Enrollments in force on `onDate`, optionally only of some individuals. */
  enrollments(ref: EmployerRef, benefitId: string, onDate: string, individualIds?: string[]): Promise<ProviderEnrollment[]>;
}

export const PROVIDER_PORT = Symbol('ProviderPort');

/** Default `employee_size` of a sandbox employer (DECISIONS.md: default 20, at most 10,000). */
export const DEFAULT_EMPLOYEE_SIZE = 20;

/** The employer an entity of a connection stands for. */
export function employerRefOf(
  connection: { id: string; providerId: string; authenticationType: string; employeeSize: number | null; sandbox: boolean },
  entity: { id: string; name: string },
): EmployerRef {
  return {
    connectionId: connection.id,
    entityId: entity.id,
    entityName: entity.name,
    providerId: connection.providerId,
    authenticationType: connection.authenticationType,
    employeeSize: connection.employeeSize ?? DEFAULT_EMPLOYEE_SIZE,
    sandbox: connection.sandbox,
  };
}
