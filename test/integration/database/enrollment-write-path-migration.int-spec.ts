import { DataSource, QueryRunner } from 'typeorm';
import { EnrollmentWritePath1797100000000 } from '../../../src/infrastructure/database/migrations/1797100000000-enrollment-write-path';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

describeWithPostgres('migration 1797100000000: the enrollment write path’s foreign keys', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(1));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  // Through the runner: the data source has one connection, which the runner holds.
  const foreignKeys = async (runner: QueryRunner): Promise<string[]> =>
    (
      await runner.query(
        `SELECT conname FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text IN ('enrollments', 'enrollment_items') ORDER BY conname`,
      )
    ).map((r: { conname: string }) => r.conname);

  it('keeps only the benefit key of enrollment rows, and its down step restores the others', async () => {
    const migration = new EnrollmentWritePath1797100000000();
    const runner = dataSource.createQueryRunner();
    try {
      expect(await foreignKeys(runner)).toEqual(['enrollments_benefit_id_fkey']);
      await migration.down(runner);
      expect(await foreignKeys(runner)).toEqual(['enrollment_items_group_id_fkey', 'enrollments_benefit_id_fkey', 'enrollments_entity_id_fkey', 'enrollments_job_id_fkey']);
      await migration.up(runner);
      expect(await foreignKeys(runner)).toEqual(['enrollments_benefit_id_fkey']);
    } finally {
      await runner.release();
    }
  });
});
