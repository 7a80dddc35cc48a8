import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { DiscrepancyKind, DiscrepancyStatus, StatementResultKind, TaxTreatment } from '../../src/domain/reconciliation/reconciliation.types';

/*
 * Rows of the reconciliation tables (migration 1798200000000), written with SQL as the
 * reconciliation job would write them, so the client reads can be tested without running it.
 */

/** Whose rows: a connection and one of its entities. */
export interface ReconciliationTarget {
  connectionId: string;
  entityId: string;
}

export interface BenefitFixture {
  type: string;
  description: string;
}

export interface ResultFixture {
  paymentId: string;
  individualId: string;
  benefitId: string;
  /** `YYYY-MM-DD` */
  payDate: string;
  result?: StatementResultKind;
  expectedEmployee?: number;
  observedEmployee?: number;
  expectedEmployer?: number;
  observedEmployer?: number;
  limitRoom?: number | null;
  taxTreatment?: TaxTreatment;
  discrepancyId?: string | null;
}

export interface DiscrepancyFixture {
  id?: string;
  benefitId: string;
  individualId: string;
  kind: DiscrepancyKind;
  status: DiscrepancyStatus;
  firstPaymentId?: string | null;
  firstPayDate?: string | null;
  lastPaymentId?: string | null;
  lastPayDate?: string | null;
  occurrences?: number;
  expected?: unknown;
  observed?: unknown;
  openedAt: string;
  updatedAt?: string;
  acknowledgedAt?: string | null;
  acknowledgedBy?: string | null;
  note?: string | null;
  resolvedAt?: string | null;
  resolution?: string | null;
  reapplyJobId?: string | null;
}

export interface RunFixture {
  syncJobId: string | null;
  statements: number;
  reconciledAt: string;
}

/** A fixture result with every default filled in, as stored. */
export type StoredResult = Required<ResultFixture>;

export function storedResult(r: ResultFixture): StoredResult {
  return {
    result: 'matched',
    expectedEmployee: r.observedEmployee ?? 0,
    observedEmployee: 0,
    expectedEmployer: r.observedEmployer ?? 0,
    observedEmployer: 0,
    limitRoom: null,
    taxTreatment: 'pre_tax',
    discrepancyId: null,
    ...r,
  };
}

export class ReconciliationFixtures {
  constructor(private readonly db: DataSource) {}

  /** A benefit of the entity in the service's `benefits` table (as found at the provider: no job). */
  async benefit(target: ReconciliationTarget, benefit: BenefitFixture): Promise<string> {
    const id = randomUUID();
    await this.db.query(
      `INSERT INTO benefits (id, connection_id, entity_id, type, description, frequency, company_contribution, origin, job_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'every_paycheck', NULL, 'provider', NULL, now(), now())`,
      [id, target.connectionId, target.entityId, benefit.type, benefit.description],
    );
    return id;
  }

  /** Results, and the reconciled statement of each (payment, individual) they belong to. */
  async results(target: ReconciliationTarget, results: readonly ResultFixture[]): Promise<StoredResult[]> {
    const stored = results.map(storedResult);
    for (const r of stored) {
      await this.db.query(
        `INSERT INTO reconciled_statements (entity_id, payment_id, individual_id, pay_date, body_hash, limit_totals, reconciled_at)
         VALUES ($1, $2, $3, $4, 'fixture', '{}', now()) ON CONFLICT DO NOTHING`,
        [target.entityId, r.paymentId, r.individualId, r.payDate],
      );
      await this.db.query(
        `INSERT INTO reconciliation_results (entity_id, payment_id, individual_id, benefit_id, pay_date, regular, result, expected_employee,
           observed_employee, expected_employer, observed_employer, limit_room, tax_treatment, configuration, job_id, discrepancy_id, reconciled_at)
         VALUES ($1, $2, $3, $4, $5, true, $6, $7, $8, $9, $10, $11, $12, NULL, NULL, $13, now())`,
        [
          target.entityId,
          r.paymentId,
          r.individualId,
          r.benefitId,
          r.payDate,
          r.result,
          r.expectedEmployee,
          r.observedEmployee,
          r.expectedEmployer,
          r.observedEmployer,
          r.limitRoom,
          r.taxTreatment,
          r.discrepancyId,
        ],
      );
    }
    return stored;
  }

  /** A reconciled statement without results (a statement with no deduction of a known benefit). */
  async statement(target: ReconciliationTarget, s: { paymentId: string; individualId: string; payDate: string }): Promise<void> {
    await this.db.query(
      `INSERT INTO reconciled_statements (entity_id, payment_id, individual_id, pay_date, body_hash, limit_totals, reconciled_at) VALUES ($1, $2, $3, $4, 'fixture', '{}', now())`,
      [target.entityId, s.paymentId, s.individualId, s.payDate],
    );
  }

