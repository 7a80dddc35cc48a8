import { MigrationInterface, QueryRunner } from 'typeorm';

/** The sandbox payroll system's own records (the provider side of sandbox connections). */
export class SandboxPayroll1795500000000 implements MigrationInterface {
  name = 'SandboxPayroll1795500000000';

  async up(_q: QueryRunner): Promise<void> {}

  async down(_q: QueryRunner): Promise<void> {}
}
