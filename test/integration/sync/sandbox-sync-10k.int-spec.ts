import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { describeSandboxSync, measureSandboxSync } from '../../../bench/sandbox-sync';
import { ManualClock } from '../../../src/domain/shared/clock';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

// Generating and syncing the largest sandbox employer (~150,000 rows) is slow by nature: its own
// file and timeout. Times and memory are printed, not asserted (bench/sandbox-sync.ts and
// bench/sandbox-generation.ts record them). The one generation serves both checks: what the
// generator made at the 10,000-employee limit, and that the sync copied all of it.
jest.setTimeout(600_000);

describeWithPostgres('data sync of a 10,000-employee sandbox employer (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ dataSource, database } = await openTestDataSource(4));
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('generates 10,000 employees with six months of pay history, and syncs all of it', async () => {
    const result = await measureSandboxSync(dataSource, { employeeSize: 10_000, clock: new ManualClock('2026-06-01T12:00:00Z') });
    console.log(describeSandboxSync(result));

    expect(result.job_status).toBe('complete');
    expect(result.rows_by_kind).toMatchObject({ company: 1, individual: 10_000, employment: 10_000, directory: 10_000 });
    // Every statement and payment the provider holds was copied.
    const [{ statements }] = await dataSource.query(`SELECT count(*)::int AS statements FROM sandbox_pay_statements`);
    const [{ payments }] = await dataSource.query(`SELECT count(*)::int AS payments FROM sandbox_payments`);
    expect(result.rows_by_kind.pay_statement).toBe(statements);
    expect(result.rows_by_kind.payment).toBe(payments);
    // Six months of runs, every employee on payroll paid in the latest ones.
    expect(payments).toBeGreaterThanOrEqual(14);
    expect(statements).toBeGreaterThan(100_000);
    expect(result.rows_by_kind.pay_statement_item).toBeGreaterThan(0);
  });
});
