import { isUUID, validateSync, ValidatorOptions } from 'class-validator';
import { HRIS_EVENT_TYPES, HRIS_EVENT_VERSIONS, HrisEvent, HrisEventType } from '../../domain/hris-events/hris-event';
import { cutShort, hostileValueProblem } from '../../domain/shared/hostile-input';
import { describeValidationErrors } from '../../infrastructure/http/validation';
import { isCalendarDate } from '../employer/dto/calendar-date.validator';
import { isUuid } from '../employer/dto/uuid-param';
import {
  ContributionChangedEventDto,
  effectiveDateOf,
  EmployeeHiredEventDto,
  EmployeeTerminatedEventDto,
  HRIS_EVENT_DATA_DTOS as DATA_DTOS,
  HRIS_EVENT_DTOS,
  isInstant,
} from './dto/hris-event.dto';

type HrisEventDto = EmployeeHiredEventDto | ContributionChangedEventDto | EmployeeTerminatedEventDto;

export type HrisEventValidation = { ok: true; event: HrisEvent } | { ok: false; reason: string };

/** A reason fits a log line, a dead-letter header and an HTTP answer. */
export const MAX_REASON_LENGTH = 1000;

// One options object for every call. stopAtFirstError keeps to one message per field ("data is
// required", not also "data must be an object") and skips the checks after the first failure.
const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  stopAtFirstError: true,
  validationError: { target: false, value: false },
};

const KNOWN_TYPES = new Set<string>(HRIS_EVENT_TYPES);
const KNOWN_TYPES_TEXT = HRIS_EVENT_TYPES.join(', ');

/**
 * Checks a parsed HRIS event (docs/hris-events.md) with the REST body's rules. The reason tells
 * apart what is not an event at all, an unknown type, a version this service does not read,
 * and invalid fields (each with its path, e.g. `data.start_date: start_date must be a date
 * written YYYY-MM-DD, e.g. 2026-01-31`).
 */
export function validateHrisEvent(raw: unknown): HrisEventValidation {
  if (!isPlainObject(raw)) return refuse(`An HRIS event must be a JSON object, not ${kindOf(raw)}`);
  const type = raw.type;
  if (typeof type !== 'string' || !KNOWN_TYPES.has(type)) {
    return refuse(
      type === undefined
        ? `HRIS event type is missing; known types: ${KNOWN_TYPES_TEXT}`
        : `Unknown HRIS event type ${quoted(type)}; known types: ${KNOWN_TYPES_TEXT}`,
    );
  }
  const knownType = type as HrisEventType;
  const supported = HRIS_EVENT_VERSIONS[knownType];
  const version = raw.version;
  // A version that is not a positive integer is an invalid field, reported with the others.
  if (Number.isInteger(version) && (version as number) >= 1 && !supported.includes(version as number)) {
    return refuse(`Unsupported version ${String(version)} of ${knownType}; supported versions: ${supported.join(', ')}`);
  }

  // A message from the broker has not passed the HTTP body rules (depth, storable text, no
  // prototype or constructor keys); the same ones apply before the validator copies anything.
  const hostile = hostileValueProblem(raw);
  if (hostile !== undefined) return refuse(`Invalid ${knownType} event: ${hostile}`);

  const dto = instanceOf<HrisEventDto>(HRIS_EVENT_DTOS[knownType], raw);
  if (isPlainObject(raw.data)) dto.data = instanceOf<HrisEventDto['data']>(DATA_DTOS[knownType], raw.data);
  if (isPlainlyValid(knownType, raw)) return { ok: true, event: eventOf(dto) };
  const errors = validateSync(dto, VALIDATOR_OPTIONS);
  if (errors.length > 0) {
    // In reading order, envelope then data; unknown fields last, so that many of them cannot
    // push the missing or wrong fields out of the reason.
    const rank = (problem: string) => (problem.endsWith(': unknown field') ? 2 : problem.startsWith('data') ? 1 : 0);
    const problems = describeValidationErrors(errors).sort((a, b) => rank(a) - rank(b));
    return refuse(listProblems(`Invalid ${knownType} event: `, problems));
  }
  return { ok: true, event: eventOf(dto) };
}

const ENVELOPE_FIELDS = ['id', 'type', 'version', 'occurred_at', 'connection_id', 'entity_id', 'data'];
const DATA_FIELDS: Record<HrisEventType, ReadonlySet<string>> = {
  EmployeeHired: new Set(['individual_id', 'start_date', 'dob']),
  ContributionChanged: new Set(['individual_id', 'benefit_id', 'configuration', 'effective_date']),
  EmployeeTerminated: new Set(['individual_id', 'end_date']),
};

