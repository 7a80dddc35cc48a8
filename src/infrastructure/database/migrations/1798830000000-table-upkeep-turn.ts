import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One turn of the table upkeep (table-upkeep.ts) for every instance on the database: when the
 * next round may begin, when the last full round (autovacuum's work) began, and whether it left
 * vacuums for the next. Each instance ran its own rounds before, so N instances analyzed and
 * vacuumed the same tables about N times as often as one.
 */
export class TableUpkeepTurn1798830000000 implements MigrationInterface {
  name = 'TableUpkeepTurn1798830000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE table_upkeep_turn (
        id smallint PRIMARY KEY CHECK (id = 1),
        next_round_at timestamptz NOT NULL DEFAULT '-infinity',
        full_round_at timestamptz NOT NULL DEFAULT '-infinity',
        vacuums_left boolean NOT NULL DEFAULT false
      )`);
    await q.query(`INSERT INTO table_upkeep_turn (id) VALUES (1)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE table_upkeep_turn`);
  }
}
