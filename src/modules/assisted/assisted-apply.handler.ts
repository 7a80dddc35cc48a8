import { Inject, Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ManualJobBody, someSucceeded } from '../../domain/assisted/manual-job';
import { OpsTask } from '../../domain/assisted/ops-task';
import {
  BenefitCreateParams,
  BenefitEnrollParams,
  BenefitUnenrollParams,
  BenefitUpdateParams,
} from '../../domain/benefits/benefit-job-params';
import { IndividualResult } from '../../domain/benefits/enrollment-job';
import { DEFAULT_RETRY_POLICY, Job } from '../../domain/jobs/job';
import { EmployerRef, employerRefOf, PROVIDER_PORT, ProviderPort } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { BenefitEventsWriter, NewBenefitEvent } from '../benefits/benefit-events.writer';
import { BenefitsRepository } from '../benefits/benefits.repository';
import { EnrollmentsRepository } from '../enrollments/enrollments.repository';
import { JobHandler, JobOutcome, JobRunContext } from '../jobs/job-handler';
import { isTransientFailure } from '../jobs/job-worker';
import { ManualJobsRepository } from './manual-jobs.repository';
import { OpsTasksRepository } from './ops-tasks.repository';

/** Internal job type: applies a completed ops task's change to the payroll system. */
export const ASSISTED_APPLY = 'assisted_apply';

/** One effective-date group of enroll or unenroll work the provider answered. */
interface AppliedGroup {
  effectiveDate: string;
  results: IndividualResult[];
}

/** What applying came to, before it is recorded. */
interface Applied {
  status: 'complete' | 'error';
  error: string | null;
  individuals?: IndividualResult[];
  /** Enroll and unenroll work: the groups the provider answered, in the order they were sent. */
  groups?: AppliedGroup[];
  /** The service's own records of what the provider now holds, written with the job's end. */
  record?: (manager: EntityManager, at: Date) => Promise<void>;
}

const ENROLLMENT_OPERATIONS: Partial<Record<OpsTask['type'], 'enroll' | 'unenroll'>> = {
  benefit_enroll: 'enroll',
  benefit_unenroll: 'unenroll',
};

/** Individuals an enroll or unenroll task asks for. */
function requestedIndividuals(task: OpsTask): number {
  if (task.type === 'benefit_enroll') return (task.payload as unknown as BenefitEnrollParams).groups.reduce((n, g) => n + g.items.length, 0);
  if (task.type === 'benefit_unenroll') return (task.payload as unknown as BenefitUnenrollParams).individual_ids.length;
  return 0;
}

/**
 * EnrollmentJobCompleted or EnrollmentJobFailed for the manual job of an enroll or unenroll
 * task, in the shape the Automated path's group handler writes (counts over every individual);
 * none for other work. Without results (the work was refused or failed as a whole), every
 * individual asked for counts as failed.
 */
export function enrollmentJobEnded(task: OpsTask, status: 'complete' | 'error', results?: IndividualResult[]): NewBenefitEvent[] {
  const operation = ENROLLMENT_OPERATIONS[task.type];
  if (!operation) return [];
  const succeeded = results ? results.filter((r) => r.code === 200).length : 0;
  const failed = results ? results.length - succeeded : requestedIndividuals(task);
  return [
    {
      type: status === 'complete' ? 'EnrollmentJobCompleted' : 'EnrollmentJobFailed',
      connectionId: task.connectionId,
      entityId: task.entityId,
      data: { job_id: task.jobId, benefit_id: String(task.payload.benefit_id), operation, status, succeeded, failed },
    },
  ];
}

/** EnrollmentGroupProcessed for each group applied, as the Automated path writes one per group it submits. */
function enrollmentGroupsProcessed(task: OpsTask, groups: AppliedGroup[]): NewBenefitEvent[] {
  const operation = ENROLLMENT_OPERATIONS[task.type];
  if (!operation) return [];
  return groups.map(({ effectiveDate, results }) => {
    const succeeded = results.filter((r) => r.code === 200).length;
    return {
      type: 'EnrollmentGroupProcessed',
      connectionId: task.connectionId,
      entityId: task.entityId,
      data: {
        job_id: task.jobId,
        benefit_id: String(task.payload.benefit_id),
        operation,
        effective_date: effectiveDate,
        succeeded,
        failed: results.length - succeeded,
        results,
      },
    };
  });
}

