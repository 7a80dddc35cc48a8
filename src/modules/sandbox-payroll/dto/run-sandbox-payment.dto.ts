import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsPositive,
  IsString,
  IsUUID,
  Length,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { BENEFIT_TYPES } from '../../../domain/providers/provider';
import { IsCalendarDate, MAX_INCOME_CENTS, NotNullWhenPresent, SANDBOX_CURRENCY } from './sandbox-fields.dto';

/** As many statements as the public document allows in one payment. */
export const MAX_PAY_STATEMENTS = 10_000;
/** Lines of each list of one statement. */
export const MAX_STATEMENT_LINES = 100;
/** Every hour of a 31-day month. */
export const MAX_PERIOD_HOURS = 744;
/** Cents of one amount, and of each list's sum on one statement: a billion dollars. */
export const MAX_STATEMENT_CENTS = MAX_INCOME_CENTS;

export const PAY_STATEMENT_TYPES = ['regular_payroll', 'off_cycle_payroll', 'one_time_payment'] as const;
// The contract's pay statement has check and direct_deposit only (the public request also lists `other`).
export const PAYMENT_METHODS = ['check', 'direct_deposit'] as const;
export const EARNING_TYPES = [
  'salary',
  'wage',
  'reimbursement',
  'overtime',
  'severance',
  'double_overtime',
  'pto',
  'sick',
  'bonus',
  'commission',
  'tips',
  '1099',
  'other',
] as const;
export const TAX_TYPES = ['federal', 'fica', 'local', 'state'] as const;

const oneOf = (field: string, values: readonly string[]) => ({ message: `${field} must be one of: ${values.join(', ')}` });

function Cents(minimum = 0): PropertyDecorator {
  return applyDecorators(IsInt({ message: '$property must be an integer number of cents' }), Min(minimum), Max(MAX_STATEMENT_CENTS));
}

function Hours(): PropertyDecorator {
  return applyDecorators(IsNumber({ allowNaN: false, allowInfinity: false }), Max(MAX_PERIOD_HOURS));
}

/** A line's own `currency`, which the public request leaves out: usd when given (any case). */
function UsdWhenGiven(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ default: SANDBOX_CURRENCY, description: 'The sandbox pays in usd only (any case)' }),
    NotNullWhenPresent(),
    Transform(({ value }) => (typeof value === 'string' ? value.toLowerCase() : value)),
    IsIn([SANDBOX_CURRENCY], { message: 'currency must be usd: the sandbox payroll pays in US dollars' }),
  );
}

/** ValidateNested alone lets a nested array through as a list of elements: each must be an object. */
function EachAnObject(): PropertyDecorator {
  return IsObject({ each: true, message: 'each value in $property must be an object' });
}

function Lines(type: () => new () => object): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: [type()], description: `At most ${MAX_STATEMENT_LINES}; default none` }),
    NotNullWhenPresent(),
    IsArray(),
    ArrayMaxSize(MAX_STATEMENT_LINES),
    EachAnObject(),
    ValidateNested({ each: true }),
    Type(type),
  );
}

class LineDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ description: 'Cents', minimum: 0, maximum: MAX_STATEMENT_CENTS })
  @Cents()
  amount: number;

  @UsdWhenGiven()
  currency?: string;
}

export class SandboxEarningDto extends LineDto {
  @ApiProperty({ enum: EARNING_TYPES })
  @IsIn(EARNING_TYPES, oneOf('type', EARNING_TYPES))
  type: (typeof EARNING_TYPES)[number];

  @ApiPropertyOptional({ nullable: true, minimum: 0, maximum: MAX_PERIOD_HOURS, description: 'Default null' })
  @IsOptional()
  @Hours()
  @Min(0)
  hours?: number | null;
}

export class SandboxTaxDto extends LineDto {
  @ApiProperty({ enum: TAX_TYPES })
  @IsIn(TAX_TYPES, oneOf('type', TAX_TYPES))
  type: (typeof TAX_TYPES)[number];

  @ApiPropertyOptional({ default: false, description: 'Paid by the employer' })
  @NotNullWhenPresent()
  @IsBoolean()
  employer?: boolean;
}

export class SandboxEmployeeDeductionDto extends LineDto {
  @ApiPropertyOptional({ enum: BENEFIT_TYPES, nullable: true, description: 'Default null' })
  @IsOptional()
  @IsIn(BENEFIT_TYPES, oneOf('type', BENEFIT_TYPES))
  type?: (typeof BENEFIT_TYPES)[number] | null;

