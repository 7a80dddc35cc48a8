import { Module, OnModuleInit } from '@nestjs/common';
import { AssistedModule } from '../assisted/assisted.module';
import { AuthModule } from '../auth/auth.module';
import { BenefitsModule } from '../benefits/benefits.module';
import { JobHandlerRegistry } from '../jobs/job-handler';
import { JobsModule } from '../jobs/jobs.module';
import { ProvidersModule } from '../providers/providers.module';
import { EnrollmentGroupHandler } from './enrollment-group.handler';
import { EnrollmentsController } from './enrollments.controller';
import { EnrollmentsRepository } from './enrollments.repository';
import { EnrollmentsService } from './enrollments.service';
import { EnrollIndividualsHandler } from './commands/enroll-individuals.handler';
import { EnrollmentRequests } from './commands/enrollment-requests';
import { UnenrollIndividualsHandler } from './commands/unenroll-individuals.handler';
import { EnrollmentJobProgress } from './enrollment-job-progress';
import { EnrollmentSaga } from '../../sagas/enrollment.saga';

/**
 * Enrollments: `POST|DELETE|GET /employer/benefits/{id}/individuals`, `GET …/enrolled`, the
 * enroll and unenroll commands (REST and HRIS events alike), and the handler of the internal
 * jobs that submit each effective-date group to the provider.
 */
@Module({
  imports: [AuthModule, ProvidersModule, JobsModule, BenefitsModule, AssistedModule],
  controllers: [EnrollmentsController],
  providers: [
    EnrollmentsRepository,
    EnrollmentsService,
    EnrollmentRequests,
    EnrollIndividualsHandler,
    UnenrollIndividualsHandler,
    EnrollmentJobProgress,
    EnrollmentSaga,
    EnrollmentGroupHandler,
  ],
  exports: [EnrollmentsRepository, EnrollmentJobProgress],
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
