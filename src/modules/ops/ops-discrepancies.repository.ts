import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { DiscrepancyKind, DiscrepancyStatus } from '../../domain/reconciliation/reconciliation.types';
import { DISCREPANCY_COLUMNS, discrepancyOf, DiscrepancyRow } from '../../infrastructure/database/repositories/discrepancy-rows';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';
import { DiscrepancyResult, MAX_RECENT_RESULTS, OpsDiscrepancy } from './dto/discrepancy.dto';

export interface OpsDiscrepancyFilter {
  connectionId?: string;
  entityId?: string;
  benefitId?: string;
  individualId?: string;
  kinds?: readonly DiscrepancyKind[];
  statuses: readonly DiscrepancyStatus[];
}

interface ResultRow {
  entity_id: string;
  payment_id: string;
  individual_id: string;
  benefit_id: string;
  pay_date: string;
  regular: boolean;
  result: string;
  // bigint columns come back as text.
  expected_employee: string;
  observed_employee: string;
  expected_employer: string;
  observed_employer: string;
  limit_room: string | null;
  tax_treatment: string;
  configuration: unknown;
  job_id: string | null;
  reconciled_at: Date;
}

const instant = (value: Date | string) => new Date(value);

function resultOf(row: ResultRow): DiscrepancyResult {
  return {
    entityId: row.entity_id,
    paymentId: row.payment_id,
    individualId: row.individual_id,
    benefitId: row.benefit_id,
    payDate: row.pay_date,
    regular: row.regular,
    result: row.result,
    expectedEmployee: Number(row.expected_employee),
    observedEmployee: Number(row.observed_employee),
    expectedEmployer: Number(row.expected_employer),
    observedEmployer: Number(row.observed_employer),
    limitRoom: row.limit_room === null ? null : Number(row.limit_room),
    taxTreatment: row.tax_treatment,
    configuration: row.configuration,
    jobId: row.job_id,
    reconciledAt: instant(row.reconciled_at),
  };
}

/**
 * Deduction discrepancies of every connection, for the ops API. The reconciliation job owns
 * their lifecycle (open, update, resolve); ops only acknowledge them and record re-applies.
 */
@Injectable()
export class OpsDiscrepanciesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Newest opened first, with the total for paging. */
  async list(filter: OpsDiscrepancyFilter, page: { limit: number; offset: number }): Promise<{ count: number; discrepancies: OpsDiscrepancy[] }> {
    const where = new SqlFilter();
    where.and((p) => `d.status = ANY(${p}::text[])`, [...filter.statuses]);
    if (filter.kinds) where.and((p) => `d.kind = ANY(${p}::text[])`, [...filter.kinds]);
    if (filter.connectionId) where.and((p) => `d.connection_id = ${p}`, filter.connectionId);
    if (filter.entityId) where.and((p) => `d.entity_id = ${p}`, filter.entityId);
    if (filter.benefitId) where.and((p) => `d.benefit_id = ${p}`, filter.benefitId);
    if (filter.individualId) where.and((p) => `lower(d.individual_id) = ${p}`, filter.individualId.toLowerCase());
    const { count, rows } = await countedPage<DiscrepancyRow>(
      this.dataSource,
      { from: 'deduction_discrepancies d', select: `SELECT ${DISCREPANCY_COLUMNS} FROM deduction_discrepancies d`, where, orderBy: 'd.opened_at DESC, d.id' },
      page,
    );
    return { count, discrepancies: rows.map(discrepancyOf) };
  }

  /** One discrepancy; `lock` holds its row until the transaction of `manager` ends. */
  async find(id: string, manager: EntityManager = this.dataSource.manager, { lock = false } = {}): Promise<OpsDiscrepancy | undefined> {
    const [row]: DiscrepancyRow[] = await manager.query(`SELECT ${DISCREPANCY_COLUMNS} FROM deduction_discrepancies d WHERE d.id = $1 ${lock ? 'FOR UPDATE' : ''}`, [id]);
    return row && discrepancyOf(row);
  }

  /** The statements that fed it, newest pay date first. */
  async recentResults(id: string, manager: EntityManager = this.dataSource.manager): Promise<DiscrepancyResult[]> {
    const rows: ResultRow[] = await manager.query(
      `SELECT entity_id, payment_id, individual_id, benefit_id, to_char(pay_date, 'YYYY-MM-DD') AS pay_date, regular, result,
         expected_employee, observed_employee, expected_employer, observed_employer, limit_room, tax_treatment, configuration, job_id, reconciled_at
       FROM reconciliation_results WHERE discrepancy_id = $1
       ORDER BY pay_date DESC, reconciled_at DESC, payment_id DESC LIMIT $2`,
      [id, MAX_RECENT_RESULTS],
    );
    return rows.map(resultOf);
  }

  /**
   * Acknowledged with the note: an open one also records who and when; an acknowledged one
   * only takes the new note (its first acknowledgement stands).
   */
  async acknowledge(id: string, ack: { by: string; at: Date; note: string }, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE deduction_discrepancies SET
         acknowledged_at = CASE WHEN status = 'open' THEN $2 ELSE acknowledged_at END,
         acknowledged_by = CASE WHEN status = 'open' THEN $3 ELSE acknowledged_by END,
         status = 'acknowledged', note = $4, updated_at = $2
       WHERE id = $1 AND status <> 'resolved'`,
      [id, ack.at, ack.by, ack.note],
    );
  }

  async recordReapply(id: string, jobId: string, at: Date, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE deduction_discrepancies SET reapply_job_id = $2, updated_at = $3 WHERE id = $1`, [id, jobId, at]);
  }
}
