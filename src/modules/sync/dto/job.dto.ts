import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { DATA_SYNC_ALL, Job, JOB_STATUSES } from '../../../domain/jobs/job';
import { RefreshQuota } from '../../../domain/jobs/refresh-quota';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';
import { SANDBOX_COMPLETION_STATUSES, SandboxCompletionStatus, SandboxJobConfiguration } from '../sandbox-job-configurations.repository';

/** Job types a client may enqueue (spec: `data_sync_all` only). */
export const ENQUEUEABLE_JOB_TYPES = [DATA_SYNC_ALL] as const;

export class CreateJobDto {
  @ApiProperty({ enum: ENQUEUEABLE_JOB_TYPES })
  @IsIn(ENQUEUEABLE_JOB_TYPES, { message: `type must be one of: ${ENQUEUEABLE_JOB_TYPES.join(', ')}` })
  type: typeof DATA_SYNC_ALL;
}

export const MAX_JOBS_PAGE = 100;

export class ListJobsQueryDto extends PageQueryDto(MAX_JOBS_PAGE) {}

export class SandboxJobConfigurationDto {
  @ApiProperty({ enum: ENQUEUEABLE_JOB_TYPES })
  @IsIn(ENQUEUEABLE_JOB_TYPES, { message: `type must be one of: ${ENQUEUEABLE_JOB_TYPES.join(', ')}` })
  type: typeof DATA_SYNC_ALL;

  @ApiProperty({ enum: SANDBOX_COMPLETION_STATUSES })
  @IsIn(SANDBOX_COMPLETION_STATUSES, { message: `completion_status must be one of: ${SANDBOX_COMPLETION_STATUSES.join(', ')}` })
  completion_status: SandboxCompletionStatus;
}

export class EnqueuedJobResponse {
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  job_id: string | null;

  @ApiProperty({ nullable: true, type: String })
  job_url: string | null;

  @ApiProperty()
  allowed_refreshes: number;

  @ApiProperty()
  remaining_refreshes: number;
}

export class AutomatedJobResponse {
  @ApiProperty({ format: 'uuid' }) job_id: string;
  @ApiProperty() job_url: string;
  @ApiProperty() type: string;
  @ApiProperty({ enum: JOB_STATUSES }) status: string;
  @ApiProperty({ type: Object, nullable: true }) params: Record<string, unknown> | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) scheduled_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) started_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) completed_at: string | null;
  @ApiPropertyOptional({
    description: 'Enrollment jobs (benefit_enroll, benefit_unenroll) only: [{individual_id, code, message?}] of the groups processed so far',
    type: [Object],
  })
  body?: { individual_id: string; code: number; message?: string }[];
}

/** Job types whose view carries per-individual results in `body`. */
const PER_INDIVIDUAL_JOB_TYPES = new Set(['benefit_enroll', 'benefit_unenroll']);

export const jobUrlOf = (baseUrl: string, jobId: string) => `${baseUrl}/jobs/automated/${jobId}`;

export function enqueuedJobView(job: Job | null, quota: RefreshQuota, baseUrl: string): EnqueuedJobResponse {
  const pollable = job !== null && job.kind === 'automated';
  return {
    job_id: pollable ? job.id : null,
    job_url: pollable ? jobUrlOf(baseUrl, job.id) : null,
    allowed_refreshes: quota.allowedRefreshes,
    remaining_refreshes: quota.remainingRefreshes,
  };
}

export function automatedJobView(job: Job, baseUrl: string): AutomatedJobResponse {
  return {
    job_id: job.id,
    job_url: jobUrlOf(baseUrl, job.id),
    type: job.type,
    status: job.status,
    params: job.params,
    created_at: job.createdAt.toISOString(),
    scheduled_at: job.scheduledAt.toISOString(),
    started_at: job.startedAt?.toISOString() ?? null,
    completed_at: job.completedAt?.toISOString() ?? null,
    ...(PER_INDIVIDUAL_JOB_TYPES.has(job.type) && {
      body: Array.isArray(job.result?.body) ? (job.result.body as AutomatedJobResponse['body']) : [],
    }),
  };
}

export const quotasView = (quota: RefreshQuota) => ({
  quotas: { [DATA_SYNC_ALL]: { allowed_refreshes: quota.allowedRefreshes, remaining_refreshes: quota.remainingRefreshes } },
});

export const configurationView = (configuration: SandboxJobConfiguration) => ({
  type: configuration.type,
  completion_status: configuration.completionStatus,
});
