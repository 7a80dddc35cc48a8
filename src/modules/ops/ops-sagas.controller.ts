import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Saga } from '../../domain/sagas/saga';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { invalidRequest, notFound } from '../../domain/shared/domain-error';
import { OpsCredentialsGuard } from '../ops-auth/ops-credentials.guard';
import { ageWindow } from './age-filter';
import { IncludeNamesQueryDto } from './dto/include-names.dto';
import { ListSagasQueryDto, MAX_SAGAS_PAGE, SagaDetailResponse, sagaDetailView, SagaSummaryResponse, sagaSummaryView } from './dto/saga.dto';
import { individualIdsIn, sagaIndividualId } from './individual-names';
import { IndividualNamesRepository } from './individual-names.repository';
import { OpsSagasRepository } from './ops-sagas.repository';
import { pageOf, requireUuid } from './ops-ids';

/** Saga instances: what each orchestration is doing, and the jobs it waits on. Read only. */
@ApiTags('ops')
@ApiBasicAuth('ops')
@Controller('ops/api/sagas')
@UseGuards(OpsCredentialsGuard)
export class OpsSagasController {
  constructor(
    private readonly sagas: OpsSagasRepository,
    private readonly names: IndividualNamesRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Saga instances, newest first; filter by type, state, connection, the HRIS event that started it (source_event_id) and age (older_than / newer_than: 15m, 2h, 3d)' })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [saga] }' })
  async list(@Query() query: ListSagasQueryDto) {
    const now = this.clock.now();
    const window = ageWindow(now, query.older_than, query.newer_than);
    if ('error' in window) throw invalidRequest(window.error);
    const page = { limit: query.limit ?? MAX_SAGAS_PAGE, offset: query.offset ?? 0 };
    const { count, sagas } = await this.sagas.list({ type: query.type, state: query.state, connectionId: query.connection_id, sourceEventId: query.source_event_id, ...window }, page);
    const views = sagas.map((saga) => sagaSummaryView(saga, now));
    return pageOf(count, page.offset, query.include ? await this.named(sagas, views) : views);
  }

  @Get(':saga_id')
  @ApiOperation({ summary: 'One saga: its step timeline and the jobs it started, with their status' })
  @ApiOkResponse({ type: SagaDetailResponse })
  async get(@Param('saga_id') id: string, @Query() query: IncludeNamesQueryDto): Promise<SagaDetailResponse> {
    const saga = await this.sagas.find(requireUuid('saga_id', id));
    if (!saga) throw notFound(`No saga ${id}`, 'saga_not_found');
    const view = sagaDetailView(saga, await this.sagas.jobsOf(saga.id), this.clock.now());
    return query.include ? (await this.named([saga], [view]))[0] : view;
  }

  /** The views with the individual each saga is about and the names of those its steps mention. */
  private async named<T extends SagaSummaryResponse>(sagas: Saga[], views: T[]): Promise<T[]> {
    const names = await this.names.namesOf(
      sagas.map((saga) => ({ connectionId: saga.connectionId, entityId: saga.entityId, individualIds: individualIdsIn(saga.steps) })),
    );
    return views.map((view, i) => ({ ...view, individual_id: sagaIndividualId(sagas[i]), individual_names: names[i] }));
  }
}
