import { ApiProperty, ApiPropertyOptional, IntersectionType, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, Length, Matches, MaxLength, ValidateNested } from 'class-validator';
import {
  AddressDto,
  EmailDto,
  EmploymentKindDto,
  ETHNICITIES,
  GENDERS,
  IdRefDto,
  IncomeDto,
  IsCalendarDate,
  MARITAL_STATUSES,
  NameRefDto,
  NotNullWhenPresent,
  PhoneNumberDto,
} from './sandbox-fields.dto';

const MAX_CONTACTS = 10;

/**
 * An individual's own fields. Required when a person is added: the names. A missing `dob` (age
 * decides catch-up limits) is drawn as the sandbox generator draws one.
 */
export class SandboxIndividualFieldsDto {
  @ApiProperty()
  @IsString()
  @Length(1, 100)
  first_name: string;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  middle_name?: string | null;

  @ApiProperty()
  @IsString()
  @Length(1, 100)
  last_name: string;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  preferred_name?: string | null;

  @ApiPropertyOptional({ type: [EmailDto] })
  @NotNullWhenPresent()
  @IsArray()
  @ArrayMaxSize(MAX_CONTACTS)
  @ValidateNested({ each: true })
  @Type(() => EmailDto)
  emails?: EmailDto[];

  @ApiPropertyOptional({ type: [PhoneNumberDto] })
  @NotNullWhenPresent()
  @IsArray()
  @ArrayMaxSize(MAX_CONTACTS)
  @ValidateNested({ each: true })
  @Type(() => PhoneNumberDto)
  phone_numbers?: PhoneNumberDto[];

  @ApiPropertyOptional({ enum: GENDERS })
  @NotNullWhenPresent()
  @IsIn(GENDERS)
  gender?: (typeof GENDERS)[number];

  @ApiPropertyOptional({ enum: ETHNICITIES })
  @NotNullWhenPresent()
  @IsIn(ETHNICITIES)
  ethnicity?: (typeof ETHNICITIES)[number];

  @ApiPropertyOptional({ enum: MARITAL_STATUSES })
  @NotNullWhenPresent()
  @IsIn(MARITAL_STATUSES)
  marital_status?: (typeof MARITAL_STATUSES)[number];

  @ApiPropertyOptional({ example: '1990-04-17', description: 'YYYY-MM-DD, in the past; default: one the sandbox generator draws (20 to 70 years old at the start date)' })
  @NotNullWhenPresent()
  @IsCalendarDate()
  dob?: string;

  @ApiPropertyOptional({ type: AddressDto, description: 'Default: the work location' })
  @NotNullWhenPresent()
  @ValidateNested()
  @Type(() => AddressDto)
  residence?: AddressDto;

  @ApiPropertyOptional({ example: '123-45-6789', nullable: true })
  @IsOptional()
  @Matches(/^\d{3}-\d{2}-\d{4}$/, { message: 'ssn must be NNN-NN-NNNN' })
  ssn?: string | null;
}

/**
 * An individual's employment fields. Every field is optional, as the public document has it:
 * a person added without `title` or `income` gets what the sandbox generator would give a
 * staff member (the Unified API's employment has no empty title, and pay is computed from income).
 */
export class SandboxEmploymentFieldsDto {
  @ApiPropertyOptional({ description: 'Default: a title of the department, as the sandbox generator draws it' })
  @NotNullWhenPresent()
  @IsString()
  @Length(1, 200)
  title?: string;

  @ApiPropertyOptional({ type: NameRefDto, nullable: true, description: 'One of the company’s departments' })
  @IsOptional()
  @ValidateNested()
  @Type(() => NameRefDto)
  department?: NameRefDto | null;

  @ApiPropertyOptional({ type: IdRefDto, nullable: true, description: 'An existing individual of this employer' })
  @IsOptional()
  @ValidateNested()
  @Type(() => IdRefDto)
  manager?: IdRefDto | null;

  @ApiPropertyOptional({ type: EmploymentKindDto, description: 'Default: employee, full_time' })
  @NotNullWhenPresent()
  @ValidateNested()
  @Type(() => EmploymentKindDto)
  employment?: EmploymentKindDto;

  @ApiPropertyOptional({ description: 'YYYY-MM-DD; default: today' })
  @NotNullWhenPresent()
  @IsCalendarDate()
  start_date?: string;

  @ApiPropertyOptional({ nullable: true, description: 'YYYY-MM-DD; with is_active: false, a termination' })
  @IsOptional()
  @IsCalendarDate()
  end_date?: string | null;

  @ApiPropertyOptional({ description: 'Default: true unless end_date is set' })
  @NotNullWhenPresent()
  @IsBoolean()
  is_active?: boolean;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  class_code?: string | null;

  @ApiPropertyOptional({ type: IncomeDto, description: 'Default: a yearly salary, as the sandbox generator draws a staff member’s' })
  @NotNullWhenPresent()
  // Nested validation skips what is not an object: an array or a number must be refused here.
  @IsObject({ message: 'income must be an object' })
  @ValidateNested()
  @Type(() => IncomeDto)
  income?: IncomeDto;

  @ApiPropertyOptional({ type: AddressDto, description: 'Default: the company’s first location' })
  @NotNullWhenPresent()
  @ValidateNested()
  @Type(() => AddressDto)
  location?: AddressDto;
}

/** One element of `POST /sandbox/directory`: a new individual with their employment. */
export class NewSandboxIndividualDto extends IntersectionType(SandboxIndividualFieldsDto, SandboxEmploymentFieldsDto) {}

/**
 * `PUT /sandbox/individual/{id}`: any subset of the individual's fields. A present field may
 * not be null unless the record allows null there (middle_name, preferred_name, ssn).
 */
export class UpdateSandboxIndividualDto extends PartialType(SandboxIndividualFieldsDto, { skipNullProperties: false }) {}

/** `PUT /sandbox/employment/{id}`: any subset of the employment's fields; terminate with end_date and is_active: false. */
export class UpdateSandboxEmploymentDto extends PartialType(SandboxEmploymentFieldsDto, { skipNullProperties: false }) {}
