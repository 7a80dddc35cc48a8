import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { DUE_STATES, DueState, dueStateOf, OPS_TASK_STATUSES, OpsTask, OpsTaskStatus } from '../../../domain/assisted/ops-task';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';
import { BENEFIT_JOB_TYPES, BenefitJobType } from '../../../domain/benefits/benefit-job-params';

export const MAX_TASKS_PAGE = 100;
const MAX_NOTE = 2_000;

const trimmed = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class ListOpsTasksQueryDto extends PageQueryDto(MAX_TASKS_PAGE) {
  @ApiPropertyOptional({ enum: OPS_TASK_STATUSES })
  @IsOptional()
  @IsIn(OPS_TASK_STATUSES, { message: `status must be one of: ${OPS_TASK_STATUSES.join(', ')}` })
  status?: OpsTaskStatus;

  @ApiPropertyOptional({ enum: DUE_STATES, description: 'Open tasks only: before, on or after their due date (UTC dates)' })
  @IsOptional()
  @IsIn(DUE_STATES, { message: `due_state must be one of: ${DUE_STATES.join(', ')}` })
  due_state?: DueState;

  @ApiPropertyOptional({ enum: DUE_STATES, description: 'The same filter as due_state, by the name the ops API uses for SLA state' })
  @IsOptional()
  @IsIn(DUE_STATES, { message: `sla must be one of: ${DUE_STATES.join(', ')}` })
  sla?: DueState;

  @ApiPropertyOptional({ enum: BENEFIT_JOB_TYPES })
  @IsOptional()
  @IsIn(BENEFIT_JOB_TYPES, { message: `type must be one of: ${BENEFIT_JOB_TYPES.join(', ')}` })
  type?: BenefitJobType;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'connection_id must be a UUID' })
  connection_id?: string;
}

export class CompleteOpsTaskDto {
  @ApiPropertyOptional({ maxLength: MAX_NOTE })
  @IsOptional()
  @Transform(trimmed)
  @IsString({ message: 'note must be a string' })
  @MaxLength(MAX_NOTE)
  note?: string;
}

export class FailOpsTaskDto {
  @ApiProperty({ maxLength: MAX_NOTE, description: 'Why the work could not be done; the manual job carries it' })
  @Transform(trimmed)
  @IsString({ message: 'note must be a string' })
  @IsNotEmpty({ message: 'note is required to fail a task' })
  @MaxLength(MAX_NOTE)
  note: string;
}

export class OpsTaskResponse {
  @ApiProperty({ format: 'uuid' }) task_id: string;
  @ApiProperty({ format: 'uuid' }) job_id: string;
  @ApiProperty({ format: 'uuid' }) connection_id: string;
  @ApiProperty({ format: 'uuid' }) entity_id: string;
  @ApiProperty({ enum: BENEFIT_JOB_TYPES }) type: string;
  @ApiProperty({ type: Object, description: 'The work: the manual job’s params' }) payload: Record<string, unknown>;
  @ApiProperty({ enum: OPS_TASK_STATUSES }) status: string;
  @ApiProperty({ format: 'date' }) due_date: string;
  @ApiProperty({ enum: DUE_STATES, nullable: true, type: String }) due_state: DueState | null;
  @ApiProperty({ nullable: true, type: String }) note: string | null;
  @ApiProperty({ nullable: true, type: String }) resolved_by: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) resolved_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export function opsTaskView(task: OpsTask, today: string): OpsTaskResponse {
  return {
    task_id: task.id,
    job_id: task.jobId,
    connection_id: task.connectionId,
    entity_id: task.entityId,
    type: task.type,
    payload: task.payload,
    status: task.status,
    due_date: task.dueDate,
    due_state: dueStateOf(task, today),
    note: task.note,
    resolved_by: task.resolvedBy,
    resolved_at: task.resolvedAt?.toISOString() ?? null,
    created_at: task.createdAt.toISOString(),
  };
}
