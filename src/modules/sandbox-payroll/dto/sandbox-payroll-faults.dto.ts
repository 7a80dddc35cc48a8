import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsUUID, Max, Min, ValidateNested } from 'class-validator';
import { MAX_PAY_ADJUSTMENTS, PAY_ADJUSTMENT_ACTIONS, PayAdjustmentAction, SandboxPayAdjustment } from '../../../infrastructure/providers/sandbox/sandbox-pay-adjustments';
import { EntityScopedQueryDto } from '../../employer/dto/entity-scoped-query.dto';
import { MAX_STATEMENT_CENTS } from './run-sandbox-payment.dto';
import { IsCalendarDate, NotNullWhenPresent } from './sandbox-fields.dto';

/**
 * Bodies of the sandbox's payroll faults: a payroll admin's edit of an enrollment in the
 * provider's own screens (bypassing the service's records), and adjustments of the next
 * regular pay run (sandbox-pay-adjustments.ts).
 */

/** `PUT /sandbox/benefits/{benefit_id}/individuals/{individual_id}`. */
export class SandboxEnrollmentEditDto {
  @ApiPropertyOptional({ example: '2026-06-01', description: 'YYYY-MM-DD, at most two years ahead; default today. The configuration applies to pay dates on or after it' })
  @NotNullWhenPresent()
  @IsCalendarDate()
  effective_date?: string;

  // The enroll body's configuration: its fields depend on the benefit's type, so it is checked
  // once the benefit is found (enrollment-configuration.ts), as the enroll route checks it.
  @ApiProperty({
    allOf: [{ $ref: getSchemaPath('EnrollmentConfiguration') }],
    description:
      'The configuration as `POST /employer/benefits/{benefit_id}/individuals` takes it (amounts in cents, percentages in ' +
      'basis points); stored with every field present. Its own `effective_date` is taken when the body gives none.',
  })
  @IsDefined({ message: 'configuration is required' })
  @IsObject({ message: 'configuration must be an object' })
  configuration: Record<string, unknown>;
}

/** `DELETE /sandbox/benefits/{benefit_id}/individuals/{individual_id}`. */
export class SandboxEnrollmentEndQueryDto extends EntityScopedQueryDto {
  @ApiPropertyOptional({ example: '2026-06-01', description: 'YYYY-MM-DD, at most two years ahead; default today. The enrollment no longer applies from this date' })
  @IsOptional()
  @IsCalendarDate()
  effective_date?: string;
}

const amountDoc = (line: string) => ({
  type: 'integer' as const,
  nullable: true,
  minimum: 0,
  maximum: MAX_STATEMENT_CENTS,
  description: `Cents; \`change\` only: the benefit's ${line} line on the next regular statement (0: no line; absent or null: as computed)`,
});

export class SandboxPayAdjustmentDto implements Pick<SandboxPayAdjustment, 'individual_id' | 'benefit_id' | 'action'> {
  @ApiProperty({ format: 'uuid', description: 'An individual of the sandbox employer' })
  @IsUUID('all', { message: 'individual_id must be a UUID' })
  individual_id: string;

  @ApiProperty({ format: 'uuid', description: 'A benefit the sandbox provider runs' })
  @IsUUID('all', { message: 'benefit_id must be a UUID' })
  benefit_id: string;

  @ApiProperty({
    enum: PAY_ADJUSTMENT_ACTIONS,
    description:
      '`skip`: no employee deduction and no employer contribution line for the benefit; `change`: the lines set to the amounts given ' +
      '(at least one); `keep`: deducted with the last configuration of an enrollment that has ended, as if still in force',
  })
  @IsIn(PAY_ADJUSTMENT_ACTIONS, { message: `action must be one of: ${PAY_ADJUSTMENT_ACTIONS.join(', ')}` })
  action: PayAdjustmentAction;

  @ApiPropertyOptional(amountDoc('employee deduction'))
  @IsOptional()
  @IsInt({ message: '$property must be an integer number of cents' })
  @Min(0)
  @Max(MAX_STATEMENT_CENTS)
  employee_amount?: number | null;

  @ApiPropertyOptional(amountDoc('employer contribution'))
  @IsOptional()
  @IsInt({ message: '$property must be an integer number of cents' })
  @Min(0)
  @Max(MAX_STATEMENT_CENTS)
  employer_amount?: number | null;
}

/** `POST /sandbox/payroll/adjustments`. */
export class SandboxPayAdjustmentsDto {
  @ApiProperty({ type: [SandboxPayAdjustmentDto], minItems: 1, maxItems: MAX_PAY_ADJUSTMENTS, description: 'Each (individual, benefit) at most once' })
  @IsArray({ message: 'adjustments must be an array' })
  @ArrayMinSize(1, { message: 'adjustments must hold at least 1 adjustment' })
  @ArrayMaxSize(MAX_PAY_ADJUSTMENTS, { message: `adjustments must hold at most ${MAX_PAY_ADJUSTMENTS} adjustments` })
  @IsObject({ each: true, message: 'each value in adjustments must be an object' })
  @ValidateNested({ each: true })
  @Type(() => SandboxPayAdjustmentDto)
  adjustments: SandboxPayAdjustmentDto[];
}

/** The pending adjustments, as every adjustments operation answers them. */
export class SandboxPayAdjustmentView implements SandboxPayAdjustment {
  @ApiProperty({ format: 'uuid' }) individual_id: string;
  @ApiProperty({ format: 'uuid' }) benefit_id: string;
  @ApiProperty({ enum: PAY_ADJUSTMENT_ACTIONS }) action: PayAdjustmentAction;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Cents; null: as computed (always null for skip and keep)' }) employee_amount: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Cents; null: as computed (always null for skip and keep)' }) employer_amount: number | null;
}

export class SandboxPayAdjustmentsResponse {
  @ApiProperty({ type: [SandboxPayAdjustmentView], description: 'Every pending adjustment of the employer, by individual then benefit' })
  adjustments: SandboxPayAdjustmentView[];
}

export class SandboxPayAdjustmentsClearedResponse extends SandboxPayAdjustmentsResponse {
  @ApiProperty({ description: 'How many pending adjustments were dropped' })
  deleted: number;
}