/**
 * The DTOs' rules for a well-formed event, written out by hand: class-validator costs several
 * times more per event than the broker's own reading of it. What this passes, the DTOs pass
 * (the spec checks it over generated events); anything else goes through class-validator, which
 * words the problems. Same primitives as the DTOs' decorators.
 */
export function isPlainlyValid(type: HrisEventType, raw: Record<string, unknown>): boolean {
  const keys = Object.keys(raw);
  if (keys.length !== ENVELOPE_FIELDS.length || !ENVELOPE_FIELDS.every((field) => field in raw)) return false;
  const { id, version, occurred_at, connection_id, entity_id, data } = raw;
  if (!isUuidLayout(id) || !isUuidLayout(connection_id) || !isUuidLayout(entity_id)) return false;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1 || !isInstant(occurred_at)) return false;
  if (!isPlainObject(data) || !Object.keys(data).every((field) => DATA_FIELDS[type].has(field))) return false;
  if (typeof data.individual_id !== 'string' || !isUUID(data.individual_id, 'all')) return false;
  if (type === 'EmployeeHired') return isCalendarDate(data.start_date) && (data.dob === undefined || data.dob === null || isCalendarDate(data.dob));
  if (type === 'EmployeeTerminated') return isCalendarDate(data.end_date);
  const { configuration, effective_date } = data;
  if (!isUuidLayout(data.benefit_id) || !isPlainObject(configuration)) return false;
  const inConfiguration = configuration.effective_date;
  if (inConfiguration !== undefined && inConfiguration !== null && effectiveDateOf(inConfiguration) === undefined) return false;
  if (effective_date === undefined || effective_date === null) return true;
  const date = effectiveDateOf(effective_date);
  return date !== undefined && (inConfiguration === undefined || inConfiguration === null || effectiveDateOf(inConfiguration) === date);
}

const isUuidLayout = (value: unknown): boolean => typeof value === 'string' && isUuid(value);

/**
 * A DTO instance holding the object's own fields: what plainToInstance makes of a JSON value,
 * without the deep copy (of `configuration` too) that took a quarter of the time per event.
 */
function instanceOf<T extends object>(type: new () => T, plain: Record<string, unknown>): T {
  return Object.assign(new type(), plain);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The event as the domain types it; optional fields sent as null are left out. */
function eventOf(dto: HrisEventDto): HrisEvent {
  const envelope = {
    id: dto.id,
    version: dto.version,
    occurred_at: dto.occurred_at,
    connection_id: dto.connection_id,
    entity_id: dto.entity_id,
  };
  if (dto instanceof EmployeeHiredEventDto) {
    const { individual_id, start_date, dob } = dto.data;
    return { ...envelope, type: 'EmployeeHired', data: { individual_id, start_date, ...(dob != null && { dob }) } };
  }
  if (dto instanceof ContributionChangedEventDto) {
    const { individual_id, benefit_id, effective_date } = dto.data;
    // As sent: the enroll command checks it against the benefit's type.
    const configuration = dto.data.configuration;
    return {
      ...envelope,
      type: 'ContributionChanged',
      data: { individual_id, benefit_id, configuration, ...(effective_date != null && { effective_date }) },
    };
  }
  const { individual_id, end_date } = dto.data;
  return { ...envelope, type: 'EmployeeTerminated', data: { individual_id, end_date } };
}

/** Problems joined while the reason stays within MAX_REASON_LENGTH; the rest are counted. */
function listProblems(prefix: string, problems: string[]): string {
  let text = prefix;
  for (let i = 0; i < problems.length; i++) {
    const next = `${i === 0 ? '' : '; '}${problems[i]}`;
    const after = problems.length - i - 1;
    // Keep room to say how many were left out, should the ones after not fit.
    const room = MAX_REASON_LENGTH - (after > 0 ? 24 : 0);
    if (text.length + next.length > room) {
      if (i === 0) text += cutShort(problems[0], room - text.length);
      const unlisted = i === 0 ? after : after + 1;
      return unlisted > 0 ? `${text} (and ${unlisted} more)` : text;
    }
    text += next;
  }
  return text;
}

function refuse(reason: string): HrisEventValidation {
  return { ok: false, reason };
}

/** A value for a message, cut short: `"EmployeePromoted"`, `42`. */
function quoted(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return cutShort(text, 61);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value === undefined) return 'nothing';
  return `a ${typeof value}`;
}
