import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Page, Paged } from '../../domain/providers/provider-port';
import {
  DiscrepancyKind,
  DiscrepancyStatus,
  StatementResultKind,
  TaxTreatment,
} from '../../domain/reconciliation/reconciliation.types';
import { DISCREPANCY_COLUMNS, discrepancyOf, DiscrepancyRecord, DiscrepancyRow } from '../../infrastructure/database/repositories/discrepancy-rows';
import { countedPage, SqlFilter, SqlRunner } from '../../infrastructure/database/sql-filter';

/**
 * Reads of what payroll reconciliation wrote (migration 1798200000000): discrepancies, per
 * statement results, contributions per pay date and the last run. Every read is scoped to the
 * token's connection and its one entity: `deduction_discrepancies` and `reconciliation_runs`
 * carry both; the other tables carry the entity, which belongs to exactly one connection.
 *
 * Ids are compared as stored, lower case (callers lower-case what they are given). Text ids are
 * ordered byte-wise (`COLLATE "C"`), as the synced employer reads order theirs, so pages do not
 * depend on the database's collation. Amounts are bigint cents, read as text and made numbers.
 */
export interface ReconciliationScope {
  connectionId: string;
  entityId: string;
}

export type { DiscrepancyRecord };

export interface DiscrepancyFilter {
  benefitId?: string;
  individualId?: string;
  paymentId?: string;
  kinds?: DiscrepancyKind[];
  statuses?: DiscrepancyStatus[];
}

export interface StatementResultRecord {
  individualId: string;
  benefitId: string;
  result: StatementResultKind;
  expectedEmployee: number;
  observedEmployee: number;
  expectedEmployer: number;
  observedEmployer: number;
  limitRoom: number | null;
  taxTreatment: TaxTreatment;
  discrepancyId: string | null;
}

export interface StatementResultFilter {
  benefitId?: string;
  individualId?: string;
  results?: StatementResultKind[];
}

export interface ContributionAmounts {
  employeePreTax: number;
  employeeRoth: number;
  employeeAfterTax: number;
  employer: number;
}

export interface ContributionRecord {
  individualId: string;
  benefitId: string;
  /** From the service's benefits; null for a benefit it does not know. */
  benefitType: string | null;
  benefitDescription: string | null;
  thisPayment: ContributionAmounts;
  /** The calendar year of the pay date up to this payment, included (by pay date, then payment id). */
  yearToDate: ContributionAmounts;
}

export interface ContributionFilter {
  benefitId?: string;
}

/** A payment as reconciliation saw it. */
export interface ReconciledPayment {
  paymentId: string;
  /** `YYYY-MM-DD` */
  payDate: string;
}

export interface ReconciliationStatusRecord {
  /** Undefined before the entity's first reconciliation. */
  lastRun?: { syncJobId: string | null; reconciledAt: Date; statements: number };
  open: Partial<Record<DiscrepancyKind, number>>;
  acknowledged: number;
}

/** Rows per statement of a whole-payment export: bounds the rows in memory at once. */
export const EXPORT_BATCH = 1_000;

interface ResultRow {
  individual_id: string;
  benefit_id: string;
  result: StatementResultKind;
  expected_employee: string;
  observed_employee: string;
  expected_employer: string;
  observed_employer: string;
  limit_room: string | null;
  tax_treatment: TaxTreatment;
  discrepancy_id: string | null;
}

const RESULT_COLUMNS = `r.individual_id, r.benefit_id, r.result, r.expected_employee::text AS expected_employee,
  r.observed_employee::text AS observed_employee, r.expected_employer::text AS expected_employer,
  r.observed_employer::text AS observed_employer, r.limit_room::text AS limit_room, r.tax_treatment, r.discrepancy_id`;

const BY_PERSON_AND_BENEFIT = `r.individual_id COLLATE "C", r.benefit_id`;

interface ContributionRow {
  individual_id: string;
  benefit_id: string;
  benefit_type: string | null;
  benefit_description: string | null;
  tax_treatment: TaxTreatment;
  employee: string;
  employer: string;
  ytd_pre_tax: string;
  ytd_roth: string;
  ytd_after_tax: string;
  ytd_employer: string;
}

