import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * No planner statistics for the JSON documents the queue tables carry (a job's params and
 * result, a saga's steps, an outbox message's payload and headers, an enrollment's
 * configurations). No statement filters or sorts on a whole document, so the planner never
 * reads these statistics (the expression index on a job's group id keeps its own); computing
 * them was most of an ANALYZE of these tables, which the table upkeep runs each time one of them
 * outgrows its statistics. Measured on tables of 12,000 to 35,000 rows after a stream of HRIS
 * events: ANALYZE of `jobs` from about 350 to 130 ms, of `enrollment_items` from 80 to 20 ms, of
 * `sagas` from 140 to 95 ms, of `outbox_messages` from 150 to 130 ms.
 */
export const DOCUMENT_COLUMNS: readonly (readonly [table: string, column: string])[] = [
  ['jobs', 'params'],
  ['jobs', 'result'],
  ['sagas', 'steps'],
  ['outbox_messages', 'payload'],
  ['outbox_messages', 'headers'],
  ['enrollment_items', 'configuration'],
  ['enrollments', 'configuration'],
  ['enrollments', 'applied'],
];

/** Sets the statistics target of these columns: 0 (none gathered), -1 (the server's default) or a number of values. */
export async function setStatisticsTarget(q: QueryRunner, columns: readonly (readonly [table: string, column: string])[], target: number): Promise<void> {
  for (const [table, column] of columns) await q.query(`ALTER TABLE ${table} ALTER COLUMN ${column} SET STATISTICS ${target}`);
}

export class QueueDocumentsWithoutStatistics1797800000000 implements MigrationInterface {
  name = 'QueueDocumentsWithoutStatistics1797800000000';

  async up(q: QueryRunner): Promise<void> {
    await setStatisticsTarget(q, DOCUMENT_COLUMNS, 0);
  }

  async down(q: QueryRunner): Promise<void> {
    await setStatisticsTarget(q, DOCUMENT_COLUMNS, -1);
  }
}
