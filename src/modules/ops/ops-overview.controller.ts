import { Controller, Get, Inject, Query, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { utcDateOf } from '../../domain/calendar/business-days';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { OpsCredentialsGuard } from '../ops-auth/ops-credentials.guard';
import { DEFAULT_EVENT_WINDOW_MINUTES, OverviewQueryDto, OverviewResponse } from './dto/overview.dto';
import { OpsOverviewRepository } from './ops-overview.repository';

/** The dashboard's first screen: how much is where, right now. */
@ApiTags('ops')
@ApiBasicAuth('ops')
@Controller('ops/api/overview')
@UseGuards(OpsCredentialsGuard)
export class OpsOverviewController {
  constructor(
    private readonly overview: OpsOverviewRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Sagas by state, events per minute, pending jobs by age, ops tasks by SLA state, open dead letters, live discrepancies' })
  @ApiOkResponse({ type: OverviewResponse })
  async get(@Query() query: OverviewQueryDto): Promise<OverviewResponse> {
    const now = this.clock.now();
    const minutes = query.minutes ?? DEFAULT_EVENT_WINDOW_MINUTES;
    const [sagas, perMinute, jobs, tasks, openDeadLetters, discrepancies] = await Promise.all([
      this.overview.sagas(),
      this.overview.eventsPerMinute(minutes),
      this.overview.jobs(now),
      this.overview.tasks(utcDateOf(now)),
      this.overview.openDeadLetters(),
      this.overview.discrepancies(),
    ]);
    return {
      generated_at: now.toISOString(),
      sagas,
      events: {
        window_minutes: minutes,
        received_total: perMinute.reduce((sum, m) => sum + m.received, 0),
        emitted_total: perMinute.reduce((sum, m) => sum + m.emitted, 0),
        per_minute: perMinute,
      },
      jobs,
      tasks,
      dead_letters: { open: openDeadLetters },
      discrepancies,
    };
  }
}
