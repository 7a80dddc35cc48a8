import { Module } from '@nestjs/common';
import { EmployerDataRepository } from '../../infrastructure/database/repositories/employer-data.repository';
import { JobsModule } from '../jobs/jobs.module';
import { ReadCacheModule } from '../read-cache/read-cache.module';
import { EmployerController } from './employer.controller';
import { EmployerReadsService } from './employer-reads.service';

/**
 * Employer reads: company, directory, individual, employment, payment, pay-statement, pay
 * groups. Served from the latest completed sync, or live from the provider (PROVIDER_PORT,
 * global) before the first one.
 */
@Module({
  // The sync under way, named in the messages of not-found items.
  imports: [JobsModule, ReadCacheModule],
  controllers: [EmployerController],
  providers: [EmployerDataRepository, EmployerReadsService],
  exports: [EmployerReadsService],
})
export class EmployerModule {}
