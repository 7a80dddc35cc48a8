import { MigrationInterface, QueryRunner } from 'typeorm';
import { setStatisticsTarget } from './1797800000000-queue-documents-without-statistics';

/**
 * The JSON documents added since 1797800000000 (which left the queue tables' documents out of
 * ANALYZE, for the reasons it gives) are left out too: the individuals a saga waits on in a
 * shared job, and a sandbox enrollment's configuration. No statement filters, joins or sorts on
 * them, and the table upkeep analyzes `saga_jobs` each time it outgrows its statistics.
 */
export const LATER_DOCUMENT_COLUMNS: readonly (readonly [table: string, column: string])[] = [
  ['saga_jobs', 'individual_ids'],
  ['sandbox_enrollments', 'configuration'],
];

export class LaterDocumentsWithoutStatistics1798840000000 implements MigrationInterface {
  name = 'LaterDocumentsWithoutStatistics1798840000000';

  async up(q: QueryRunner): Promise<void> {
    await setStatisticsTarget(q, LATER_DOCUMENT_COLUMNS, 0);
  }

  async down(q: QueryRunner): Promise<void> {
    await setStatisticsTarget(q, LATER_DOCUMENT_COLUMNS, -1);
  }
}
