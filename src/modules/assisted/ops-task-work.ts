import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { OpsTask } from '../../domain/assisted/ops-task';
import { EnrollmentChangesSuperseded, EnrollmentGroupHandedToOps } from '../../domain/enrollments/enrollment-events';
import { DomainEventBus } from '../../domain/events/domain-event-bus';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { BenefitEventsWriter, NewBenefitEvent } from '../../infrastructure/messaging/outbox/benefit-events.writer';
import { AssistedProvider } from './assisted-provider';
import { OpsTasksRepository } from './ops-tasks.repository';

/** The work an enrollment group's task asks for, in the shape ops read it. */
export function groupTaskPayload(
  benefitId: string,
  operation: 'enroll' | 'unenroll',
  effectiveDate: string,
  items: readonly { individualId: string; configuration: unknown }[],
): Record<string, unknown> {
  return operation === 'enroll'
    ? { benefit_id: benefitId, groups: [{ effective_date: effectiveDate, items: items.map((i) => ({ individual_id: i.individualId, configuration: i.configuration })) }] }
    : { benefit_id: benefitId, effective_date: effectiveDate, individual_ids: items.map((i) => i.individualId) };
}

/** Individuals a group task still asks for. */
function withoutIndividuals(payload: Record<string, unknown>, taken: ReadonlySet<string>): Record<string, unknown> {
  if (Array.isArray(payload.individual_ids)) return { ...payload, individual_ids: (payload.individual_ids as string[]).filter((id) => !taken.has(id)) };
  const groups = payload.groups as { effective_date: string; items: { individual_id: string }[] }[];
  return { ...payload, groups: groups.map((g) => ({ ...g, items: g.items.filter((i) => !taken.has(i.individual_id)) })) };
}

/**
 * Keeps Assisted providers' ops tasks in step with the enrollment lifecycle, in the transaction
 * of each change: a group handed to ops opens its task (due in 2 business days); individuals a
 * later request took over leave their open task, and a task left with nobody is cancelled.
 */
@Injectable()
export class OpsTaskWork implements OnModuleInit {
  constructor(
    private readonly bus: DomainEventBus,
    private readonly uow: UnitOfWork,
    private readonly tasks: OpsTasksRepository,
    private readonly events: BenefitEventsWriter,
    private readonly assisted: AssistedProvider,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.bus.subscribe<EnrollmentGroupHandedToOps | EnrollmentChangesSuperseded>([EnrollmentGroupHandedToOps, EnrollmentChangesSuperseded], (events) =>
      this.follow(events),
    );
  }

  private async follow(events: readonly (EnrollmentGroupHandedToOps | EnrollmentChangesSuperseded)[]): Promise<void> {
    const manager = this.uow.manager;
    const now = this.clock.now();
    const opened = events.filter((e): e is EnrollmentGroupHandedToOps => e instanceof EnrollmentGroupHandedToOps);
    if (opened.length > 0) {
      const dueDate = this.assisted.dueDate(now);
      const tasks = opened.map((e) => ({
        id: randomUUID(),
        connectionId: e.scope.connectionId,
        entityId: e.scope.entityId,
        jobId: e.jobId,
        groupId: e.groupId,
        type: e.operation === 'enroll' ? ('benefit_enroll' as const) : ('benefit_unenroll' as const),
        payload: groupTaskPayload(e.scope.benefitId, e.operation, e.effectiveDate, e.items),
        dueDate,
        createdAt: now,
      }));
      await this.tasks.insertOpen(tasks, manager);
      await this.events.record(
        manager,
        tasks.map((t) => ({
          type: 'OpsTaskOpened',
          connectionId: t.connectionId,
          entityId: t.entityId,
          data: { task_id: t.id, job_id: t.jobId, type: t.type, benefit_id: t.payload.benefit_id, due_date: t.dueDate },
        })),
      );
    }

    const superseded = events.filter((e): e is EnrollmentChangesSuperseded => e instanceof EnrollmentChangesSuperseded);
    if (superseded.length === 0) return;
    const open = new Map<string, OpsTask>((await this.tasks.openOfGroups([...new Set(superseded.map((e) => e.groupId))], manager)).map((t) => [t.groupId!, t]));
    const payloads = new Map<string, Record<string, unknown>>();
    const cancelled: NewBenefitEvent[] = [];
    for (const event of superseded) {
      const task = open.get(event.groupId);
      if (!task) continue;
      if (event.remaining > 0) {
        payloads.set(task.id, withoutIndividuals(payloads.get(task.id) ?? task.payload, new Set(event.individualIds)));
        continue;
      }
      const note = `Every individual was taken over by a later request (job ${event.byJobId}); nothing is left to do`;
      await this.tasks.resolve(task.id, { status: 'cancelled', note, resolvedBy: 'service', resolvedAt: now }, manager);
      payloads.delete(task.id);
      open.delete(event.groupId);
      cancelled.push({
        type: 'OpsTaskCancelled',
        connectionId: task.connectionId,
        entityId: task.entityId,
        data: { task_id: task.id, job_id: task.jobId, type: task.type, benefit_id: task.payload.benefit_id, by_job_id: event.byJobId },
      });
    }
    await this.tasks.setPayloads([...payloads].map(([id, payload]) => ({ id, payload })), manager);
    await this.events.record(manager, cancelled);
  }
}
