import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { OpsTask } from '../../domain/assisted/ops-task';
import { utcDateOf } from '../../domain/calendar/business-days';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, notFound } from '../../domain/shared/domain-error';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { BenefitEventsWriter } from '../../infrastructure/messaging/outbox/benefit-events.writer';
import { EnrollmentLifecycle } from '../enrollments/enrollment-lifecycle';
import { JobSignal } from '../jobs/job-signal';
import { JobsRepository } from '../jobs/jobs.repository';
import { OpsAuditWriter } from '../ops-audit/ops-audit.writer';
import { ASSISTED_APPLY } from './assisted-apply.handler';
import { ManualJobsRepository } from './manual-jobs.repository';
import { OpsTaskFilter, OpsTasksRepository } from './ops-tasks.repository';

/**
 * The ops team's side of Assisted work: list, read, complete and fail tasks. Completing hands
 * the change to an `assisted_apply` job (provider calls never run inside an HTTP request);
 * failing ends the work at once. An enrollment task is one effective-date group of the
 * enrollment lifecycle: completing it makes the group's provider call start (no later request
 * takes its individuals over from then on), failing it records every individual as refused.
 */
@Injectable()
export class OpsTasksService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly tasks: OpsTasksRepository,
    private readonly manualJobs: ManualJobsRepository,
    private readonly jobs: JobsRepository,
    private readonly lifecycle: EnrollmentLifecycle,
    private readonly events: BenefitEventsWriter,
    private readonly signal: JobSignal,
    private readonly audit: OpsAuditWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  today(): string {
    return utcDateOf(this.clock.now());
  }

  list(filter: Omit<OpsTaskFilter, 'today'>, page: { limit: number; offset: number }) {
    return this.tasks.list({ ...filter, today: this.today() }, page);
  }

  async get(id: string): Promise<OpsTask> {
    const task = await this.tasks.find(id);
    if (!task) throw taskNotFound(id);
    return task;
  }

  /**
   * Marks the task completed, its work under way, and enqueues the job that applies the change
   * to the payroll system, in one transaction: a task is completed once, and its change cannot
   * be lost between the two.
   */
  async complete(id: string, note: string | null, resolvedBy: string): Promise<OpsTask> {
    const now = this.clock.now();
    return this.uow.transaction(async (manager) => {
      const resolved = await this.resolveOrExplain(id, { status: 'completed', note, resolvedBy, resolvedAt: now }, manager);
      await this.audit.record(manager, { actor: resolvedBy, action: 'task.complete', targetType: 'task', targetId: id, detail: { job_id: resolved.jobId, note } });
      if (resolved.groupId !== null) await this.lifecycle.startSubmitting(resolved.groupId);
      else await this.manualJobs.markInProgress(resolved.jobId, now, manager);
      await this.jobs.insert(
        { id: randomUUID(), connectionId: resolved.connectionId, entityId: resolved.entityId, kind: 'internal', type: ASSISTED_APPLY, params: { task_id: resolved.id }, createdAt: now },
        manager,
      );
      this.uow.afterCommit(() => this.signal.nudge());
      return resolved;
    });
  }

  /**
   * Marks the task failed and ends its work at once with the note: benefit work's manual job in
   * `error`; an enrollment group's individuals refused (422), the job settling as any would.
   */
  async fail(id: string, note: string, resolvedBy: string): Promise<OpsTask> {
    const now = this.clock.now();
    return this.uow.transaction(async (manager) => {
      const task = await this.resolveOrExplain(id, { status: 'failed', note, resolvedBy, resolvedAt: now }, manager);
      await this.audit.record(manager, { actor: resolvedBy, action: 'task.fail', targetType: 'task', targetId: id, detail: { job_id: task.jobId, note } });
      const benefitId = String(task.payload.benefit_id);
      if (task.groupId !== null) await this.lifecycle.refused(task.groupId, 422, note, note);
      else await this.manualJobs.finish(task.jobId, 'error', { benefit_id: benefitId, note, error: note }, now, manager);
      await this.events.record(manager, [
        {
          type: 'OpsTaskFailed',
          connectionId: task.connectionId,
          entityId: task.entityId,
          data: { task_id: task.id, job_id: task.jobId, type: task.type, benefit_id: benefitId, note, resolved_by: resolvedBy },
        },
      ]);
      return task;
    });
  }

  private async resolveOrExplain(id: string, resolution: Parameters<OpsTasksRepository['resolve']>[1], manager: EntityManager) {
    const resolved = await this.tasks.resolve(id, resolution, manager);
    if (resolved) return resolved;
    const existing = await this.tasks.find(id, manager);
    if (!existing) throw taskNotFound(id);
    throw new DomainError('conflict_error', `Task ${id} is already ${existing.status}`, { serviceCode: 'task_already_resolved' });
  }
}

const taskNotFound = (id: string) => notFound(`No ops task ${id}`, 'task_not_found');
