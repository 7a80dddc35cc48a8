import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { BenefitEnrollParams } from '../../../domain/benefits/benefit-job-params';
import { resolveEffectiveDate, utcDateOf } from '../../../domain/benefits/effective-date';
import { benefitGroupOf, parseConfiguration, unsupportedFeatures } from '../../../domain/benefits/enrollment-configuration';
import { EnrollmentItem, groupByEffectiveDate } from '../../../domain/benefits/enrollment-job';
import { Clock, CLOCK } from '../../../domain/shared/clock';
import { invalidRequest } from '../../../domain/shared/domain-error';
import { UnitOfWork } from '../../../infrastructure/database/unit-of-work';
import { JobSignal } from '../../jobs/job-signal';
import { EnrollmentJobProgress } from '../enrollment-job-progress';
import { EnrollmentsRepository } from '../enrollments.repository';
import { EnrollIndividualsCommand, EnrollmentCommandResult } from './enrollment-commands';
import { EnrollmentRequests, listed, refuseRepeated, unprocessable } from './enrollment-requests';

/**
 * Enrolls individuals (overwrite). The request is validated whole (nothing is written for a bad
 * one) and split into one group per effective date; then ONE transaction writes the job, each
 * group with the internal job that submits it on its date, the enrollment rows, the saga and
 * the event, and takes the individuals out of older requests' groups from those dates on.
 */
@CommandHandler(EnrollIndividualsCommand)
export class EnrollIndividualsHandler implements ICommandHandler<EnrollIndividualsCommand, EnrollmentCommandResult> {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly requests: EnrollmentRequests,
    private readonly enrollments: EnrollmentsRepository,
    private readonly progress: EnrollmentJobProgress,
    private readonly signal: JobSignal,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ scope, benefitId, elements, context }: EnrollIndividualsCommand): Promise<EnrollmentCommandResult> {
    refuseRepeated(elements.map((e) => e.individual_id));
    const benefit = await this.requests.lookup.require(scope, benefitId);
    const now = this.clock.now();
    const today = utcDateOf(now);

    const group = benefitGroupOf(benefit.type);
    const problems: string[] = [];
    const items: EnrollmentItem[] = [];
    elements.forEach((element, index) => {
      const parsed = parseConfiguration(element.configuration, group, `[${index}].configuration`);
      if (!parsed.ok) return void problems.push(...parsed.problems);
      const date = resolveEffectiveDate(parsed.effectiveDate, today);
      if (!date.ok) return void problems.push(`[${index}].configuration.${date.problem}`);
      items.push({ individualId: element.individual_id.toLowerCase(), effectiveDate: date.date, configuration: parsed.configuration });
    });
    if (problems.length > 0) throw invalidRequest(`Invalid request: ${listed(problems)}`);

    const { support, providerName } = this.requests.supportOf(scope.connection, benefit.type);
    const unsupported = new Set<string>();
    if (support?.supported_operations.individual_benefits.create === 'not_supported_by_provider') {
      unsupported.add(`${providerName} does not support enrolling individuals in ${benefit.type} benefits`);
    }
    for (const item of items) for (const p of unsupportedFeatures(item.configuration, support, benefit.type, providerName)) unsupported.add(p);
    if (unsupported.size > 0) throw unprocessable([...unsupported]);

    const result = await this.uow.transaction(async (manager) => {
      await this.enrollments.lockBenefit(benefit.id, manager);
      // Ordered sources (HRIS events): an individual whose enrollment reflects a later change keeps it.
      const stale = context.occurredAt
        ? new Set(await this.enrollments.changedAfter(benefit.id, items.map((i) => i.individualId), context.occurredAt, manager))
        : new Set<string>();
      const fresh = items.filter((i) => !stale.has(i.individualId));
      if (fresh.length === 0) return { jobId: null, stale: [...stale] };

      const groups = groupByEffectiveDate(fresh);
      const params: BenefitEnrollParams = { benefit_id: benefit.id, groups };
      const job = await this.requests.open(manager, {
        scope,
        benefit,
        work: { type: 'benefit_enroll', params },
        groups: groups.map((g) => ({ operation: 'enroll' as const, effectiveDate: g.effective_date, items: g.items })),
        sagaId: context.sagaId,
      });
      for (const g of groups) {
        await this.progress.supersede(manager, {
          benefitId: benefit.id,
          individualIds: g.items.map((i) => i.individual_id),
          fromDate: g.effective_date,
          byJobId: job.id,
          operation: 'enroll',
        });
      }
      await this.enrollments.upsertRequested(
        fresh.map((item) => ({ benefitId: benefit.id, entityId: scope.entity.id, ...item })),
        job.id,
        now,
        manager,
        context.occurredAt ?? now,
      );
      return { jobId: job.id, stale: [...stale] };
    });
    if (result.jobId !== null) this.signal.nudge();
    return result;
  }
}
