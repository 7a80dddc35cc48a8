import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsUUID, Max, Min, ValidateIf, ValidateNested } from 'class-validator';
import { benefitGroupOf, enrollBodyConfigurationOf } from '../../../domain/benefits/enrollment-configuration';
import { MAX_WAITING_PERIOD_DAYS, PolicyConfiguration } from '../../../domain/policies/auto-enrollment-policy';
import { BenefitType } from '../../../domain/providers/provider';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';
import { StoredPolicy } from '../policies.repository';

export const MAX_POLICIES_PAGE = 100;

const CONFIGURATION_DESCRIPTION =
  'An enroll body configuration without effective_date: employee_deduction {type fixed|percent, amount}, ' +
  'company_contribution {type, amount}, and by benefit type catch_up, annual_maximum, annual_contribution_limit (HSA)';
const WAITING_PERIOD_MESSAGE = `waiting_period_days must be a whole number of days from 0 to ${MAX_WAITING_PERIOD_DAYS}`;

/** Shape only; whether it fits the configuration is the domain's call (escalationProblems). */
export class EscalationDto {
  @ApiProperty({ description: 'Raise each year, in the employee deduction’s unit (basis points for percent, cents for fixed)', minimum: 1 })
  @IsInt({ message: 'increase must be a whole number' })
  increase: number;

  @ApiProperty({ description: 'The deduction never goes above this, same unit' })
  @IsInt({ message: 'cap must be a whole number' })
  cap: number;
}

export class CreatePolicyDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'connection_id must be a UUID' })
  connection_id: string;

  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'entity_id must be a UUID' })
  entity_id: string;

  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'benefit_id must be a UUID' })
  benefit_id: string;

  @ApiProperty({ type: Object, description: CONFIGURATION_DESCRIPTION })
  @IsDefined({ message: 'configuration is required' })
  @IsObject({ message: 'configuration must be an object' })
  configuration: Record<string, unknown>;

  @ApiProperty({ minimum: 0, maximum: MAX_WAITING_PERIOD_DAYS, description: 'Days after the start date before the enrollment takes effect' })
  @IsDefined({ message: 'waiting_period_days is required' })
  @IsInt({ message: WAITING_PERIOD_MESSAGE })
  @Min(0, { message: WAITING_PERIOD_MESSAGE })
  @Max(MAX_WAITING_PERIOD_DAYS, { message: WAITING_PERIOD_MESSAGE })
  waiting_period_days: number;

  @ApiPropertyOptional({ type: EscalationDto, nullable: true, description: 'Yearly auto-escalation of the employee deduction; null or absent: none' })
  @IsOptional()
  @IsObject({ message: 'escalation must be an object or null' })
  @ValidateNested()
  @Type(() => EscalationDto)
  escalation?: EscalationDto | null;
}

/** Given, even as null: checked (IsOptional would let null through as "absent"). */
const Given = () => ValidateIf((_object: unknown, value: unknown) => value !== undefined);

/** Absent fields stay as they are; `escalation: null` removes the escalation. */
export class UpdatePolicyDto {
  @ApiPropertyOptional({ type: Object, description: `Replaces the configuration. ${CONFIGURATION_DESCRIPTION}` })
  @Given()
  @IsObject({ message: 'configuration must be an object' })
  configuration?: Record<string, unknown>;

  @ApiPropertyOptional({ minimum: 0, maximum: MAX_WAITING_PERIOD_DAYS })
  @Given()
  @IsInt({ message: WAITING_PERIOD_MESSAGE })
  @Min(0, { message: WAITING_PERIOD_MESSAGE })
  @Max(MAX_WAITING_PERIOD_DAYS, { message: WAITING_PERIOD_MESSAGE })
  waiting_period_days?: number;

  @ApiPropertyOptional({ type: EscalationDto, nullable: true })
  @IsOptional()
  @IsObject({ message: 'escalation must be an object or null' })
  @ValidateNested()
  @Type(() => EscalationDto)
  escalation?: EscalationDto | null;

  @ApiPropertyOptional()
  @Given()
  @IsBoolean({ message: 'active must be true or false' })
  active?: boolean;
}

export class ListPoliciesQueryDto extends PageQueryDto(MAX_POLICIES_PAGE) {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'connection_id must be a UUID' })
  connection_id?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'entity_id must be a UUID' })
  entity_id?: string;

  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'active must be true or false' })
  active?: 'true' | 'false';
}

export class PolicyResponse {
  @ApiProperty({ format: 'uuid' }) policy_id: string;
  @ApiProperty({ format: 'uuid' }) connection_id: string;
  @ApiProperty({ format: 'uuid' }) entity_id: string;
  @ApiProperty({ format: 'uuid' }) benefit_id: string;
  @ApiProperty() benefit_type: string;
  @ApiProperty({ type: Object, description: 'The fields an enroll body takes for this benefit type, every one present' })
  configuration: Record<string, unknown>;
  @ApiProperty() waiting_period_days: number;
  @ApiProperty({ type: EscalationDto, nullable: true }) escalation: { increase: number; cap: number } | null;
  @ApiProperty() active: boolean;
  @ApiProperty() created_by: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export function policyView(policy: StoredPolicy): PolicyResponse {
  return {
    policy_id: policy.id,
    connection_id: policy.connectionId,
    entity_id: policy.entityId,
    benefit_id: policy.benefitId,
    benefit_type: policy.benefitType,
    configuration: configurationBody(policy.configuration, policy.benefitType),
    waiting_period_days: policy.waitingPeriodDays,
    escalation: policy.escalation && { increase: policy.escalation.increase, cap: policy.escalation.cap },
    active: policy.active,
    created_by: policy.createdBy,
    created_at: policy.createdAt.toISOString(),
    updated_at: policy.updatedAt.toISOString(),
  };
}

/**
 * The configuration in the enroll body's terms, only the fields the benefit's type takes: what a
 * policy shows can be sent back as it is.
 */
function configurationBody(configuration: PolicyConfiguration, type: BenefitType): Record<string, unknown> {
  return enrollBodyConfigurationOf(configuration, benefitGroupOf(type));
}
