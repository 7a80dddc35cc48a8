import { Module, OnModuleInit } from '@nestjs/common';
import { EmployerDataRepository } from '../../infrastructure/database/repositories/employer-data.repository';
import { AuthModule } from '../auth/auth.module';
import { JobHandlerRegistry } from '../jobs/job-handler';
import { JobsModule } from '../jobs/jobs.module';
import { ProvidersModule } from '../providers/providers.module';
import { DataSyncHandler } from './data-sync.handler';
import { JobsController } from './jobs.controller';
import { SandboxEditSyncs } from './sandbox-edit-syncs.service';
import { SandboxJobConfigurationsRepository } from './sandbox-job-configurations.repository';
import { SandboxJobsController } from './sandbox-jobs.controller';
import { SyncJobsService } from './sync-jobs.service';

/**
 * Data syncs and jobs: /jobs/automated, /sandbox/jobs, the `data_sync_all` job handler, and the
 * syncs sandbox edits start.
 */
@Module({
  imports: [AuthModule, ProvidersModule, JobsModule],
  controllers: [JobsController, SandboxJobsController],
  providers: [SyncJobsService, SandboxEditSyncs, SandboxJobConfigurationsRepository, EmployerDataRepository, DataSyncHandler],
  exports: [SyncJobsService, SandboxEditSyncs, EmployerDataRepository],
})
export class SyncModule implements OnModuleInit {
  constructor(
    private readonly registry: JobHandlerRegistry,
    private readonly dataSync: DataSyncHandler,
  ) {}

  onModuleInit(): void {
    this.registry.register(this.dataSync);
  }
}
