import { Inject, Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ManualJobBody } from '../../domain/assisted/manual-job';
import { OpsTask } from '../../domain/assisted/ops-task';
import { BenefitCreateParams, BenefitUpdateParams } from '../../domain/benefits/benefit-job-params';
import { creationStateOf } from '../../domain/benefits/benefit-visibility';
import { IndividualResult } from '../../domain/enrollments/enrollment-change';
import { ENROLLMENT_LEDGER_REPOSITORY, EnrollmentLedgerRepository } from '../../domain/enrollments/enrollment-ledger.repository';
import { Job, RetryPolicy } from '../../domain/jobs/job';
import { EmployerRef, employerRefOf, PROVIDER_PORT, ProviderPort } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { domainErrorResponse } from '../../infrastructure/http/error-response';
import { BenefitEventsWriter } from '../../infrastructure/messaging/outbox/benefit-events.writer';
import { BenefitsRepository } from '../benefits/benefits.repository';
import { EnrollmentLifecycle } from '../enrollments/enrollment-lifecycle';
import { JobDeferral, JobHandler, JobOutcome, JobRunContext } from '../jobs/job-handler';
import { isTransientFailure } from '../jobs/job-worker';
import { submitToProvider } from '../providers/provider-behaviours';
import { ProviderRetryPolicies } from '../providers/provider-retry-policies';
import { ManualJobsRepository } from './manual-jobs.repository';
import { OpsTasksRepository } from './ops-tasks.repository';

/** Internal job type: applies a completed ops task's change to the payroll system. */
export const ASSISTED_APPLY = 'assisted_apply';

/** How long an applied task waiting for its benefit's setup sleeps before looking again; the setup's end wakes it sooner. */
const WAIT_FOR_BENEFIT_SETUP_MS = 10_000;

/** How applying a task came out, before it is recorded. */
interface Applied {
  status: 'complete' | 'error';
  /** Why the work was not done; null when it was. */
  error: string | null;
  /** Writes that commit with the job's end (the service's record of what the provider now holds). */
  record?: (manager: EntityManager) => Promise<void>;
}

/**
 * Runs after ops complete a task: makes the change in the (sandbox) payroll system through the
 * provider port, standing in for the provider's staff, and records it in the transaction that
 * finishes this job, with OpsTaskCompleted.
 * - An enrollment task is one effective-date group: the same provider call an Automated
 *   provider's group gets, and the same lifecycle step (results, rows, job, saga, events), in
 *   the same request order: it waits while an earlier request's change of its individuals is
 *   still being applied.
 * - Benefit work (create, register, update) ends its manual job; as on the Automated path, the
 *   benefit's own event (BenefitCreated, …) was written with the request.
 * Every provider call here is idempotent, so a run repeated after a crash changes nothing twice.
 * Provider outages are retried by the worker within the provider's retry budget; on the last
 * run, or when the worker gives up on runs that keep dying, the work ends in error rather than
 * staying in progress for ever.
 */
@Injectable()
export class AssistedApplyHandler implements JobHandler {
  readonly type = ASSISTED_APPLY;
  private readonly logger = new Logger(AssistedApplyHandler.name);

