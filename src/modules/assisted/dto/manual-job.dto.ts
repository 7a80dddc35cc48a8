import { ApiProperty } from '@nestjs/swagger';
import { ManualJobBody } from '../../../domain/assisted/manual-job';
import { Job } from '../../../domain/jobs/job';

export const MANUAL_JOB_STATUSES = ['pending', 'in_progress', 'complete', 'error'] as const;

/** DECISIONS.md "Request shapes not shown": a manual job is `{job_id, status, body}`. */
export class ManualJobResponse {
  @ApiProperty({ format: 'uuid' }) job_id: string;

  @ApiProperty({ enum: MANUAL_JOB_STATUSES, description: 'pending: the ops task is open; in_progress: completed, being applied' })
  status: string;

  @ApiProperty({
    type: Object,
    nullable: true,
    description: 'null until resolved; then {benefit_id, note, error, individuals?} (individuals: enroll/unenroll results)',
  })
  body: ManualJobBody | null;
}

export function manualJobView(job: Job): ManualJobResponse {
  const finished = job.status === 'complete' || job.status === 'error';
  return { job_id: job.id, status: job.status, body: finished ? (job.result as unknown as ManualJobBody | null) : null };
}
