import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { EnrollmentConfigurationParams } from '../../domain/benefits/benefit-job-params';
import type { PayStatementRecord } from '../../domain/employer/unified-records';
import type { AppliedTimeline } from '../../domain/enrollments/applied-timeline';
import type { BenefitType, Frequency, StatementKind } from '../../domain/payroll/payroll.types';
import type {
  DiscrepancyOpening,
  DiscrepancyResolution,
  DiscrepancyUpdate,
  EarlierResult,
} from '../../domain/reconciliation/discrepancy-lifecycle';
import type { LimitTotals, LiveDiscrepancy, ObservedStatement, ReconciledBenefit, StatementResult } from '../../domain/reconciliation/reconciliation.types';
import { newId } from '../../domain/shared/new-id';
import { returnedRows } from '../../infrastructure/database/query-result';

/**
 * Statements paid this many days before the latest one reconciled are compared again (by hash)
 * on every run: a provider may correct a recent statement. Older ones are left as reconciled.
 */
export const CORRECTION_LOOKBACK_DAYS = 45;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A statement to reconcile: in the current generation, not yet reconciled in this form. */
export interface StatementToReconcile {
  recordId: string;
  paymentId: string;
  individualId: string;
  payDate: string;
  hash: string;
}

export interface EnrollmentSide {
  benefitId: string;
  individualId: string;
  applied: AppliedTimeline;
  /** The latest request's status: `pending` while a change is on its way to the provider. */
  status: string;
}