/**
 * `page` is a subquery of this payment's results (alias `r`), already cut to a page: the
 * year-to-date sums run only for its rows. A person's results of the year come from the
 * (entity, individual, pay date) index; the same pay date is ordered by payment id.
 */
const contributionsOf = (page: string) => `
  SELECT r.individual_id, r.benefit_id, b.type AS benefit_type, b.description AS benefit_description, r.tax_treatment,
         r.observed_employee::text AS employee, r.observed_employer::text AS employer,
         y.pre_tax::text AS ytd_pre_tax, y.roth::text AS ytd_roth, y.after_tax::text AS ytd_after_tax, y.employer::text AS ytd_employer
  FROM (${page}) r
  LEFT JOIN benefits b ON b.id = r.benefit_id AND b.entity_id = r.entity_id
  CROSS JOIN LATERAL (
    SELECT coalesce(sum(h.observed_employee) FILTER (WHERE h.tax_treatment = 'pre_tax'), 0) AS pre_tax,
           coalesce(sum(h.observed_employee) FILTER (WHERE h.tax_treatment = 'roth'), 0) AS roth,
           coalesce(sum(h.observed_employee) FILTER (WHERE h.tax_treatment = 'after_tax'), 0) AS after_tax,
           coalesce(sum(h.observed_employer), 0) AS employer
    FROM reconciliation_results h
    WHERE h.entity_id = r.entity_id AND h.individual_id = r.individual_id AND h.benefit_id = r.benefit_id
      AND h.pay_date >= date_trunc('year', r.pay_date)::date AND h.pay_date <= r.pay_date
      AND (h.pay_date, h.payment_id COLLATE "C") <= (r.pay_date, r.payment_id COLLATE "C")
  ) y
  ORDER BY ${BY_PERSON_AND_BENEFIT}`;

