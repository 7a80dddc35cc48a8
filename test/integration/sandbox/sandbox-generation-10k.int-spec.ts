import { DataSource } from 'typeorm';
import { ManualClock } from '../../../src/domain/shared/clock';
import { measureSandboxGeneration } from '../../../bench/sandbox-generation';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

// Generating the largest employer writes ~120,000 pay statements: slow by nature, so its own
// file and timeout. The numbers are printed, not asserted (bench/sandbox-generation.ts records them).
jest.setTimeout(300_000);

describeWithPostgres('sandbox generation at the 10,000-employee limit (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(2));
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('generates 10,000 employees with six months of pay history', async () => {
    const result = await measureSandboxGeneration(dataSource, { employeeSize: 10_000, clock: new ManualClock('2026-06-01T12:00:00Z') });
    console.log(
      `sandbox generation: ${result.employee_size} employees, ${result.payments} payments, ${result.pay_statements} statements ` +
        `in ${result.seconds} s; peak RSS ${result.peak_rss_mb} MB`,
    );
    expect(result.individuals).toBe(10_000);
    expect(result.payments).toBeGreaterThanOrEqual(14);
    // Every employee on payroll is paid in the latest runs: well over 100,000 statements in all.
    expect(result.pay_statements).toBeGreaterThan(100_000);
  });
});
