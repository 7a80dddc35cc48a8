import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { Principal } from '../../domain/connections/connection';
import { invalidRequest } from '../../domain/shared/domain-error';
import { RequiresApiVersion } from '../../infrastructure/http/api-version';
import { publicBaseUrl } from '../../infrastructure/http/public-url';
import { CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import {
  AutomatedJobResponse,
  automatedJobView,
  CreateJobDto,
  EnqueuedJobResponse,
  enqueuedJobView,
  ListJobsQueryDto,
  MAX_JOBS_PAGE,
  quotasView,
} from './dto/job.dto';
import { SyncJobsService } from './sync-jobs.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

@ApiTags('jobs')
@ApiBearerAuth('access-token')
@Controller('jobs/automated')
@RequiresAccessToken()
@RequiresApiVersion()
export class JobsController {
  constructor(
    private readonly syncJobs: SyncJobsService,
    private readonly config: AppConfig,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Enqueue a data sync of the connection (201), or get the one already queued or running (202)' })
  @ApiResponse({ status: 201, type: EnqueuedJobResponse })
  @ApiResponse({ status: 202, type: EnqueuedJobResponse })
  async create(
    @CurrentPrincipal() { connection }: Principal,
    @Body() _body: CreateJobDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<EnqueuedJobResponse> {
    const { job, created, quota } = await this.syncJobs.requestSync(connection, 'automated');
    void reply.status(created ? 201 : 202);
    return enqueuedJobView(job, quota, publicBaseUrl(this.config, request));
  }

  @Get()
  @ApiOperation({ summary: 'List the connection’s automated jobs, newest first, with the refresh quota' })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [job], meta: { quotas } }' })
  async list(@CurrentPrincipal() { connection }: Principal, @Query() query: ListJobsQueryDto, @Req() request: FastifyRequest) {
    const page = { limit: query.limit ?? MAX_JOBS_PAGE, offset: query.offset ?? 0 };
    const [{ count, jobs }, quota] = await Promise.all([this.syncJobs.list(connection, page), this.syncJobs.quotaOf(connection.id)]);
    const baseUrl = publicBaseUrl(this.config, request);
    return {
      paging: { count, offset: page.offset },
      data: jobs.map((job) => automatedJobView(job, baseUrl)),
      meta: quotasView(quota),
    };
  }

  @Get(':job_id')
  @ApiOperation({ summary: 'One automated job of the connection' })
  @ApiOkResponse({ type: AutomatedJobResponse })
  async get(@CurrentPrincipal() { connection }: Principal, @Param('job_id') jobId: string, @Req() request: FastifyRequest) {
    if (!UUID.test(jobId)) throw invalidRequest(`job_id must be a UUID, got ${JSON.stringify(jobId.slice(0, 100))}`);
    return automatedJobView(await this.syncJobs.get(connection, jobId), publicBaseUrl(this.config, request));
  }
}
