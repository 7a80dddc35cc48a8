import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ASSISTED_SLA_BUSINESS_DAYS } from '../../domain/assisted/ops-task';
import { BenefitJobParams } from '../../domain/benefits/benefit-job-params';
import { addBusinessDays, HOLIDAY_CALENDAR, HolidayCalendar, utcDateOf } from '../../domain/calendar/business-days';
import { Connection } from '../../domain/connections/connection';
import { Job } from '../../domain/jobs/job';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { BenefitEventsWriter } from '../benefits/benefit-events.writer';
import { JobsRepository } from '../jobs/jobs.repository';
import { OpsTasksRepository } from './ops-tasks.repository';

export interface AssistedWorkRequest {
  connection: Connection;
  entityId: string;
  work: BenefitJobParams;
}

/**
 * Benefit work on an Assisted provider: done by hand. Opening it creates, in the caller's
 * transaction, a manual job (`kind = 'manual'`, status pending, type = the work's type, params =
 * the work's params), an ops task due in 2 business days that completes or fails it, and the
 * OpsTaskOpened event.
 */
@Injectable()
export class AssistedWorkService {
  constructor(
    private readonly jobs: JobsRepository,
    private readonly tasks: OpsTasksRepository,
    private readonly events: BenefitEventsWriter,
    @Inject(HOLIDAY_CALENDAR) private readonly holidays: HolidayCalendar,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async open(manager: EntityManager, { connection, entityId, work }: AssistedWorkRequest): Promise<Job> {
    const now = this.clock.now();
    const params = work.params as unknown as Record<string, unknown>;
    const job = await this.jobs.insert(
      { id: randomUUID(), connectionId: connection.id, entityId, kind: 'manual', type: work.type, params, createdAt: now },
      manager,
    );
    // The SLA counts from the UTC date of the request, like every business date of the service.
    const dueDate = addBusinessDays(utcDateOf(now), ASSISTED_SLA_BUSINESS_DAYS, (date) => this.holidays.isHoliday(date));
    const taskId = randomUUID();
    await this.tasks.insert(
      {
        id: taskId,
        connectionId: connection.id,
        entityId,
        jobId: job.id,
        type: work.type,
        payload: params,
        status: 'open',
        dueDate,
        note: null,
        resolvedBy: null,
        resolvedAt: null,
        createdAt: now,
      },
      manager,
    );
    await this.events.record(manager, [
      {
        type: 'OpsTaskOpened',
        connectionId: connection.id,
        entityId,
        data: { task_id: taskId, job_id: job.id, type: work.type, benefit_id: work.params.benefit_id, due_date: dueDate },
      },
    ]);
    return job;
  }
}
