import { Body, Controller, Get, HttpCode, Post, Put, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { Principal } from '../../domain/connections/connection';
import { publicBaseUrl } from '../../infrastructure/http/public-url';
import { CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { configurationView, CreateJobDto, EnqueuedJobResponse, enqueuedJobView, SandboxJobConfigurationDto } from './dto/job.dto';
import { SyncJobsService } from './sync-jobs.service';

/** The sandbox's own job operations; the spec documents no version header for them. */
@ApiTags('sandbox')
@ApiBearerAuth('access-token')
@Controller('sandbox/jobs')
@RequiresAccessToken()
export class SandboxJobsController {
  constructor(
    private readonly syncJobs: SyncJobsService,
    private readonly config: AppConfig,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Sync the sandbox connection’s data; for an Assisted connection job_id and job_url are null',
  })
  @ApiOkResponse({ type: EnqueuedJobResponse })
  async create(@CurrentPrincipal() { connection }: Principal, @Body() _body: CreateJobDto, @Req() request: FastifyRequest) {
    const { job, quota } = await this.syncJobs.requestSync(connection, 'sandbox');
    return enqueuedJobView(job, quota, publicBaseUrl(this.config, request));
  }

  @Get('configuration')
  @ApiOperation({ summary: 'How the sandbox connection’s data syncs end' })
  async configuration(@CurrentPrincipal() { connection }: Principal) {
    return [configurationView(await this.syncJobs.configuration(connection))];
  }

  @Put('configuration')
  @ApiOperation({ summary: 'Set how the sandbox connection’s data syncs end (complete, reauth_error, permissions_error, error)' })
  async configure(@CurrentPrincipal() { connection }: Principal, @Body() body: SandboxJobConfigurationDto) {
    const saved = await this.syncJobs.configure(connection, { type: body.type, completionStatus: body.completion_status });
    return configurationView(saved);
  }
}
