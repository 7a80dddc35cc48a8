import { Inject, Injectable } from '@nestjs/common';
import { BenefitUpdateParams } from '../../../domain/benefits/benefit-job-params';
import { isCreationPending } from '../../../domain/benefits/benefit-visibility';
import { Job, RetryPolicy } from '../../../domain/jobs/job';
import { PROVIDER_PORT, ProviderPort } from '../../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../../domain/shared/clock';
import { DomainError } from '../../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../../infrastructure/database/repositories/connections.repository';
import { JobHandler, JobOutcome } from '../../jobs/job-handler';
import { ProviderRetryPolicies } from '../../providers/provider-retry-policies';
import { BenefitsRepository } from '../benefits.repository';
import { benefitJobTarget } from './benefit-job-target';

/**
 * `benefit_update` on an Automated provider: sets the description at the provider, and the
 * service's record of it in the transaction that completes the job, so the local description
 * changes only once the provider has it.
 */
@Injectable()
export class BenefitUpdateHandler implements JobHandler {
  readonly type = 'benefit_update';

  constructor(
    private readonly connections: ConnectionsRepository,
    private readonly retries: ProviderRetryPolicies,
    private readonly benefits: BenefitsRepository,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  retryPolicy(job: Job): Promise<RetryPolicy> {
    return this.retries.forConnection(job.connectionId);
  }

  async run(job: Job): Promise<JobOutcome> {
    const target = await benefitJobTarget(this.connections, job);
    if ('outcome' in target) return target.outcome;
    const { benefit_id: benefitId, description } = job.params as unknown as BenefitUpdateParams;
    const updated = await this.provider.updateBenefit(target.ref, benefitId, { description });
    if (!updated) {
      const known = job.entityId === null ? undefined : await this.benefits.findKnownOfEntity(job.entityId, benefitId);
      if (known && isCreationPending(known)) {
        // Updated before its creation reached the provider: a transient state, retried with backoff.
        throw new DomainError('provider_error', `Benefit ${benefitId} is not created at the provider yet`);
      }
      return { status: 'error', result: { benefit_id: benefitId, error: `The provider has no benefit ${benefitId}` } };
    }
    return {
      status: 'complete',
      result: { benefit_id: benefitId, description: updated.description },
      commit: async (manager) => {
        await this.benefits.updateDescriptionUnlessTaken(benefitId, description, this.clock.now(), manager);
      },
    };
  }
}
