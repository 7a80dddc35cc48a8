import { Module } from '@nestjs/common';
import { PoliciesModule } from '../modules/policies/policies.module';
import { EnrollmentSaga } from './enrollment.saga';
import { HrisSagas } from './hris-sagas';

/**
 * The sagas. Each subscribes, at init, to the domain events it follows, and moves in the
 * transaction that produced them; they act through the same commands as the REST API. Nothing
 * imports this module but the application's root: the sagas depend on the modules, never the
 * other way round.
 */
@Module({
  imports: [PoliciesModule],
  providers: [EnrollmentSaga, HrisSagas],
})
export class SagasModule {}
