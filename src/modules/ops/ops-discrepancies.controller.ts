import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OpsCredentialsGuard, OpsUser } from '../ops-auth/ops-credentials.guard';
import {
  AcknowledgeDiscrepancyDto,
  DiscrepancyDetailResponse,
  discrepancyDetailView,
  discrepancyView,
  ListDiscrepanciesQueryDto,
  MAX_DISCREPANCIES_PAGE,
  OpsDiscrepancy,
  ReapplyDiscrepancyResponse,
} from './dto/discrepancy.dto';
import { IncludeNamesQueryDto } from './dto/include-names.dto';
import { IndividualNameMap } from './individual-names';
import { IndividualNamesRepository } from './individual-names.repository';
import { pageOf, requireUuid } from './ops-ids';
import { DiscrepancyWithResults, OpsDiscrepanciesService } from './ops-discrepancies.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Payroll deductions that differ from what the service enrolled (reconciliation's
 * discrepancies), across connections: read them, acknowledge one with a note, or re-apply the
 * service's configuration to the provider.
 */
@ApiTags('ops')
@ApiBasicAuth('ops')
@Controller('ops/api/discrepancies')
@UseGuards(OpsCredentialsGuard)
export class OpsDiscrepanciesController {
  constructor(
    private readonly discrepancies: OpsDiscrepanciesService,
    private readonly names: IndividualNamesRepository,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'Discrepancies, newest opened first; filter by connection, entity, benefit, individual, kind and status (comma lists; default open,acknowledged)',
  })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [discrepancy] }' })
  async list(@Query() query: ListDiscrepanciesQueryDto) {
    const page = { limit: query.limit ?? MAX_DISCREPANCIES_PAGE, offset: query.offset ?? 0 };
    const { count, discrepancies } = await this.discrepancies.list(
      {
        connectionId: query.connection_id,
        entityId: query.entity_id,
        benefitId: query.benefit_id,
        individualId: query.individual_id,
        kinds: query.kind,
        statuses: query.status,
      },
      page,
    );
    const views = discrepancies.map(discrepancyView);
    if (!query.include) return pageOf(count, page.offset, views);
    const names = await this.namesOf(discrepancies);
    return pageOf(count, page.offset, views.map((view, i) => ({ ...view, individual_names: names[i] })));
  }

  @Get(':discrepancy_id')
  @ApiOperation({ summary: 'One discrepancy with the statements that fed it, newest pay date first (at most 20)' })
  @ApiOkResponse({ type: DiscrepancyDetailResponse })
  async get(@Param('discrepancy_id') id: string, @Query() query: IncludeNamesQueryDto): Promise<DiscrepancyDetailResponse> {
    return this.detail(await this.discrepancies.get(requireUuid('discrepancy_id', id)), query.include !== undefined);
  }

  @Post(':discrepancy_id/acknowledge')
  @HttpCode(200)
  @ApiOperation({ summary: 'Acknowledges with a note (open → acknowledged; again: the note is replaced); 409 when resolved. Audited' })
  @ApiOkResponse({ type: DiscrepancyDetailResponse })
  async acknowledge(@Param('discrepancy_id') id: string, @Body() body: AcknowledgeDiscrepancyDto, @OpsUser() user: string): Promise<DiscrepancyDetailResponse> {
    return this.detail(await this.discrepancies.acknowledge(requireUuid('discrepancy_id', id), body.note, user), false);
  }

  @Post(':discrepancy_id/reapply')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Re-applies the service’s configuration to the provider through an ordinary enrollment job: the enrollment in force today, enrolled again from today; none in force, an unenroll from today. 409 when resolved or the connection, entity or benefit is gone. Audited',
  })
  @ApiOkResponse({ type: ReapplyDiscrepancyResponse })
  async reapply(@Param('discrepancy_id') id: string, @OpsUser() user: string): Promise<ReapplyDiscrepancyResponse> {
    const { result, jobId } = await this.discrepancies.reapply(requireUuid('discrepancy_id', id), user);
    return { discrepancy: await this.detail(result, false), job_id: jobId };
  }

  private async detail({ discrepancy, results }: DiscrepancyWithResults, withNames: boolean): Promise<DiscrepancyDetailResponse> {
    const view = discrepancyDetailView(discrepancy, results);
    if (!withNames) return view;
    const [names] = await this.namesOf([discrepancy]);
    return { ...view, individual_names: names };
  }

  /** The name of each one's individual where the service knows it (ids that are not UUIDs have none). */
  private namesOf(discrepancies: OpsDiscrepancy[]): Promise<IndividualNameMap[]> {
    return this.names.namesOf(
      discrepancies.map((d) => ({ connectionId: d.connectionId, entityId: d.entityId, individualIds: UUID.test(d.individualId) ? [d.individualId] : [] })),
    );
  }
}
