import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsInt, IsObject, IsOptional, IsUUID, Min, ValidateBy, ValidateNested, ValidationOptions } from 'class-validator';
import { calendarDateOf } from '../../../domain/benefits/effective-date';
import { HRIS_EVENT_TYPES, HrisEventType } from '../../../domain/hris-events/hris-event';
import { IsCalendarDate, isCalendarDate } from '../../employer/dto/calendar-date.validator';
import { isUuid } from '../../employer/dto/uuid-param';

/**
 * The wire contract of the HRIS events read from `hris.events` and `POST /hris/events`
 * (docs/hris-events.md, docs/hris-events.schema.json), with the rules of the REST enroll body:
 * unknown fields are refused, `individual_id` is a UUID as in `POST .../individuals`, and
 * `configuration` is an object whose fields are checked once the benefit's type is known.
 */

// Date, `T`, time with optional seconds and fraction, then `Z` or an offset: the date-times the
// enroll body's `effective_date` takes, here required to name an instant.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2}))$/i;

/** An ISO 8601 instant with its time zone, on a real calendar day: `2026-03-01T09:30:00Z`. */
export function isInstant(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = INSTANT.exec(value);
  if (!match) return false;
  const [, year, month, day, hours, minutes, seconds = '00', , offsetHours = '00', offsetMinutes = '00'] = match;
  if (Number(hours) > 23 || Number(minutes) > 59 || Number(seconds) > 59) return false;
  if (Number(offsetHours) > 23 || Number(offsetMinutes) > 59) return false;
  return isCalendarDate(`${year}-${month}-${day}`);
}

function IsInstant(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isInstant',
      validator: {
        validate: (value) => isInstant(value),
        defaultMessage: (args) => `${args?.property} must be an ISO 8601 date-time with a time zone, e.g. 2026-03-01T09:30:00Z`,
      },
    },
    options,
  );
}

/** Any UUID layout, as the REST path ids (`benefit_id`) and entity ids are accepted. */
function IsUuidLayout(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isUuidLayout',
      validator: {
        validate: (value) => typeof value === 'string' && isUuid(value),
        defaultMessage: (args) => `${args?.property} must be a UUID`,
      },
    },
    options,
  );
}

/**
 * The calendar date an enroll `effective_date` names (the formats the REST body takes), or
 * undefined when it names none; as written, so two values are compared as written. How far
 * ahead it may be is the enroll command's rule, checked against its clock.
 */
export function effectiveDateOf(value: unknown): string | undefined {
  return typeof value === 'string' ? calendarDateOf(value.trim()) : undefined;
}

const EFFECTIVE_DATE_FORMATS = 'YYYY-MM-DD, MM/DD/YYYY or an ISO 8601 date-time';

function IsEffectiveDate(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isEffectiveDate',
      validator: {
        validate: (value) => effectiveDateOf(value) !== undefined,
        defaultMessage: (args) => `${args?.property} must be ${EFFECTIVE_DATE_FORMATS}`,
      },
    },
    options,
  );
}

/** `configuration.effective_date`, when given, is a date too: the conflict rule below reads it. */
function HasEffectiveDateOrNone(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'hasEffectiveDateOrNone',
      validator: {
        validate: (value) => {
          if (value === null || typeof value !== 'object') return true; // @IsObject reports it
          const date = (value as Record<string, unknown>).effective_date;
          return date === undefined || date === null || effectiveDateOf(date) !== undefined;
        },
        defaultMessage: (args) => `${args?.property}.effective_date must be ${EFFECTIVE_DATE_FORMATS}`,
      },
    },
    options,
  );
}

/** An event that says two different effective dates is refused rather than guessed at. */
function AgreesWithConfigurationEffectiveDate(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'agreesWithConfigurationEffectiveDate',
      validator: {
        validate: (value, args) => {
          const configuration = (args?.object as ContributionChangedDataDto | undefined)?.configuration;
          const other = configuration !== null && typeof configuration === 'object' ? configuration.effective_date : undefined;
          const inConfiguration = effectiveDateOf(other);
          return other === undefined || other === null || inConfiguration === undefined || inConfiguration === effectiveDateOf(value);
        },
        defaultMessage: (args) => {
          const configuration = (args?.object as ContributionChangedDataDto).configuration;
          return (
            `effective_date ${effectiveDateOf(args?.value)} differs from configuration.effective_date ` +
            `${effectiveDateOf(configuration.effective_date)}; send one of them, or the same date in both`
          );
        },
      },
    },
    options,
  );
}

