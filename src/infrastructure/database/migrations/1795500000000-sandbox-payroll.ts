import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The sandbox payroll system's own records: the provider side of sandbox connections. One
 * connection entity is one simulated employer, generated the first time it is reached and
 * changed afterwards only by sandbox edits, benefit work and pay runs. Records are kept in the
 * Unified API's wire shape (jsonb) because that is what the provider port returns.
 */
export class SandboxPayroll1795500000000 implements MigrationInterface {
  name = 'SandboxPayroll1795500000000';

  async up(q: QueryRunner): Promise<void> {
    // The row exists once generation has committed: its insert is also the "generate exactly
    // once" guard (a concurrent caller waits on the primary key, then sees the row).
    await q.query(`
      CREATE TABLE sandbox_employers (
        entity_id      uuid PRIMARY KEY REFERENCES connection_entities (id),
        connection_id  uuid        NOT NULL REFERENCES connections (id),
        provider_id    text        NOT NULL,
        seed           text        NOT NULL,
        employee_size  integer     NOT NULL CHECK (employee_size BETWEEN 0 AND 10000),
        company        jsonb       NOT NULL,
        generated_at   timestamptz NOT NULL,
        updated_at     timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE sandbox_individuals (
        entity_id       uuid    NOT NULL REFERENCES sandbox_employers (entity_id),
        id              uuid    NOT NULL,
        position        integer NOT NULL,
        individual      jsonb   NOT NULL,
        employment      jsonb   NOT NULL,
        payment_method  text    NOT NULL DEFAULT 'direct_deposit' CHECK (payment_method IN ('check', 'direct_deposit')),
        PRIMARY KEY (entity_id, id)
      )`);
    // Directory order, and keyset paging of the snapshot.
    await q.query(`CREATE UNIQUE INDEX sandbox_individuals_position_idx ON sandbox_individuals (entity_id, position)`);
    await q.query(`
      CREATE TABLE sandbox_pay_groups (
        entity_id        uuid   NOT NULL REFERENCES sandbox_employers (entity_id),
        id               uuid   NOT NULL,
        name             text   NOT NULL,
        pay_frequencies  text[] NOT NULL,
        PRIMARY KEY (entity_id, id)
      )`);
    await q.query(`
      CREATE TABLE sandbox_payments (
        entity_id   uuid        NOT NULL REFERENCES sandbox_employers (entity_id),
        id          uuid        NOT NULL,
        pay_date    date        NOT NULL,
        kind        text        NOT NULL CHECK (kind IN ('regular_payroll', 'off_cycle_payroll', 'one_time_payment')),
        body        jsonb       NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (entity_id, id)
      )`);
    await q.query(`CREATE INDEX sandbox_payments_pay_date_idx ON sandbox_payments (entity_id, pay_date, id)`);
    // A pay run writes its statements before its payment (the totals are their sums), in one
    // transaction: the foreign key is checked at commit. The body is `json`, not `jsonb`: it is
    // only ever read whole, and a 10,000-employee history writes 120,000 of them, which `json`
    // (validated text) stores about twice as fast as `jsonb` (parsed into a binary tree).
    await q.query(`
      CREATE TABLE sandbox_pay_statements (
        entity_id      uuid  NOT NULL,
        payment_id     uuid  NOT NULL,
        individual_id  uuid  NOT NULL,
        body           json  NOT NULL,
        PRIMARY KEY (entity_id, payment_id, individual_id),
        FOREIGN KEY (entity_id, payment_id) REFERENCES sandbox_payments (entity_id, id) DEFERRABLE INITIALLY DEFERRED
      )`);
    // Each employee's running totals after their latest statement, passed to the next one (the
    // payroll computation starts a new calendar year itself; some totals outlive the year).
    await q.query(`
      CREATE TABLE sandbox_year_to_date (
        entity_id      uuid    NOT NULL REFERENCES sandbox_employers (entity_id),
        individual_id  uuid    NOT NULL,
        year           integer NOT NULL,
        totals         jsonb   NOT NULL,
        PRIMARY KEY (entity_id, individual_id)
      )`);
    // The deductions the provider runs; company_contribution is the wire `{type:'match', tiers}`.
    await q.query(`
      CREATE TABLE sandbox_benefits (
        entity_id             uuid        NOT NULL REFERENCES sandbox_employers (entity_id),
        id                    uuid        NOT NULL,
        type                  text        NOT NULL,
        description           text        NOT NULL,
        frequency             text CHECK (frequency IN ('every_paycheck', 'monthly', 'one_time')),
        company_contribution  jsonb,
        created_at            timestamptz NOT NULL,
        PRIMARY KEY (entity_id, id)
      )`);
    // One row per (benefit, individual, effective date): re-enrolling from a later date adds a
    // row that overrides the earlier one from that date on. In force on a pay date: the row with
    // the latest effective_date on or before it, unless ended_on is on or before the pay date.
    await q.query(`
      CREATE TABLE sandbox_enrollments (
        entity_id       uuid        NOT NULL,
        benefit_id      uuid        NOT NULL,
        individual_id   uuid        NOT NULL,
        effective_date  date        NOT NULL,
        configuration   jsonb       NOT NULL,
        ended_on        date,
        updated_at      timestamptz NOT NULL,
        PRIMARY KEY (entity_id, benefit_id, individual_id, effective_date),
        FOREIGN KEY (entity_id, benefit_id) REFERENCES sandbox_benefits (entity_id, id),
        FOREIGN KEY (entity_id, individual_id) REFERENCES sandbox_individuals (entity_id, id)
      )`);
    await q.query(
      `CREATE INDEX sandbox_enrollments_individual_idx ON sandbox_enrollments (entity_id, individual_id, benefit_id, effective_date DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sandbox_enrollments`);
    await q.query(`DROP TABLE sandbox_benefits`);
    await q.query(`DROP TABLE sandbox_year_to_date`);
    await q.query(`DROP TABLE sandbox_pay_statements`);
    await q.query(`DROP TABLE sandbox_payments`);
    await q.query(`DROP TABLE sandbox_pay_groups`);
    await q.query(`DROP TABLE sandbox_individuals`);
    await q.query(`DROP TABLE sandbox_employers`);
  }
}
