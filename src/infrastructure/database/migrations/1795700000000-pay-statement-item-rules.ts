import { MigrationInterface, QueryRunner } from 'typeorm';

/** Pay-statement-item rules of a connection's entities. */
export class PayStatementItemRules1795700000000 implements MigrationInterface {
  name = 'PayStatementItemRules1795700000000';

  async up(_q: QueryRunner): Promise<void> {}

  async down(_q: QueryRunner): Promise<void> {}
}
