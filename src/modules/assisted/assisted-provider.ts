import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ASSISTED_SLA_BUSINESS_DAYS } from '../../domain/assisted/ops-task';
import { BenefitJobParams } from '../../domain/benefits/benefit-job-params';
import { addBusinessDays, HOLIDAY_CALENDAR, HolidayCalendar, utcDateOf } from '../../domain/calendar/business-days';
import { inForceOn } from '../../domain/enrollments/applied-timeline';
import { EnrollmentGroup } from '../../domain/enrollments/enrollment-change';
import { ENROLLMENT_LEDGER_REPOSITORY, EnrollmentLedgerRepository } from '../../domain/enrollments/enrollment-ledger.repository';
import { Job } from '../../domain/jobs/job';
import { GroupToWork, GroupWorkOutcome, ProviderBehaviour, WorkScope } from '../../domain/providers/provider-behaviour';
import { EmployerRef } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { BenefitEventsWriter } from '../../infrastructure/messaging/outbox/benefit-events.writer';
import { JobsRepository } from '../jobs/jobs.repository';
import { OpsTasksRepository } from './ops-tasks.repository';

/**
 * Assisted providers: their staff do the work by hand. Benefit work (create, register, update)
 * is a manual job with one ops task; an enrollment request is a manual job whose effective-date
 * groups become ops tasks when their date comes and they go first for their individuals
 * (OpsTaskWork opens them). The provider has no API to read: the service's record of what its
 * staff applied is the truth for reads.
 */
@Injectable()
export class AssistedProvider implements ProviderBehaviour {
  readonly mode = 'assisted' as const;
  readonly jobKind = 'manual' as const;
  readonly registersBenefits = true;
  /** The spec: an Assisted sandbox connection's sync has no job_id, and none is enqueued on /jobs/automated. */
  readonly syncs = { jobKind: 'internal' as const, onRequest: false };

  constructor(
    private readonly uow: UnitOfWork,
    private readonly jobs: JobsRepository,
    private readonly tasks: OpsTasksRepository,
    private readonly events: BenefitEventsWriter,
    @Inject(ENROLLMENT_LEDGER_REPOSITORY) private readonly ledgers: EnrollmentLedgerRepository,
    @Inject(HOLIDAY_CALENDAR) private readonly holidays: HolidayCalendar,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async benefitsAtProvider(): Promise<null> {
    return null;
  }

  async benefitAtProvider(): Promise<null> {
    return null;
  }

  /** A manual job (pending, type and params of the work), its ops task due in 2 business days, and OpsTaskOpened. */
  async openBenefitWork(scope: WorkScope, work: BenefitJobParams): Promise<Job> {
    const now = this.clock.now();
    const manager = this.uow.manager;
    const params = work.params as unknown as Record<string, unknown>;
    const job = await this.jobs.insert({ id: randomUUID(), ...scope, kind: 'manual', type: work.type, params, createdAt: now }, manager);
    const task = { id: randomUUID(), ...scope, jobId: job.id, groupId: null, type: work.type, payload: params, dueDate: this.dueDate(now), createdAt: now };
    await this.tasks.insertOpen([task], manager);
    await this.events.record(manager, [
      {
        type: 'OpsTaskOpened',
        ...scope,
        data: { task_id: task.id, job_id: job.id, type: work.type, benefit_id: work.params.benefit_id, due_date: task.dueDate },
      },
    ]);
    return job;
  }

  /** The SLA counts from the UTC date of the request, like every business date of the service. */
  dueDate(now: Date): string {
    return addBusinessDays(utcDateOf(now), ASSISTED_SLA_BUSINESS_DAYS, (date) => this.holidays.isHoliday(date));
  }

  /** Groups due today go to ops at once; later ones when their date comes. */
  planGroups(groups: readonly EnrollmentGroup[], today: string) {
    return {
      scheduled: groups.filter((g) => g.effectiveDate > today),
      handedToOps: groups.filter((g) => g.effectiveDate <= today),
    };
  }

  async workGroups(_ref: EmployerRef, _benefitId: string, groups: readonly GroupToWork[]): Promise<Map<string, GroupWorkOutcome>> {
    return new Map(groups.map((g) => [g.groupId, 'handed_to_ops' as const]));
  }

  async enrollmentsInForce(_ref: EmployerRef, benefitId: string, date: string, individualIds?: readonly string[]) {
    const rows = await this.ledgers.individualsOf(benefitId, individualIds);
    return rows.flatMap((row) => {
      const configuration = inForceOn(row.applied, date);
      return configuration === null ? [] : [{ individualId: row.individualId, configuration }];
    });
  }
}
