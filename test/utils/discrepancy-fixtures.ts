import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { DiscrepancyKind, DiscrepancyStatus, StatementResultKind, TaxTreatment } from '../../src/domain/reconciliation/reconciliation.types';

/**
 * Rows of the reconciliation tables, written as the reconciliation job writes them, for the
 * suites that read and act on discrepancies without running payroll and a sync first. Ids of
 * connections, entities, individuals and benefits should be real ones (made through the API):
 * the ops API looks them up (names, re-apply), though the tables hold no foreign keys.
 */

export interface NewDiscrepancy {
  connectionId: string;
  entityId: string;
  /** Default: a fresh UUID, so no two fixtures share the live (benefit, individual, kind) slot. */
  benefitId?: string;
  individualId: string;
  kind: DiscrepancyKind;
  /** Default open. acknowledged needs a note (default one given); resolved gets resolved_at. */
  status?: DiscrepancyStatus;
  openedAt: Date;
  updatedAt?: Date;
  firstPaymentId?: string | null;
  firstPayDate?: string | null;
  lastPaymentId?: string | null;
  lastPayDate?: string | null;
  occurrences?: number;
  expected?: unknown;
  observed?: unknown;
  acknowledgedAt?: Date | null;
  acknowledgedBy?: string | null;
  note?: string | null;
  resolvedAt?: Date | null;
  resolution?: string | null;
}

/** The row as inserted, with every default filled in (what the ops API should answer). */
export type DiscrepancyRow = Required<NewDiscrepancy> & { id: string };

export async function insertDiscrepancy(db: DataSource, d: NewDiscrepancy): Promise<DiscrepancyRow> {
  const status = d.status ?? 'open';
  const paymentId = d.lastPaymentId === undefined ? `pay-${randomUUID().slice(0, 8)}` : d.lastPaymentId;
  const row: DiscrepancyRow = {
    id: randomUUID(),
    connectionId: d.connectionId,
    entityId: d.entityId,
    benefitId: d.benefitId ?? randomUUID(),
    individualId: d.individualId,
    kind: d.kind,
    status,
    openedAt: d.openedAt,
    updatedAt: d.updatedAt ?? d.openedAt,
    firstPaymentId: d.firstPaymentId === undefined ? paymentId : d.firstPaymentId,
    firstPayDate: d.firstPayDate === undefined ? d.openedAt.toISOString().slice(0, 10) : d.firstPayDate,
    lastPaymentId: paymentId,
    lastPayDate: d.lastPayDate === undefined ? d.openedAt.toISOString().slice(0, 10) : d.lastPayDate,
    occurrences: d.occurrences ?? 1,
    expected: d.expected === undefined ? { employee: 1_500, employer: 750, limit_room: null } : d.expected,
    observed: d.observed === undefined ? { employee: 0, employer: 0 } : d.observed,
    acknowledgedAt: d.acknowledgedAt === undefined ? (status === 'acknowledged' ? d.openedAt : null) : d.acknowledgedAt,
    acknowledgedBy: d.acknowledgedBy === undefined ? (status === 'acknowledged' ? 'someone' : null) : d.acknowledgedBy,
    note: d.note === undefined ? (status === 'acknowledged' ? 'Seen; waiting for the next payroll' : null) : d.note,
    resolvedAt: d.resolvedAt === undefined ? (status === 'resolved' ? d.updatedAt ?? d.openedAt : null) : d.resolvedAt,
    resolution: d.resolution === undefined ? (status === 'resolved' ? 'agreed' : null) : d.resolution,
  };
  await db.query(
    `INSERT INTO deduction_discrepancies (id, connection_id, entity_id, benefit_id, individual_id, kind, status, first_payment_id, first_pay_date,
       last_payment_id, last_pay_date, occurrences, expected, observed, opened_at, updated_at, acknowledged_at, acknowledged_by, note, resolved_at, resolution)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14::jsonb, $15, $16, $17, $18, $19, $20, $21)`,
    [
      row.id,
      row.connectionId,
      row.entityId,
      row.benefitId,
      row.individualId,
      row.kind,
      row.status,
      row.firstPaymentId,
      row.firstPayDate,
      row.lastPaymentId,
      row.lastPayDate,
      row.occurrences,
      row.expected === null ? null : JSON.stringify(row.expected),
      row.observed === null ? null : JSON.stringify(row.observed),
      row.openedAt,
      row.updatedAt,
      row.acknowledgedAt,
      row.acknowledgedBy,
      row.note,
      row.resolvedAt,
      row.resolution,
    ],
  );
  return row;
}