/**
 * Runs after ops complete a task: makes the change in the (sandbox) payroll system through the
 * provider port, then, in the transaction that finishes this job, ends the manual job (complete,
 * or error if the provider refused), updates the service's benefit and enrollment rows and
 * writes the events: OpsTaskCompleted, and for enroll and unenroll work the enrollment events
 * the Automated path writes (EnrollmentGroupProcessed per group, then EnrollmentJobCompleted or
 * EnrollmentJobFailed). Benefit create, register and update work has no event of its own here:
 * as on the Automated path, BenefitCreated, BenefitRegistered and BenefitUpdated were written
 * with the request. Every provider call here is idempotent, so a run repeated after a crash
 * changes nothing twice. Provider outages are retried by the worker; on the last run, or when
 * the worker gives up on runs that keep dying, the manual job ends in error rather than staying
 * in progress for ever.
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
    private readonly enrollments: EnrollmentsRepository,
    private readonly events: BenefitEventsWriter,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async run(job: Job, { attempt }: JobRunContext): Promise<JobOutcome> {
    const taskId = String(job.params?.task_id ?? '');
    const task = await this.tasks.find(taskId);
    if (!task) return { status: 'error', result: { error: `No ops task ${taskId}` } };
    return this.outcomeOf(task, await this.applyOrExplain(task, attempt));
  }

  /** Runs that keep dying: the manual job ends in error (what reached the provider is unknown). */
  async abandon(job: Job, reason: string): Promise<JobOutcome> {
    const taskId = String(job.params?.task_id ?? '');
    const task = await this.tasks.find(taskId);
    if (!task) return { status: 'error', result: { error: `No ops task ${taskId}` } };
    return this.outcomeOf(task, {
      status: 'error',
      error: `The change could not be applied to the payroll provider (${reason}); check the payroll system before trying again`,
    });
  }

  /** Ends the manual job with what applying came to, and writes its events, with this job's end. */
  private outcomeOf(task: OpsTask, applied: Applied): JobOutcome {
    const benefitId = String(task.payload.benefit_id);
    const body: ManualJobBody = {
      benefit_id: benefitId,
      note: task.note,
      error: applied.error,
      ...(applied.individuals ? { individuals: applied.individuals } : {}),
    };
    return {
      status: 'complete',
      result: { task_id: task.id, manual_job_id: task.jobId, manual_job_status: applied.status },
      commit: async (manager) => {
        const at = this.clock.now();
        // Serializes with enrollment requests of the benefit (they lock it too).
        await this.enrollments.lockBenefit(benefitId, manager);
        if (!(await this.manualJobs.finish(task.jobId, applied.status, body, at, manager))) return;
        await applied.record?.(manager, at);
        await this.events.record(manager, [
          {
            type: 'OpsTaskCompleted',
            connectionId: task.connectionId,
            entityId: task.entityId,
            data: {
              task_id: task.id,
              job_id: task.jobId,
              type: task.type,
              benefit_id: benefitId,
              job_status: applied.status,
              resolved_by: task.resolvedBy,
              ...(applied.error === null ? {} : { error: applied.error }),
            },
          },
          ...enrollmentGroupsProcessed(task, applied.groups ?? []),
          ...enrollmentJobEnded(task, applied.status, applied.groups?.flatMap((g) => g.results)),
        ]);
      },
    };
  }

  /** Applies the task; a refusal (or the last failed run) becomes an `error` outcome, not a throw. */
  private async applyOrExplain(task: OpsTask, attempt: number): Promise<Applied> {
    const connection = await this.connections.find(task.connectionId);
    const entity = connection?.entities.find((e) => e.id === task.entityId);
    if (!connection || !entity) return { status: 'error', error: 'The connection or entity of this task no longer exists' };
    try {
      return await this.apply(employerRefOf(connection, entity), task);
    } catch (error) {
      if (isTransientFailure(error)) {
        if (attempt < DEFAULT_RETRY_POLICY.maxAttempts) throw error;
        return { status: 'error', error: `The payroll provider could not be reached in ${attempt} attempts: ${(error as Error).message}` };
      }
      if (error instanceof DomainError) return { status: 'error', error: `The payroll provider refused the change: ${error.message}` };
      this.logger.error(`applying ops task ${task.id} failed: ${(error as Error)?.stack ?? error}`);
      return { status: 'error', error: 'The change could not be applied to the payroll provider' };
    }
  }

  private async apply(ref: EmployerRef, task: OpsTask): Promise<Applied> {
    switch (task.type) {
      case 'benefit_create':
      case 'benefit_register': {
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
      case 'benefit_update': {
        const p = task.payload as unknown as BenefitUpdateParams;
        const updated = await this.provider.updateBenefit(ref, p.benefit_id, { description: p.description });
        if (!updated) return { status: 'error', error: `The payroll provider has no benefit ${p.benefit_id}` };
        return {
          status: 'complete',
          error: null,
          record: async (manager, at) => {
            await this.benefits.updateDescriptionUnlessTaken(p.benefit_id, p.description, at, manager);
          },
        };
      }
      case 'benefit_enroll': {
        const p = task.payload as unknown as BenefitEnrollParams;
        const groups: AppliedGroup[] = [];
        // One call per effective date, as the automated path makes them; the provider keeps
        // future-dated configurations until their date.
        for (const group of p.groups) {
          const results = await this.provider.enroll(
            ref,
            p.benefit_id,
            group.items.map((item) => ({ individual_id: item.individual_id, effective_date: group.effective_date, configuration: item.configuration })),
          );
          groups.push({ effectiveDate: group.effective_date, results: results.map(resultOf) });
        }
        const individuals = groups.flatMap((g) => g.results);
        const ok = someSucceeded(individuals);
        return {
          status: ok ? 'complete' : 'error',
          error: ok ? null : 'No individual could be enrolled',
          individuals,
          groups,
          record: (manager, at) => this.enrollments.recordEnrolled(p.benefit_id, task.jobId, individuals, at, manager),
        };
      }
      case 'benefit_unenroll': {
        const p = task.payload as unknown as BenefitUnenrollParams;
        const results = await this.provider.unenroll(ref, p.benefit_id, p.individual_ids, p.effective_date);
        const individuals = results.map(resultOf);
        const ok = someSucceeded(individuals);
        return {
          status: ok ? 'complete' : 'error',
          error: ok ? null : 'No individual could be unenrolled',
          individuals,
          groups: [{ effectiveDate: p.effective_date, results: individuals }],
          record: (manager, at) => this.enrollments.recordUnenrolled(p.benefit_id, task.jobId, individuals, p.effective_date, at, manager),
        };
      }
    }
  }
}

/** A provider's answer for one individual, without an empty message. */
function resultOf({ individual_id, code, message }: IndividualResult): IndividualResult {
  return { individual_id, code, ...(message ? { message } : {}) };
}