  constructor(
    private readonly tasks: OpsTasksRepository,
    private readonly manualJobs: ManualJobsRepository,
    private readonly connections: ConnectionsRepository,
    private readonly benefits: BenefitsRepository,
    private readonly lifecycle: EnrollmentLifecycle,
    private readonly events: BenefitEventsWriter,
    private readonly retries: ProviderRetryPolicies,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ENROLLMENT_LEDGER_REPOSITORY) private readonly ledgers: EnrollmentLedgerRepository,
  ) {}

  retryPolicy(job: Job): Promise<RetryPolicy> {
    return this.retries.forConnection(job.connectionId);
  }

  async run(job: Job, { attempt, lastAttempt }: JobRunContext): Promise<JobOutcome> {
    const task = await this.taskOf(job);
    if (!task) return { status: 'error', result: { error: `No ops task ${String(job.params?.task_id)}` } };
    if (task.groupId !== null) return this.applyGroup(task, task.groupId, attempt, lastAttempt);
    return this.benefitWorkOutcome(task, await this.applyBenefitWork(task, attempt, lastAttempt));
  }

  /** Runs that keep dying: the work ends in error (what reached the provider is unknown). */
  async abandon(job: Job, reason: string): Promise<JobOutcome> {
    const task = await this.taskOf(job);
    if (!task) return { status: 'error', result: { error: `No ops task ${String(job.params?.task_id)}` } };
    const error = `The change could not be applied to the payroll provider (${reason}); check the payroll system before trying again`;
    if (task.groupId !== null) {
      const groupId = task.groupId;
      return this.groupOutcome(task, async () => this.lifecycle.refused(groupId, 500, error, error), error);
    }
    return this.benefitWorkOutcome(task, { status: 'error', error });
  }

  private taskOf(job: Job): Promise<OpsTask | undefined> {
    return this.tasks.find(String(job.params?.task_id ?? ''));
  }

  // ---- enrollment groups ----

  private async applyGroup(task: OpsTask, groupId: string, attempt: number, lastAttempt: boolean): Promise<JobOutcome> {
    const work = await this.lifecycle.read(groupId);
    if (!work || work.group.state === 'processed') return { status: 'complete', result: { task_id: task.id, manual_job_id: task.jobId, already_processed: true } };
    const order = work.ledger.orderCheck(groupId);
    if (!order.ready) throw new JobDeferral(`Waits for group ${order.waitsFor.groupId} of job ${order.waitsFor.jobId}, an earlier request for the same individuals`);
    // Ops may complete an enrollment before the benefit's own task: the change waits for the benefit.
    const creation = creationStateOf(await this.benefits.creationStatusOf(work.group.benefitId));
    // Asleep until the benefit's setup ends and wakes it (benefitWorkOutcome); the delay is a net.
    if (creation === 'creating') throw new JobDeferral(`Waits for benefit ${work.group.benefitId} to be set up at the provider`, WAIT_FOR_BENEFIT_SETUP_MS);

    const ref = await this.refOf(task);
    let results: IndividualResult[];
    let reason: string | null = null;
    if (!ref) {
      reason = 'The connection or entity of this task no longer exists';
      results = work.changes.map((c) => ({ individual_id: c.individualId, code: 403, message: reason! }));
    } else {
      try {
        const group = { groupId, operation: work.group.operation, effectiveDate: work.group.effectiveDate, changes: work.changes };
        results = (await submitToProvider(this.provider, ref, work.group.benefitId, [group])).get(groupId)!;
      } catch (error) {
        const explained = this.explain(error, attempt, lastAttempt);
        reason = explained.reason;
        results = work.changes.map((c) => ({ individual_id: c.individualId, ...explained.result }));
      }
    }
    return this.groupOutcome(task, () => this.lifecycle.processed(groupId, results, reason), reason);
  }

  /** Ends this job, the group's step in the lifecycle and OpsTaskCompleted (with the manual job's status after it) together. */
  private groupOutcome(task: OpsTask, step: () => Promise<string | undefined>, error: string | null): JobOutcome {
    return {
      status: 'complete',
      result: { task_id: task.id, manual_job_id: task.jobId },
      commit: async (manager) => {
        const jobStatus = (await step()) ?? 'pending';
        await this.recordCompleted(manager, task, jobStatus, error);
      },
    };
  }

  // ---- benefit work ----

  private benefitWorkOutcome(task: OpsTask, applied: Applied): JobOutcome {
    const body: ManualJobBody = { benefit_id: String(task.payload.benefit_id), note: task.note, error: applied.error };
    return {
      status: 'complete',
      result: { task_id: task.id, manual_job_id: task.jobId, manual_job_status: applied.status },
      commit: async (manager) => {
        if (!(await this.manualJobs.finish(task.jobId, applied.status, body, this.clock.now(), manager))) return;
        await applied.record?.(manager);
        await this.recordCompleted(manager, task, applied.status, applied.error);
        // The benefit's setup has ended, done or not: work asleep waiting for it looks again now.
        if (task.type !== 'benefit_update') await this.ledgers.wakeGroupsWaitingForBenefits([String(task.payload.benefit_id)]);
      },
    };
  }

  /** Applies benefit work; a refusal (or the last failed run) becomes an `error` outcome, not a throw. */
  private async applyBenefitWork(task: OpsTask, attempt: number, lastAttempt: boolean): Promise<Applied> {
    const ref = await this.refOf(task);
    if (!ref) return { status: 'error', error: 'The connection or entity of this task no longer exists' };
    try {
      return await this.applyToProvider(ref, task);
    } catch (error) {
      return { status: 'error', error: this.explain(error, attempt, lastAttempt).reason };
    }
  }

  private async applyToProvider(ref: EmployerRef, task: OpsTask): Promise<Applied> {
    if (task.type === 'benefit_update') {
      const p = task.payload as unknown as BenefitUpdateParams;
      const updated = await this.provider.updateBenefit(ref, p.benefit_id, { description: p.description });
      if (!updated) return { status: 'error', error: `The payroll provider has no benefit ${p.benefit_id}` };
      return {
        status: 'complete',
        error: null,
        record: async (manager) => void (await this.benefits.updateDescriptionUnlessTaken(p.benefit_id, p.description, this.clock.now(), manager)),
      };
    }
    const p = task.payload as unknown as BenefitCreateParams;
    await this.provider.createBenefit(ref, {
      benefit_id: p.benefit_id,
      type: p.type,
      description: p.description,
      frequency: p.frequency,
      company_contribution: p.company_contribution,
    });
    return { status: 'complete', error: null };
  }

  // ---- shared ----

  private async refOf(task: OpsTask): Promise<EmployerRef | undefined> {
    const connection = await this.connections.find(task.connectionId);
    const entity = connection?.entities.find((e) => e.id === task.entityId);
    return connection && entity ? employerRefOf(connection, entity) : undefined;
  }

  /**
   * A failed provider call: transient ones are thrown back for a retry unless this is the last
   * run; the rest become the reason the work was not done, and each individual's result.
   */
  private explain(error: unknown, attempt: number, lastAttempt: boolean): { reason: string; result: { code: number; message: string } } {
    if (isTransientFailure(error)) {
      if (!lastAttempt) throw error;
      const reason = `The payroll provider could not be reached in ${attempt} attempts: ${(error as Error).message}`;
      return { reason, result: { code: domainErrorResponse(error as DomainError).status, message: reason } };
    }
    if (error instanceof DomainError) {
      const reason = `The payroll provider refused the change: ${error.message}`;
      return { reason, result: { code: domainErrorResponse(error).status, message: error.message } };
    }
    this.logger.error(`applying an ops task failed: ${(error as Error)?.stack ?? error}`);
    const reason = 'The change could not be applied to the payroll provider';
    return { reason, result: { code: 500, message: reason } };
  }

  private async recordCompleted(manager: EntityManager, task: OpsTask, jobStatus: string, error: string | null): Promise<void> {
    await this.events.record(manager, [
      {
        type: 'OpsTaskCompleted',
        connectionId: task.connectionId,
        entityId: task.entityId,
        data: {
          task_id: task.id,
          job_id: task.jobId,
          type: task.type,
          benefit_id: String(task.payload.benefit_id),
          job_status: jobStatus,
          resolved_by: task.resolvedBy,
          ...(error === null ? {} : { error }),
        },
      },
    ]);
  }
}
