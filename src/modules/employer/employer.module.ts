import { Module } from '@nestjs/common';

/** Employer reads: company, directory, individual, employment, payment, pay-statement, pay groups. */
@Module({})
export class EmployerModule {}
