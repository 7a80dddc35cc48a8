import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { RULE_CONDITION_FIELDS, RULE_CONDITION_OPERATORS } from '../../../domain/employer/pay-statement-item-rules';
import { IsCalendarDate } from '../../employer/dto/calendar-date.validator';

export const RULE_ENTITY_TYPES = ['pay_statement_item'] as const;
export const MAX_RULE_CONDITIONS = 10;
export const MAX_RULE_PRIORITY = 1_000_000;
/** Metadata is stored and returned on every item read: keep it small. */
export const MAX_METADATA_BYTES = 16_384;

function MaxJsonBytes(max: number): PropertyDecorator {
  return ValidateBy({
    name: 'maxJsonBytes',
    validator: {
      validate: (value) => Buffer.byteLength(JSON.stringify(value) ?? '') <= max,
      defaultMessage: (args) => `${args?.property} must be at most ${max} bytes as JSON`,
    },
  });
}

export class RuleConditionDto {
  @ApiProperty({ enum: RULE_CONDITION_FIELDS, description: 'Item field checked: name, category or type (attributes.type)' })
  @IsIn(RULE_CONDITION_FIELDS)
  field: (typeof RULE_CONDITION_FIELDS)[number];

  @ApiProperty({ enum: RULE_CONDITION_OPERATORS })
  @IsIn(RULE_CONDITION_OPERATORS)
  operator: (typeof RULE_CONDITION_OPERATORS)[number];

  @ApiProperty({ minLength: 1, maxLength: 255 })
  @IsString()
  @Length(1, 255)
  value: string;
}

export class RuleAttributesDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: `Free key-value pairs, at most ${MAX_METADATA_BYTES} bytes as JSON`,
  })
  @IsDefined()
  @IsObject()
  @MaxJsonBytes(MAX_METADATA_BYTES)
  metadata: Record<string, unknown>;
}

/** Fields shared by create and update; on update each one is optional. */
class RuleFieldsDto {
  @ApiPropertyOptional({ minimum: 0, maximum: MAX_RULE_PRIORITY, description: 'Unique per entity; default: highest + 1' })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_RULE_PRIORITY)
  priority?: number;

  @ApiPropertyOptional({ type: String, format: 'date', nullable: true })
  @IsOptional()
  @IsCalendarDate()
  effective_start_date?: string | null;

  @ApiPropertyOptional({ type: String, format: 'date', nullable: true })
  @IsOptional()
  @IsCalendarDate()
  effective_end_date?: string | null;

  @ApiPropertyOptional({ enum: RULE_ENTITY_TYPES, default: 'pay_statement_item' })
  @IsOptional()
  @IsIn(RULE_ENTITY_TYPES)
  entity_type?: (typeof RULE_ENTITY_TYPES)[number];
}

export class CreateRuleDto extends RuleFieldsDto {
  @ApiProperty({ type: [RuleConditionDto], minItems: 1, maxItems: MAX_RULE_CONDITIONS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_RULE_CONDITIONS)
  @ValidateNested({ each: true })
  @Type(() => RuleConditionDto)
  conditions: RuleConditionDto[];

  @ApiProperty({ type: RuleAttributesDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => RuleAttributesDto)
  attributes: RuleAttributesDto;
}

/** PUT: the fields given replace the rule's; absent ones keep their value; null clears a date. */
export class UpdateRuleDto extends RuleFieldsDto {
  @ApiPropertyOptional({ type: [RuleConditionDto], minItems: 1, maxItems: MAX_RULE_CONDITIONS })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_RULE_CONDITIONS)
  @ValidateNested({ each: true })
  @Type(() => RuleConditionDto)
  conditions?: RuleConditionDto[];

  @ApiPropertyOptional({ type: RuleAttributesDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => RuleAttributesDto)
  attributes?: RuleAttributesDto;
}
