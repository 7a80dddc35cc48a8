import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { BenefitUnenrollParams } from '../../../domain/benefits/benefit-job-params';
import { resolveEffectiveDate, utcDateOf } from '../../../domain/benefits/effective-date';
import { Clock, CLOCK } from '../../../domain/shared/clock';
import { invalidRequest } from '../../../domain/shared/domain-error';
import { UnitOfWork } from '../../../infrastructure/database/unit-of-work';
import { JobSignal } from '../../jobs/job-signal';
import { EnrollmentJobProgress } from '../enrollment-job-progress';
import { EnrollmentsRepository } from '../enrollments.repository';
import { EnrollmentCommandResult, UnenrollIndividualsCommand } from './enrollment-commands';
import { EnrollmentRequests, refuseRepeated, unprocessable } from './enrollment-requests';

/**
 * Ends enrollments from a date (the request date unless later). One transaction writes the job
 * (one group), the saga and the event, and takes the individuals out of every group still waiting
 * to enroll them on that date or later, so a future-dated enrollment cannot bring them back.
 */
@CommandHandler(UnenrollIndividualsCommand)
export class UnenrollIndividualsHandler implements ICommandHandler<UnenrollIndividualsCommand, EnrollmentCommandResult> {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly requests: EnrollmentRequests,
    private readonly enrollments: EnrollmentsRepository,
    private readonly progress: EnrollmentJobProgress,
    private readonly signal: JobSignal,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ scope, benefitId, individualIds, effectiveDate, context }: UnenrollIndividualsCommand): Promise<EnrollmentCommandResult> {
    refuseRepeated(individualIds);
    const benefit = await this.requests.lookup.require(scope, benefitId);
    const { support, providerName } = this.requests.supportOf(scope.connection, benefit.type);
    if (support === null) throw unprocessable([`${providerName} does not support ${benefit.type} benefits`]);
    if (support.supported_operations.individual_benefits.delete === 'not_supported_by_provider') {
      throw unprocessable([`${providerName} does not support unenrolling individuals from ${benefit.type} benefits`]);
    }
    const now = this.clock.now();
    const date = resolveEffectiveDate(effectiveDate, utcDateOf(now));
    if (!date.ok) throw invalidRequest(`Invalid request: ${date.problem}`);
    const ids = individualIds.map((id) => id.toLowerCase());
    const params: BenefitUnenrollParams = { benefit_id: benefit.id, effective_date: date.date, individual_ids: ids };

    const jobId = await this.uow.transaction(async (manager) => {
      await this.enrollments.lockBenefit(benefit.id, manager);
      const job = await this.requests.open(manager, {
        scope,
        benefit,
        work: { type: 'benefit_unenroll', params },
        groups: [{ operation: 'unenroll', effectiveDate: params.effective_date, items: ids.map((id) => ({ individual_id: id })) }],
        sagaId: context.sagaId,
      });
      await this.progress.supersede(manager, { benefitId: benefit.id, individualIds: ids, fromDate: params.effective_date, byJobId: job.id, operation: 'unenroll' });
      return job.id;
    });
    this.signal.nudge();
    return { jobId, stale: [] };
  }
}
