import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { MAX_OFFSET } from '../../../infrastructure/http/page-query.dto';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsCalendarDate } from './calendar-date.validator';
import { EntityScopedQueryDto, queryList } from './entity-scoped-query.dto';

export const DIRECTORY_MAX_LIMIT = 10_000;
export const DIRECTORY_DEFAULT_LIMIT = 100;
export const PEOPLE_BATCH_MAX = 10_000;
export const PAY_STATEMENT_BATCH_MAX = 10;
export const PAY_STATEMENT_MAX_LIMIT = 5_000;
export const PAY_STATEMENT_DEFAULT_LIMIT = 100;
/** Pay frequencies of pay groups and payments, as clients of this API family know them. */
export const PAY_FREQUENCIES = [
  'annually',
  'semi_annually',
  'quarterly',
  'monthly',
  'semi_monthly',
  'bi_weekly',
  'weekly',
  'daily',
  'other',
] as const;
export const INDIVIDUAL_INCLUDES = ['ssn'] as const;

export class DirectoryQueryDto extends EntityScopedQueryDto {
  // Above the maximum is 422 `page_size_limit_exceeded`, as the public document answers it
  // (EmployerController), not this validation's 400.
  @ApiPropertyOptional({ minimum: 1, maximum: DIRECTORY_MAX_LIMIT, default: DIRECTORY_DEFAULT_LIMIT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  limit?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: MAX_OFFSET, default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(MAX_OFFSET)
  offset?: number;
}

export class IndividualRequestItemDto {
  @ApiProperty({ format: 'uuid', description: 'A malformed id is answered per item with code 400' })
  @IsString()
  individual_id: string;
}

export class IndividualOptionsDto {
  @ApiPropertyOptional({ enum: INDIVIDUAL_INCLUDES, isArray: true, description: '"ssn" returns the SSN (null otherwise)' })
  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsIn(INDIVIDUAL_INCLUDES, { each: true, message: `each value in include must be one of ${INDIVIDUAL_INCLUDES.join(', ')}` })
  include?: (typeof INDIVIDUAL_INCLUDES)[number][];
}

export class IndividualRequestDto {
  @ApiProperty({ type: [IndividualRequestItemDto], minItems: 1, maxItems: PEOPLE_BATCH_MAX })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(PEOPLE_BATCH_MAX)
  @ValidateNested({ each: true })
  @Type(() => IndividualRequestItemDto)
  requests: IndividualRequestItemDto[];

  @ApiPropertyOptional({ type: IndividualOptionsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => IndividualOptionsDto)
  options?: IndividualOptionsDto;
}

export class EmploymentRequestDto {
  @ApiProperty({ type: [IndividualRequestItemDto], minItems: 1, maxItems: PEOPLE_BATCH_MAX })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(PEOPLE_BATCH_MAX)
  @ValidateNested({ each: true })
  @Type(() => IndividualRequestItemDto)
  requests: IndividualRequestItemDto[];
}

export class PaymentQueryDto extends EntityScopedQueryDto {
  @ApiProperty({ format: 'date', description: 'First pay date, inclusive (YYYY-MM-DD)' })
  @IsDefined({ message: 'start_date is required (YYYY-MM-DD)' })
  @IsCalendarDate()
  start_date: string;

  @ApiProperty({ format: 'date', description: 'Last pay date, inclusive (YYYY-MM-DD)' })
  @IsDefined({ message: 'end_date is required (YYYY-MM-DD)' })
  @IsCalendarDate()
  end_date: string;
}

export class PayStatementRequestItemDto {
  @ApiProperty({ format: 'uuid', description: 'A malformed id is answered per item with code 400' })
  @IsString()
  payment_id: string;

  @ApiPropertyOptional({ minimum: 1, maximum: PAY_STATEMENT_MAX_LIMIT, default: PAY_STATEMENT_DEFAULT_LIMIT })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(PAY_STATEMENT_MAX_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: MAX_OFFSET, default: 0 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_OFFSET)
  offset?: number;
}

export class PayStatementRequestDto {
  @ApiProperty({ type: [PayStatementRequestItemDto], minItems: 1, maxItems: PAY_STATEMENT_BATCH_MAX })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(PAY_STATEMENT_BATCH_MAX)
  @ValidateNested({ each: true })
  @Type(() => PayStatementRequestItemDto)
  requests: PayStatementRequestItemDto[];
}

export class PayGroupsQueryDto extends EntityScopedQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only pay groups this individual belongs to' })
  @IsOptional()
  @IsUUID('all')
  individual_id?: string;

  @ApiPropertyOptional({ enum: PAY_FREQUENCIES, isArray: true, description: 'Only pay groups paying at one of these frequencies' })
  @IsOptional()
  @Transform(queryList)
  @IsArray()
  @IsIn(PAY_FREQUENCIES, { each: true, message: `each value in pay_frequencies must be one of ${PAY_FREQUENCIES.join(', ')}` })
  pay_frequencies?: string[];

  @IsOptional()
  @Transform(queryList)
  @IsArray()
  @IsIn(PAY_FREQUENCIES, { each: true, message: `each value in pay_frequencies[] must be one of ${PAY_FREQUENCIES.join(', ')}` })
  'pay_frequencies[]'?: string[];
}
