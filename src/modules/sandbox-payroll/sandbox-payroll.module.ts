import { Module } from '@nestjs/common';
import { SandboxPayrollController } from './sandbox-payroll.controller';
import { SandboxPayrollService } from './sandbox-payroll.service';

/**
 * Sandbox edits of the sandbox payroll system (company, directory, individual, employment,
 * payment). The store comes from the global ProviderAdaptersModule.
 */
@Module({
  controllers: [SandboxPayrollController],
  providers: [SandboxPayrollService],
})
export class SandboxPayrollModule {}
