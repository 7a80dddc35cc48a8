import type { DiscrepancyKind, DiscrepancyStatus } from '../../../domain/reconciliation/reconciliation.types';

/**
 * `deduction_discrepancies` as the reads see it (the client's /reconciliation API and the ops
 * API alike): the columns to select (alias `d`), the row they give, the record it makes, and the
 * fields both answers share. The reconciliation job writes the table (src/modules/reconciliation).
 */
export interface DiscrepancyRecord {
  id: string;
  connectionId: string;
  entityId: string;
  benefitId: string;
  individualId: string;
  kind: DiscrepancyKind;
  status: DiscrepancyStatus;
  firstPaymentId: string | null;
  /** `YYYY-MM-DD` */
  firstPayDate: string | null;
  lastPaymentId: string | null;
  lastPayDate: string | null;
  occurrences: number;
  expected: unknown;
  observed: unknown;
  openedAt: Date;
  updatedAt: Date;
  acknowledgedAt: Date | null;
  acknowledgedBy: string | null;
  note: string | null;
  reapplyJobId: string | null;
  resolvedAt: Date | null;
  resolution: string | null;
}

export interface DiscrepancyRow {
  id: string;
  connection_id: string;
  entity_id: string;
  benefit_id: string;
  individual_id: string;
  kind: DiscrepancyKind;
  status: DiscrepancyStatus;
  first_payment_id: string | null;
  first_pay_date: string | null;
  last_payment_id: string | null;
  last_pay_date: string | null;
  occurrences: number;
  expected: unknown;
  observed: unknown;
  opened_at: Date;
  updated_at: Date;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
  note: string | null;
  reapply_job_id: string | null;
  resolved_at: Date | null;
  resolution: string | null;
}

// Calendar dates as text: a date must not pass through a JS Date and a time zone.
export const DISCREPANCY_COLUMNS = `d.id, d.connection_id, d.entity_id, d.benefit_id, d.individual_id, d.kind, d.status,
  d.first_payment_id, to_char(d.first_pay_date, 'YYYY-MM-DD') AS first_pay_date,
  d.last_payment_id, to_char(d.last_pay_date, 'YYYY-MM-DD') AS last_pay_date,
  d.occurrences, d.expected, d.observed, d.opened_at, d.updated_at, d.acknowledged_at, d.acknowledged_by, d.note,
  d.reapply_job_id, d.resolved_at, d.resolution`;

const instantOrNull = (value: Date | string | null) => (value === null ? null : new Date(value));

export function discrepancyOf(row: DiscrepancyRow): DiscrepancyRecord {
  return {
    id: row.id,
    connectionId: row.connection_id,
    entityId: row.entity_id,
    benefitId: row.benefit_id,
    individualId: row.individual_id,
    kind: row.kind,
    status: row.status,
    firstPaymentId: row.first_payment_id,
    firstPayDate: row.first_pay_date,
    lastPaymentId: row.last_payment_id,
    lastPayDate: row.last_pay_date,
    occurrences: row.occurrences,
    expected: row.expected,
    observed: row.observed,
    openedAt: new Date(row.opened_at),
    updatedAt: new Date(row.updated_at),
    acknowledgedAt: instantOrNull(row.acknowledged_at),
    acknowledgedBy: row.acknowledged_by,
    note: row.note,
    reapplyJobId: row.reapply_job_id,
    resolvedAt: instantOrNull(row.resolved_at),
    resolution: row.resolution,
  };
}

/** The fields every answer about a discrepancy has, snake_case, instants as ISO 8601. */
export function discrepancyFields(d: DiscrepancyRecord) {
  const iso = (at: Date | null) => (at === null ? null : at.toISOString());
  return {
    benefit_id: d.benefitId,
    individual_id: d.individualId,
    kind: d.kind,
    status: d.status,
    first_payment_id: d.firstPaymentId,
    first_pay_date: d.firstPayDate,
    last_payment_id: d.lastPaymentId,
    last_pay_date: d.lastPayDate,
    occurrences: d.occurrences,
    expected: d.expected,
    observed: d.observed,
    opened_at: d.openedAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    acknowledged_at: iso(d.acknowledgedAt),
    acknowledged_by: d.acknowledgedBy,
    note: d.note,
    reapply_job_id: d.reapplyJobId,
    resolved_at: iso(d.resolvedAt),
    resolution: d.resolution,
  };
}
