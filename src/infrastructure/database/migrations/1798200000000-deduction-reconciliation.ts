import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reconciliation of payroll against enrollments (docs/reconciliation.md).
 * - `reconciled_statements`: each synced pay statement reconciled, with the hash of the body it
 *   was reconciled from (a sync that brings the same statement again costs a hash comparison, a
 *   corrected one is reconciled again) and what it counts against the IRS limits, which the
 *   next statements of the year start from.
 * - `reconciliation_results`: per statement and benefit, what was expected and observed (cents),
 *   how it came out, and the discrepancy it fed. Contributions per pay date are read from here.
 * - `deduction_discrepancies`: the lifecycle. One live (open or acknowledged) discrepancy per
 *   benefit, person and kind: the partial unique index, so no race opens one twice.
 * - `reconciliation_runs`: per entity, the sync the last reconciliation read, so clients and
 *   tests can tell a sync's statements have been reconciled.
 */
export class DeductionReconciliation1798200000000 implements MigrationInterface {
  name = 'DeductionReconciliation1798200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reconciled_statements (
        entity_id      uuid        NOT NULL,
        payment_id     text        NOT NULL,
        individual_id  text        NOT NULL,
        pay_date       date        NOT NULL,
        body_hash      text        NOT NULL,
        -- What the statement counts against the IRS limits, every plan's lines included (cents).
        limit_totals   jsonb       NOT NULL,
        -- The reconciliation job that did it: the payments it announces are those it reconciled.
        job_id         uuid,
        reconciled_at  timestamptz NOT NULL,
        PRIMARY KEY (entity_id, payment_id, individual_id)
      )`);
    await q.query(`CREATE INDEX reconciled_statements_person_idx ON reconciled_statements (entity_id, individual_id, pay_date)`);
    await q.query(`CREATE INDEX reconciled_statements_day_idx ON reconciled_statements (entity_id, pay_date)`);
    await q.query(`CREATE INDEX reconciled_statements_job_idx ON reconciled_statements (job_id) WHERE job_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE deduction_discrepancies (
        id                uuid PRIMARY KEY,
        connection_id     uuid        NOT NULL,
        entity_id         uuid        NOT NULL,
        benefit_id        uuid        NOT NULL,
        individual_id     text        NOT NULL,
        kind              text        NOT NULL CHECK (kind IN ('missing', 'amount_mismatch', 'unexpected', 'match_mismatch', 'over_limit', 'configuration_drift')),
        status            text        NOT NULL CHECK (status IN ('open', 'acknowledged', 'resolved')),
        first_payment_id  text,
        first_pay_date    date,
        last_payment_id   text,
        last_pay_date     date,
        occurrences       integer     NOT NULL DEFAULT 1,
        expected          jsonb,
        observed          jsonb,
        opened_at         timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL,
        acknowledged_at   timestamptz,
        acknowledged_by   text,
        note              text,
        reapply_job_id    uuid,
        resolved_at       timestamptz,
        resolution        text,
        CHECK ((status = 'resolved') = (resolved_at IS NOT NULL)),
        CHECK (status <> 'acknowledged' OR note IS NOT NULL)
      )`);
    await q.query(
      `CREATE UNIQUE INDEX deduction_discrepancies_live_idx ON deduction_discrepancies (benefit_id, individual_id, kind) WHERE status <> 'resolved'`,
    );
    await q.query(`CREATE INDEX deduction_discrepancies_entity_idx ON deduction_discrepancies (entity_id, opened_at DESC, id)`);
    await q.query(`CREATE INDEX deduction_discrepancies_live_entity_idx ON deduction_discrepancies (entity_id, individual_id) WHERE status <> 'resolved'`);
    await q.query(`CREATE INDEX deduction_discrepancies_ops_idx ON deduction_discrepancies (status, opened_at DESC, id)`);

    await q.query(`
      CREATE TABLE reconciliation_results (
        entity_id          uuid        NOT NULL,
        payment_id         text        NOT NULL,
        individual_id      text        NOT NULL,
        benefit_id         uuid        NOT NULL,
        pay_date           date        NOT NULL,
        regular            boolean     NOT NULL,
        result             text        NOT NULL CHECK (result IN ('matched', 'missing', 'amount_mismatch', 'unexpected', 'match_mismatch', 'over_limit')),
        expected_employee  bigint      NOT NULL,
        observed_employee  bigint      NOT NULL,
        expected_employer  bigint      NOT NULL,
        observed_employer  bigint      NOT NULL,
        limit_room         bigint,
        tax_treatment      text        NOT NULL CHECK (tax_treatment IN ('pre_tax', 'roth', 'after_tax')),
        configuration      jsonb,
        job_id             uuid,
        discrepancy_id     uuid,
        reconciled_at      timestamptz NOT NULL,
        PRIMARY KEY (entity_id, payment_id, individual_id, benefit_id)
      )`);
    // Year-to-date totals of a person, and contributions per benefit and pay date.
    await q.query(`CREATE INDEX reconciliation_results_person_idx ON reconciliation_results (entity_id, individual_id, pay_date)`);
    await q.query(`CREATE INDEX reconciliation_results_discrepancy_idx ON reconciliation_results (discrepancy_id) WHERE discrepancy_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE reconciliation_runs (
        entity_id      uuid PRIMARY KEY,
        connection_id  uuid        NOT NULL,
        sync_job_id    uuid,
        generation     bigint,
        statements     integer     NOT NULL,
        reconciled_at  timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reconciliation_runs`);
    await q.query(`DROP TABLE reconciliation_results`);
    await q.query(`DROP TABLE deduction_discrepancies`);
    await q.query(`DROP TABLE reconciled_statements`);
  }
}
