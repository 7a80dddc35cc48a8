import { Module, OnModuleInit } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { BenefitsModule } from '../benefits/benefits.module';
import { JobHandlerRegistry } from '../jobs/job-handler';
import { JobsModule } from '../jobs/jobs.module';
import { ProvidersModule } from '../providers/providers.module';
import { EnrollIndividualsHandler } from './commands/enroll-individuals.handler';
import { EnrollmentRequestRules } from './commands/enrollment-requests';
import { OpenEnrollmentRequestsHandler } from './commands/open-enrollment-requests.handler';
import { UnenrollIndividualsHandler } from './commands/unenroll-individuals.handler';
import { EnrollmentGroupHandler } from './enrollment-group.handler';
import { EnrollmentLifecycle } from './enrollment-lifecycle';
import { EnrollmentsController } from './enrollments.controller';
import { EnrollmentsService } from './enrollments.service';

/**
 * Enrollments: `POST|DELETE|GET /employer/benefits/{id}/individuals`, `GET …/enrolled`, the
 * enroll and unenroll commands (REST and HRIS events alike), the lifecycle they go through, and
 * the handler of the internal jobs that work each effective-date group on its date.
 */
@Module({
  imports: [AuthModule, ProvidersModule, JobsModule, BenefitsModule],
  controllers: [EnrollmentsController],
  providers: [
    EnrollmentsService,
    EnrollmentRequestRules,
    EnrollIndividualsHandler,
    UnenrollIndividualsHandler,
    OpenEnrollmentRequestsHandler,
    EnrollmentLifecycle,
    EnrollmentGroupHandler,
  ],
  exports: [EnrollmentLifecycle],
})
export class EnrollmentsModule implements OnModuleInit {
  constructor(
    private readonly registry: JobHandlerRegistry,
    private readonly groups: EnrollmentGroupHandler,
  ) {}

  onModuleInit(): void {
    this.registry.register(this.groups);
  }
}
