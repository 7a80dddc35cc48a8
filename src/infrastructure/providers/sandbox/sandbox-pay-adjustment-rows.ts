import { EntityManager } from 'typeorm';
import { returnedRows } from '../../database/query-result';
import { PayRunAdjustments, SandboxPayAdjustment } from './sandbox-pay-adjustments';
import { SandboxEnrollment } from './sandbox-payroll.types';

/**
 * The pending adjustments of an employer's next regular pay run (sandbox-pay-adjustments.ts) in
 * `sandbox_pay_run_adjustments`: one row per (individual, benefit); a later write of the same
 * pair replaces it. Callers hold the employer's row lock (SandboxEmployerStore) when they write
 * or consume, so a pay run and a write never interleave.
 */

const ADJUSTMENT_COLUMNS = `individual_id::text AS individual_id, benefit_id::text AS benefit_id, action,
  employee_amount::float8 AS employee_amount, employer_amount::float8 AS employer_amount`;

/** Pending adjustments, by individual then benefit. */
export async function readPayAdjustments(manager: EntityManager, entityId: string): Promise<SandboxPayAdjustment[]> {
  return manager.query(
    `SELECT ${ADJUSTMENT_COLUMNS} FROM sandbox_pay_run_adjustments WHERE entity_id = $1 ORDER BY individual_id, benefit_id`,
    [entityId],
  );
}

/** Adds the adjustments, replacing pending ones of the same (individual, benefit). Ids lower case. */
export async function writePayAdjustments(manager: EntityManager, entityId: string, adjustments: readonly SandboxPayAdjustment[], now: Date): Promise<void> {
  if (adjustments.length === 0) return;
  await manager.query(
    `INSERT INTO sandbox_pay_run_adjustments (entity_id, individual_id, benefit_id, action, employee_amount, employer_amount, created_at)
     SELECT $1, a.individual_id, a.benefit_id, a.action, a.employee_amount, a.employer_amount, $3
     FROM jsonb_to_recordset($2::jsonb) AS a(individual_id uuid, benefit_id uuid, action text, employee_amount bigint, employer_amount bigint)
     ON CONFLICT (entity_id, individual_id, benefit_id)
     DO UPDATE SET action = excluded.action, employee_amount = excluded.employee_amount, employer_amount = excluded.employer_amount,
                   created_at = excluded.created_at`,
    [entityId, JSON.stringify(adjustments), now],
  );
}

/** Drops every pending adjustment of the employer; answers how many there were. */
export async function clearPayAdjustments(manager: EntityManager, entityId: string): Promise<number> {
  return returnedRows(await manager.query(`DELETE FROM sandbox_pay_run_adjustments WHERE entity_id = $1 RETURNING 1`, [entityId])).length;
}

/**
 * What a regular run on `payDate` applies: the pending adjustments, with the latest enrollment
 * row (effective on or before the pay date, ended or not) of each `keep`. Undefined without any.
 */
export async function readPayRunAdjustments(manager: EntityManager, entityId: string, payDate: string): Promise<PayRunAdjustments | undefined> {
  const adjustments = await readPayAdjustments(manager, entityId);
  if (adjustments.length === 0) return undefined;
  const keeps = adjustments.filter((a) => a.action === 'keep');
  const lastRows: SandboxEnrollment[] =
    keeps.length === 0
      ? []
      : await manager.query(
          `SELECT DISTINCT ON (e.benefit_id, e.individual_id) e.benefit_id::text AS benefit_id, e.individual_id::text AS individual_id,
                  to_char(e.effective_date, 'YYYY-MM-DD') AS effective_date, e.configuration, to_char(e.ended_on, 'YYYY-MM-DD') AS ended_on
           FROM sandbox_enrollments e
           JOIN unnest($2::uuid[], $3::uuid[]) AS k(benefit_id, individual_id) ON k.benefit_id = e.benefit_id AND k.individual_id = e.individual_id
           WHERE e.entity_id = $1 AND e.effective_date <= $4::date
           ORDER BY e.benefit_id, e.individual_id, e.effective_date DESC`,
          [entityId, keeps.map((k) => k.benefit_id), keeps.map((k) => k.individual_id), payDate],
        );
  return new PayRunAdjustments(adjustments, lastRows);
}

/** Of these (benefit, individual) pairs, those with any enrollment row (in force, ended or scheduled), as `benefit|individual` in lower case. */
export async function pairsEverEnrolled(manager: EntityManager, entityId: string, pairs: readonly { benefit_id: string; individual_id: string }[]): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const rows: { key: string }[] = await manager.query(
    `SELECT DISTINCT e.benefit_id::text || '|' || e.individual_id::text AS key
     FROM sandbox_enrollments e
     JOIN unnest($2::uuid[], $3::uuid[]) AS k(benefit_id, individual_id) ON k.benefit_id = e.benefit_id AND k.individual_id = e.individual_id
     WHERE e.entity_id = $1`,
    [entityId, pairs.map((p) => p.benefit_id), pairs.map((p) => p.individual_id)],
  );
  return new Set(rows.map((r) => r.key));
}
