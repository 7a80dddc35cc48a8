import 'reflect-metadata';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { HRIS_EVENT_TYPES, HrisEventType } from '../../domain/hris-events/hris-event';
import { HRIS_EVENT_DATA_DTOS, HRIS_EVENT_DTOS } from './dto/hris-event.dto';
import { isPlainlyValid } from './hris-event-validation';

/** A record of these fields, usually with every one of them. */
const fields = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T) =>
  fc.oneof({ weight: 4, arbitrary: fc.record(model) }, fc.record(model, { requiredKeys: [] })) as fc.Arbitrary<Record<string, unknown>>;

/** What the DTOs say of an event, without the hand-written fast path. */
function dtosAccept(type: HrisEventType, raw: Record<string, unknown>): boolean {
  const dto = Object.assign(new HRIS_EVENT_DTOS[type](), raw);
  const data = raw.data;
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) dto.data = Object.assign(new HRIS_EVENT_DATA_DTOS[type](), data);
  return validateSync(dto, { whitelist: true, forbidNonWhitelisted: true }).length === 0;
}

// Values that come close to passing, and some that do not.
const uuidLayout = fc.stringMatching(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/);
const id = fc.oneof({ weight: 8, arbitrary: fc.uuid() }, uuidLayout, fc.constant('not-a-uuid'), fc.integer(), fc.constant(null));
const date = fc.oneof(
  { weight: 6, arbitrary: fc.date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)) },
  fc.constantFrom('2026-03-02', '2026-02-29', '2024-02-29', '2026-13-01', '03/02/2026', '02/30/2026', '2026-03-02T10:00:00Z', ' 2026-03-02', '', '2026-3-2'),
  fc.date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc.string(),
  fc.integer(),
  fc.constant(null),
);
const instant = fc.oneof(
  { weight: 6, arbitrary: fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()) },
  fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-03-01T09:30:00Z', '2026-03-01T09:30Z', '2026-03-01T09:30:00+0130', '2026-03-01T24:00:00Z', '2026-03-01T09:30:00', '2026-02-30T09:30:00Z', '2026-03-01'),
  fc.string(),
);
const version = fc.oneof({ weight: 6, arbitrary: fc.constant(1) }, fc.constantFrom(0, -1, 1.5, '1', 2), fc.integer());
const configuration = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ employee_deduction: { type: 'percent', amount: 500 } }) },
  fc.record({ employee_deduction: fc.constant({ type: 'percent', amount: 500 }), effective_date: date }, { requiredKeys: ['employee_deduction'] }),
  fc.constant({}),
  fc.constant([]),
  fc.constant(null),
  fc.string(),
);
const extra = fc.oneof({ weight: 6, arbitrary: fc.constant({}) }, fc.dictionary(fc.constantFrom('extra', 'Data', 'note'), fc.integer(), { minKeys: 1, maxKeys: 1 }));

const dataOf: Record<HrisEventType, fc.Arbitrary<Record<string, unknown>>> = {
  EmployeeHired: fields({ individual_id: id, start_date: date, dob: date }),
  ContributionChanged: fields({ individual_id: id, benefit_id: id, configuration, effective_date: date }),
  EmployeeTerminated: fields({ individual_id: id, end_date: date }),
};

const event = fc.constantFrom(...HRIS_EVENT_TYPES).chain((type) =>
  fields({
    id,
    version,
    occurred_at: instant,
    connection_id: id,
    entity_id: id,
    data: fc.oneof({ weight: 8, arbitrary: fc.tuple(dataOf[type], extra).map(([d, e]) => ({ ...d, ...e })) }, fc.constant(null), fc.constant([])),
  }).chain((fields) => extra.map((more) => ({ type, raw: { ...fields, type, ...more } as Record<string, unknown> }))),
);

describe('isPlainlyValid (the HRIS events’ fast path)', () => {
  it('passes only events the DTOs pass', () => {
    let passed = 0;
    fc.assert(
      fc.property(event, ({ type, raw }) => {
        if (!isPlainlyValid(type, raw)) return;
        passed++;
        expect(dtosAccept(type, raw)).toBe(true);
      }),
      { numRuns: 10_000 },
    );
    // The generator must reach the fast path often enough for the property to mean something.
    expect(passed).toBeGreaterThan(50);
  });

  it('passes the common events of each type', () => {
    const envelope = { id: '324b1908-2a82-4cdf-ac30-12ab7b559ed8', version: 1, occurred_at: '2026-03-01T09:30:00Z', connection_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', entity_id: '9b2f4c1e-7a1d-4b8e-9c35-2d6f0e1a4b77' };
    const individual_id = '5a7c3a4e-1b2d-4e6f-8a9b-0c1d2e3f4a5b';
    expect(isPlainlyValid('EmployeeHired', { ...envelope, type: 'EmployeeHired', data: { individual_id, start_date: '2026-03-02' } })).toBe(true);
    expect(isPlainlyValid('EmployeeTerminated', { ...envelope, type: 'EmployeeTerminated', data: { individual_id, end_date: '2026-06-30' } })).toBe(true);
    const change = { individual_id, benefit_id: '604832c7-7416-4200-a9d2-24b530cad597', configuration: { employee_deduction: { type: 'percent', amount: 600 } } };
    expect(isPlainlyValid('ContributionChanged', { ...envelope, type: 'ContributionChanged', data: { ...change, effective_date: '2026-04-01' } })).toBe(true);
    expect(isPlainlyValid('ContributionChanged', { ...envelope, type: 'ContributionChanged', data: { ...change, effective_date: '2026-04-02', configuration: { effective_date: '2026-04-01' } } })).toBe(false);
  });
});