export class EmployeeHiredDataDto {
  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: 'individual_id is required' })
  @IsUUID('all', { message: 'individual_id must be a UUID' })
  individual_id: string;

  @ApiProperty({ format: 'date', example: '2026-03-02', description: 'First day of employment (YYYY-MM-DD)' })
  @IsDefined({ message: 'start_date is required' })
  @IsCalendarDate()
  start_date: string;

  @ApiPropertyOptional({ format: 'date', nullable: true, example: '1990-05-17', description: 'Date of birth (YYYY-MM-DD); null reads as absent' })
  @IsOptional()
  @IsCalendarDate()
  dob?: string | null;
}

export class ContributionChangedDataDto {
  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: 'individual_id is required' })
  @IsUUID('all', { message: 'individual_id must be a UUID' })
  individual_id: string;

  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: 'benefit_id is required' })
  @IsUuidLayout()
  benefit_id: string;

  @ApiProperty({ type: Object, description: "As an enroll body element's configuration; checked against the benefit's type when it is applied" })
  @IsDefined({ message: 'configuration is required' })
  @IsObject({ message: 'configuration must be an object' })
  @HasEffectiveDateOrNone()
  configuration: Record<string, unknown>;

  @ApiPropertyOptional({ nullable: true, example: '2026-04-01', description: `${EFFECTIVE_DATE_FORMATS}; null reads as absent` })
  @IsOptional()
  @IsEffectiveDate()
  @AgreesWithConfigurationEffectiveDate()
  effective_date?: string | null;
}

export class EmployeeTerminatedDataDto {
  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: 'individual_id is required' })
  @IsUUID('all', { message: 'individual_id must be a UUID' })
  individual_id: string;

  @ApiProperty({ format: 'date', example: '2026-06-30', description: 'Last day employed (YYYY-MM-DD)' })
  @IsDefined({ message: 'end_date is required' })
  @IsCalendarDate()
  end_date: string;
}

/** The envelope every HRIS event shares; `data` is declared by each type's class below. */
export abstract class HrisEventEnvelopeDto {
  @ApiProperty({ format: 'uuid', description: 'Idempotency key: an event seen before is acknowledged and ignored' })
  @IsDefined({ message: 'id is required' })
  @IsUuidLayout()
  id: string;

  @ApiProperty({ enum: HRIS_EVENT_TYPES })
  @IsIn(HRIS_EVENT_TYPES, { message: `type must be one of ${HRIS_EVENT_TYPES.join(', ')}` })
  type: HrisEventType;

  @ApiProperty({ minimum: 1, example: 1 })
  @IsDefined({ message: 'version is required' })
  @IsInt({ message: 'version must be a positive integer' })
  @Min(1, { message: 'version must be a positive integer' })
  version: number;

  @ApiProperty({ format: 'date-time', example: '2026-03-01T09:30:00Z' })
  @IsDefined({ message: 'occurred_at is required' })
  @IsInstant()
  occurred_at: string;

  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: 'connection_id is required' })
  @IsUuidLayout()
  connection_id: string;

  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: 'entity_id is required' })
  @IsUuidLayout()
  entity_id: string;

  abstract data: object;
}

export class EmployeeHiredEventDto extends HrisEventEnvelopeDto {
  @ApiProperty({ type: EmployeeHiredDataDto })
  @IsDefined({ message: 'data is required' })
  @IsObject({ message: 'data must be an object' })
  @ValidateNested()
  @Type(() => EmployeeHiredDataDto)
  data: EmployeeHiredDataDto;
}

export class ContributionChangedEventDto extends HrisEventEnvelopeDto {
  @ApiProperty({ type: ContributionChangedDataDto })
  @IsDefined({ message: 'data is required' })
  @IsObject({ message: 'data must be an object' })
  @ValidateNested()
  @Type(() => ContributionChangedDataDto)
  data: ContributionChangedDataDto;
}

export class EmployeeTerminatedEventDto extends HrisEventEnvelopeDto {
  @ApiProperty({ type: EmployeeTerminatedDataDto })
  @IsDefined({ message: 'data is required' })
  @IsObject({ message: 'data must be an object' })
  @ValidateNested()
  @Type(() => EmployeeTerminatedDataDto)
  data: EmployeeTerminatedDataDto;
}

/** The DTO class that validates each type's events. */
export const HRIS_EVENT_DTOS = {
  EmployeeHired: EmployeeHiredEventDto,
  ContributionChanged: ContributionChangedEventDto,
  EmployeeTerminated: EmployeeTerminatedEventDto,
} as const satisfies Record<HrisEventType, new () => HrisEventEnvelopeDto>;

/** The DTO class of each type's `data`. */
export const HRIS_EVENT_DATA_DTOS = {
  EmployeeHired: EmployeeHiredDataDto,
  ContributionChanged: ContributionChangedDataDto,
  EmployeeTerminated: EmployeeTerminatedDataDto,
} as const satisfies Record<HrisEventType, new () => object>;
