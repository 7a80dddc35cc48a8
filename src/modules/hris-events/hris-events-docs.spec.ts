import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { HRIS_EVENT_TYPES, HRIS_EVENT_VERSIONS } from '../../domain/hris-events/hris-event';
import { validateHrisEvent } from './hris-event-validation';

/**
 * docs/hris-events.md and docs/hris-events.schema.json are the published contract: every
 * example in the page must be an event the service accepts and the schema validates, and the
 * schema must refuse what the service refuses wherever a schema can say it.
 */
const docs = join(__dirname, '../../../docs');
const page = readFileSync(join(docs, 'hris-events.md'), 'utf8');
const schema = JSON.parse(readFileSync(join(docs, 'hris-events.schema.json'), 'utf8')) as {
  $schema: string;
  oneOf: { $ref: string }[];
  $defs: Record<string, { properties: { type: { const: string }; version: { enum: number[] } } }>;
};

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const schemaAccepts = ajv.compile(schema);

/** The page's ```json blocks (```jsonc blocks are other payloads, with comments). */
function jsonBlocks(markdown: string): unknown[] {
  return [...markdown.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((match) => JSON.parse(match[1]));
}

const examples = jsonBlocks(page).flatMap((block) => (Array.isArray(block) ? block : [block])) as Record<string, unknown>[];

const schemaErrors = () => JSON.stringify(schemaAccepts.errors?.slice(0, 3));

describe('docs/hris-events.schema.json', () => {
  it('is draft 2020-12 with one branch per event type, named after the types', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const branches = schema.oneOf.map((branch) => branch.$ref.replace('#/$defs/', ''));
    expect(branches).toEqual([...HRIS_EVENT_TYPES]);
    for (const type of HRIS_EVENT_TYPES) {
      expect(schema.$defs[type].properties.type.const).toBe(type);
    }
  });

  it('lists the versions the service reads for each type', () => {
    for (const type of HRIS_EVENT_TYPES) {
      expect(schema.$defs[type].properties.version.enum).toEqual([...HRIS_EVENT_VERSIONS[type]]);
    }
  });
});

describe('docs/hris-events.md examples', () => {
  it('show every event type', () => {
    expect(new Set(examples.map((example) => example.type))).toEqual(new Set(HRIS_EVENT_TYPES));
  });

  it('each pass validateHrisEvent', () => {
    for (const example of examples) {
      const result = validateHrisEvent(example);
      expect(result.ok ? 'ok' : result.reason).toBe('ok');
    }
  });

  it('each pass the JSON Schema', () => {
    for (const example of examples) {
      expect(schemaAccepts(example) ? 'ok' : schemaErrors()).toBe('ok');
    }
  });

  it('use distinct event ids', () => {
    const ids = examples.map((example) => example.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('the schema and validateHrisEvent agree', () => {
  const byType = (type: string) => examples.find((example) => example.type === type)!;
  const withData = (type: string, data: Record<string, unknown>) => {
    const example = byType(type);
    return { ...example, data: { ...(example.data as object), ...data } };
  };
  const withoutField = (event: Record<string, unknown>, field: string) => Object.fromEntries(Object.entries(event).filter(([key]) => key !== field));

  const refused: [string, unknown][] = [
    ['an array', [byType('EmployeeHired')]],
    ['null', null],
    ['an unknown type', { ...byType('EmployeeHired'), type: 'EmployeePromoted' }],
    ['version 2', { ...byType('EmployeeHired'), version: 2 }],
    ['version "1"', { ...byType('EmployeeHired'), version: '1' }],
    ['an unknown top-level field', { ...byType('EmployeeTerminated'), source: 'workday' }],
    ['an unknown data field', withData('EmployeeTerminated', { reason: 'resigned' })],
    ['a field of another type', withData('EmployeeTerminated', { start_date: '2026-03-02' })],
    ['no id', withoutField(byType('EmployeeHired'), 'id')],
    ['no occurred_at', withoutField(byType('EmployeeHired'), 'occurred_at')],
    ['no data', withoutField(byType('ContributionChanged'), 'data')],
    ['an id that is not a UUID', { ...byType('EmployeeHired'), id: 'evt-1' }],
    ['occurred_at without a zone', { ...byType('EmployeeHired'), occurred_at: '2026-03-01T09:30:00' }],
    ['start_date 2026-02-30', withData('EmployeeHired', { start_date: '2026-02-30' })],
    ['start_date as a date-time', withData('EmployeeHired', { start_date: '2026-03-02T00:00:00Z' })],
    ['end_date 2026-06-31', withData('EmployeeTerminated', { end_date: '2026-06-31' })],
    ['an individual_id of version 0', withData('EmployeeTerminated', { individual_id: '5a7c3a4e-1b2d-0e6f-8a9b-0c1d2e3f4a5b' })],
    ['a configuration that is an array', withData('ContributionChanged', { configuration: [] })],
    ['an effective_date that is no date', withData('ContributionChanged', { effective_date: 'soon' })],
  ];

  it.each(refused)('both refuse %s', (_case, raw) => {
    expect(validateHrisEvent(raw).ok).toBe(false);
    expect(schemaAccepts(raw)).toBe(false);
  });

  const accepted: [string, unknown][] = [
    ['dob null', withData('EmployeeHired', { dob: null })],
    ['occurred_at with an offset and no seconds', { ...byType('EmployeeHired'), occurred_at: '2026-03-01T10:30+01:00' }],
    ['an effective_date written MM/DD/YYYY', withData('ContributionChanged', { effective_date: '04/01/2026' })],
    ['a configuration with fields checked later', withData('ContributionChanged', { configuration: { anything: true } })],
  ];

  it.each(accepted)('both accept %s', (_case, raw) => {
    const result = validateHrisEvent(raw);
    expect(result.ok ? 'ok' : result.reason).toBe('ok');
    expect(schemaAccepts(raw) ? 'ok' : schemaErrors()).toBe('ok');
  });
});
