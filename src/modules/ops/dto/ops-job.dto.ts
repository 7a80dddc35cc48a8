import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID, Matches } from 'class-validator';
import { ManualJobBody } from '../../../domain/assisted/manual-job';
import { IndividualResult } from '../../../domain/enrollments/enrollment-change';
import { Job, JOB_KINDS, JOB_STATUSES, JobKind, JobStatus } from '../../../domain/jobs/job';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';
import { automatedJobView } from '../../sync/dto/job.dto';
import { IndividualNameMap } from '../individual-names';
import { secondsSince } from '../ops-ids';
import { IndividualNamesProperty } from './include-names.dto';

export const MAX_OPS_JOBS_PAGE = 100;

export class ListOpsJobsQueryDto extends PageQueryDto(MAX_OPS_JOBS_PAGE) {
  @ApiPropertyOptional({ enum: JOB_STATUSES, description: 'pending and in_progress list oldest first; the others newest first' })
  @IsOptional()
  @IsIn(JOB_STATUSES, { message: `status must be one of: ${JOB_STATUSES.join(', ')}` })
  status?: JobStatus;

  @ApiPropertyOptional({ enum: JOB_KINDS })
  @IsOptional()
  @IsIn(JOB_KINDS, { message: `kind must be one of: ${JOB_KINDS.join(', ')}` })
  kind?: JobKind;

  @ApiPropertyOptional({ example: 'data_sync_all', description: 'A job type this service runs (an unknown one is 400 listing them)' })
  @IsOptional()
  @Matches(/^[a-z][a-z0-9_]{0,63}$/, { message: 'type must be a job type such as data_sync_all' })
  type?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'connection_id must be a UUID' })
  connection_id?: string;
}

/** Job types whose outcome is per individual. */
const PER_INDIVIDUAL_JOB_TYPES = new Set(['benefit_enroll', 'benefit_unenroll']);

/** How each individual came out: an automated enrollment job's `body`, a manual one's `body.individuals`. */
function individualResultsOf(job: Job, view: ReturnType<typeof automatedJobView>): IndividualResult[] | undefined {
  if (!PER_INDIVIDUAL_JOB_TYPES.has(job.type)) return undefined;
  if (job.kind !== 'manual') return view.body ?? [];
  const individuals = (job.result as unknown as ManualJobBody | null)?.individuals;
  return Array.isArray(individuals) ? individuals : [];
}

const errorOf = (job: Job): string | null => (typeof job.result?.error === 'string' ? job.result.error : null);

/** Where a client polls the job: automated and manual jobs have their own routes; internal ones none. */
function jobUrlOf(job: Job, automatedUrl: string, baseUrl: string): string | null {
  if (job.kind === 'automated') return automatedUrl;
  return job.kind === 'manual' ? `${baseUrl}/jobs/manual/${job.id}` : null;
}

export class OpsJobSummaryResponse {
  @ApiProperty({ format: 'uuid' }) job_id: string;
  @ApiProperty({ nullable: true, type: String }) job_url: string | null;
  @ApiProperty({ enum: JOB_KINDS }) kind: string;
  @ApiProperty() type: string;
  @ApiProperty({ enum: JOB_STATUSES }) status: string;
  @ApiProperty({ format: 'uuid' }) connection_id: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) entity_id: string | null;
  @ApiProperty({ description: 'Runs so far (leases taken)' }) attempts: number;
  @ApiProperty({ description: 'Seconds since it was created (service clock)' }) age_seconds: number;
  @ApiProperty({ nullable: true, type: String, description: 'Why it failed (or why its last run failed)' }) error: string | null;
  @ApiPropertyOptional({ description: 'Enrollment jobs: how many individuals failed' }) individual_error_count?: number;
  @ApiProperty({ description: 'In error and its type has a retrier: POST …/retry will run it again' }) retriable: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) scheduled_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) started_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) completed_at: string | null;
}

export class OpsJobDetailResponse extends OpsJobSummaryResponse {
  @ApiProperty({ type: Object, nullable: true }) params: Record<string, unknown> | null;
  @ApiProperty({ type: Object, nullable: true, description: 'What the job recorded when it ended (or of its last failed run)' })
  result: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: [Object], description: 'Enrollment jobs: [{individual_id, code, message?}] of every individual' })
  body?: IndividualResult[];
  @ApiPropertyOptional({ type: [Object], description: 'Enrollment jobs: the entries of body whose code is not 200' })
  individual_errors?: IndividualResult[];
  @IndividualNamesProperty() individual_names?: IndividualNameMap;
}

export function opsJobSummaryView(job: Job, { baseUrl, now, retriable }: { baseUrl: string; now: Date; retriable: boolean }): OpsJobSummaryResponse {
  const view = automatedJobView(job, baseUrl);
  const individuals = individualResultsOf(job, view);
  return {
    job_id: view.job_id,
    job_url: jobUrlOf(job, view.job_url, baseUrl),
    kind: job.kind,
    type: view.type,
    status: view.status,
    connection_id: job.connectionId,
    entity_id: job.entityId,
    attempts: job.attempts,
    age_seconds: secondsSince(job.createdAt, now),
    error: errorOf(job),
    ...(individuals && { individual_error_count: individuals.filter((r) => r.code !== 200).length }),
    retriable,
    created_at: view.created_at,
    scheduled_at: view.scheduled_at,
    started_at: view.started_at,
    completed_at: view.completed_at,
  };
}

export function opsJobDetailView(job: Job, context: { baseUrl: string; now: Date; retriable: boolean }): OpsJobDetailResponse {
  const individuals = individualResultsOf(job, automatedJobView(job, context.baseUrl));
  return {
    ...opsJobSummaryView(job, context),
    params: job.params,
    result: job.result,
    ...(individuals && { body: individuals, individual_errors: individuals.filter((r) => r.code !== 200) }),
  };
}
