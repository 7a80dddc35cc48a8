import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { creationStateOf } from '../../domain/benefits/benefit-visibility';
import { Connection } from '../../domain/connections/connection';
import { EnrollmentChange, IndividualResult } from '../../domain/enrollments/enrollment-change';
import { GroupWork } from '../../domain/enrollments/enrollment-ledger.repository';
import { packIntoCalls } from '../../domain/enrollments/provider-calls';
import { Job, RetryPolicy } from '../../domain/jobs/job';
import { PROVIDER_BEHAVIOURS, ProviderBehaviours } from '../../domain/providers/provider-behaviour';
import { employerRefOf } from '../../domain/providers/provider-port';
import { DomainError } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { ENROLLMENT_GROUP_JOB } from '../../infrastructure/database/repositories/enrollment-ledger.repository';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { domainErrorResponse } from '../../infrastructure/http/error-response';
import { BenefitsRepository } from '../benefits/benefits.repository';
import { BatchOutcome, JobDeferral, JobHandler, JobOutcome, JobRunContext } from '../jobs/job-handler';
import { isTransientFailure } from '../jobs/job-worker';
import { ProviderRetryPolicies } from '../providers/provider-retry-policies';
import { EnrollmentLifecycle } from './enrollment-lifecycle';

/** How long a group waiting on people (an earlier group in an ops task) sleeps before looking again; that group's end wakes it sooner. */
const WAIT_FOR_OPS_MS = 5 * 60_000;
/**
 * How long a group waiting on an earlier group of the same individuals sleeps before looking
 * again. That group's end wakes it (in the transaction that records it), so this is a net for
 * what no end wakes (a group taken over by a later request leaves an unenroll behind it waiting
 * unwoken). Looking again at once kept every follower of a slow or retried provider call leased,
 * checked and put back at every poll until it ended.
 */
const WAIT_FOR_EARLIER_GROUP_MS = 10_000;
/**
 * How long a group waiting for its benefit's creation at the provider sleeps before looking
 * again. The creation's commit wakes it (BenefitCreateHandler); this is a net for a creation
 * that ends otherwise (failed for good: the group then ends with a 404 per individual).
 */
const WAIT_FOR_BENEFIT_MS = 10_000;

/** Due groups leased and worked together: one provider call per benefit (up to PROVIDER_CALL_MAX_CHANGES) for all of them. */
export const GROUP_BATCH_SIZE = 500;
/**
 * People in the groups one worker works at once, all batches together (a group larger than
 * this runs alone): a batch holds its people's changes, ledgers and results in memory until it
 * commits, about 5 KB each (bench/background-heap.ts), so the bound is on people, not groups:
 * a batch of 500 groups from 10,000-person requests once took an instance's whole heap.
 */
export const GROUP_BATCH_PEOPLE = 10_000;
/** Group batches one worker runs at once: two keep the provider busy while the other commits. */
const GROUP_BATCHES_AT_ONCE = 2;

/**
 * Works effective-date groups on their date (the worker leases them once `scheduled_at` passes
 * the clock), many at once, through each connection's provider behaviour: an Automated
 * provider gets one call per benefit for all its due groups (calls of at most
 * PROVIDER_CALL_MAX_CHANGES changes) and answers per individual; an
 * Assisted provider's staff get each group as a task. A group waits, without spending a run,
 * for an earlier request's change of the same individuals and for its benefit's creation. The
 * results, the enrollment rows, the jobs' statuses, their sagas and the events commit with the
 * work jobs' completion, so a worker that dies after the provider call leaves the groups to the
 * next one (the provider's changes are idempotent).
 */
@Injectable()
export class EnrollmentGroupHandler implements JobHandler {
  readonly type = ENROLLMENT_GROUP_JOB;
  readonly batch = {
    size: GROUP_BATCH_SIZE,
    atOnce: GROUP_BATCHES_AT_ONCE,
    maxWeight: GROUP_BATCH_PEOPLE,
    run: (jobs: readonly Job[], contexts: ReadonlyMap<string, JobRunContext>) => this.runBatch(jobs, contexts),
  };
  private readonly logger = new Logger(EnrollmentGroupHandler.name);

