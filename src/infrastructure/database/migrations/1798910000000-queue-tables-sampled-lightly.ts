import { MigrationInterface, QueryRunner } from 'typeorm';
import { setStatisticsTarget } from './1797800000000-queue-documents-without-statistics';

/**
 * The tables that gain a row with every HRIS event are analyzed from a sample of 3,000 rows
 * instead of 30,000: statistics target 10 for each of their columns that had the server's
 * default, and for the expression of `sagas_source_event_idx`. ANALYZE reads 300 × the largest
 * target among a table's columns and index expressions, so one column or expression left at the
 * default (100) keeps the whole sample. Autovacuum (or the table upkeep, by its rules) analyzes
 * these tables past 2 % of change (1796300000000), and each ANALYZE read up to 30,000 pages: on
 * a copy after 110,000 events, ANALYZE of `sagas` took 575–615 ms, and 30–40 ms with these
 * targets (docs/decisions.md, "The tables that grow with every event are sampled lightly").
 *
 * What the planner reads of these tables is a few values per column (states, types, outcomes, a
 * job's status), uniqueness (ids, which their unique indexes tell) and the range of a creation
 * time; the hot statements look rows up by key. Ten most common values and ten histogram buckets
 * describe that; the JSON documents stay without statistics (1797800000000, 1798840000000).
 */
export const SAMPLED_LIGHTLY_TARGET = 10;

export const SAMPLED_LIGHTLY_COLUMNS: readonly (readonly [table: string, column: string])[] = [
  ...['id', 'type', 'state', 'outcome', 'connection_id', 'entity_id', 'source_event_id', 'attempts', 'last_error', 'created_at', 'updated_at'].map(
    (column) => ['sagas', column] as const,
  ),
  ...['saga_id', 'job_id', 'status'].map((column) => ['saga_jobs', column] as const),
  ...['group_id', 'individual_id', 'benefit_id', 'position', 'status', 'code', 'message', 'cancels'].map((column) => ['enrollment_items', column] as const),
];

/** Index expressions, which ANALYZE samples for too: the index and the expression's position in it. */
export const SAMPLED_LIGHTLY_EXPRESSIONS: readonly (readonly [index: string, position: number])[] = [['sagas_source_event_idx', 1]];

export class QueueTablesSampledLightly1798910000000 implements MigrationInterface {
  name = 'QueueTablesSampledLightly1798910000000';

  async up(q: QueryRunner): Promise<void> {
    await this.setTarget(q, SAMPLED_LIGHTLY_TARGET);
  }

  async down(q: QueryRunner): Promise<void> {
    await this.setTarget(q, -1);
  }

  private async setTarget(q: QueryRunner, target: number): Promise<void> {
    await setStatisticsTarget(q, SAMPLED_LIGHTLY_COLUMNS, target);
    for (const [index, position] of SAMPLED_LIGHTLY_EXPRESSIONS) await q.query(`ALTER INDEX ${index} ALTER COLUMN ${position} SET STATISTICS ${target}`);
  }
}
