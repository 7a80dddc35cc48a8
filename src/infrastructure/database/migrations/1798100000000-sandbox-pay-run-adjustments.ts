import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Adjustments of a sandbox employer's next regular pay run: a payroll admin's one-off
 * corrections in the provider's own screens (skip a deduction, change an amount, keep deducting
 * after an enrollment ended), which the next regular run applies to its statements and consumes
 * in its transaction. One row per (individual, benefit): a later request replaces the pending
 * one. `change` carries at least one amount (cents); `skip` and `keep` none.
 */
export class SandboxPayRunAdjustments1798100000000 implements MigrationInterface {
  name = 'SandboxPayRunAdjustments1798100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sandbox_pay_run_adjustments (
        entity_id        uuid        NOT NULL REFERENCES sandbox_employers (entity_id),
        individual_id    uuid        NOT NULL,
        benefit_id       uuid        NOT NULL,
        action           text        NOT NULL CHECK (action IN ('skip', 'change', 'keep')),
        employee_amount  bigint      CHECK (employee_amount >= 0),
        employer_amount  bigint      CHECK (employer_amount >= 0),
        created_at       timestamptz NOT NULL,
        PRIMARY KEY (entity_id, individual_id, benefit_id),
        FOREIGN KEY (entity_id, individual_id) REFERENCES sandbox_individuals (entity_id, id),
        FOREIGN KEY (entity_id, benefit_id) REFERENCES sandbox_benefits (entity_id, id),
        CHECK (CASE WHEN action = 'change' THEN employee_amount IS NOT NULL OR employer_amount IS NOT NULL
                    ELSE employee_amount IS NULL AND employer_amount IS NULL END)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sandbox_pay_run_adjustments`);
  }
}
