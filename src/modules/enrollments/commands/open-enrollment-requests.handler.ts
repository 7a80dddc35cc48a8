import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DomainError } from '../../../domain/shared/domain-error';
import { BenefitsLookup } from '../../benefits/benefits-lookup.service';
import { EnrollmentLifecycle, OpenEnrollment } from '../enrollment-lifecycle';
import { shareJobs } from './shared-jobs';
import { EnrollmentRequestsResult, OpenEnrollmentRequestsCommand } from './enrollment-commands';
import { EnrollmentRequestRules } from './enrollment-requests';

/** Families that mean "try again" rather than "this request can never be applied as it is". */
const TRANSIENT: ReadonlySet<DomainError['family']> = new Set(['provider_error', 'provider_timeout', 'server_error', 'rate_limit_error']);

/**
 * Opens a batch of enroll and unenroll requests set-wise: the benefits they name read at once,
 * each request validated as its REST command would be (a refusal is the API's own 4xx message),
 * then every owner's requests but those of refused owners opened through the lifecycle together,
 * sharing jobs (shareJobs: one per benefit and operation rather than one per owner).
 */
@CommandHandler(OpenEnrollmentRequestsCommand)
export class OpenEnrollmentRequestsHandler implements ICommandHandler<OpenEnrollmentRequestsCommand, EnrollmentRequestsResult> {
  constructor(
    private readonly lookup: BenefitsLookup,
    private readonly rules: EnrollmentRequestRules,
    private readonly lifecycle: EnrollmentLifecycle,
  ) {}

  async execute({ requests }: OpenEnrollmentRequestsCommand): Promise<EnrollmentRequestsResult> {
    const benefits = await this.lookup.requireMany(requests.map((r) => ({ scope: r.scope, benefitId: r.benefitId })));
    const refused = new Map<string, string>();
    const prepared = requests.map((request, i): OpenEnrollment | undefined => {
      if (refused.has(request.owner)) return undefined;
      try {
        const benefit = benefits[i];
        if (benefit instanceof DomainError) throw benefit;
        const { work, scope, context } = request;
        return work.operation === 'enroll'
          ? this.rules.enroll(scope, benefit, work.elements, context)
          : this.rules.unenroll(scope, benefit, work.individualIds, work.effectiveDate, context);
      } catch (error) {
        if (!(error instanceof DomainError) || TRANSIENT.has(error.family)) throw error;
        refused.set(request.owner, `${request.what}: ${error.message}`);
        return undefined;
      }
    });
    const open = prepared.map((p, i) => (p && !refused.has(requests[i].owner) ? p : undefined));
    const { shared, of } = shareJobs(open);
    const outcomes = await this.lifecycle.open(shared);
    return {
      results: open.map((p, i) => {
        if (!p) return null;
        const outcome = outcomes[of[i]!];
        const own = new Set(p.request.items.map((item) => item.individualId));
        const stale = outcome.stale.filter((id) => own.has(id));
        // Its own individuals all stale: this request opened nothing, whatever the others of its job did.
        return { jobId: stale.length === own.size ? null : (outcome.job?.id ?? null), stale };
      }),
      refused,
    };
  }
}
