import { Controller, Get, HttpCode, Inject, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { Job } from '../../domain/jobs/job';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { publicBaseUrl } from '../../infrastructure/http/public-url';
import { OpsCredentialsGuard, OpsUser } from '../ops-auth/ops-credentials.guard';
import { IncludeNamesQueryDto } from './dto/include-names.dto';
import { ListOpsJobsQueryDto, MAX_OPS_JOBS_PAGE, OpsJobDetailResponse, opsJobDetailView, opsJobSummaryView } from './dto/ops-job.dto';
import { individualIdsIn } from './individual-names';
import { IndividualNamesRepository } from './individual-names.repository';
import { pageOf, requireUuid } from './ops-ids';
import { OpsJobsService } from './ops-jobs.service';

/** Jobs of every connection: what waits, what failed and why; retry where it is safe. */
@ApiTags('ops')
@ApiBasicAuth('ops')
@Controller('ops/api/jobs')
@UseGuards(OpsCredentialsGuard)
export class OpsJobsController {
  constructor(
    private readonly jobs: OpsJobsService,
    private readonly names: IndividualNamesRepository,
    private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Jobs; filter by status, kind, type, connection. pending and in_progress: oldest first; others: newest first' })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [job] }' })
  async list(@Query() query: ListOpsJobsQueryDto, @Req() request: FastifyRequest) {
    const page = { limit: query.limit ?? MAX_OPS_JOBS_PAGE, offset: query.offset ?? 0 };
    const { count, jobs } = await this.jobs.list({ status: query.status, kind: query.kind, type: query.type, connectionId: query.connection_id }, page);
    const context = this.contextOf(request);
    return pageOf(count, page.offset, jobs.map((job) => opsJobSummaryView(job, { ...context, retriable: this.jobs.isRetriable(job) })));
  }

  @Get(':job_id')
  @ApiOperation({ summary: 'One job with its params, result and, for enrollment jobs, every individual’s result' })
  @ApiOkResponse({ type: OpsJobDetailResponse })
  async get(@Param('job_id') id: string, @Query() query: IncludeNamesQueryDto, @Req() request: FastifyRequest): Promise<OpsJobDetailResponse> {
    const job = await this.jobs.get(requireUuid('job_id', id));
    const view = this.detail(job, request);
    if (!query.include) return view;
    const [names] = await this.names.namesOf([{ connectionId: job.connectionId, entityId: job.entityId, individualIds: individualIdsIn([job.params, job.result]) }]);
    return { ...view, individual_names: names };
  }

  @Post(':job_id/retry')
  @HttpCode(200)
  @ApiOperation({ summary: 'Runs a job in error again (data_sync_all, benefit_create, benefit_update); 409 otherwise' })
  @ApiOkResponse({ type: OpsJobDetailResponse })
  async retry(@Param('job_id') id: string, @OpsUser() user: string, @Req() request: FastifyRequest): Promise<OpsJobDetailResponse> {
    return this.detail(await this.jobs.retry(requireUuid('job_id', id), user), request);
  }

  private detail(job: Job, request: FastifyRequest): OpsJobDetailResponse {
    return opsJobDetailView(job, { ...this.contextOf(request), retriable: this.jobs.isRetriable(job) });
  }

  private contextOf(request: FastifyRequest) {
    return { baseUrl: publicBaseUrl(this.config, request), now: this.clock.now() };
  }
}
