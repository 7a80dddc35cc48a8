import { Inject, Injectable } from '@nestjs/common';
import { Benefit } from '../../domain/benefits/benefit';
import { EnrollmentConfigurationParams } from '../../domain/benefits/benefit-job-params';
import { utcDateOf } from '../../domain/benefits/effective-date';
import { employerRefOf } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { BenefitScope, BenefitsLookup } from '../benefits/benefits-lookup.service';

/** An individual's enrollment as `GET …/individuals` answers it. */
export interface EnrollmentView {
  individualId: string;
  configuration: EnrollmentConfigurationParams;
}

/**
 * Reads of enrollments. Writes are commands (EnrollIndividualsCommand, UnenrollIndividualsCommand)
 * so REST requests and HRIS events take the same path.
 */
@Injectable()
export class EnrollmentsService {
  constructor(
    private readonly lookup: BenefitsLookup,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Enrollments in force today, as the connection's provider holds them: live from an Automated
   * provider, the service's record of what an Assisted provider's staff applied. A change still
   * waiting for its date or for ops does not hide the configuration in force.
   */
  async inForce(scope: BenefitScope, benefitId: string, individualIds?: string[]): Promise<{ benefit: Benefit; enrollments: EnrollmentView[] }> {
    const benefit = await this.lookup.require(scope, benefitId);
    const today = utcDateOf(this.clock.now());
    const enrollments = await this.lookup.behaviourOf(scope).enrollmentsInForce(employerRefOf(scope.connection, scope.entity), benefit.id, today, individualIds);
    return { benefit, enrollments };
  }
}
