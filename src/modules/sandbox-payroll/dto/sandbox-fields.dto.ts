import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { isIsoDate } from '../../../infrastructure/providers/sandbox/sandbox-pay-calendar';
import { IsEmail, IsIn, IsInt, IsOptional, IsString, IsUUID, Length, Matches, Max, MaxLength, Min, ValidateBy, ValidateIf } from 'class-validator';

/**
 * Field shapes shared by the sandbox edit bodies. Values follow the Unified API records
 * (unified-records.ts) and what the sandbox generator produces, so an edited record looks like
 * a generated one.
 */

export const GENDERS = ['female', 'male', 'other', 'decline_to_specify'] as const;
export const ETHNICITIES = [
  'asian',
  'white',
  'black_or_african_american',
  'native_hawaiian_or_pacific_islander',
  'american_indian_or_alaska_native',
  'hispanic_or_latino',
  'two_or_more_races',
  'decline_to_specify',
] as const;
// The public document's values; `unknown` is its name for a status not given.
export const MARITAL_STATUSES = ['single', 'married', 'divorced', 'widowed', 'domestic_partner', 'unknown'] as const;
export const CONTACT_TYPES = ['work', 'personal'] as const;
export const EMPLOYMENT_TYPES = ['employee', 'contractor'] as const;
export const EMPLOYMENT_SUBTYPES = ['full_time', 'part_time', 'intern', 'temp', 'seasonal', 'individual_contractor'] as const;
export const INCOME_UNITS = ['yearly', 'hourly'] as const;
/** The sandbox payroll pays in US dollars only. */
export const SANDBOX_CURRENCY = 'usd';
/** A billion dollars a year, in cents: far above any real pay, far below unsafe integers. */
export const MAX_INCOME_CENTS = 100_000_000_000;

/** E.164: `+` and up to 15 digits. */
export const E164 = /^\+[1-9]\d{1,14}$/;

/**
 * An optional field that may not be null when present (`@IsOptional()` would let null through,
 * and the record has no null there).
 */
export const NotNullWhenPresent = () => ValidateIf((_object, value) => value !== undefined);

/** `YYYY-MM-DD` that is a real calendar day (2026-02-30 is refused). */
export function IsCalendarDate(): PropertyDecorator {
  return ValidateBy({
    name: 'isCalendarDate',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && isIsoDate(value),
      defaultMessage: (args) => `${args?.property} must be a date YYYY-MM-DD`,
    },
  });
}

export class AddressDto {
  @ApiProperty({ example: '1 Market St' })
  @IsString()
  @Length(1, 200)
  line1: string;

  @ApiPropertyOptional({ nullable: true, example: 'Suite 300' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  line2?: string | null;

  @ApiProperty({ example: 'San Francisco' })
  @IsString()
  @Length(1, 100)
  city: string;

  @ApiProperty({ example: 'CA', description: 'Two-letter state code' })
  @Matches(/^[A-Z]{2}$/, { message: 'state must be a two-letter state code, e.g. CA' })
  state: string;

  @ApiProperty({ example: '94105' })
  @Matches(/^\d{5}(-\d{4})?$/, { message: 'postal_code must be a ZIP code (NNNNN or NNNNN-NNNN)' })
  postal_code: string;

  @ApiProperty({ example: 'US', description: 'ISO 3166-1 alpha-2' })
  @Matches(/^[A-Z]{2}$/, { message: 'country must be a two-letter country code, e.g. US' })
  country: string;
}

export class EmailDto {
  @ApiProperty({ example: 'jane.doe@acme.example' })
  @IsEmail({}, { message: 'data must be an email address' })
  @MaxLength(254)
  data: string;

  @ApiProperty({ enum: CONTACT_TYPES })
  @IsIn(CONTACT_TYPES)
  type: (typeof CONTACT_TYPES)[number];
}

export class PhoneNumberDto {
  @ApiProperty({ example: '+14155550123', description: 'E.164' })
  @Matches(E164, { message: 'data must be an E.164 phone number, e.g. +14155550123' })
  data: string;

  @ApiProperty({ enum: CONTACT_TYPES })
  @IsIn(CONTACT_TYPES)
  type: (typeof CONTACT_TYPES)[number];
}

export class NameRefDto {
  @ApiProperty()
  @IsString()
  @Length(1, 200)
  name: string;
}

export class IdRefDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'id must be a UUID' })
  id: string;
}

export class EmploymentKindDto {
  @ApiProperty({ enum: EMPLOYMENT_TYPES })
  @IsIn(EMPLOYMENT_TYPES)
  type: (typeof EMPLOYMENT_TYPES)[number];

  @ApiProperty({ enum: EMPLOYMENT_SUBTYPES })
  @IsIn(EMPLOYMENT_SUBTYPES)
  subtype: (typeof EMPLOYMENT_SUBTYPES)[number];
}

export class IncomeDto {
  @ApiProperty({ enum: INCOME_UNITS, description: 'yearly (salary) or hourly (wage)' })
  @IsIn(INCOME_UNITS)
  unit: (typeof INCOME_UNITS)[number];

  @ApiProperty({ description: 'Cents per year or per hour', minimum: 0, maximum: MAX_INCOME_CENTS })
  @IsInt()
  @Min(0)
  @Max(MAX_INCOME_CENTS)
  amount: number;

  @ApiPropertyOptional({ default: SANDBOX_CURRENCY, description: 'The sandbox pays in usd only (any case)' })
  @NotNullWhenPresent()
  @Transform(({ value }) => (typeof value === 'string' ? value.toLowerCase() : value))
  @IsIn([SANDBOX_CURRENCY], { message: 'currency must be usd: the sandbox payroll pays in US dollars' })
  currency?: string;

  @ApiPropertyOptional({ description: 'YYYY-MM-DD from which this income applies; default: start_date (new) or today (update)' })
  @NotNullWhenPresent()
  @IsCalendarDate()
  effective_date?: string;
}

