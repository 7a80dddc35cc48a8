import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID, Length, Matches } from 'class-validator';
import { Saga, SAGA_STATES, SAGA_TYPES, SagaState, SagaStep, SagaType } from '../../../domain/sagas/saga';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';
import { DURATION_HINT, DURATION_PATTERN } from '../age-filter';
import { IndividualNameMap, INDIVIDUAL_NAMES } from '../individual-names';
import { secondsSince } from '../ops-ids';
import { IncludeIndividualNames, IndividualNamesProperty } from './include-names.dto';

export const MAX_SAGAS_PAGE = 100;

export class ListSagasQueryDto extends PageQueryDto(MAX_SAGAS_PAGE) {
  @ApiPropertyOptional({ enum: SAGA_TYPES })
  @IsOptional()
  @IsIn(SAGA_TYPES, { message: `type must be one of: ${SAGA_TYPES.join(', ')}` })
  type?: SagaType;

  @ApiPropertyOptional({ enum: SAGA_STATES })
  @IsOptional()
  @IsIn(SAGA_STATES, { message: `state must be one of: ${SAGA_STATES.join(', ')}` })
  state?: SagaState;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'connection_id must be a UUID' })
  connection_id?: string;

  @ApiPropertyOptional({ description: 'The id of the HRIS event that started the saga (any case)', example: '9b4f1c1e-6a53-4e0a-9d7b-3f0f7a1b2c3d' })
  @IsOptional()
  @Length(1, 200, { message: 'source_event_id must be an event id of 1 to 200 characters' })
  source_event_id?: string;

  @ApiPropertyOptional({ example: '2h', description: 'Started at least this long ago: a duration like 90s, 15m, 2h, 3d' })
  @IsOptional()
  @Matches(DURATION_PATTERN, { message: `older_than must be ${DURATION_HINT}` })
  older_than?: string;

  @ApiPropertyOptional({ example: '3d', description: 'Started less than this long ago: a duration like 90s, 15m, 2h, 3d' })
  @IsOptional()
  @Matches(DURATION_PATTERN, { message: `newer_than must be ${DURATION_HINT}` })
  newer_than?: string;

  @IncludeIndividualNames()
  include?: typeof INDIVIDUAL_NAMES;
}

/** A saga in a listing: where it stands, without its timeline. */
export class SagaSummaryResponse {
  @ApiProperty({ format: 'uuid' }) saga_id: string;
  @ApiProperty({ enum: SAGA_TYPES }) type: string;
  @ApiProperty({ enum: SAGA_STATES }) state: string;
  @ApiProperty({ nullable: true, type: String }) outcome: string | null;
  @ApiProperty({ format: 'uuid' }) connection_id: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) entity_id: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The HRIS event that started it' }) source_event_id: string | null;
  @ApiProperty() attempts: number;
  @ApiProperty({ nullable: true, type: String }) last_error: string | null;
  @ApiProperty({ nullable: true, type: Object, description: 'The latest step {at, name, detail?}' }) last_step: SagaStep | null;
  @ApiProperty() step_count: number;
  @ApiProperty({ description: 'Seconds since it started (service clock)' }) age_seconds: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, description: 'With include=individual_names: the individual an HRIS saga is about' })
  individual_id?: string | null;
  @IndividualNamesProperty() individual_names?: IndividualNameMap;
}

export interface SagaJobLink {
  jobId: string;
  /** What the saga last recorded for the job (saga_jobs.status). */
  statusSeen: string | null;
  kind: string;
  type: string;
  status: string;
  createdAt: Date;
  completedAt: Date | null;
  error: string | null;
}

export class SagaJobResponse {
  @ApiProperty({ format: 'uuid' }) job_id: string;
  @ApiProperty() kind: string;
  @ApiProperty() type: string;
  @ApiProperty({ description: 'The job’s status now' }) status: string;
  @ApiProperty({ nullable: true, type: String, description: 'The status the saga last recorded for it' }) saga_status: string | null;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) completed_at: string | null;
}

export class SagaDetailResponse extends SagaSummaryResponse {
  @ApiProperty({ type: [Object], description: 'Steps in the order they happened: [{at, name, detail?}]' }) steps: SagaStep[];
  @ApiProperty({ type: [SagaJobResponse] }) jobs: SagaJobResponse[];
}

export function sagaSummaryView(saga: Saga, now: Date): SagaSummaryResponse {
  return {
    saga_id: saga.id,
    type: saga.type,
    state: saga.state,
    outcome: saga.outcome,
    connection_id: saga.connectionId,
    entity_id: saga.entityId,
    source_event_id: saga.sourceEventId,
    attempts: saga.attempts,
    last_error: saga.lastError,
    last_step: saga.steps.at(-1) ?? null,
    step_count: saga.steps.length,
    age_seconds: secondsSince(saga.createdAt, now),
    created_at: saga.createdAt.toISOString(),
    updated_at: saga.updatedAt.toISOString(),
  };
}

export function sagaDetailView(saga: Saga, jobs: SagaJobLink[], now: Date): SagaDetailResponse {
  return {
    ...sagaSummaryView(saga, now),
    steps: saga.steps,
    jobs: jobs.map((job) => ({
      job_id: job.jobId,
      kind: job.kind,
      type: job.type,
      status: job.status,
      saga_status: job.statusSeen,
      error: job.error,
      created_at: job.createdAt.toISOString(),
      completed_at: job.completedAt?.toISOString() ?? null,
    })),
  };
}
