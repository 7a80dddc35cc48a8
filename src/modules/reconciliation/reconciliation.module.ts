import { Module, OnModuleInit } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { JobHandlerRegistry } from '../jobs/job-handler';
import { JobsModule } from '../jobs/jobs.module';
import { ProvidersModule } from '../providers/providers.module';
import { DeductionReconciliationHandler } from './deduction-reconciliation.handler';
import { DiscrepancyEvents } from './discrepancy-events';
import { ReconciliationRepository } from './reconciliation.repository';

/**
 * Reconciliation of payroll against enrollments: the `deduction_reconciliation` job a completed
 * data sync queues (docs/reconciliation.md). Its reads are the reconciliation-reads module's.
 */
@Module({
  imports: [AuthModule, ProvidersModule, JobsModule],
  providers: [DeductionReconciliationHandler, ReconciliationRepository, DiscrepancyEvents],
})
export class ReconciliationModule implements OnModuleInit {
  constructor(
    private readonly registry: JobHandlerRegistry,
    private readonly handler: DeductionReconciliationHandler,
  ) {}

  onModuleInit(): void {
    this.registry.register(this.handler);
  }
}
