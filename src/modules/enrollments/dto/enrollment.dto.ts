import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsObject, IsOptional, IsString, IsUUID, isUUID } from 'class-validator';
import { EntityScopedQueryDto, queryList } from '../../employer/dto/entity-scoped-query.dto';

/** Enrollment bodies and unenrollment lists: at most 10,000 individuals (DECISIONS.md "Limits"). */
export const MAX_ENROLLMENT_ELEMENTS = 10_000;

/**
 * One element of the bare-array enrollment body. The configuration's fields depend on the
 * benefit's type, so it is checked after the benefit is found (enrollment-configuration.ts).
 */
export class EnrollmentElementDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'individual_id must be a UUID' })
  individual_id: string;

  @ApiProperty({
    type: Object,
    description:
      'employee_deduction {type fixed|percent, amount}, company_contribution {type, amount}, catch_up, annual_maximum, ' +
      'annual_contribution_limit (HSA: individual|family), effective_date (YYYY-MM-DD, MM/DD/YYYY or ISO 8601 date-time)',
  })
  @IsDefined({ message: 'configuration is required' })
  @IsObject({ message: 'configuration must be an object' })
  configuration: Record<string, unknown>;
}

/**
 * The common element, checked by hand (ArrayBodyPipe's fast path): only the two fields, a UUID
 * (class-validator's own test, as @IsUUID) and an object; what it passes, EnrollmentElementDto's validation passes (its spec checks it).
 */
export function isPlainEnrollmentElement(element: Record<string, unknown>): boolean {
  const keys = Object.keys(element);
  if (keys.length !== 2 || !('individual_id' in element) || !('configuration' in element)) return false;
  const { individual_id: id, configuration } = element;
  return typeof id === 'string' && isUUID(id, 'all') && typeof configuration === 'object' && configuration !== null && !Array.isArray(configuration);
}

export class UnenrollDto {
  @ApiProperty({ type: [String], format: 'uuid', minItems: 1, maxItems: MAX_ENROLLMENT_ELEMENTS })
  @IsArray({ message: 'individual_ids must be an array' })
  @ArrayMinSize(1, { message: 'individual_ids must hold at least 1 id' })
  @ArrayMaxSize(MAX_ENROLLMENT_ELEMENTS, { message: `individual_ids must hold at most ${MAX_ENROLLMENT_ELEMENTS} ids` })
  @IsUUID('all', { each: true, message: 'each of individual_ids must be a UUID' })
  individual_ids: string[];
}

export class EnrolledIndividualsQueryDto extends EntityScopedQueryDto {
  @ApiPropertyOptional({ type: [String], description: 'Comma-separated individual ids; all enrolled individuals when absent' })
  @IsOptional()
  @Transform(queryList)
  @IsArray()
  @ArrayMaxSize(MAX_ENROLLMENT_ELEMENTS, { message: `individual_ids must hold at most ${MAX_ENROLLMENT_ELEMENTS} ids` })
  @IsString({ each: true, message: 'individual_ids must be strings' })
  individual_ids?: string[];

  @IsOptional()
  @Transform(queryList)
  @IsArray()
  @ArrayMaxSize(MAX_ENROLLMENT_ELEMENTS)
  @IsString({ each: true })
  'individual_ids[]'?: string[];
}

export class JobIdResponse {
  @ApiProperty({ format: 'uuid' }) job_id: string;
}

export class EnrolledResponse {
  @ApiProperty({ format: 'uuid' }) benefit_id: string;
  @ApiProperty({ type: [String] }) individual_ids: string[];
}
