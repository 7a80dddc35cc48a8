import { Inject, Injectable } from '@nestjs/common';
import { Benefit } from '../../domain/benefits/benefit';
import { utcDateOf } from '../../domain/benefits/effective-date';
import { employerRefOf, PROVIDER_PORT, ProviderEnrollmentConfiguration, ProviderPort } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { BenefitScope, BenefitsLookup } from '../benefits/benefits-lookup.service';
import { EnrollmentsRepository } from './enrollments.repository';

/** An individual's enrollment as `GET …/individuals` answers it. */
export interface EnrollmentView {
  individualId: string;
  configuration: ProviderEnrollmentConfiguration;
}

/**
 * Reads of enrollments. Writes are commands (EnrollIndividualsCommand, UnenrollIndividualsCommand)
 * so REST requests and HRIS events take the same path.
 */
@Injectable()
export class EnrollmentsService {
  constructor(
    private readonly lookup: BenefitsLookup,
    private readonly enrollments: EnrollmentsRepository,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Enrollments in force today. Automated: live from the provider (spec: deductions reads are
   * live); Assisted: the service's own record of what ops applied (the provider has no API).
   */
  async inForce(scope: BenefitScope, benefitId: string, individualIds?: string[]): Promise<{ benefit: Benefit; enrollments: EnrollmentView[] }> {
    const benefit = await this.lookup.require(scope, benefitId);
    const today = utcDateOf(this.clock.now());
    if (this.lookup.assisted(scope.connection)) {
      const rows = await this.enrollments.listOfBenefit(benefit.id, { statuses: ['enrolled'], individualIds });
      const enrollments = rows
        .filter((r) => r.effectiveDate <= today && (r.endedOn === null || r.endedOn > today))
        .map((r) => ({ individualId: r.individualId, configuration: r.configuration }));
      return { benefit, enrollments };
    }
    const live = await this.provider.enrollments(employerRefOf(scope.connection, scope.entity), benefit.id, today, individualIds);
    return { benefit, enrollments: live.map((e) => ({ individualId: e.individual_id, configuration: e.configuration })) };
  }
}
