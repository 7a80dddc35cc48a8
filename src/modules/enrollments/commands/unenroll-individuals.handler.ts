import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { BenefitsLookup } from '../../benefits/benefits-lookup.service';
import { EnrollmentLifecycle } from '../enrollment-lifecycle';
import { EnrollmentCommandResult, UnenrollIndividualsCommand } from './enrollment-commands';
import { EnrollmentRequestRules } from './enrollment-requests';

/**
 * Ends enrollments from a date (the request date unless later), through the enrollment
 * lifecycle: it also takes the individuals out of every enrollment still waiting to start on
 * that date or later, so a future-dated enrollment cannot bring them back.
 */
@CommandHandler(UnenrollIndividualsCommand)
export class UnenrollIndividualsHandler implements ICommandHandler<UnenrollIndividualsCommand, EnrollmentCommandResult> {
  constructor(
    private readonly lookup: BenefitsLookup,
    private readonly rules: EnrollmentRequestRules,
    private readonly lifecycle: EnrollmentLifecycle,
  ) {}

  async execute({ scope, benefitId, individualIds, effectiveDate, context }: UnenrollIndividualsCommand): Promise<EnrollmentCommandResult> {
    const benefit = await this.lookup.require(scope, benefitId);
    const [outcome] = await this.lifecycle.open([this.rules.unenroll(scope, benefit, individualIds, effectiveDate, context)]);
    return { jobId: outcome.job?.id ?? null, stale: outcome.stale };
  }
}
