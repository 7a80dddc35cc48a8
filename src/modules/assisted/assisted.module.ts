import { Module, OnModuleInit } from '@nestjs/common';
import { HOLIDAY_CALENDAR } from '../../domain/calendar/business-days';
import { UsFederalHolidayCalendar } from '../../infrastructure/calendar/us-federal-holiday-calendar';
import { AuthModule } from '../auth/auth.module';
import { BenefitsModule } from '../benefits/benefits.module';
import { EnrollmentsModule } from '../enrollments/enrollments.module';
import { JobHandlerRegistry } from '../jobs/job-handler';
import { JobsModule } from '../jobs/jobs.module';
import { OpsCredentialsGuard } from '../ops-auth/ops-credentials.guard';
import { ProviderBehavioursRegistry } from '../providers/provider-behaviours';
import { ProvidersModule } from '../providers/providers.module';
import { AssistedApplyHandler } from './assisted-apply.handler';
import { AssistedProvider } from './assisted-provider';
import { ManualJobsController } from './manual-jobs.controller';
import { ManualJobsRepository } from './manual-jobs.repository';
import { OpsTaskWork } from './ops-task-work';
import { OpsTasksController } from './ops-tasks.controller';
import { OpsTasksRepository } from './ops-tasks.repository';
import { OpsTasksService } from './ops-tasks.service';

/**
 * Assisted providers: their behaviour (work done by hand through ops tasks), manual jobs
 * (/jobs/manual/{id}), the ops task API (/ops/api/tasks) and the `assisted_apply` job that
 * brings completed work to the payroll system. Nothing imports this module: it registers the
 * Assisted behaviour with the provider behaviours, and follows the enrollment lifecycle's events.
 */
@Module({
  imports: [AuthModule, JobsModule, ProvidersModule, BenefitsModule, EnrollmentsModule],
  controllers: [ManualJobsController, OpsTasksController],
  providers: [
    AssistedProvider,
    OpsTaskWork,
    OpsTasksService,
    OpsTasksRepository,
    ManualJobsRepository,
    AssistedApplyHandler,
    OpsCredentialsGuard,
    { provide: HOLIDAY_CALENDAR, useClass: UsFederalHolidayCalendar },
  ],
})
export class AssistedModule implements OnModuleInit {
  constructor(
    private readonly registry: JobHandlerRegistry,
    private readonly behaviours: ProviderBehavioursRegistry,
    private readonly applyHandler: AssistedApplyHandler,
    private readonly assisted: AssistedProvider,
  ) {}

  onModuleInit(): void {
    this.registry.register(this.applyHandler);
    this.behaviours.registerAssisted(this.assisted);
  }
}
