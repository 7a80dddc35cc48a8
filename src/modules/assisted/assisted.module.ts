import { Module, OnModuleInit } from '@nestjs/common';
import { HOLIDAY_CALENDAR } from '../../domain/calendar/business-days';
import { UsFederalHolidayCalendar } from '../../infrastructure/calendar/us-federal-holiday-calendar';
import { AuthModule } from '../auth/auth.module';
import { BenefitEventsWriter } from '../benefits/benefit-events.writer';
import { BenefitsRepository } from '../benefits/benefits.repository';
import { EnrollmentsRepository } from '../enrollments/enrollments.repository';
import { JobHandlerRegistry } from '../jobs/job-handler';
import { JobsModule } from '../jobs/jobs.module';
import { AssistedApplyHandler } from './assisted-apply.handler';
import { AssistedWorkService } from './assisted-work.service';
import { ManualJobsController } from './manual-jobs.controller';
import { ManualJobsRepository } from './manual-jobs.repository';
import { OpsCredentialsGuard } from './ops-credentials.guard';
import { OpsTasksController } from './ops-tasks.controller';
import { OpsTasksRepository } from './ops-tasks.repository';
import { OpsTasksService } from './ops-tasks.service';

/**
 * Assisted providers: ops tasks, manual jobs (/jobs/manual/{id}), the ops task API
 * (/ops/api/tasks) and the `assisted_apply` job that brings completed work to the payroll system.
 *
 * BenefitsModule and EnrollmentsModule import this module (their writes on Assisted connections
 * open work here), so the stateless pieces of theirs used here (event writer, repositories) are
 * provided again rather than imported, which would make the modules circular.
 */
@Module({
  imports: [AuthModule, JobsModule],
  controllers: [ManualJobsController, OpsTasksController],
  providers: [
    AssistedWorkService,
    OpsTasksService,
    OpsTasksRepository,
    ManualJobsRepository,
    AssistedApplyHandler,
    OpsCredentialsGuard,
    BenefitEventsWriter,
    BenefitsRepository,
    EnrollmentsRepository,
    { provide: HOLIDAY_CALENDAR, useClass: UsFederalHolidayCalendar },
  ],
  exports: [AssistedWorkService],
})
export class AssistedModule implements OnModuleInit {
  constructor(
    private readonly registry: JobHandlerRegistry,
    private readonly applyHandler: AssistedApplyHandler,
  ) {}

  onModuleInit(): void {
    this.registry.register(this.applyHandler);
  }
}
