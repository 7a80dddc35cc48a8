import { ApiProperty } from '@nestjs/swagger';
import { ManualJobBody } from '../../../domain/assisted/manual-job';
import { IndividualResult } from '../../../domain/enrollments/enrollment-change';
import { Job } from '../../../domain/jobs/job';

export const MANUAL_JOB_STATUSES = ['pending', 'in_progress', 'complete', 'error'] as const;

/** DECISIONS.md "Request shapes not shown": a manual job is `{job_id, status, body}`. */
export class ManualJobResponse {
  @ApiProperty({ format: 'uuid' }) job_id: string;

  @ApiProperty({ enum: MANUAL_JOB_STATUSES, description: 'pending: the ops task is open; in_progress: completed, being applied' })
  status: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'object' },
    nullable: true,
    description:
      'null until resolved; then what came of it: one {benefit_id, note, error} for benefit work, and for enroll and ' +
      'unenroll one per individual, with its individual_id, code and message added',
  })
  body: ManualJobBodyItem[] | null;
}

/** One element of a resolved manual job's `body` (an array, as in the public document). */
export type ManualJobBodyItem = Omit<ManualJobBody, 'individuals'> & Partial<IndividualResult>;

export function manualJobView(job: Job): ManualJobResponse {
  const finished = job.status === 'complete' || job.status === 'error';
  const result = job.result as unknown as ManualJobBody | null;
  return { job_id: job.id, status: job.status, body: finished && result ? manualJobBodyOf(result) : null };
}

function manualJobBodyOf({ individuals, ...outcome }: ManualJobBody): ManualJobBodyItem[] {
  return individuals === undefined ? [outcome] : individuals.map((individual) => ({ ...outcome, ...individual }));
}
