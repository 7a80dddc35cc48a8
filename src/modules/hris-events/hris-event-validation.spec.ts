import { HRIS_EVENT_TYPES } from '../../domain/hris-events/hris-event';
import { isStorableText } from '../../domain/shared/hostile-input';
import { MAX_REASON_LENGTH, validateHrisEvent } from './hris-event-validation';

const IDS = {
  event: '324b1908-2a82-4cdf-ac30-12ab7b559ed8',
  connection: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  entity: '9b2f4c1e-7a1d-4b8e-9c35-2d6f0e1a4b77',
  individual: '5a7c3a4e-1b2d-4e6f-8a9b-0c1d2e3f4a5b',
  benefit: '604832c7-7416-4200-a9d2-24b530cad597',
};

const envelope = (type: string) => ({
  id: IDS.event,
  type,
  version: 1,
  occurred_at: '2026-03-01T09:30:00Z',
  connection_id: IDS.connection,
  entity_id: IDS.entity,
});

const hired = (data: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...envelope('EmployeeHired'),
  data: { individual_id: IDS.individual, start_date: '2026-03-02', dob: '1990-05-17', ...data },
  ...extra,
});

const changed = (data: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...envelope('ContributionChanged'),
  data: {
    individual_id: IDS.individual,
    benefit_id: IDS.benefit,
    configuration: { employee_deduction: { type: 'percent', amount: 600 }, catch_up: false },
    effective_date: '2026-04-01',
    ...data,
  },
  ...extra,
});

const terminated = (data: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...envelope('EmployeeTerminated'),
  data: { individual_id: IDS.individual, end_date: '2026-06-30', ...data },
  ...extra,
});

const without = (event: Record<string, unknown>, field: string) => {
  const copy = { ...event };
  delete copy[field];
  return copy;
};

const withoutData = (event: Record<string, unknown>, field: string) => ({
  ...event,
  data: without(event.data as Record<string, unknown>, field),
});