/** The SQL of a reconciliation run; every method takes the run's transaction. */
@Injectable()
export class ReconciliationRepository {
  /** Serialises the runs of one entity: a later sync's run waits for the one before it. */
  async lockEntity(manager: EntityManager, entityId: string): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('deduction_reconciliation'), hashtext($1))`, [entityId]);
  }

  async currentGeneration(manager: EntityManager, entityId: string): Promise<string | null> {
    const [row] = await manager.query(`SELECT generation::text AS generation FROM employer_syncs WHERE entity_id = $1`, [entityId]);
    return row ? row.generation : null;
  }

  async benefits(manager: EntityManager, entityId: string): Promise<ReconciledBenefit[]> {
    const rows: { id: string; type: BenefitType; description: string; frequency: Frequency | null; company_contribution: { tiers?: unknown } | null; from: string }[] =
      await manager.query(
        `SELECT id, type, description, frequency, company_contribution, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS from
         FROM benefits WHERE entity_id = $1 ORDER BY created_at, id`,
        [entityId],
      );
    return rows.map((r) => ({
      id: r.id,
      type: r.type,
      description: r.description,
      frequency: r.frequency,
      matchTiers: Array.isArray(r.company_contribution?.tiers) ? (r.company_contribution!.tiers as ReconciledBenefit['matchTiers']) : null,
      reconcileFrom: r.from,
    }));
  }

  /**
   * Statements of the generation paid on or after `from` (and within the correction lookback of
   * the latest reconciled one) whose body differs from the one reconciled, or was never
   * reconciled. Only ids and hashes travel; bodies are read per chunk.
   */
  async statementsToReconcile(manager: EntityManager, entityId: string, generation: string, from: string): Promise<StatementToReconcile[]> {
    const rows: { record_id: string; payment_id: string; individual_id: string; pay_date: string; hash: string }[] = await manager.query(
      `WITH since AS MATERIALIZED (
         SELECT greatest($3::date, coalesce(max(pay_date) - $4::int, $3::date)) AS day FROM reconciled_statements WHERE entity_id = $1
       ),
       synced AS MATERIALIZED (
         SELECT d.record_id, d.parent_id AS payment_id, d.sort_key AS individual_id, d.pay_date, md5(d.body::text) AS hash
         FROM employer_data d
         WHERE d.entity_id = $1 AND d.generation = $2 AND d.kind = 'pay_statement' AND d.pay_date >= (SELECT day FROM since)
       )
       SELECT s.record_id, s.payment_id, s.individual_id, to_char(s.pay_date, 'YYYY-MM-DD') AS pay_date, s.hash
       FROM synced s
       LEFT JOIN reconciled_statements r
         ON r.entity_id = $1 AND r.payment_id = s.payment_id AND r.individual_id = s.individual_id AND r.pay_date >= (SELECT day FROM since)
       WHERE r.body_hash IS DISTINCT FROM s.hash`,
      [entityId, generation, from, CORRECTION_LOOKBACK_DAYS],
    );
    return rows.map((r) => ({ recordId: r.record_id, paymentId: r.payment_id, individualId: r.individual_id, payDate: r.pay_date, hash: r.hash }));
  }

  /** Of these statements, those not recorded as reconciled with the same body (another run may have done some). */
  async stillToReconcile(manager: EntityManager, entityId: string, statements: StatementToReconcile[]): Promise<StatementToReconcile[]> {
    if (statements.length === 0) return [];
    const rows: { payment_id: string; individual_id: string }[] = await manager.query(
      `SELECT k.payment_id, k.individual_id
       FROM unnest($2::text[], $3::text[], $4::text[]) AS k (payment_id, individual_id, hash)
       JOIN reconciled_statements r ON r.entity_id = $1 AND r.payment_id = k.payment_id AND r.individual_id = k.individual_id AND r.body_hash = k.hash`,
      [entityId, statements.map((s) => s.paymentId), statements.map((s) => s.individualId), statements.map((s) => s.hash)],
    );
    const done = new Set(rows.map((r) => `${r.payment_id}|${r.individual_id}`));
    return statements.filter((s) => !done.has(`${s.paymentId}|${s.individualId}`));
  }

  async statementBodies(manager: EntityManager, entityId: string, generation: string, recordIds: string[]): Promise<ObservedStatement[]> {
    const rows: { payment_id: string; pay_date: string; body: PayStatementRecord }[] = await manager.query(
      // Joined to the ids rather than `= ANY(ids)`: a generic plan of ANY searches the array row by row.
      `SELECT d.parent_id AS payment_id, to_char(d.pay_date, 'YYYY-MM-DD') AS pay_date, d.body
       FROM unnest($3::text[]) AS k (record_id)
       JOIN employer_data d ON d.entity_id = $1 AND d.generation = $2 AND d.kind = 'pay_statement' AND d.record_id = k.record_id`,
      [entityId, generation, recordIds],
    );
    return rows.map(({ payment_id, pay_date, body }) => ({
      paymentId: payment_id,
      payDate: pay_date,
      individualId: body.individual_id,
      kind: body.type as StatementKind,
      grossPay: body.gross_pay?.amount ?? 0,
      netPay: body.net_pay?.amount ?? 0,
      employeeDeductions: (body.employee_deductions ?? []).map((d) => ({ name: d.name, amount: d.amount, preTax: d.pre_tax, type: d.type })),
      employerContributions: (body.employer_contributions ?? []).map((c) => ({ name: c.name, amount: c.amount, type: c.type })),
    }));
  }

  async birthDates(manager: EntityManager, entityId: string, generation: string, individualIds: string[]): Promise<Map<string, string | null>> {
    const rows: { id: string; dob: string | null }[] = await manager.query(
      `SELECT d.record_id AS id, d.body->>'dob' AS dob
       FROM unnest($3::text[]) AS k (record_id)
       JOIN employer_data d ON d.entity_id = $1 AND d.generation = $2 AND d.kind = 'individual' AND d.record_id = k.record_id`,
      [entityId, generation, individualIds],
    );
    return new Map(rows.map((r) => [r.id, r.dob]));
  }

  /** The service's enrollment rows of these benefits, of the given people or (no ids) of everyone. */
  async enrollments(manager: EntityManager, benefitIds: string[], individualIds?: string[]): Promise<EnrollmentSide[]> {
    const ids = individualIds?.filter((id) => UUID.test(id));
    if (benefitIds.length === 0 || (ids && ids.length === 0)) return [];
    const rows: { benefit_id: string; individual_id: string; applied: AppliedTimeline; status: string }[] = await manager.query(
      ids
        ? `SELECT e.benefit_id, e.individual_id::text AS individual_id, e.applied, e.status
           FROM unnest($1::uuid[]) AS b (id) CROSS JOIN unnest($2::uuid[]) AS i (id)
           JOIN enrollments e ON e.benefit_id = b.id AND e.individual_id = i.id`
        : `SELECT e.benefit_id, e.individual_id::text AS individual_id, e.applied, e.status
           FROM unnest($1::uuid[]) AS b (id) JOIN enrollments e ON e.benefit_id = b.id`,
      ids ? [benefitIds, ids] : [benefitIds],
    );
    return rows.map((r) => ({ benefitId: r.benefit_id, individualId: r.individual_id, applied: r.applied, status: r.status }));
  }

  /** Results of these people paid in the years from `fromYear` on, for their year-to-date totals. */
  async earlierResults(
    manager: EntityManager,
    entityId: string,
    individualIds: string[],
    fromYear: number,
  ): Promise<Map<string, (EarlierResult & { paymentId: string })[]>> {
    const rows: {
      individual_id: string;
      payment_id: string;
      benefit_id: string;
      type: BenefitType;
      frequency: Frequency | null;
      pay_date: string;
      regular: boolean;
      observed_employee: string;
      observed_employer: string;
    }[] = await manager.query(
      `SELECT r.individual_id, r.payment_id, r.benefit_id, b.type, b.frequency, to_char(r.pay_date, 'YYYY-MM-DD') AS pay_date, r.regular,
              r.observed_employee, r.observed_employer
       FROM unnest($2::text[]) AS k (individual_id)
       JOIN reconciliation_results r ON r.entity_id = $1 AND r.individual_id = k.individual_id AND r.pay_date >= make_date($3, 1, 1)
       JOIN benefits b ON b.id = r.benefit_id`,
      [entityId, individualIds, fromYear],
    );
    const byPerson = new Map<string, (EarlierResult & { paymentId: string })[]>();
    for (const r of rows) {
      const list = byPerson.get(r.individual_id) ?? [];
      list.push({
        paymentId: r.payment_id,
        benefitId: r.benefit_id,
        benefitType: r.type,
        frequency: r.frequency,
        payDate: r.pay_date,
        regular: r.regular,
        observedEmployee: Number(r.observed_employee),
        observedEmployer: Number(r.observed_employer),
      });
      byPerson.set(r.individual_id, list);
    }
    return byPerson;
  }

  /** Live discrepancies of these people (statement kinds and drift), or of the whole entity of one kind. */
  async liveDiscrepancies(manager: EntityManager, entityId: string, filter: { individualIds?: string[]; kind?: string }): Promise<LiveDiscrepancy[]> {
    const rows: {
      id: string;
      benefit_id: string;
      individual_id: string;
      kind: LiveDiscrepancy['kind'];
      status: LiveDiscrepancy['status'];
      last_payment_id: string | null;
      last_pay_date: string | null;
      occurrences: number;
    }[] = await manager.query(
      `SELECT id, benefit_id, individual_id, kind, status, last_payment_id, to_char(last_pay_date, 'YYYY-MM-DD') AS last_pay_date, occurrences
       FROM deduction_discrepancies
       WHERE entity_id = $1 AND status <> 'resolved' AND ($2::text IS NULL OR kind = $2)
         ${filter.individualIds ? 'AND individual_id IN (SELECT unnest($3::text[]))' : ''}`,
      filter.individualIds ? [entityId, filter.kind ?? null, filter.individualIds] : [entityId, filter.kind ?? null],
    );
    return rows.map((r) => ({
      id: r.id,
      benefitId: r.benefit_id,
      individualId: r.individual_id,
      kind: r.kind,
      status: r.status,
      lastPaymentId: r.last_payment_id,
      lastPayDate: r.last_pay_date,
      occurrences: r.occurrences,
    }));
  }

  /** Writes the openings (ids minted here, answered in order). */
  /**
   * Inserts the openings, each `open`, or already `resolved` where `resolutions` gives its
   * resolution (opened and resolved by statements of the same run: a later one may open the same
   * kind again, and a pair has one live discrepancy of a kind).
   */
  async open(
    manager: EntityManager,
    scope: { connectionId: string; entityId: string },
    openings: DiscrepancyOpening[],
    now: Date,
    resolutions: readonly (string | null)[] = [],
  ): Promise<string[]> {
    if (openings.length === 0) return [];
    const ids = openings.map(() => newId());
    await manager.query(
      `INSERT INTO deduction_discrepancies (id, connection_id, entity_id, benefit_id, individual_id, kind, status, first_payment_id, first_pay_date,
                                            last_payment_id, last_pay_date, occurrences, expected, observed, opened_at, updated_at, resolved_at, resolution)
       SELECT u.id, $1, $2, u.benefit_id, u.individual_id, u.kind, CASE WHEN u.resolution IS NULL THEN 'open' ELSE 'resolved' END,
              u.payment_id, u.pay_date, u.payment_id, u.pay_date, 1, u.expected, u.observed, $3, $3, CASE WHEN u.resolution IS NULL THEN NULL ELSE $3::timestamptz END, u.resolution
       FROM unnest($4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::text[], $9::date[], $10::jsonb[], $11::jsonb[], $12::text[])
         AS u (id, benefit_id, individual_id, kind, payment_id, pay_date, expected, observed, resolution)`,
      [
        scope.connectionId,
        scope.entityId,
        now,
        ids,
        openings.map((o) => o.benefitId),
        openings.map((o) => o.individualId),
        openings.map((o) => o.kind),
        openings.map((o) => o.paymentId),
        openings.map((o) => o.payDate),
        openings.map((o) => JSON.stringify(o.expected)),
        openings.map((o) => JSON.stringify(o.observed)),
        openings.map((_, i) => resolutions[i] ?? null),
      ],
    );
    return ids;
  }

  async update(manager: EntityManager, updates: DiscrepancyUpdate[], now: Date): Promise<void> {
    if (updates.length === 0) return;
    await manager.query(
      `UPDATE deduction_discrepancies d SET
         last_payment_id = coalesce(u.payment_id, d.last_payment_id), last_pay_date = coalesce(u.pay_date, d.last_pay_date),
         occurrences = d.occurrences + CASE WHEN u.new_occurrence THEN 1 ELSE 0 END,
         expected = u.expected, observed = u.observed, updated_at = $1
       FROM unnest($2::uuid[], $3::text[], $4::date[], $5::boolean[], $6::jsonb[], $7::jsonb[]) AS u (id, payment_id, pay_date, new_occurrence, expected, observed)
       WHERE d.id = u.id`,
      [
        now,
        updates.map((u) => u.id),
        updates.map((u) => u.paymentId),
        updates.map((u) => u.payDate),
        updates.map((u) => u.newOccurrence),
        updates.map((u) => JSON.stringify(u.expected)),
        updates.map((u) => JSON.stringify(u.observed)),
      ],
    );
  }

  /** Resolves them; answers those that were still live (a resolution is reported once). */
  async resolve(manager: EntityManager, resolutions: DiscrepancyResolution[], now: Date): Promise<{ id: string; kind: string; benefit_id: string; individual_id: string }[]> {
    if (resolutions.length === 0) return [];
    const answer = await manager.query(
        `UPDATE deduction_discrepancies d SET status = 'resolved', resolved_at = $1, updated_at = $1, resolution = u.resolution
         FROM unnest($2::uuid[], $3::text[]) AS u (id, resolution)
         WHERE d.id = u.id AND d.status <> 'resolved'
         RETURNING d.id, d.kind, d.benefit_id, d.individual_id`,
        [now, resolutions.map((r) => r.id), resolutions.map((r) => r.resolution)],
      );
    return returnedRows(answer);
  }

  async writeResults(
    manager: EntityManager,
    entityId: string,
    results: (StatementResult & { regular: boolean; discrepancyId: string | null })[],
    now: Date,
  ): Promise<void> {
    for (let at = 0; at < results.length; at += 5_000) {
      const chunk = results.slice(at, at + 5_000);
      const column = <T>(f: (r: (typeof chunk)[number]) => T) => chunk.map(f);
      await manager.query(
        `INSERT INTO reconciliation_results (entity_id, payment_id, individual_id, benefit_id, pay_date, regular, result, expected_employee, observed_employee,
                                             expected_employer, observed_employer, limit_room, tax_treatment, configuration, job_id, discrepancy_id, reconciled_at)
         SELECT $1, u.* , $2 FROM unnest($3::text[], $4::text[], $5::uuid[], $6::date[], $7::boolean[], $8::text[], $9::bigint[], $10::bigint[],
                                        $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::jsonb[], $16::uuid[], $17::uuid[])
           AS u (payment_id, individual_id, benefit_id, pay_date, regular, result, expected_employee, observed_employee, expected_employer,
                 observed_employer, limit_room, tax_treatment, configuration, job_id, discrepancy_id)
         ON CONFLICT (entity_id, payment_id, individual_id, benefit_id) DO UPDATE SET
           pay_date = EXCLUDED.pay_date, regular = EXCLUDED.regular, result = EXCLUDED.result, expected_employee = EXCLUDED.expected_employee,
           observed_employee = EXCLUDED.observed_employee, expected_employer = EXCLUDED.expected_employer,
           observed_employer = EXCLUDED.observed_employer, limit_room = EXCLUDED.limit_room, tax_treatment = EXCLUDED.tax_treatment,
           configuration = EXCLUDED.configuration, job_id = EXCLUDED.job_id, discrepancy_id = EXCLUDED.discrepancy_id,
           reconciled_at = EXCLUDED.reconciled_at`,
        [
          entityId,
          now,
          column((r) => r.paymentId),
          column((r) => r.individualId),
          column((r) => r.benefitId),
          column((r) => r.payDate),
          column((r) => r.regular),
          column((r) => r.result),
          column((r) => r.expectedEmployee),
          column((r) => r.observedEmployee),
          column((r) => r.expectedEmployer),
          column((r) => r.observedEmployer),
          column((r) => r.limitRoom),
          column((r) => r.taxTreatment),
          column((r) => (r.configuration === null ? null : JSON.stringify(r.configuration))),
          column((r) => (r.jobId !== null && UUID.test(r.jobId) ? r.jobId : null)),
          column((r) => r.discrepancyId),
        ],
      );
    }
  }

  /** Records the statements as reconciled from these bodies, with what each counts against the IRS limits. */
  async markReconciled(
    manager: EntityManager,
    entityId: string,
    jobId: string,
    statements: (StatementToReconcile & { limitTotals: LimitTotals })[],
    now: Date,
  ): Promise<void> {
    if (statements.length === 0) return;
    await manager.query(
      `INSERT INTO reconciled_statements (entity_id, payment_id, individual_id, pay_date, body_hash, limit_totals, job_id, reconciled_at)
       SELECT $1, u.payment_id, u.individual_id, u.pay_date, u.hash, u.limit_totals, $8, $2
       FROM unnest($3::text[], $4::text[], $5::date[], $6::text[], $7::jsonb[]) AS u (payment_id, individual_id, pay_date, hash, limit_totals)
       ON CONFLICT (entity_id, payment_id, individual_id) DO UPDATE SET pay_date = EXCLUDED.pay_date, body_hash = EXCLUDED.body_hash,
         limit_totals = EXCLUDED.limit_totals, job_id = EXCLUDED.job_id, reconciled_at = EXCLUDED.reconciled_at`,
      [
        entityId,
        now,
        statements.map((s) => s.paymentId),
        statements.map((s) => s.individualId),
        statements.map((s) => s.payDate),
        statements.map((s) => s.hash),
        statements.map((s) => JSON.stringify(s.limitTotals)),
        jobId,
      ],
    );
  }

  /** The IRS-limit totals of these people's reconciled statements paid in the years from `fromYear` on. */
  async earlierStatementTotals(
    manager: EntityManager,
    entityId: string,
    individualIds: string[],
    fromYear: number,
  ): Promise<Map<string, { paymentId: string; payDate: string; totals: LimitTotals }[]>> {
    const rows: { individual_id: string; payment_id: string; pay_date: string; limit_totals: LimitTotals }[] = await manager.query(
      `SELECT r.individual_id, r.payment_id, to_char(r.pay_date, 'YYYY-MM-DD') AS pay_date, r.limit_totals
       FROM unnest($2::text[]) AS k (individual_id)
       JOIN reconciled_statements r ON r.entity_id = $1 AND r.individual_id = k.individual_id AND r.pay_date >= make_date($3, 1, 1)`,
      [entityId, individualIds, fromYear],
    );
    const byPerson = new Map<string, { paymentId: string; payDate: string; totals: LimitTotals }[]>();
    for (const r of rows) {
      byPerson.set(r.individual_id, [...(byPerson.get(r.individual_id) ?? []), { paymentId: r.payment_id, payDate: r.pay_date, totals: r.limit_totals }]);
    }
    return byPerson;
  }

  /**
   * An enrollment saga records when its change was first seen on a pay statement: one step,
   * `confirmed_in_payroll`, on the sagas waiting on (or done with) these jobs that have none.
   */
  async confirmInPayroll(manager: EntityManager, confirmations: { jobId: string; paymentId: string; payDate: string; individualId: string; benefitId: string }[], now: Date): Promise<void> {
    const first = new Map<string, (typeof confirmations)[number]>();
    for (const c of confirmations) if (UUID.test(c.jobId) && !first.has(c.jobId)) first.set(c.jobId, c);
    if (first.size === 0) return;
    const list = [...first.values()];
    await manager.query(
      `WITH seen AS (
         SELECT DISTINCT ON (sj.saga_id) sj.saga_id, u.payment_id, u.pay_date, u.individual_id, u.benefit_id, u.job_id
         FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[]) AS u (job_id, payment_id, pay_date, individual_id, benefit_id)
         JOIN saga_jobs sj ON sj.job_id = u.job_id
         ORDER BY sj.saga_id, u.pay_date
       )
       UPDATE sagas s SET steps = s.steps || jsonb_build_array(jsonb_build_object('at', to_char($1::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'name', 'confirmed_in_payroll',
           'detail', jsonb_build_object('job_id', seen.job_id, 'payment_id', seen.payment_id, 'pay_date', seen.pay_date,
                                        'individual_id', seen.individual_id, 'benefit_id', seen.benefit_id))),
         updated_at = $1
       FROM seen
       WHERE s.id = seen.saga_id AND NOT s.steps @> '[{"name": "confirmed_in_payroll"}]'`,
      [now, list.map((c) => c.jobId), list.map((c) => c.paymentId), list.map((c) => c.payDate), list.map((c) => c.individualId), list.map((c) => c.benefitId)],
    );
  }

  /**
   * The payments this job reconciled statements of that have results (a payment of the year
   * before the service ran a benefit only counts for the limits): pay date, statements, and the
   * open discrepancies their results fed, counted from the entity's open ones.
   */
  async paymentSummaries(
    manager: EntityManager,
    entityId: string,
    jobId: string,
  ): Promise<{ payment_id: string; pay_date: string; statements: number; open_discrepancies: number }[]> {
    return manager.query(
      `WITH touched AS MATERIALIZED (
         SELECT DISTINCT payment_id FROM reconciled_statements WHERE job_id = $2 AND entity_id = $1
       )
       SELECT s.payment_id, to_char(min(s.pay_date), 'YYYY-MM-DD') AS pay_date, count(*)::int AS statements,
              (SELECT count(*)::int FROM deduction_discrepancies d
               WHERE d.entity_id = $1 AND d.status = 'open'
                 AND EXISTS (SELECT 1 FROM reconciliation_results r WHERE r.discrepancy_id = d.id AND r.entity_id = $1 AND r.payment_id = s.payment_id)
              ) AS open_discrepancies
       FROM touched t JOIN reconciled_statements s ON s.entity_id = $1 AND s.payment_id = t.payment_id
       WHERE EXISTS (SELECT 1 FROM reconciliation_results r WHERE r.entity_id = $1 AND r.payment_id = t.payment_id)
       GROUP BY s.payment_id ORDER BY min(s.pay_date), s.payment_id`,
      [entityId, jobId],
    );
  }

  async recordRun(
    manager: EntityManager,
    run: { entityId: string; connectionId: string; syncJobId: string | null; generation: string | null; statements: number },
    now: Date,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO reconciliation_runs (entity_id, connection_id, sync_job_id, generation, statements, reconciled_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (entity_id) DO UPDATE SET connection_id = EXCLUDED.connection_id, sync_job_id = EXCLUDED.sync_job_id,
         generation = EXCLUDED.generation, statements = EXCLUDED.statements, reconciled_at = EXCLUDED.reconciled_at`,
      [run.entityId, run.connectionId, run.syncJobId, run.generation, run.statements, now],
    );
  }
}

/** A configuration as the provider reports it, normalised like the service's. */
export function normalisedConfiguration(c: EnrollmentConfigurationParams): EnrollmentConfigurationParams {
  return {
    employee_deduction: c.employee_deduction ?? null,
    company_contribution: c.company_contribution ?? null,
    annual_maximum: c.annual_maximum ?? null,
    catch_up: Boolean(c.catch_up),
    hsa_contribution_limit: c.hsa_contribution_limit ?? null,
  };
}
