import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';

export const MAX_AUDIT_PAGE = 100;
const NAME = /^[a-z][a-z0-9_.]{0,63}$/;

export class ListAuditQueryDto extends PageQueryDto(MAX_AUDIT_PAGE) {
  @ApiPropertyOptional({ example: 'dead_letter', description: 'task, job, dead_letter, …' })
  @IsOptional()
  @Matches(NAME, { message: 'target_type must be a lower-case name such as task, job or dead_letter' })
  target_type?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @IsNotEmpty({ message: 'target_id must not be empty' })
  @MaxLength(200)
  target_id?: string;

  @ApiPropertyOptional({ description: 'The ops username' })
  @IsOptional()
  @IsString()
  @IsNotEmpty({ message: 'actor must not be empty' })
  @MaxLength(200)
  actor?: string;

  @ApiPropertyOptional({ example: 'task.complete' })
  @IsOptional()
  @Matches(NAME, { message: 'action must be a lower-case name such as task.complete or dead_letter.replay' })
  action?: string;
}

export class AuditEntryResponse {
  @ApiProperty({ description: 'Increasing with time of recording' }) audit_id: string;
  @ApiProperty() actor: string;
  @ApiProperty({ example: 'job.retry' }) action: string;
  @ApiProperty() target_type: string;
  @ApiProperty() target_id: string;
  @ApiProperty({ type: Object, nullable: true }) detail: Record<string, unknown> | null;
  @ApiProperty({ format: 'date-time' }) at: string;
}
