import { Module, OnModuleInit } from '@nestjs/common';
import { OpsCredentialsGuard } from '../ops-auth/ops-credentials.guard';
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
import { OpsJobsController } from './ops-jobs.controller';
import { OpsJobsRepository } from './ops-jobs.repository';
import { OpsJobsService } from './ops-jobs.service';
import { OpsOverviewController } from './ops-overview.controller';
import { OpsOverviewRepository } from './ops-overview.repository';
import { OpsSagasController } from './ops-sagas.controller';
import { OpsSagasRepository } from './ops-sagas.repository';

/**
 * The ops API under /ops/api (HTTP Basic with the ops credentials, never an employer token):
 * overview, sagas, jobs (retry), dead letters (replay, discard), connections and the audit
 * trail. Ops tasks (/ops/api/tasks) live with the Assisted module. Feature modules add job
 * retriers through JobRetryRegistry (exported).
 */
@Module({
  imports: [JobsModule],
  controllers: [
    OpsOverviewController,
    OpsSagasController,
    OpsJobsController,
    DeadLettersController,
    OpsConnectionsController,
    OpsAuditLogController,
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