/** The reason of a refused event; fails the test when the event was accepted. */
function reasonOf(raw: unknown): string {
  const result = validateHrisEvent(raw);
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.event)}`);
  return result.reason;
}

function eventOf(raw: unknown) {
  const result = validateHrisEvent(raw);
  if (!result.ok) throw new Error(`expected a valid event, got: ${result.reason}`);
  return result.event;
}

describe('validateHrisEvent', () => {
  describe('valid events', () => {
    it('accepts an EmployeeHired and returns it typed', () => {
      expect(eventOf(hired())).toEqual({
        ...envelope('EmployeeHired'),
        data: { individual_id: IDS.individual, start_date: '2026-03-02', dob: '1990-05-17' },
      });
    });

    it('accepts a ContributionChanged with its configuration as sent', () => {
      const configuration = {
        employee_deduction: { type: 'percent', amount: 600 },
        company_contribution: { type: 'percent', amount: 300 },
        annual_contribution_limit: 'family',
        catch_up: true,
      };
      expect(eventOf(changed({ configuration }))).toEqual({
        ...envelope('ContributionChanged'),
        data: { individual_id: IDS.individual, benefit_id: IDS.benefit, configuration, effective_date: '2026-04-01' },
      });
    });

    it('accepts an EmployeeTerminated', () => {
      expect(eventOf(terminated())).toEqual({
        ...envelope('EmployeeTerminated'),
        data: { individual_id: IDS.individual, end_date: '2026-06-30' },
      });
    });

    it('leaves out optional fields that are absent or null', () => {
      expect(eventOf(withoutData(hired(), 'dob')).data).toEqual({ individual_id: IDS.individual, start_date: '2026-03-02' });
      const hiredNoDob = eventOf(hired({ dob: null }));
      expect(hiredNoDob.data).not.toHaveProperty('dob');
      const changeNoDate = eventOf(changed({ effective_date: null }));
      expect(changeNoDate.data).not.toHaveProperty('effective_date');
      expect(eventOf(withoutData(changed(), 'effective_date')).data).not.toHaveProperty('effective_date');
    });

    it.each([
      '2026-03-01T09:30:00Z',
      '2026-03-01T09:30Z',
      '2026-03-01T09:30:00.123456789Z',
      '2026-03-01T10:30:00+01:00',
      '2026-03-01T04:00:00-0530',
      '2026-03-01t09:30:00z',
      '2024-02-29T23:59:59-23:59',
    ])('accepts occurred_at %s', (occurredAt) => {
      expect(eventOf(hired({}, { occurred_at: occurredAt })).occurred_at).toBe(occurredAt);
    });

    it('accepts ids in upper case, and any UUID layout for the event id', () => {
      const event = eventOf(
        hired({ individual_id: IDS.individual.toUpperCase() }, { id: '00000000-0000-0000-0000-000000000001', connection_id: IDS.connection.toUpperCase() }),
      );
      expect(event.id).toBe('00000000-0000-0000-0000-000000000001');
      expect(event.connection_id).toBe(IDS.connection.toUpperCase());
    });

    it('does not change the value it checks, valid or not', () => {
      for (const raw of [changed(), changed({ extra: 1, effective_date: 'soon' }, { id: 'x' })]) {
        const before = structuredClone(raw);
        validateHrisEvent(raw);
        expect(raw).toEqual(before);
      }
    });

    it('leaves the fields of configuration to the enroll command', () => {
      const configuration = { anything: 'goes', employee_deduction: 'checked later' };
      expect(eventOf(changed({ configuration })).data).toMatchObject({ configuration });
    });
  });

  describe('what is not an event', () => {
    it.each([
      [[], 'an array'],
      [[hired()], 'an array'],
      [null, 'null'],
      [undefined, 'nothing'],
      ['EmployeeHired', 'a string'],
      [42, 'a number'],
      [true, 'a boolean'],
    ])('refuses %j: not an object', (raw, kind) => {
      expect(reasonOf(raw)).toBe(`An HRIS event must be a JSON object, not ${kind}`);
    });
  });

  describe('type and version', () => {
    const known = HRIS_EVENT_TYPES.join(', ');

    it('refuses an unknown type, listing the known ones', () => {
      expect(reasonOf({ ...hired(), type: 'EmployeePromoted' })).toBe(`Unknown HRIS event type "EmployeePromoted"; known types: ${known}`);
      expect(reasonOf({ ...hired(), type: 'employeehired' })).toContain('Unknown HRIS event type "employeehired"');
      expect(reasonOf({ ...hired(), type: 7 })).toBe(`Unknown HRIS event type 7; known types: ${known}`);
      expect(reasonOf({ ...hired(), type: 'toString' })).toContain('Unknown HRIS event type "toString"');
    });

    it('refuses an event without a type', () => {
      expect(reasonOf(without(hired(), 'type'))).toBe(`HRIS event type is missing; known types: ${known}`);
    });

    it('refuses a version the service does not read, listing the ones it reads', () => {
      expect(reasonOf({ ...hired(), version: 2 })).toBe('Unsupported version 2 of EmployeeHired; supported versions: 1');
      expect(reasonOf({ ...changed(), version: 17 })).toBe('Unsupported version 17 of ContributionChanged; supported versions: 1');
    });

    it.each([0, -1, 1.5, '1', true, [1]])('refuses version %j as an invalid field', (version) => {
      expect(reasonOf({ ...terminated(), version })).toBe('Invalid EmployeeTerminated event: version: version must be a positive integer');
    });

    it('refuses an event without a version', () => {
      expect(reasonOf(without(terminated(), 'version'))).toBe('Invalid EmployeeTerminated event: version: version is required');
      expect(reasonOf({ ...terminated(), version: null })).toBe('Invalid EmployeeTerminated event: version: version is required');
    });
  });

  describe('envelope fields', () => {
    it.each(['id', 'occurred_at', 'connection_id', 'entity_id', 'data'])('refuses an event without %s', (field) => {
      expect(reasonOf(without(hired(), field))).toBe(`Invalid EmployeeHired event: ${field}: ${field} is required`);
    });

    it.each([
      ['id', 'not-a-uuid', 'id must be a UUID'],
      ['id', 12345, 'id must be a UUID'],
      ['connection_id', '7c9e6679-7425-40de-944b-e07fc1f90ae', 'connection_id must be a UUID'],
      ['entity_id', { id: IDS.entity }, 'entity_id must be a UUID'],
      ['occurred_at', '2026-03-01', 'occurred_at must be an ISO 8601 date-time with a time zone, e.g. 2026-03-01T09:30:00Z'],
      ['occurred_at', '2026-03-01T09:30:00', 'occurred_at must be an ISO 8601 date-time with a time zone, e.g. 2026-03-01T09:30:00Z'],
      ['occurred_at', '2026-02-30T09:30:00Z', 'occurred_at must be an ISO 8601 date-time with a time zone, e.g. 2026-03-01T09:30:00Z'],
      ['occurred_at', '2026-03-01T24:00:00Z', 'occurred_at must be an ISO 8601 date-time with a time zone, e.g. 2026-03-01T09:30:00Z'],
      ['occurred_at', '2026-03-01T09:30:00+24:00', 'occurred_at must be an ISO 8601 date-time with a time zone, e.g. 2026-03-01T09:30:00Z'],
      ['occurred_at', 1772357400000, 'occurred_at must be an ISO 8601 date-time with a time zone, e.g. 2026-03-01T09:30:00Z'],
      ['data', 'start_date=2026-03-02', 'data must be an object'],
      ['data', [], 'data must be an object'],
      ['data', null, 'data is required'],
    ])('refuses %s %j', (field, value, message) => {
      expect(reasonOf(hired({}, { [field]: value }))).toBe(`Invalid EmployeeHired event: ${field}: ${message}`);
    });

    it('refuses unknown top-level fields', () => {
      expect(reasonOf(hired({}, { source: 'workday' }))).toBe('Invalid EmployeeHired event: source: unknown field');
    });

    it('refuses keys that would replace the prototype or constructor', () => {
      expect(reasonOf(JSON.parse(JSON.stringify(hired()).replace('{', '{"__proto__":{"id":1},')))).toBe(
        'Invalid EmployeeHired event: __proto__: unknown field',
      );
      expect(reasonOf(hired({ constructor: 'x' }))).toBe('Invalid EmployeeHired event: data.constructor: unknown field');
    });

    it('refuses text PostgreSQL cannot store and nesting no event has, as poison', () => {
      expect(reasonOf(hired({}, { id: 'a\u0000b' }))).toBe('Invalid EmployeeHired event: id: text must not contain U+0000 or an unpaired UTF-16 surrogate');
      expect(reasonOf(changed({ configuration: { note: 'x\ud800' } }))).toBe(
        'Invalid ContributionChanged event: data.configuration.note: text must not contain U+0000 or an unpaired UTF-16 surrogate',
      );
      let deep: unknown = 1;
      for (let i = 0; i < 100_000; i++) deep = { a: deep };
      expect(reasonOf(changed({ configuration: deep }))).toMatch(/^Invalid ContributionChanged event: data\.configuration(\.a)+: nested deeper than 64 levels$/);
    });

    it('lists every problem with its path', () => {
      const reason = reasonOf(hired({ individual_id: 'x', start_date: '2026-02-30', nickname: 'Al' }, { id: 'y', extra: true }));
      expect(reason).toBe(
        'Invalid EmployeeHired event: id: id must be a UUID; ' +
          'data.individual_id: individual_id must be a UUID; ' +
          'data.start_date: start_date must be a date written YYYY-MM-DD, e.g. 2026-01-31; ' +
          'extra: unknown field; data.nickname: unknown field',
      );
    });
  });

  describe('EmployeeHired data', () => {
    it.each(['individual_id', 'start_date'])('refuses data without %s', (field) => {
      expect(reasonOf(withoutData(hired(), field))).toBe(`Invalid EmployeeHired event: data.${field}: ${field} is required`);
    });

    it.each([
      ['start_date', '2026-02-30'],
      ['start_date', '2026-3-2'],
      ['start_date', '03/02/2026'],
      ['start_date', '2026-03-02T00:00:00Z'],
      ['start_date', 20260302],
      ['dob', '1990-02-29'],
      ['dob', '1990-13-01'],
    ])('refuses %s %j', (field, value) => {
      expect(reasonOf(hired({ [field]: value }))).toBe(
        `Invalid EmployeeHired event: data.${field}: ${field} must be a date written YYYY-MM-DD, e.g. 2026-01-31`,
      );
    });

    it.each([
      ['not-a-uuid'],
      [42],
      // The REST enroll body refuses these layouts (version 0, variant 0) for individual_id too.
      ['5a7c3a4e-1b2d-0e6f-8a9b-0c1d2e3f4a5b'],
      ['5a7c3a4e-1b2d-4e6f-0a9b-0c1d2e3f4a5b'],
    ])('refuses individual_id %j', (value) => {
      expect(reasonOf(hired({ individual_id: value }))).toBe('Invalid EmployeeHired event: data.individual_id: individual_id must be a UUID');
    });

    it('refuses unknown fields in data', () => {
      expect(reasonOf(hired({ department: 'sales' }))).toBe('Invalid EmployeeHired event: data.department: unknown field');
    });
  });

  describe('ContributionChanged data', () => {
    it.each(['individual_id', 'benefit_id', 'configuration'])('refuses data without %s', (field) => {
      expect(reasonOf(withoutData(changed(), field))).toBe(`Invalid ContributionChanged event: data.${field}: ${field} is required`);
    });

    it.each([[[]], ['percent:600'], [42]])('refuses configuration %j', (configuration) => {
      expect(reasonOf(changed({ configuration }))).toBe('Invalid ContributionChanged event: data.configuration: configuration must be an object');
    });

    it('refuses a benefit_id that is not a UUID', () => {
      expect(reasonOf(changed({ benefit_id: '401k' }))).toBe('Invalid ContributionChanged event: data.benefit_id: benefit_id must be a UUID');
    });

    it.each([['2026-02-30'], ['soon'], ['2026-04-01T10:00:00'], [20260401]])('refuses effective_date %j', (effectiveDate) => {
      expect(reasonOf(changed({ effective_date: effectiveDate }))).toBe(
        'Invalid ContributionChanged event: data.effective_date: effective_date must be YYYY-MM-DD, MM/DD/YYYY or an ISO 8601 date-time',
      );
    });

    it('refuses a configuration.effective_date that is not a date', () => {
      const reason = reasonOf(changed({ effective_date: undefined, configuration: { effective_date: '2026-13-01' } }));
      expect(reason).toBe(
        'Invalid ContributionChanged event: data.configuration: configuration.effective_date must be YYYY-MM-DD, MM/DD/YYYY or an ISO 8601 date-time',
      );
    });

    it('refuses two effective dates that differ', () => {
      const reason = reasonOf(changed({ effective_date: '2026-04-01', configuration: { effective_date: '05/01/2026' } }));
      expect(reason).toBe(
        'Invalid ContributionChanged event: data.effective_date: effective_date 2026-04-01 differs from ' +
          'configuration.effective_date 2026-05-01; send one of them, or the same date in both',
      );
    });

    it.each([
      ['2026-04-01', '2026-04-01'],
      ['2026-04-01', '04/01/2026'],
      ['2026-04-01T23:30:00-05:00', '2026-04-01'],
      [null, '2026-05-01'],
      ['2026-04-01', null],
    ])('accepts effective_date %j beside configuration.effective_date %j', (effectiveDate, inConfiguration) => {
      const configuration = { employee_deduction: { type: 'fixed', amount: 2500 }, effective_date: inConfiguration };
      expect(eventOf(changed({ effective_date: effectiveDate, configuration })).data).toMatchObject({ configuration });
    });

    it('refuses unknown fields in data but not in configuration', () => {
      expect(reasonOf(changed({ amount: 600 }))).toBe('Invalid ContributionChanged event: data.amount: unknown field');
    });
  });

  describe('EmployeeTerminated data', () => {
    it.each(['individual_id', 'end_date'])('refuses data without %s', (field) => {
      expect(reasonOf(withoutData(terminated(), field))).toBe(`Invalid EmployeeTerminated event: data.${field}: ${field} is required`);
    });

    it.each([['2026-06-31'], ['2026-06-30T17:00:00Z'], ['06/30/2026'], [null]])('refuses end_date %j', (endDate) => {
      const message = endDate === null ? 'end_date is required' : 'end_date must be a date written YYYY-MM-DD, e.g. 2026-01-31';
      expect(reasonOf(terminated({ end_date: endDate }))).toBe(`Invalid EmployeeTerminated event: data.end_date: ${message}`);
    });

    it('refuses a field of another type', () => {
      expect(reasonOf(terminated({ start_date: '2026-03-02' }))).toBe('Invalid EmployeeTerminated event: data.start_date: unknown field');
    });
  });

  describe('long reasons', () => {
    it(`stays within ${MAX_REASON_LENGTH} characters, wrong fields first, the rest counted`, () => {
      const extra = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`field_${i}`, i]));
      const reason = reasonOf(without(hired({}, extra), 'id'));
      expect(reason.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
      expect(reason.startsWith('Invalid EmployeeHired event: id: id is required; field_0: unknown field; field_1: unknown field')).toBe(true);
      const match = / \(and (\d+) more\)$/.exec(reason);
      expect(match).not.toBeNull();
      const listed = (reason.match(/: unknown field/g) ?? []).length;
      expect(listed + Number(match![1])).toBe(300);
    });

    it('cuts a single very long problem', () => {
      const reason = reasonOf(hired({ ['x'.repeat(2000)]: 1 }));
      expect(reason.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
      expect(reason.startsWith('Invalid EmployeeHired event: data.xxxx')).toBe(true);
      expect(reason.endsWith('…')).toBe(true);
    });

    it('cuts a long unknown type', () => {
      const reason = reasonOf({ ...hired(), type: 'y'.repeat(5000) });
      expect(reason.length).toBeLessThan(200);
    });

    it.each([0, 1, 2, 3])('cuts a type of emoji without splitting one (offset %d), so that it can be stored', (offset) => {
      const type = `${'x'.repeat(offset)}${'😀'.repeat(2000)}`;
      expect(isStorableText(reasonOf({ ...hired(), type }))).toBe(true);
      expect(isStorableText(reasonOf(hired({ [type]: 1 })))).toBe(true);
    });
  });
});
