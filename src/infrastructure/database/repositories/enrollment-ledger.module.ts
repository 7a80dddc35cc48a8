import { Global, Module } from '@nestjs/common';
import { ENROLLMENT_LEDGER_REPOSITORY } from '../../../domain/enrollments/enrollment-ledger.repository';
import { TypeormEnrollmentLedgerRepository } from './enrollment-ledger.repository';

/** The enrollment ledgers' repository, behind its domain port. */
@Global()
@Module({
  providers: [{ provide: ENROLLMENT_LEDGER_REPOSITORY, useClass: TypeormEnrollmentLedgerRepository }],
  exports: [ENROLLMENT_LEDGER_REPOSITORY],
})
export class EnrollmentLedgerModule {}