@Injectable()
export class ReconciliationReadsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Newest opened first (then by id), with the total for paging. */
  async discrepancies(scope: ReconciliationScope, filter: DiscrepancyFilter, page: Page): Promise<Paged<DiscrepancyRecord>> {
    const where = discrepancyScope(scope);
    if (filter.benefitId !== undefined) where.and((p) => `d.benefit_id = ${p}::uuid`, filter.benefitId);
    if (filter.individualId !== undefined) where.and((p) => `d.individual_id = ${p}`, filter.individualId);
    if (filter.paymentId !== undefined) {
      where.and(
        (p) => `d.id IN (SELECT r.discrepancy_id FROM reconciliation_results r WHERE r.entity_id = d.entity_id AND r.payment_id = ${p})`,
        filter.paymentId,
      );
    }
    if (filter.kinds !== undefined) where.and((p) => `d.kind = ANY(${p}::text[])`, filter.kinds);
    if (filter.statuses !== undefined) where.and((p) => `d.status = ANY(${p}::text[])`, filter.statuses);
    const { count, rows } = await countedPage<DiscrepancyRow>(
      this.dataSource,
      {
        from: 'deduction_discrepancies d',
        select: `SELECT ${DISCREPANCY_COLUMNS} FROM deduction_discrepancies d`,
        where,
        orderBy: 'd.opened_at DESC, d.id',
      },
      page,
    );
    return { count, offset: page.offset, items: rows.map(discrepancyOf) };
  }

  /** The discrepancy of this scope; undefined for another connection's or entity's, or none. */
  async discrepancy(scope: ReconciliationScope, id: string): Promise<DiscrepancyRecord | undefined> {
    const where = discrepancyScope(scope).and((p) => `d.id = ${p}::uuid`, id);
    const rows: DiscrepancyRow[] = await this.dataSource.query(`SELECT ${DISCREPANCY_COLUMNS} FROM deduction_discrepancies d ${where.clause}`, where.params);
    return rows[0] && discrepancyOf(rows[0]);
  }

  /** The payment if the entity has a reconciled statement of it (its earliest pay date, should two differ). */
  async reconciledPayment(entityId: string, paymentId: string, db: SqlRunner = this.dataSource): Promise<ReconciledPayment | undefined> {
    const [row] = (await db.query(
      `SELECT to_char(min(pay_date), 'YYYY-MM-DD') AS pay_date FROM reconciled_statements WHERE entity_id = $1 AND payment_id = $2`,
      [entityId, paymentId],
    )) as { pay_date: string | null }[];
    return row?.pay_date ? { paymentId, payDate: row.pay_date } : undefined;
  }

  /** One payment's results by individual, then benefit. */
  async statementResults(entityId: string, paymentId: string, filter: StatementResultFilter, page: Page): Promise<Paged<StatementResultRecord>> {
    const where = new SqlFilter().and((p) => `r.entity_id = ${p}`, entityId).and((p) => `r.payment_id = ${p}`, paymentId);
    if (filter.benefitId !== undefined) where.and((p) => `r.benefit_id = ${p}::uuid`, filter.benefitId);
    if (filter.individualId !== undefined) where.and((p) => `r.individual_id = ${p}`, filter.individualId);
    if (filter.results !== undefined) where.and((p) => `r.result = ANY(${p}::text[])`, filter.results);
    const { count, rows } = await countedPage<ResultRow>(
      this.dataSource,
      { from: 'reconciliation_results r', select: `SELECT ${RESULT_COLUMNS} FROM reconciliation_results r`, where, orderBy: BY_PERSON_AND_BENEFIT },
      page,
    );
    return { count, offset: page.offset, items: rows.map(resultOf) };
  }

  /** Open discrepancies that results of this payment (of one benefit, with the filter) fed. */
  async openDiscrepanciesFedBy(scope: ReconciliationScope, paymentId: string, filter: ContributionFilter, db: SqlRunner = this.dataSource): Promise<number> {
    const fed = new SqlFilter()
      .and((p) => `d.connection_id = ${p}`, scope.connectionId)
      .and((p) => `d.entity_id = ${p}`, scope.entityId)
      .and(`d.status = 'open'`)
      .and((p) => `r.payment_id = ${p}`, paymentId);
    if (filter.benefitId !== undefined) fed.and((p) => `r.benefit_id = ${p}::uuid`, filter.benefitId);
    const [{ n }] = (await db.query(
      `SELECT count(DISTINCT d.id)::int AS n
       FROM reconciliation_results r JOIN deduction_discrepancies d ON d.id = r.discrepancy_id AND r.entity_id = d.entity_id
       ${fed.clause}`,
      fed.params,
    )) as { n: number }[];
    return n;
  }

  /** A page of the payment's non-zero contributions, by individual then benefit, with the total. */
  async contributions(entityId: string, paymentId: string, filter: ContributionFilter, page: Page): Promise<Paged<ContributionRecord>> {
    const where = contributionScope(entityId, paymentId, filter);
    const { clause, params } = where;
    const [{ n }] = (await this.dataSource.query(`SELECT count(*)::int AS n FROM reconciliation_results r ${clause}`, params)) as { n: number }[];
    const rows: ContributionRow[] = await this.dataSource.query(
      contributionsOf(
        `SELECT * FROM reconciliation_results r ${clause} ORDER BY ${BY_PERSON_AND_BENEFIT} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      ),
      [...params, page.limit, page.offset],
    );
    return { count: n, offset: page.offset, items: rows.map(contributionOf) };
  }

  /**
   * The whole payment for an export, in one read-only snapshot (REPEATABLE READ), so a
   * reconciliation that rewrites the payment meanwhile shows wholly or not at all. Read in
   * batches of EXPORT_BATCH after the last key, each handed to `each` before the next is read:
   * memory holds one batch of rows and what `each` keeps. Undefined when the payment has no
   * reconciled statement of the entity.
   */
  async exportContributions(
    scope: ReconciliationScope,
    paymentId: string,
    filter: ContributionFilter,
    each: (batch: ContributionRecord[], payment: ReconciledPayment) => void,
  ): Promise<(ReconciledPayment & { openDiscrepancies: number }) | undefined> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      await manager.query('SET TRANSACTION READ ONLY');
      const payment = await this.reconciledPayment(scope.entityId, paymentId, manager);
      if (!payment) return undefined;
      const openDiscrepancies = await this.openDiscrepanciesFedBy(scope, paymentId, filter, manager);
      let after: { individualId: string; benefitId: string } | undefined;
      for (;;) {
        const where = contributionScope(scope.entityId, paymentId, filter);
        const params = where.params;
        let keyset = '';
        if (after) {
          params.push(after.individualId, after.benefitId);
          keyset = ` AND (${BY_PERSON_AND_BENEFIT}) > ($${params.length - 1}::text COLLATE "C", $${params.length}::uuid)`;
        }
        params.push(EXPORT_BATCH);
        const rows: ContributionRow[] = await manager.query(
          contributionsOf(`SELECT * FROM reconciliation_results r ${where.clause}${keyset} ORDER BY ${BY_PERSON_AND_BENEFIT} LIMIT $${params.length}`),
          params,
        );
        if (rows.length > 0) each(rows.map(contributionOf), payment);
        if (rows.length < EXPORT_BATCH) return { ...payment, openDiscrepancies };
        const last = rows[rows.length - 1];
        after = { individualId: last.individual_id, benefitId: last.benefit_id };
      }
    });
  }

  async status(scope: ReconciliationScope): Promise<ReconciliationStatusRecord> {
    const [runs, counts] = await Promise.all([
      this.dataSource.query(`SELECT sync_job_id, reconciled_at, statements FROM reconciliation_runs WHERE entity_id = $1 AND connection_id = $2`, [
        scope.entityId,
        scope.connectionId,
      ]) as Promise<{ sync_job_id: string | null; reconciled_at: Date; statements: number }[]>,
      this.dataSource.query(
        `SELECT kind, status, count(*)::int AS n FROM deduction_discrepancies
         WHERE entity_id = $1 AND connection_id = $2 AND status <> 'resolved'
         GROUP BY kind, status`,
        [scope.entityId, scope.connectionId],
      ) as Promise<{ kind: DiscrepancyKind; status: DiscrepancyStatus; n: number }[]>,
    ]);
    const run = runs[0];
    const open: Partial<Record<DiscrepancyKind, number>> = {};
    let acknowledged = 0;
    for (const { kind, status, n } of counts) {
      if (status === 'open') open[kind] = n;
      else acknowledged += n;
    }
    return {
      lastRun: run && { syncJobId: run.sync_job_id, reconciledAt: run.reconciled_at, statements: run.statements },
      open,
      acknowledged,
    };
  }
}

function discrepancyScope(scope: ReconciliationScope): SqlFilter {
  return new SqlFilter().and((p) => `d.connection_id = ${p}`, scope.connectionId).and((p) => `d.entity_id = ${p}`, scope.entityId);
}

/** The payment's results a recordkeeper is sent: something was deducted or contributed. */
function contributionScope(entityId: string, paymentId: string, filter: ContributionFilter): SqlFilter {
  const where = new SqlFilter()
    .and((p) => `r.entity_id = ${p}`, entityId)
    .and((p) => `r.payment_id = ${p}`, paymentId)
    .and('(r.observed_employee <> 0 OR r.observed_employer <> 0)');
  if (filter.benefitId !== undefined) where.and((p) => `r.benefit_id = ${p}::uuid`, filter.benefitId);
  return where;
}


function resultOf(row: ResultRow): StatementResultRecord {
  return {
    individualId: row.individual_id,
    benefitId: row.benefit_id,
    result: row.result,
    expectedEmployee: Number(row.expected_employee),
    observedEmployee: Number(row.observed_employee),
    expectedEmployer: Number(row.expected_employer),
    observedEmployer: Number(row.observed_employer),
    limitRoom: row.limit_room === null ? null : Number(row.limit_room),
    taxTreatment: row.tax_treatment,
    discrepancyId: row.discrepancy_id,
  };
}

/** The employee amount goes to the field of its tax treatment; the others are 0. */
function contributionOf(row: ContributionRow): ContributionRecord {
  const employee = Number(row.employee);
  return {
    individualId: row.individual_id,
    benefitId: row.benefit_id,
    benefitType: row.benefit_type,
    benefitDescription: row.benefit_description,
    thisPayment: {
      employeePreTax: row.tax_treatment === 'pre_tax' ? employee : 0,
      employeeRoth: row.tax_treatment === 'roth' ? employee : 0,
      employeeAfterTax: row.tax_treatment === 'after_tax' ? employee : 0,
      employer: Number(row.employer),
    },
    yearToDate: {
      employeePreTax: Number(row.ytd_pre_tax),
      employeeRoth: Number(row.ytd_roth),
      employeeAfterTax: Number(row.ytd_after_tax),
      employer: Number(row.ytd_employer),
    },
  };
}
