import { BenefitJobType } from '../benefits/benefit-job-params';

/**
 * An ops task: benefit work an Assisted provider's staff do by hand, due in
 * ASSISTED_SLA_BUSINESS_DAYS business days. Completing or failing it resolves its manual job.
 */
/** `cancelled`: later requests took every individual of the task over before ops did it. */
export const OPS_TASK_STATUSES = ['open', 'completed', 'failed', 'cancelled'] as const;
export type OpsTaskStatus = (typeof OPS_TASK_STATUSES)[number];

/** Spec: "Assisted providers process creation of new deductions within a 2 business day SLA". */
export const ASSISTED_SLA_BUSINESS_DAYS = 2;

export interface OpsTask {
  id: string;
  connectionId: string;
  entityId: string;
  /** The manual job the task belongs to. */
  jobId: string;
  /** Enrollment work: the effective-date group the task is; null for benefit work (create, register, update). */
  groupId: string | null;
  type: BenefitJobType;
  /** The work's params (BenefitJobParams['params'] of `type`). */
  payload: Record<string, unknown>;
  status: OpsTaskStatus;
  /** `YYYY-MM-DD`: the last business day of the SLA. */
  dueDate: string;
  note: string | null;
  resolvedBy: string | null;
  resolvedAt: Date | null;
  createdAt: Date;
}

/** Where an open task stands against its SLA. */
export const DUE_STATES = ['on_time', 'due_today', 'overdue'] as const;
export type DueState = (typeof DUE_STATES)[number];

/**
 * The due state of an open task on `today` (`YYYY-MM-DD`); null for a resolved one, which is
 * no longer due. Dates in the same format compare as strings.
 */
export function dueStateOf(task: Pick<OpsTask, 'status' | 'dueDate'>, today: string): DueState | null {
  if (task.status !== 'open') return null;
  if (today < task.dueDate) return 'on_time';
  return today === task.dueDate ? 'due_today' : 'overdue';
}