  @ApiPropertyOptional({ description: "Default: the type's tax treatment (post-tax kinds false), false without a type" })
  @NotNullWhenPresent()
  @IsBoolean()
  pre_tax?: boolean;
}

export class SandboxEmployerContributionDto extends LineDto {
  @ApiPropertyOptional({ enum: BENEFIT_TYPES, nullable: true, description: 'Default null' })
  @IsOptional()
  @IsIn(BENEFIT_TYPES, oneOf('type', BENEFIT_TYPES))
  type?: (typeof BENEFIT_TYPES)[number] | null;
}

/**
 * A pay statement given as written: stored as it is (amounts in cents, usd), and counted in the
 * employee's year-to-date totals. A missing total is derived from the lines given.
 */
export class SandboxPayStatementDto {
  @ApiProperty({ format: 'uuid', description: 'An employee paid by payroll in the pay period; one statement each' })
  @IsUUID('all', { message: 'individual_id must be a UUID' })
  individual_id: string;

  @ApiPropertyOptional({ enum: PAY_STATEMENT_TYPES, nullable: true, default: 'regular_payroll' })
  @IsOptional()
  @IsIn(PAY_STATEMENT_TYPES, oneOf('type', PAY_STATEMENT_TYPES))
  type?: (typeof PAY_STATEMENT_TYPES)[number] | null;

  @ApiPropertyOptional({ enum: PAYMENT_METHODS, nullable: true, default: 'direct_deposit' })
  @IsOptional()
  @IsIn(PAYMENT_METHODS, oneOf('payment_method', PAYMENT_METHODS))
  payment_method?: (typeof PAYMENT_METHODS)[number] | null;

  @ApiPropertyOptional({ minimum: 0, exclusiveMinimum: true, maximum: MAX_PERIOD_HOURS, description: "Default: the sum of the earnings' hours" })
  @NotNullWhenPresent()
  @Hours()
  @IsPositive()
  total_hours?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_STATEMENT_CENTS, description: 'Cents; default: the sum of the earnings' })
  @NotNullWhenPresent()
  @Cents(1)
  gross_pay?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: MAX_STATEMENT_CENTS, description: 'Cents; default: gross pay less employee taxes and deductions' })
  @NotNullWhenPresent()
  @Cents()
  net_pay?: number;

  @Lines(() => SandboxEarningDto)
  earnings?: SandboxEarningDto[];

  @Lines(() => SandboxTaxDto)
  taxes?: SandboxTaxDto[];

  @Lines(() => SandboxEmployeeDeductionDto)
  employee_deductions?: SandboxEmployeeDeductionDto[];

  @Lines(() => SandboxEmployerContributionDto)
  employer_contributions?: SandboxEmployerContributionDto[];
}

/**
 * `POST /sandbox/payment`: every field optional. The public body is `{start_date, end_date,
 * pay_statements}`: the dates are the pay period (any, up to a year; one date alone completes
 * two weeks) and the payment is paid on end_date. A period of a frequency's shape (a week, two
 * weeks, half a month, a month) is a whole period of it; any other is paid for its days.
 * `pay_date` sets the pay date instead: alone, the run is the sandbox's bi-weekly one whose
 * period is the two weeks ending a week before it. With neither, the next regular run: 14 days after the latest regular pay date, or today when that is earlier.
 * Given statements are used as written; every other employee paid in the period gets a computed one.
 */
export class RunSandboxPaymentDto {
  @ApiPropertyOptional({
    example: '2026-06-12',
    description: 'YYYY-MM-DD; not before the latest pay run, at most a year ahead; with a period, from its start to 31 days after its end',
  })
  @IsOptional()
  @IsCalendarDate()
  pay_date?: string;

  @ApiPropertyOptional({ example: '2026-06-01', description: 'First day of the pay period (YYYY-MM-DD); default: 13 days before end_date' })
  @NotNullWhenPresent()
  @IsCalendarDate()
  start_date?: string;

  @ApiPropertyOptional({
    example: '2026-06-14',
    description: 'Last day of the pay period (YYYY-MM-DD), and the pay date unless pay_date is given; default: 13 days after start_date',
  })
  @NotNullWhenPresent()
  @IsCalendarDate()
  end_date?: string;

  @ApiPropertyOptional({ type: [SandboxPayStatementDto], description: `At most ${MAX_PAY_STATEMENTS}, one per employee; default none` })
  @NotNullWhenPresent()
  @IsArray()
  @ArrayMaxSize(MAX_PAY_STATEMENTS)
  @EachAnObject()
  @ValidateNested({ each: true })
  @Type(() => SandboxPayStatementDto)
  pay_statements?: SandboxPayStatementDto[];
}
