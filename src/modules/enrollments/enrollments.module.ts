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

/**
 * Enrollments: `POST|DELETE|GET /employer/benefits/{id}/individuals`, `GET …/enrolled`, and the
 * handler of the internal jobs that submit each effective-date group to the provider.
 */
@Module({
  imports: [AuthModule, ProvidersModule, JobsModule, BenefitsModule, AssistedModule],
  controllers: [EnrollmentsController],
  providers: [EnrollmentsRepository, EnrollmentsService, EnrollmentGroupHandler],
  exports: [EnrollmentsRepository],
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