  /**
   * `count` people paid in one payment, each with one result for the benefit (pre-tax, employee
   * `employee` cents and employer `employer` cents), in one statement. Individual ids are
   * md5-derived UUIDs, so they sort unlike the insertion order.
   */
  async bulkResults(
    target: ReconciliationTarget,
    p: { paymentId: string; payDate: string; benefitId: string; count: number; employee: number; employer: number },
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO reconciled_statements (entity_id, payment_id, individual_id, pay_date, body_hash, limit_totals, reconciled_at)
       SELECT $1, $2, md5($2 || i::text)::uuid::text, $3, 'fixture', '{}', now() FROM generate_series(1, $4::int) AS i`,
      [target.entityId, p.paymentId, p.payDate, p.count],
    );
    await this.db.query(
      `INSERT INTO reconciliation_results (entity_id, payment_id, individual_id, benefit_id, pay_date, regular, result, expected_employee,
         observed_employee, expected_employer, observed_employer, limit_room, tax_treatment, configuration, job_id, discrepancy_id, reconciled_at)
       SELECT $1, $2, md5($2 || i::text)::uuid::text, $3, $4, true, 'matched', $5, $5, $6, $6, NULL, 'pre_tax', NULL, NULL, NULL, now()
       FROM generate_series(1, $7::int) AS i`,
      [target.entityId, p.paymentId, p.benefitId, p.payDate, p.employee, p.employer, p.count],
    );
  }

  async discrepancy(target: ReconciliationTarget, d: DiscrepancyFixture): Promise<string> {
    const id = d.id ?? randomUUID();
    await this.db.query(
      `INSERT INTO deduction_discrepancies (id, connection_id, entity_id, benefit_id, individual_id, kind, status, first_payment_id, first_pay_date,
         last_payment_id, last_pay_date, occurrences, expected, observed, opened_at, updated_at, acknowledged_at, acknowledged_by, note,
         reapply_job_id, resolved_at, resolution)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14::jsonb, $15, $16, $17, $18, $19, $20, $21, $22)`,
      [
        id,
        target.connectionId,
        target.entityId,
        d.benefitId,
        d.individualId,
        d.kind,
        d.status,
        d.firstPaymentId ?? null,
        d.firstPayDate ?? null,
        d.lastPaymentId ?? null,
        d.lastPayDate ?? null,
        d.occurrences ?? 1,
        d.expected === undefined ? null : JSON.stringify(d.expected),
        d.observed === undefined ? null : JSON.stringify(d.observed),
        d.openedAt,
        d.updatedAt ?? d.openedAt,
        d.acknowledgedAt ?? null,
        d.acknowledgedBy ?? null,
        d.note ?? null,
        d.reapplyJobId ?? null,
        d.resolvedAt ?? null,
        d.resolution ?? null,
      ],
    );
    return id;
  }

  /** The entity's last reconciliation run (one row per entity). */
  async run(target: ReconciliationTarget, run: RunFixture): Promise<void> {
    await this.db.query(
      `INSERT INTO reconciliation_runs (entity_id, connection_id, sync_job_id, generation, statements, reconciled_at) VALUES ($1, $2, $3, NULL, $4, $5)
       ON CONFLICT (entity_id) DO UPDATE SET connection_id = EXCLUDED.connection_id, sync_job_id = EXCLUDED.sync_job_id,
         statements = EXCLUDED.statements, reconciled_at = EXCLUDED.reconciled_at`,
      [target.entityId, target.connectionId, run.syncJobId, run.statements, run.reconciledAt],
    );
  }
}

/**
 * RFC 4180 text read back into records: fields split on commas, quoted fields may hold commas,
 * CR, LF and doubled quotes; records end in CRLF. Throws on what the RFC does not allow (a bare
 * LF line end, a quote inside an unquoted field, text after a closing quote), so a writer that
 * gets it wrong fails the reading rather than being read generously.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  const fail = (why: string) => {
    throw new Error(`not RFC 4180 CSV at ${i}: ${why} (${JSON.stringify(text.slice(Math.max(0, i - 20), i + 20))})`);
  };
  while (i < text.length) {
    if (text[i] === '"') {
      if (field !== '') fail('a quote inside an unquoted field');
      i += 1;
      for (;;) {
        if (i >= text.length) fail('an unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        field += text[i];
        i += 1;
      }
      if (i < text.length && text[i] !== ',' && text[i] !== '\r') fail('text after a closing quote');
      continue;
    }
    if (text[i] === ',') {
      record.push(field);
      field = '';
      i += 1;
    } else if (text[i] === '\r') {
      if (text[i + 1] !== '\n') fail('CR without LF');
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else if (text[i] === '\n') {
      fail('a line ending in LF alone');
    } else {
      field += text[i];
      i += 1;
    }
  }
  if (field !== '' || record.length > 0) fail('the last record does not end in CRLF');
  return records;
}