  constructor(
    private readonly lifecycle: EnrollmentLifecycle,
    private readonly connections: ConnectionsRepository,
    private readonly benefits: BenefitsRepository,
    private readonly retries: ProviderRetryPolicies,
    private readonly uow: UnitOfWork,
    private readonly config: AppConfig,
    @Inject(PROVIDER_BEHAVIOURS) private readonly behaviours: ProviderBehaviours,
  ) {}

  retryPolicy(job: Job): Promise<RetryPolicy> {
    return this.retries.forConnection(job.connectionId);
  }

  /** One job: the batch of one it is. */
  async run(job: Job, context: JobRunContext): Promise<JobOutcome> {
    const outcome = await this.runBatch([job], new Map([[job.id, context]]));
    const deferral = outcome.deferred.get(job.id);
    if (deferral) throw deferral;
    if (outcome.failed.has(job.id)) throw outcome.failed.get(job.id);
    return { ...outcome.ended.get(job.id)!, commit: outcome.commit };
  }

  async runBatch(jobs: readonly Job[], contexts: ReadonlyMap<string, JobRunContext>): Promise<BatchOutcome> {
    const outcome: BatchOutcome = { ended: new Map(), deferred: new Map(), failed: new Map() };
    const processed: { groupId: string; results: IndividualResult[]; reason?: string }[] = [];
    const handedToOps: string[] = [];
    const end = (job: Job, result: Record<string, unknown>, status: 'complete' | 'error' = 'complete') => outcome.ended.set(job.id, { status, result });
    const record = (job: Job, groupId: string, results: IndividualResult[], reason?: string) => {
      processed.push({ groupId, results, ...(reason === undefined ? {} : { reason }) });
      end(job, { group_id: groupId, results, ...(reason === undefined ? {} : { error: reason }) });
    };

    const groupOf = new Map(jobs.map((job) => [job.id, groupIdOf(job)]));
    const jobOfGroup = new Map(jobs.flatMap((job) => (groupOf.get(job.id) ? [[groupOf.get(job.id)!, job] as const] : [])));
    const connections = await this.connections.findMany(jobs.map((job) => job.connectionId));
    const ready: { job: Job; work: GroupWork; connection: Connection }[] = [];
    // Checked and marked submitting in one transaction, under the individuals' locks.
    const claimed = await this.lifecycle.claim([...jobOfGroup.keys()], async (works) => {
      const candidates: { job: Job; work: GroupWork }[] = [];
      for (const job of jobs) {
        const work = works.get(groupOf.get(job.id) ?? '');
        if (!work) end(job, { error: `No enrollment group ${String(groupOf.get(job.id))}` }, 'error');
        else if (work.group.state === 'processed') end(job, { group_id: work.group.id, already_processed: true });
        else {
          // One individual's changes reach the provider in request order.
          const order = work.ledger.orderCheck(work.group.id);
          if (order.ready) candidates.push({ job, work });
          else {
            const blocker = work.ledger.group(order.waitsFor.groupId);
            outcome.deferred.set(
              job.id,
              new JobDeferral(
                `Waits for group ${order.waitsFor.groupId} of job ${order.waitsFor.jobId}, an earlier request for the same individuals`,
                blocker?.state === 'in_ops' ? WAIT_FOR_OPS_MS : WAIT_FOR_EARLIER_GROUP_MS,
              ),
            );
          }
        }
      }
      const creations = await this.benefits.creationStatusesOf(candidates.map((c) => c.work.group.benefitId), this.uow.manager);
      for (const { job, work } of candidates) {
        const connection = connections.get(job.connectionId);
        const entity = connection?.entities.find((e) => e.id === job.entityId);
        const groupId = work.group.id;
        if (!connection || !entity || connection.status === 'disconnected' || entity.status !== 'active') {
          record(job, groupId, allOf(work.changes, 403, 'The entity was disconnected before this group was processed'));
        } else if (connection.status === 'reauth') {
          record(job, groupId, allOf(work.changes, 401, 'The connection needs reauthentication'));
        } else {
          const creation = creationStateOf(creations.get(work.group.benefitId));
          // The provider does not know the benefit until its creation job is done: asleep until it wakes the group.
          if (creation === 'creating') outcome.deferred.set(job.id, new JobDeferral(`Waits for benefit ${work.group.benefitId} to be created at the provider`, WAIT_FOR_BENEFIT_MS));
          else if (creation === 'failed') record(job, groupId, allOf(work.changes, 404, `Benefit ${work.group.benefitId} could not be created at the provider`));
          else ready.push({ job, work, connection });
        }
      }
      return ready.map((r) => r.work.group.id);
    });

    const folds = new Map<string, typeof ready>();
    for (const item of ready) {
      const work = claimed.get(item.work.group.id);
      if (!work) {
        end(item.job, { group_id: item.work.group.id, already_processed: true });
        continue;
      }
      const key = `${item.job.connectionId}/${item.job.entityId}/${work.group.benefitId}`;
      const fold = folds.get(key);
      if (fold) fold.push({ ...item, work });
      else folds.set(key, [{ ...item, work }]);
    }
    const calls = [...folds.values()].flatMap((fold) => packIntoCalls(fold, ({ work }) => work.changes.length, this.config.PROVIDER_CALL_MAX_CHANGES));
    await Promise.all(
      calls.map(async (fold) => {
        const { connection, job: first, work: sample } = fold[0];
        const entity = connection.entities.find((e) => e.id === first.entityId)!;
        try {
          const answers = await this.behaviours.of(connection).workGroups(
            employerRefOf(connection, entity),
            sample.group.benefitId,
            fold.map(({ work }) => ({ groupId: work.group.id, operation: work.group.operation, effectiveDate: work.group.effectiveDate, changes: work.changes })),
          );
          for (const { job, work } of fold) {
            const answer = answers.get(work.group.id)!;
            if (answer === 'handed_to_ops') {
              handedToOps.push(work.group.id);
              end(job, { group_id: work.group.id, handed_to_ops: true });
            } else record(job, work.group.id, answer.results);
          }
        } catch (error) {
          if (!(error instanceof DomainError)) this.logger.error(`enrollment groups of benefit ${sample.group.benefitId}: ${(error as Error)?.stack ?? error}`);
          for (const { job, work } of fold) {
            // Transient failures go back to the worker for a retry with backoff, except on the
            // last attempt: then the group ends here, so its job never waits on it forever.
            if (isTransientFailure(error) && !contexts.get(job.id)?.lastAttempt) outcome.failed.set(job.id, error);
            else record(job, work.group.id, work.changes.map((c) => failureOf(c.individualId, error)));
          }
        }
      }),
    );
    if (processed.length > 0 || handedToOps.length > 0) {
      outcome.commit = async () => void (await this.lifecycle.record({ processed, handedToOps }));
    }
    return outcome;
  }

