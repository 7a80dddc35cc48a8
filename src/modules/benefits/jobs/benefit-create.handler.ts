import { Inject, Injectable } from '@nestjs/common';
import { BenefitCreateParams } from '../../../domain/benefits/benefit-job-params';
import { ENROLLMENT_LEDGER_REPOSITORY, EnrollmentLedgerRepository } from '../../../domain/enrollments/enrollment-ledger.repository';
import { Job, RetryPolicy } from '../../../domain/jobs/job';
import { PROVIDER_PORT, ProviderPort } from '../../../domain/providers/provider-port';
import { ConnectionsRepository } from '../../../infrastructure/database/repositories/connections.repository';
import { JobHandler, JobOutcome } from '../../jobs/job-handler';
import { ProviderRetryPolicies } from '../../providers/provider-retry-policies';
import { benefitJobTarget } from './benefit-job-target';

/**
 * `benefit_create` on an Automated provider: creates the deduction at the provider under the
 * service's benefit_id. The provider's create is idempotent on that id, so a run retried after
 * a crash or a provider failure never creates it twice. Enrollment groups put back to wait for
 * the creation are woken as it commits.
 */
@Injectable()
export class BenefitCreateHandler implements JobHandler {
  readonly type = 'benefit_create';

  constructor(
    private readonly connections: ConnectionsRepository,
    private readonly retries: ProviderRetryPolicies,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    @Inject(ENROLLMENT_LEDGER_REPOSITORY) private readonly ledgers: EnrollmentLedgerRepository,
  ) {}

  retryPolicy(job: Job): Promise<RetryPolicy> {
    return this.retries.forConnection(job.connectionId);
  }

  async run(job: Job): Promise<JobOutcome> {
    const target = await benefitJobTarget(this.connections, job);
    if ('outcome' in target) return target.outcome;
    const params = job.params as unknown as BenefitCreateParams;
    const created = await this.provider.createBenefit(target.ref, {
      benefit_id: params.benefit_id,
      type: params.type,
      description: params.description,
      frequency: params.frequency,
      company_contribution: params.company_contribution,
    });
    return {
      status: 'complete',
      result: { benefit_id: created.benefit_id },
      commit: () => this.ledgers.wakeGroupsWaitingForBenefits([params.benefit_id]),
    };
  }
}
