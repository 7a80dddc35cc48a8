import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  chooseEventTypes,
  EVENT_TYPE_DESCRIPTIONS,
  JOB_COMPLETION_EVENT_TYPES,
  OPT_IN_EVENT_TYPES,
  STANDARD_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
} from './webhook-event-types';

// Read with node:fs rather than test/utils so the domain's specs import nothing outside it.
const publicDocument = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'test', 'fixtures', 'public-openapi.json'), 'utf8'));

/** The event_type enum a webhook event schema of the public document declares. */
function documentedEventTypes(schema: string): string[] {
  const parts: Array<{ properties?: { event_type?: { enum?: string[] } } }> = publicDocument.components.schemas[schema].allOf;
  const types = parts.flatMap((part) => part.properties?.event_type?.enum ?? []);
  if (types.length === 0) throw new Error(`${schema} declares no event_type enum`);
  return types;
}

function refusal(requested: readonly string[] | undefined): string {
  const choice = chooseEventTypes(requested);
  if (choice.ok) throw new Error(`expected ${JSON.stringify(requested)} to be refused, got ${JSON.stringify(choice.types)}`);
  return choice.message;
}

describe('chooseEventTypes', () => {
  it('answers every standard type and no opt-in type when none are named', () => {
    const choice = chooseEventTypes(undefined);
    expect(choice).toEqual({ ok: true, types: [...STANDARD_EVENT_TYPES] });
    if (!choice.ok) return;
    for (const optIn of OPT_IN_EVENT_TYPES) expect(choice.types).not.toContain(optIn);
  });

  it('answers a fresh list each time, so a caller cannot change the catalogue', () => {
    const catalogue = [...STANDARD_EVENT_TYPES];
    const first = chooseEventTypes(undefined);
    if (!first.ok) throw new Error(first.message);
    first.types.push('mutated');
    expect(chooseEventTypes(undefined)).toEqual({ ok: true, types: catalogue });
    expect([...STANDARD_EVENT_TYPES]).toEqual(catalogue);
  });

  it('refuses an empty list', () => {
    expect(refusal([])).toBe('event_types must name at least one type (leave it out for every standard type)');
  });

  it('refuses an unknown type, naming it', () => {
    expect(refusal(['payment.created', 'payment.exploded'])).toBe('Unknown event type "payment.exploded"; GET /webhooks/event-types lists them');
    expect(refusal(['Payment.Created'])).toContain('"Payment.Created"');
    expect(refusal([''])).toContain('""');
  });

  it('names at most 100 characters of an unknown type', () => {
    const long = 'x'.repeat(5_000);
    expect(refusal([long])).toBe(`Unknown event type "${'x'.repeat(100)}"; GET /webhooks/event-types lists them`);
  });

  it('refuses a repeated type', () => {
    expect(refusal(['payment.created', 'account.updated', 'payment.created'])).toBe('event_types must not repeat a type');
  });

  it('answers the named types in catalogue order, opt-in types included', () => {
    expect(chooseEventTypes(['hris.saga.failed', 'payment.deleted', 'account.updated', 'job.benefit_create.completed'])).toEqual({
      ok: true,
      types: ['job.benefit_create.completed', 'account.updated', 'payment.deleted', 'hris.saga.failed'],
    });
    expect(chooseEventTypes(['hris.event.dead_lettered'])).toEqual({ ok: true, types: ['hris.event.dead_lettered'] });
  });

  it('accepts every type of the catalogue at once', () => {
    expect(chooseEventTypes([...WEBHOOK_EVENT_TYPES].reverse())).toEqual({ ok: true, types: [...WEBHOOK_EVENT_TYPES] });
  });
});

describe('the event type catalogue', () => {
  it('describes every type, and only those', () => {
    expect(Object.keys(EVENT_TYPE_DESCRIPTIONS).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    for (const type of WEBHOOK_EVENT_TYPES) {
      expect(EVENT_TYPE_DESCRIPTIONS[type as keyof typeof EVENT_TYPE_DESCRIPTIONS].trim()).not.toBe('');
    }
  });

  it('lists no type twice, and keeps standard and opt-in apart', () => {
    expect(new Set(WEBHOOK_EVENT_TYPES).size).toBe(WEBHOOK_EVENT_TYPES.length);
    expect(WEBHOOK_EVENT_TYPES).toEqual([...STANDARD_EVENT_TYPES, ...OPT_IN_EVENT_TYPES]);
  });

  it('has as standard types exactly the public document’s, less the job types this service does not produce', () => {
    const dataAndAccount = ['AccountUpdateEvent', 'CompanyEvent', 'DirectoryEvent', 'EmploymentEvent', 'IndividualEvent', 'PaymentEvent', 'PayStatementEvent'].flatMap(
      documentedEventTypes,
    );
    const documentedJobTypes = documentedEventTypes('JobCompletionEvent');
    // A new job type in the document fails here until it is produced or added to this list.
    const notProduced = documentedJobTypes.filter((t) => !(JOB_COMPLETION_EVENT_TYPES as readonly string[]).includes(t));
    expect(notProduced).toEqual(['job.w4_form_employee_sync.completed', 'job.initial_data_sync_org.succeeded', 'job.initial_data_sync_payroll.succeeded']);
    expect([...STANDARD_EVENT_TYPES].sort()).toEqual([...dataAndAccount, ...documentedJobTypes.filter((t) => !notProduced.includes(t))].sort());
  });

  it('keeps every opt-in type out of the public document', () => {
    const everyDocumented = ['AccountUpdateEvent', 'CompanyEvent', 'DirectoryEvent', 'EmploymentEvent', 'IndividualEvent', 'PaymentEvent', 'PayStatementEvent', 'JobCompletionEvent'].flatMap(
      documentedEventTypes,
    );
    for (const optIn of OPT_IN_EVENT_TYPES) expect(everyDocumented).not.toContain(optIn);
  });
});
