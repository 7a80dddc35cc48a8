import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { enrollmentJobStatus, IndividualResult, individualResultsOf } from '../../domain/benefits/enrollment-job';
import { SUPERSEDED } from '../../domain/sagas/saga';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { EnrollmentSaga } from '../../sagas/enrollment.saga';
import { BenefitEventsWriter, NewBenefitEvent } from '../benefits/benefit-events.writer';
import { EnrollmentGroup, EnrollmentsRepository, GroupOperation } from './enrollments.repository';

const SUPERSEDED_PREFIX = 'Superseded by job';

/**
 * How an enrollment job moves: a group processed (by its provider call, or given up on), or
 * individuals taken over by a later request. Each runs in the transaction that changes the
 * groups, so the parent job's status, its saga and its events never lag behind them.
 */
@Injectable()
export class EnrollmentJobProgress {
  constructor(
    private readonly enrollments: EnrollmentsRepository,
    private readonly events: BenefitEventsWriter,
    private readonly saga: EnrollmentSaga,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Records a group's results: group, enrollment rows, parent job, saga and events together. */
  async groupProcessed(group: EnrollmentGroup, results: IndividualResult[], manager: EntityManager): Promise<void> {
    const now = this.clock.now();
    // Same lock order as a new request of the benefit: benefit, then job, then groups.
    await this.enrollments.lockBenefit(group.benefitId, manager);
    const parent = await this.enrollments.lockJob(group.jobId, manager);
    if (!parent) throw new Error(`enrollment job ${group.jobId} is gone`);
    if (!(await this.enrollments.markProcessed(group.id, results, now, manager))) return;
    if (group.operation === 'enroll') await this.enrollments.recordEnrolled(group.benefitId, group.jobId, results, now, manager);
    else await this.enrollments.recordUnenrolled(group.benefitId, group.jobId, results, group.effectiveDate, now, manager);

    const succeeded = results.filter((r) => r.code === 200).length;
    const scope = { connectionId: parent.connectionId, entityId: parent.entityId ?? '' };
    await this.saga.groupProcessed(
      manager,
      { jobId: group.jobId, effectiveDate: group.effectiveDate, operation: group.operation, succeeded, failed: results.length - succeeded },
      now,
    );
    await this.events.record(manager, [
      {
        type: 'EnrollmentGroupProcessed',
        ...scope,
        data: {
          job_id: group.jobId,
          benefit_id: group.benefitId,
          operation: group.operation,
          effective_date: group.effectiveDate,
          succeeded,
          failed: results.length - succeeded,
          results,
        },
      },
    ]);
    await this.settle(group.jobId, group.benefitId, group.operation, scope, now, manager);
  }

  /**
   * A later request of the benefit takes over these individuals from `fromDate` on: they leave
   * the enroll groups still waiting on that date or later (their result: 409, superseded), so an
   * older future-dated enrollment cannot re-enroll someone unenrolled since, or undo a newer
   * configuration. Groups dated before `fromDate` still apply and the later request follows
   * them; a waiting unenroll (a termination's end date) is never taken over by an enroll.
   * In the later request's transaction, after it locked the benefit.
   */
  async supersede(
    manager: EntityManager,
    request: { benefitId: string; individualIds: string[]; fromDate: string; byJobId: string; operation: GroupOperation },
  ): Promise<void> {
    const now = this.clock.now();
    const ids = new Set(request.individualIds.map((id) => id.toLowerCase()));
    const groups = await this.enrollments.waitingGroupsNaming(request.benefitId, [...ids], request.fromDate, request.byJobId, manager);
    for (const group of groups) {
      const parent = await this.enrollments.lockJob(group.jobId, manager);
      if (!parent) continue;
      const taken = group.items.filter((i) => ids.has(i.individual_id.toLowerCase()));
      const remaining = group.items.filter((i) => !ids.has(i.individual_id.toLowerCase()));
      const results: IndividualResult[] = taken.map((i) => ({
        individual_id: i.individual_id,
        code: 409,
        message: `${SUPERSEDED_PREFIX} ${request.byJobId}, a later request for this individual effective ${request.fromDate}`,
      }));
      await this.enrollments.shrinkGroup(group.id, remaining, results, now, manager);
      if (request.operation === 'unenroll' && group.operation === 'enroll') {
        await this.enrollments.endWaitingRows(group.benefitId, group.jobId, taken.map((i) => i.individual_id), request.fromDate, now, manager);
      }
      await this.saga.superseded(manager, group.jobId, { by_job_id: request.byJobId, effective_date: group.effectiveDate, individuals: taken.length }, now);
      if (remaining.length === 0) {
        const scope = { connectionId: parent.connectionId, entityId: parent.entityId ?? '' };
        await this.settle(group.jobId, group.benefitId, group.operation, scope, now, manager);
      }
    }
  }

  /** The parent job's status and per-individual body from its groups; its end event once it ends. */
  private async settle(
    jobId: string,
    benefitId: string,
    operation: GroupOperation,
    scope: { connectionId: string; entityId: string },
    now: Date,
    manager: EntityManager,
  ): Promise<void> {
    const groups = await this.enrollments.groupStatesOfJob(jobId, manager);
    const status = enrollmentJobStatus(groups);
    const body = individualResultsOf(groups);
    // Every individual taken over by later requests: the job was cancelled, its sagas did not fail.
    const superseded = body.length > 0 && body.every((r) => r.code === 409 && r.message?.startsWith(SUPERSEDED_PREFIX));
    await this.enrollments.updateParentJob(
      jobId,
      { status, result: { body }, startedAt: now, completedAt: status === 'pending' ? null : now },
      manager,
      superseded ? SUPERSEDED : status,
    );
    if (status === 'pending') return;
    const ok = body.filter((r) => r.code === 200).length;
    const event: NewBenefitEvent = {
      type: status === 'complete' ? 'EnrollmentJobCompleted' : 'EnrollmentJobFailed',
      ...scope,
      data: { job_id: jobId, benefit_id: benefitId, operation, status, succeeded: ok, failed: body.length - ok },
    };
    await this.events.record(manager, [event]);
  }
}
