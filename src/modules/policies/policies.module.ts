import { Module } from '@nestjs/common';
import { OpsCredentialsGuard } from '../ops-auth/ops-credentials.guard';
import { AuthModule } from '../auth/auth.module';
import { BenefitsModule } from '../benefits/benefits.module';
import { ProvidersModule } from '../providers/providers.module';
import { PoliciesController } from './policies.controller';
import { PoliciesRepository } from './policies.repository';
import { PoliciesService } from './policies.service';

/**
 * Auto-enrollment policies for new hires: the ops API under /ops/api/policies, and the
 * repository the new-hire saga reads them from (`activeFor`).
 */
@Module({
  imports: [AuthModule, ProvidersModule, BenefitsModule],
  controllers: [PoliciesController],
  providers: [PoliciesRepository, PoliciesService, OpsCredentialsGuard],
  exports: [PoliciesRepository],
})
export class PoliciesModule {}
