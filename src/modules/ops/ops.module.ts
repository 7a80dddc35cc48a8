import { Module, OnModuleInit } from '@nestjs/common';
import { OpsCredentialsGuard } from '../ops-auth/ops-credentials.guard';
import { AuthModule } from '../auth/auth.module';
import { BenefitsModule } from '../benefits/benefits.module';
import { JobsModule } from '../jobs/jobs.module';
import { DeadLettersController } from './dead-letters.controller';
import { DeadLettersRepository } from './dead-letters.repository';
import { DeadLettersService } from './dead-letters.service';
import { IndividualNamesRepository } from './individual-names.repository';
import { JobRetryRegistry, RequeueJobRetrier } from './job-retry.registry';
import { OpsAuditLogController } from './ops-audit-log.controller';
import { OpsAuditLogRepository } from './ops-audit-log.repository';
import { OpsConnectionsController } from './ops-connections.controller';
import { OpsConnectionsRepository } from './ops-connections.repository';
import { OpsDiscrepanciesController } from './ops-discrepancies.controller';
import { OpsDiscrepanciesRepository } from './ops-discrepancies.repository';
import { OpsDiscrepanciesService } from './ops-discrepancies.service';
import { OpsJobsController } from './ops-jobs.controller';
import { OpsJobsRepository } from './ops-jobs.repository';
import { OpsJobsService } from './ops-jobs.service';
import { OpsOverviewController } from './ops-overview.controller';
import { SagaCountsModule } from '../saga-state/saga-counts';
import { OpsOverviewRepository } from './ops-overview.repository';
import { OpsSagasController } from './ops-sagas.controller';
import { OpsSagasRepository } from './ops-sagas.repository';

/**
 * The ops API under /ops/api (HTTP Basic with the ops credentials, never an employer token):
 * overview, sagas, jobs (retry), dead letters (replay, discard), connections, deduction
 * discrepancies (acknowledge, re-apply) and the audit trail. Ops tasks (/ops/api/tasks) live
 * with the Assisted module. Feature modules add job retriers through JobRetryRegistry (exported).
 */
@Module({
  // Auth and Benefits: a discrepancy's re-apply finds its connection and benefit as the enrollment commands do.
  imports: [JobsModule, AuthModule, BenefitsModule, SagaCountsModule],
  controllers: [
    OpsOverviewController,
    OpsSagasController,
    OpsJobsController,
    DeadLettersController,
    OpsConnectionsController,
    OpsAuditLogController,
    OpsDiscrepanciesController,
  ],
  providers: [
    OpsCredentialsGuard,
    OpsOverviewRepository,
    OpsSagasRepository,
    OpsJobsRepository,
    OpsJobsService,
    JobRetryRegistry,
    RequeueJobRetrier,
    DeadLettersRepository,
    DeadLettersService,
    OpsConnectionsRepository,
    OpsAuditLogRepository,
    IndividualNamesRepository,
    OpsDiscrepanciesRepository,
    OpsDiscrepanciesService,
  ],
  exports: [JobRetryRegistry],
})
export class OpsModule implements OnModuleInit {
  constructor(
    private readonly retriers: JobRetryRegistry,
    private readonly requeue: RequeueJobRetrier,
  ) {}

  onModuleInit(): void {
    this.retriers.register(this.requeue);
  }
}
