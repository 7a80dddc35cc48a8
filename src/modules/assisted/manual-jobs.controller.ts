import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../domain/connections/connection';
import { invalidRequest, notFound } from '../../domain/shared/domain-error';
import { RequiresApiVersion } from '../../infrastructure/http/api-version';
import { CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { JobsRepository } from '../jobs/jobs.repository';
import { ManualJobResponse, manualJobView } from './dto/manual-job.dto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Manual jobs: Assisted providers' benefit work, done by their staff through ops tasks. */
@ApiTags('jobs')
@ApiBearerAuth('access-token')
@Controller('jobs/manual')
@RequiresAccessToken()
@RequiresApiVersion()
export class ManualJobsController {
  constructor(private readonly jobs: JobsRepository) {}

  @Get(':job_id')
  @ApiOperation({ summary: 'One manual job of the connection' })
  @ApiOkResponse({ type: ManualJobResponse })
  async get(@CurrentPrincipal() { connection }: Principal, @Param('job_id') jobId: string): Promise<ManualJobResponse> {
    if (!UUID.test(jobId)) throw invalidRequest(`job_id must be a UUID, got ${JSON.stringify(jobId.slice(0, 100))}`);
    const job = await this.jobs.findOfConnection(jobId, connection.id, 'manual');
    if (!job) throw notFound(`No manual job ${jobId} for this connection`, 'job_not_found');
    return manualJobView(job);
  }
}