  /** The worker gave up (its runs kept dying, or it failed for good): the group ends with every individual failed, so its job can end. */
  async abandon(job: Job, reason: string): Promise<JobOutcome> {
    const groupId = groupIdOf(job);
    const work = groupId === undefined ? undefined : await this.lifecycle.read(groupId);
    if (!work || work.group.state === 'processed') return { status: 'error', result: { error: reason } };
    const results = allOf(work.changes, 500, `The provider call was given up: ${reason}`);
    return {
      status: 'complete',
      result: { group_id: work.group.id, results, error: reason },
      commit: async () => void (await this.lifecycle.processed(work.group.id, results)),
    };
  }
}

const groupIdOf = (job: Job): string | undefined => (typeof job.params?.group_id === 'string' ? job.params.group_id : undefined);

const allOf = (changes: readonly EnrollmentChange[], code: number, message: string): IndividualResult[] =>
  changes.map((c) => ({ individual_id: c.individualId, code, message }));

/** A whole group the provider refused (or gave up on): each individual carries the error. */
function failureOf(individualId: string, error: unknown): IndividualResult {
  if (error instanceof DomainError) {
    const { status, body } = domainErrorResponse(error);
    return { individual_id: individualId, code: status, message: body.message };
  }
  return { individual_id: individualId, code: 500, message: 'The provider call failed unexpectedly' };
}
