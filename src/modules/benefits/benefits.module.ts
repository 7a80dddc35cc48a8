import { Module, OnModuleInit } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { JobHandlerRegistry } from '../jobs/job-handler';
import { JobsModule } from '../jobs/jobs.module';
import { ProvidersModule } from '../providers/providers.module';
import { BenefitsController } from './benefits.controller';
import { BenefitsLookup } from './benefits-lookup.service';
import { BenefitsRepository } from './benefits.repository';
import { BenefitsService } from './benefits.service';
import { CreateBenefitHandler, RegisterBenefitHandler, UpdateBenefitHandler } from './commands/benefit-commands';
import { BenefitCreateHandler } from './jobs/benefit-create.handler';
import { BenefitUpdateHandler } from './jobs/benefit-update.handler';

/** Deductions: create, register, update (commands), reads and meta; the benefit job handlers. */
@Module({
  imports: [AuthModule, ProvidersModule, JobsModule],
  controllers: [BenefitsController],
  providers: [
    BenefitsRepository,
    BenefitsLookup,
    BenefitsService,
    CreateBenefitHandler,
    RegisterBenefitHandler,
    UpdateBenefitHandler,
    BenefitCreateHandler,
    BenefitUpdateHandler,
  ],
  exports: [BenefitsRepository, BenefitsLookup],
})
export class BenefitsModule implements OnModuleInit {
  constructor(
    private readonly registry: JobHandlerRegistry,
    private readonly createHandler: BenefitCreateHandler,
    private readonly updateHandler: BenefitUpdateHandler,
  ) {}

  onModuleInit(): void {
    this.registry.register(this.createHandler);
    this.registry.register(this.updateHandler);
  }
}
