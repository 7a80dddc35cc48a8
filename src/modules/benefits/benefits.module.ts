import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { ProvidersModule } from '../providers/providers.module';
import { BenefitEventsWriter } from './benefit-events.writer';
import { BenefitsLookup } from './benefits-lookup.service';
import { BenefitsRepository } from './benefits.repository';

/** Deductions: create, register, read, update, meta; the benefit job handlers. */
@Module({
  imports: [AuthModule, ProvidersModule],
  controllers: [],
  providers: [BenefitsRepository, BenefitsLookup, BenefitEventsWriter],
  exports: [BenefitsRepository, BenefitsLookup, BenefitEventsWriter],
})
export class BenefitsModule {}
