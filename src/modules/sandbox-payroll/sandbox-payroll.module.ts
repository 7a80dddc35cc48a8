import { Module } from '@nestjs/common';
import { ProvidersModule } from '../providers/providers.module';
import { SyncModule } from '../sync/sync.module';
import { SandboxPayrollController } from './sandbox-payroll.controller';
import { SandboxPayrollFaultsService } from './sandbox-payroll-faults.service';
import { SandboxPayrollService } from './sandbox-payroll.service';

/**
 * Sandbox edits of the sandbox payroll system (company, directory, individual, employment,
 * payment). The store comes from the global ProviderAdaptersModule; the sync that shows an edit
 * in synced reads, from SyncModule.
 */
@Module({
  imports: [SyncModule, ProvidersModule],
  controllers: [SandboxPayrollController],
  providers: [SandboxPayrollService, SandboxPayrollFaultsService],
})
export class SandboxPayrollModule {}
