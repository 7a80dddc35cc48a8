import { Module } from '@nestjs/common';
import { ReconciliationReadsController } from './reconciliation-reads.controller';
import { ReconciliationReadsRepository } from './reconciliation-reads.repository';

/**
 * The client API of payroll reconciliation (`/reconciliation/…`): reads of the tables the
 * reconciliation job fills, scoped by access token. The job itself lives in its own module.
 */
@Module({
  controllers: [ReconciliationReadsController],
  providers: [ReconciliationReadsRepository],
})
export class ReconciliationReadsModule {}
