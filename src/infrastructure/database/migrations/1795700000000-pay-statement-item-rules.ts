import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pay-statement-item rules of a connection's entities. A deleted rule keeps its row
 * (`deleted_at`), so the DELETE answer can return it and an audit can still read it.
 */
export class PayStatementItemRules1795700000000 implements MigrationInterface {
  name = 'PayStatementItemRules1795700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE pay_statement_item_rules (
        id                    uuid PRIMARY KEY,
        connection_id         uuid        NOT NULL REFERENCES connections (id),
        entity_id             uuid        NOT NULL REFERENCES connection_entities (id),
        priority              integer     NOT NULL CHECK (priority >= 0),
        conditions            jsonb       NOT NULL,
        attributes            jsonb       NOT NULL,
        effective_start_date  date,
        effective_end_date    date,
        created_at            timestamptz NOT NULL,
        updated_at            timestamptz NOT NULL,
        deleted_at            timestamptz,
        CHECK (effective_start_date IS NULL OR effective_end_date IS NULL OR effective_start_date <= effective_end_date)
      )`);
    // One live rule per priority of an entity: "the highest priority wins" never ties.
    await q.query(
      `CREATE UNIQUE INDEX pay_statement_item_rules_priority_idx ON pay_statement_item_rules (entity_id, priority DESC)
       WHERE deleted_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE pay_statement_item_rules`);
  }
}
