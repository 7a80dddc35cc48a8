import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsEmail, IsIn, IsOptional, IsString, Length, Matches, MaxLength, ValidateNested } from 'class-validator';
import { AddressDto, NameRefDto, NotNullWhenPresent } from './sandbox-fields.dto';

export const COMPANY_ENTITY_TYPES = ['llc', 'lp', 'corporation', 'sole_proprietor', 'non_profit', 'partnership', 'cooperative'] as const;
export const COMPANY_ENTITY_SUBTYPES = ['s_corporation', 'c_corporation', 'b_corporation'] as const;
export const ACCOUNT_TYPES = ['checking', 'savings'] as const;
const MAX_DEPARTMENTS = 500;
const MAX_LOCATIONS = 100;
const MAX_ACCOUNTS = 20;

export class CompanyEntityDto {
  @ApiProperty({ enum: COMPANY_ENTITY_TYPES })
  @IsIn(COMPANY_ENTITY_TYPES)
  type: (typeof COMPANY_ENTITY_TYPES)[number];

  @ApiPropertyOptional({ enum: COMPANY_ENTITY_SUBTYPES, nullable: true })
  @IsOptional()
  @IsIn(COMPANY_ENTITY_SUBTYPES)
  subtype?: (typeof COMPANY_ENTITY_SUBTYPES)[number] | null;
}

export class DepartmentDto {
  @ApiProperty()
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiPropertyOptional({ type: NameRefDto, nullable: true, description: 'The parent department, one of this list' })
  @IsOptional()
  @ValidateNested()
  @Type(() => NameRefDto)
  parent?: NameRefDto | null;
}

export class BankAccountDto {
  @ApiProperty({ example: '021000021', description: 'Nine-digit ABA routing number' })
  @Matches(/^\d{9}$/, { message: 'routing_number must be nine digits' })
  routing_number: string;

  @ApiProperty()
  @IsString()
  @Length(1, 200)
  account_name: string;

  @ApiProperty()
  @IsString()
  @Length(1, 200)
  institution_name: string;

  @ApiProperty({ enum: ACCOUNT_TYPES })
  @IsIn(ACCOUNT_TYPES)
  account_type: (typeof ACCOUNT_TYPES)[number];

  @ApiProperty({ example: '000123456789' })
  @Matches(/^\d{4,17}$/, { message: 'account_number must be 4 to 17 digits' })
  account_number: string;
}

/** `PUT /sandbox/company`: any subset of the company's fields; a given list replaces the stored one. */
export class UpdateSandboxCompanyDto {
  @ApiPropertyOptional()
  @NotNullWhenPresent()
  @IsString()
  @Length(1, 255)
  legal_name?: string;

  @ApiPropertyOptional({ type: CompanyEntityDto })
  @NotNullWhenPresent()
  @ValidateNested()
  @Type(() => CompanyEntityDto)
  entity?: CompanyEntityDto;

  @ApiPropertyOptional({ example: '12-3456789' })
  @NotNullWhenPresent()
  @Matches(/^\d{2}-\d{7}$/, { message: 'ein must be NN-NNNNNNN' })
  ein?: string;

  @ApiPropertyOptional()
  @NotNullWhenPresent()
  @IsEmail({}, { message: 'primary_email must be an email address' })
  @MaxLength(254)
  primary_email?: string;

  @ApiPropertyOptional({ example: '+14155550123 x101', description: 'E.164, optionally followed by " x" and an extension' })
  @NotNullWhenPresent()
  @Matches(/^\+[1-9]\d{1,14}( x\d{1,6})?$/, {
    message: 'primary_phone_number must be E.164 with an optional extension, e.g. +14155550123 or +14155550123 x101',
  })
  primary_phone_number?: string;

  @ApiPropertyOptional({ type: [DepartmentDto] })
  @NotNullWhenPresent()
  @IsArray()
  @ArrayMaxSize(MAX_DEPARTMENTS)
  @ValidateNested({ each: true })
  @Type(() => DepartmentDto)
  departments?: DepartmentDto[];

  @ApiPropertyOptional({ type: [AddressDto] })
  @NotNullWhenPresent()
  @IsArray()
  @ArrayMaxSize(MAX_LOCATIONS)
  @ValidateNested({ each: true })
  @Type(() => AddressDto)
  locations?: AddressDto[];

  @ApiPropertyOptional({ type: [BankAccountDto] })
  @NotNullWhenPresent()
  @IsArray()
  @ArrayMaxSize(MAX_ACCOUNTS)
  @ValidateNested({ each: true })
  @Type(() => BankAccountDto)
  accounts?: BankAccountDto[];
}
