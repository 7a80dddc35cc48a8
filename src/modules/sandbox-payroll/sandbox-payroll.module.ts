import { Module } from '@nestjs/common';

/** Sandbox edits of the sandbox payroll system (company, directory, individual, employment, payment). */
@Module({})
export class SandboxPayrollModule {}