/** Resolves it as the reconciliation job does when a later statement agrees. */
export async function resolveDiscrepancy(db: DataSource, id: string, at: Date, resolution = 'agreed'): Promise<void> {
  await db.query(`UPDATE deduction_discrepancies SET status = 'resolved', resolved_at = $2, updated_at = $2, resolution = $3 WHERE id = $1`, [id, at, resolution]);
}

export interface NewResult {
  discrepancy: Pick<DiscrepancyRow, 'id' | 'entityId' | 'individualId' | 'benefitId'> | null;
  /** Needed when `discrepancy` is null. */
  scope?: { entityId: string; individualId: string; benefitId: string };
  paymentId?: string;
  payDate: string;
  regular?: boolean;
  result: StatementResultKind;
  expectedEmployee: number;
  observedEmployee: number;
  expectedEmployer?: number;
  observedEmployer?: number;
  limitRoom?: number | null;
  taxTreatment?: TaxTreatment;
  configuration?: unknown;
  jobId?: string | null;
  reconciledAt: Date;
}

export type ResultRow = Required<Omit<NewResult, 'discrepancy' | 'scope'>> & { entityId: string; individualId: string; benefitId: string; discrepancyId: string | null };

export async function insertResult(db: DataSource, r: NewResult): Promise<ResultRow> {
  const scope = r.discrepancy ?? r.scope;
  if (!scope) throw new Error('insertResult: a discrepancy or a scope is needed');
  const row: ResultRow = {
    entityId: scope.entityId,
    individualId: scope.individualId,
    benefitId: scope.benefitId,
    discrepancyId: r.discrepancy?.id ?? null,
    paymentId: r.paymentId ?? randomUUID(),
    payDate: r.payDate,
    regular: r.regular ?? true,
    result: r.result,
    expectedEmployee: r.expectedEmployee,
    observedEmployee: r.observedEmployee,
    expectedEmployer: r.expectedEmployer ?? 0,
    observedEmployer: r.observedEmployer ?? 0,
    limitRoom: r.limitRoom === undefined ? null : r.limitRoom,
    taxTreatment: r.taxTreatment ?? 'pre_tax',
    configuration: r.configuration === undefined ? null : r.configuration,
    jobId: r.jobId === undefined ? null : r.jobId,
    reconciledAt: r.reconciledAt,
  };
  await db.query(
    `INSERT INTO reconciliation_results (entity_id, payment_id, individual_id, benefit_id, pay_date, regular, result, expected_employee, observed_employee,
       expected_employer, observed_employer, limit_room, tax_treatment, configuration, job_id, discrepancy_id, reconciled_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb, $15, $16, $17)`,
    [
      row.entityId,
      row.paymentId,
      row.individualId,
      row.benefitId,
      row.payDate,
      row.regular,
      row.result,
      row.expectedEmployee,
      row.observedEmployee,
      row.expectedEmployer,
      row.observedEmployer,
      row.limitRoom,
      row.taxTreatment,
      row.configuration === null ? null : JSON.stringify(row.configuration),
      row.jobId,
      row.discrepancyId,
      row.reconciledAt,
    ],
  );
  return row;
}

/** The ops API's view of an inserted discrepancy (without recent_results or names). */
export function discrepancyJson(row: DiscrepancyRow): Record<string, unknown> {
  const iso = (value: Date | null) => (value === null ? null : value.toISOString());
  return {
    discrepancy_id: row.id,
    connection_id: row.connectionId,
    entity_id: row.entityId,
    benefit_id: row.benefitId,
    individual_id: row.individualId,
    kind: row.kind,
    status: row.status,
    first_payment_id: row.firstPaymentId,
    first_pay_date: row.firstPayDate,
    last_payment_id: row.lastPaymentId,
    last_pay_date: row.lastPayDate,
    occurrences: row.occurrences,
    expected: row.expected,
    observed: row.observed,
    opened_at: row.openedAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    acknowledged_at: iso(row.acknowledgedAt),
    acknowledged_by: row.acknowledgedBy,
    note: row.note,
    reapply_job_id: null,
    resolved_at: iso(row.resolvedAt),
    resolution: row.resolution,
  };
}

/** The ops API's view of an inserted result. */
export function resultJson(row: ResultRow): Record<string, unknown> {
  return {
    payment_id: row.paymentId,
    pay_date: row.payDate,
    entity_id: row.entityId,
    individual_id: row.individualId,
    benefit_id: row.benefitId,
    regular: row.regular,
    result: row.result,
    expected_employee: row.expectedEmployee,
    observed_employee: row.observedEmployee,
    expected_employer: row.expectedEmployer,
    observed_employer: row.observedEmployer,
    limit_room: row.limitRoom,
    tax_treatment: row.taxTreatment,
    configuration: row.configuration,
    job_id: row.jobId,
    reconciled_at: row.reconciledAt.toISOString(),
  };
}
