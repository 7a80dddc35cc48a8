import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { BenefitsLookup } from '../../benefits/benefits-lookup.service';
import { EnrollmentLifecycle } from '../enrollment-lifecycle';
import { EnrollIndividualsCommand, EnrollmentCommandResult } from './enrollment-commands';
import { EnrollmentRequestRules } from './enrollment-requests';

/**
 * Enrolls individuals (overwrite). The request is validated whole (nothing is written for a bad
 * one), then opened through the enrollment lifecycle in one transaction.
 */
@CommandHandler(EnrollIndividualsCommand)
export class EnrollIndividualsHandler implements ICommandHandler<EnrollIndividualsCommand, EnrollmentCommandResult> {
  constructor(
    private readonly lookup: BenefitsLookup,
    private readonly rules: EnrollmentRequestRules,
    private readonly lifecycle: EnrollmentLifecycle,
  ) {}

  async execute({ scope, benefitId, elements, context }: EnrollIndividualsCommand): Promise<EnrollmentCommandResult> {
    const benefit = await this.lookup.require(scope, benefitId);
    const [outcome] = await this.lifecycle.open([this.rules.enroll(scope, benefit, elements, context)]);
    return { jobId: outcome.job?.id ?? null, stale: outcome.stale };
  }
}
