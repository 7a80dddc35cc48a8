import { Module } from '@nestjs/common';
import { EmployerDataRepository } from '../../infrastructure/database/repositories/employer-data.repository';
import { EmployerController } from './employer.controller';
import { EmployerReadsService } from './employer-reads.service';

/**
 * Employer reads: company, directory, individual, employment, payment, pay-statement, pay
 * groups. Served from the latest completed sync, or live from the provider (PROVIDER_PORT,
 * global) before the first one.
 */
@Module({
  controllers: [EmployerController],
  providers: [EmployerDataRepository, EmployerReadsService],
  exports: [EmployerReadsService],
})
export class EmployerModule {}
