/**
 * The HRIS events benefits platforms publish on `hris.events` (key = connection_id). `id` is the
 * idempotency key within the event's connection: a redelivered event is acknowledged and ignored.
 */
export const HRIS_EVENT_TYPES = ['EmployeeHired', 'ContributionChanged', 'EmployeeTerminated'] as const;
export type HrisEventType = (typeof HRIS_EVENT_TYPES)[number];

/** The envelope versions this service reads, per type. */
export const HRIS_EVENT_VERSIONS: Record<HrisEventType, readonly number[]> = {
  EmployeeHired: [1],
  ContributionChanged: [1],
  EmployeeTerminated: [1],
};

export interface EmployeeHiredData {
  individual_id: string;
  /** YYYY-MM-DD */
  start_date: string;
  dob?: string;
}

export interface ContributionChangedData {
  individual_id: string;
  benefit_id: string;
  /** As an enroll body's `configuration` (effective_date may be here or beside it). */
  configuration: Record<string, unknown>;
  effective_date?: string;
}

export interface EmployeeTerminatedData {
  individual_id: string;
  /** YYYY-MM-DD: the last day employed; enrollments end from this date. */
  end_date: string;
}

interface Envelope<T extends HrisEventType, D> {
  id: string;
  type: T;
  version: number;
  /** ISO 8601 instant: orders changes of one (benefit, individual). */
  occurred_at: string;
  connection_id: string;
  entity_id: string;
  data: D;
}

export type EmployeeHired = Envelope<'EmployeeHired', EmployeeHiredData>;
export type ContributionChanged = Envelope<'ContributionChanged', ContributionChangedData>;
export type EmployeeTerminated = Envelope<'EmployeeTerminated', EmployeeTerminatedData>;
export type HrisEvent = EmployeeHired | ContributionChanged | EmployeeTerminated;
