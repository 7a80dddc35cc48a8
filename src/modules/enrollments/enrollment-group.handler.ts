import { Inject, Injectable, Logger } from '@nestjs/common';
import { IndividualResult } from '../../domain/benefits/enrollment-job';
import { DEFAULT_RETRY_POLICY, Job } from '../../domain/jobs/job';
import { employerRefOf, PROVIDER_PORT, ProviderPort } from '../../domain/providers/provider-port';
import { DomainError } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { domainErrorResponse } from '../../infrastructure/http/error-response';
import { JobDeferral, JobHandler, JobOutcome, JobRunContext } from '../jobs/job-handler';
import { isTransientFailure } from '../jobs/job-worker';
import { EnrollmentGroup, EnrollmentsRepository } from './enrollments.repository';
import { ENROLLMENT_GROUP_JOB } from './commands/enrollment-requests';
import { EnrollmentJobProgress } from './enrollment-job-progress';

/**
 * Submits one effective-date group of an enrollment (or unenrollment) job to the provider: one
 * call per group, on its date (the worker leases it once `scheduled_at` passes the clock). The
 * provider answers per individual; the group's results, the enrollment rows, the parent job's
 * status, its saga and the events commit together with this job's completion (EnrollmentJobProgress), so a worker that dies after
 * the provider call leaves the group pending and the next worker calls again (enroll and
 * unenroll are idempotent at the provider).
 */
@Injectable()
export class EnrollmentGroupHandler implements JobHandler {
  readonly type = ENROLLMENT_GROUP_JOB;
  private readonly logger = new Logger(EnrollmentGroupHandler.name);

  constructor(
    private readonly enrollments: EnrollmentsRepository,
    private readonly connections: ConnectionsRepository,
    private readonly progress: EnrollmentJobProgress,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
  ) {}

  async run(job: Job, { attempt }: JobRunContext): Promise<JobOutcome> {
    const groupId = typeof job.params?.group_id === 'string' ? job.params.group_id : undefined;
    const group = groupId === undefined ? undefined : await this.enrollments.findGroup(groupId);
    if (!group) return { status: 'error', result: { error: `No enrollment group ${String(groupId)}` } };
    if (group.status === 'processed') return { status: 'complete', result: { group_id: group.id, results: group.results } };

    // One individual's changes reach the provider in request order: an earlier request's group
    // still waiting (its worker died mid-call, or it is running right now) goes first.
    const earlier = await this.enrollments.earlierWaitingGroup(group);
    if (earlier) throw new JobDeferral(`Waits for group ${earlier.id} of job ${earlier.jobId}, an earlier request for the same individuals`);

    let results: IndividualResult[];
    try {
      results = await this.submit(job, group);
    } catch (error) {
      // Transient failures go back to the worker for a retry with backoff, except on the last
      // attempt: then the group ends here, so the parent job never waits on it forever.
      if (isTransientFailure(error) && attempt < DEFAULT_RETRY_POLICY.maxAttempts) throw error;
      results = group.items.map((item) => failureOf(item.individual_id, error));
      if (!(error instanceof DomainError)) this.logger.error(`enrollment group ${group.id}: ${(error as Error)?.stack ?? error}`);
    }
    return {
      status: 'complete',
      result: { group_id: group.id, results },
      commit: (manager) => this.progress.groupProcessed(group, results, manager),
    };
  }

  /** The worker gave up (its runs kept dying): the group ends with every individual failed, so its job can end. */
  async abandon(job: Job, reason: string): Promise<JobOutcome> {
    const groupId = typeof job.params?.group_id === 'string' ? job.params.group_id : undefined;
    const group = groupId === undefined ? undefined : await this.enrollments.findGroup(groupId);
    if (!group || group.status === 'processed') return { status: 'error', result: { error: reason } };
    const results = group.items.map((i) => ({ individual_id: i.individual_id, code: 500, message: `The provider call was given up: ${reason}` }));
    return {
      status: 'complete',
      result: { group_id: group.id, results, error: reason },
      commit: (manager) => this.progress.groupProcessed(group, results, manager),
    };
  }

  /** The provider call; one result per item of the group, in its order. */
  private async submit(job: Job, group: EnrollmentGroup): Promise<IndividualResult[]> {
    const connection = await this.connections.find(job.connectionId);
    const entity = connection?.entities.find((e) => e.id === job.entityId);
    if (!connection || !entity || connection.status === 'disconnected' || entity.status !== 'active') {
      return group.items.map((i) => ({ individual_id: i.individual_id, code: 403, message: 'The entity was disconnected before this group was processed' }));
    }
    if (connection.status === 'reauth') {
      return group.items.map((i) => ({ individual_id: i.individual_id, code: 401, message: 'The connection needs reauthentication' }));
    }
    const creation = await this.enrollments.creationStatusOf(group.benefitId);
    if (creation === 'pending' || creation === 'in_progress') {
      // The provider does not know the benefit until its creation job is done: try again later.
      throw new DomainError('provider_error', `Benefit ${group.benefitId} is still being created at the provider`);
    }
    const ref = employerRefOf(connection, entity);
    const answers =
      group.operation === 'enroll'
        ? await this.provider.enroll(
            ref,
            group.benefitId,
            group.items.map((i) => ({ individual_id: i.individual_id, effective_date: group.effectiveDate, configuration: i.configuration! })),
          )
        : await this.provider.unenroll(
            ref,
            group.benefitId,
            group.items.map((i) => i.individual_id),
            group.effectiveDate,
          );
    const byId = new Map(answers.map((a) => [a.individual_id.toLowerCase(), a]));
    return group.items.map((item) => {
      const answer = byId.get(item.individual_id.toLowerCase());
      if (!answer) return { individual_id: item.individual_id, code: 502, message: 'The provider gave no answer for this individual' };
      return answer.message === undefined
        ? { individual_id: item.individual_id, code: answer.code }
        : { individual_id: item.individual_id, code: answer.code, message: answer.message };
    });
  }
}

/** A whole group the provider refused (or gave up on): each individual carries the error. */
function failureOf(individualId: string, error: unknown): IndividualResult {
  if (error instanceof DomainError) {
    const { status, body } = domainErrorResponse(error);
    return { individual_id: individualId, code: status, message: body.message };
  }
  return { individual_id: individualId, code: 500, message: 'The provider call failed unexpectedly' };
}
