import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { CONNECTION_STATUSES, ConnectionStatus } from '../../../domain/connections/connection';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';

export const MAX_CONNECTIONS_PAGE = 100;

export class ListOpsConnectionsQueryDto extends PageQueryDto(MAX_CONNECTIONS_PAGE) {
  @ApiPropertyOptional({ enum: CONNECTION_STATUSES })
  @IsOptional()
  @IsIn(CONNECTION_STATUSES, { message: `status must be one of: ${CONNECTION_STATUSES.join(', ')}` })
  status?: ConnectionStatus;

  @ApiPropertyOptional({ example: 'sandbox_automated' })
  @IsOptional()
  @IsString()
  @IsNotEmpty({ message: 'provider_id must not be empty' })
  @MaxLength(100)
  provider_id?: string;
}

export interface SyncJobSummary {
  job_id: string;
  kind: string;
  status: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  error: string | null;
}

export class OpsEntityResponse {
  @ApiProperty({ format: 'uuid' }) entity_id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['active', 'disconnected'] }) status: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'When the data now served was synced' })
  last_synced_at: string | null;
}

export class OpsConnectionResponse {
  @ApiProperty({ format: 'uuid' }) connection_id: string;
  @ApiProperty({ nullable: true, type: String }) customer_id: string | null;
  @ApiProperty({ nullable: true, type: String }) customer_name: string | null;
  @ApiProperty() provider_id: string;
  @ApiProperty() authentication_type: string;
  @ApiProperty({ enum: CONNECTION_STATUSES }) status: string;
  @ApiProperty() sandbox: boolean;
  @ApiProperty() manual: boolean;
  @ApiProperty({ type: [String] }) products: string[];
  @ApiProperty({ type: [OpsEntityResponse] }) entities: OpsEntityResponse[];
  @ApiProperty({ type: Object, nullable: true, description: 'The latest data_sync_all job: {job_id, kind, status, created_at, started_at, completed_at, error}' })
  last_sync: SyncJobSummary | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) disconnected_at: string | null;
}

export class OpsConnectionDetailResponse extends OpsConnectionResponse {
  @ApiProperty({ type: [Object], description: 'The latest data syncs, newest first (at most 10)' }) recent_syncs: SyncJobSummary[];
  @ApiProperty({
    type: Object,
    description: '{ unfinished_jobs, failed_jobs, open_tasks, active_sagas }: jobs pending or in progress, jobs that ended in an error status, open ops tasks, sagas started or waiting',
  })
  counts: { unfinished_jobs: number; failed_jobs: number; open_tasks: number; active_sagas: number };
}
