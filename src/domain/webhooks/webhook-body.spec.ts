import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Json, loadPublicDocument, toJsonSchema } from '../../../test/utils/public-openapi';
import { renderWebhookBody, StoredWebhookEvent } from './webhook-body';
import { STANDARD_EVENT_TYPES } from './webhook-event-types';

const BASE_URL = 'https://benefits.example.com';

function event(overrides: Partial<StoredWebhookEvent> = {}): StoredWebhookEvent {
  return {
    id: 'evt_01HV6Z8Q2W3E4R5T6Y7U8I9O0P',
    eventType: 'job.benefit_enroll.completed',
    connectionId: 'conn_7f3c2a9e',
    companyId: 'comp_51a0b6d4',
    accountId: 'acct_9d2e4f10',
    entityId: 'ent_3b8c1e72',
    data: { job_id: 'job_0c5e8a21', job_url: '/jobs/automated/job_0c5e8a21' },
    createdAt: new Date('2025-03-01T12:00:00.000Z'),
    ...overrides,
  };
}

describe('renderWebhookBody', () => {
  it('renders the exact JSON text, keys in the API family’s order', () => {
    expect(renderWebhookBody(event(), BASE_URL)).toBe(
      '{"event_type":"job.benefit_enroll.completed","connection_id":"conn_7f3c2a9e","company_id":"comp_51a0b6d4",' +
        '"account_id":"acct_9d2e4f10","entity_id":"ent_3b8c1e72",' +
        '"data":{"job_id":"job_0c5e8a21","job_url":"https://benefits.example.com/jobs/automated/job_0c5e8a21"}}',
    );
  });

  it('leaves entity_id out when the event has none', () => {
    const body = renderWebhookBody(event({ entityId: null }), BASE_URL);
    expect(body).toBe(
      '{"event_type":"job.benefit_enroll.completed","connection_id":"conn_7f3c2a9e","company_id":"comp_51a0b6d4",' +
        '"account_id":"acct_9d2e4f10",' +
        '"data":{"job_id":"job_0c5e8a21","job_url":"https://benefits.example.com/jobs/automated/job_0c5e8a21"}}',
    );
    expect(JSON.parse(body)).not.toHaveProperty('entity_id');
  });

  it('trims trailing slashes off the base URL before joining the job path', () => {
    for (const base of ['https://benefits.example.com/', 'https://benefits.example.com///']) {
      expect(JSON.parse(renderWebhookBody(event(), base)).data.job_url).toBe('https://benefits.example.com/jobs/automated/job_0c5e8a21');
    }
    expect(JSON.parse(renderWebhookBody(event(), 'https://gw.example.com/benefits/')).data.job_url).toBe(
      'https://gw.example.com/benefits/jobs/automated/job_0c5e8a21',
    );
  });

  it('leaves a job_url that is already absolute alone', () => {
    const url = 'https://elsewhere.example.org/jobs/automated/job_0c5e8a21';
    const body = renderWebhookBody(event({ data: { job_id: 'job_0c5e8a21', job_url: url } }), BASE_URL);
    expect(JSON.parse(body).data).toEqual({ job_id: 'job_0c5e8a21', job_url: url });
  });

  it('leaves data without a job_url as it is', () => {
    const data = { individual_id: 'ind_4e2a', nested: { job_url: '/not/this/one' } };
    expect(JSON.parse(renderWebhookBody(event({ eventType: 'individual.updated', data }), BASE_URL)).data).toEqual(data);
  });

  it('keeps data null as null', () => {
    expect(renderWebhookBody(event({ eventType: 'company.updated', data: null }), BASE_URL)).toBe(
      '{"event_type":"company.updated","connection_id":"conn_7f3c2a9e","company_id":"comp_51a0b6d4",' +
        '"account_id":"acct_9d2e4f10","entity_id":"ent_3b8c1e72","data":null}',
    );
  });

  it('renders the same bytes for the same event, every time, without changing it', () => {
    const stored = event();
    const before = structuredClone(stored);
    const first = renderWebhookBody(stored, BASE_URL);
    expect(renderWebhookBody(stored, BASE_URL)).toBe(first);
    expect(renderWebhookBody(event(), BASE_URL)).toBe(first);
    // The stored path stays a path: a retry under another base URL joins it afresh.
    expect(stored).toEqual(before);
  });

  describe('against the public API family’s schemas', () => {
    const document: Json = toJsonSchema(loadPublicDocument());
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    ajv.addSchema(document, 'public');
    const validator = (name: string): ValidateFunction => ajv.compile({ $ref: `public#/components/schemas/${name}` });
    const webhookEvent = validator('WebhookEvent');

    const eventTypesOf = (schema: string): string[] => {
      const own = (document.components.schemas[schema].allOf as Json[]).find((part) => part.properties?.event_type);
      return own.properties.event_type.enum;
    };

    const cases: Array<{ schema: string; eventType: string; data: Record<string, unknown> | null }> = [
      { schema: 'JobCompletionEvent', eventType: 'job.benefit_create.completed', data: { job_id: 'job_1', job_url: '/jobs/automated/job_1' } },
      { schema: 'JobCompletionEvent', eventType: 'job.benefit_enroll.completed', data: { job_id: 'job_2', job_url: '/jobs/automated/job_2' } },
      { schema: 'JobCompletionEvent', eventType: 'job.benefit_register.completed', data: { job_id: 'job_3', job_url: '/jobs/automated/job_3' } },
      { schema: 'JobCompletionEvent', eventType: 'job.benefit_unenroll.completed', data: { job_id: 'job_4', job_url: '/jobs/automated/job_4' } },
      { schema: 'JobCompletionEvent', eventType: 'job.benefit_update.completed', data: { job_id: 'job_5', job_url: '/jobs/automated/job_5' } },
      { schema: 'JobCompletionEvent', eventType: 'job.data_sync_all.completed', data: { job_id: 'job_6', job_url: '/jobs/automated/job_6' } },
      { schema: 'AccountUpdateEvent', eventType: 'account.updated', data: { status: 'reauth', authentication_method: { type: 'credential' } } },
      { schema: 'CompanyEvent', eventType: 'company.updated', data: null },
      ...(['created', 'updated', 'deleted'] as const).flatMap((change) => [
        { schema: 'DirectoryEvent', eventType: `directory.${change}`, data: { individual_id: 'ind_4e2a9c' } },
        { schema: 'EmploymentEvent', eventType: `employment.${change}`, data: { individual_id: 'ind_4e2a9c' } },
        { schema: 'IndividualEvent', eventType: `individual.${change}`, data: { individual_id: 'ind_4e2a9c' } },
        { schema: 'PaymentEvent', eventType: `payment.${change}`, data: { payment_id: 'pay_77d1', pay_date: '2025-02-28' } },
        { schema: 'PayStatementEvent', eventType: `pay_statement.${change}`, data: { payment_id: 'pay_77d1', individual_id: 'ind_4e2a9c' } },
      ]),
    ];

    it('covers every standard event type', () => {
      expect(cases.map((c) => c.eventType).sort()).toEqual([...STANDARD_EVENT_TYPES].sort());
    });

    it.each(cases)('renders $eventType as a valid $schema', ({ schema, eventType, data }) => {
      for (const entityId of ['ent_3b8c1e72', null]) {
        const body = JSON.parse(renderWebhookBody(event({ eventType, data, entityId }), BASE_URL));
        expect(eventTypesOf(schema)).toContain(body.event_type);
        const own = validator(schema);
        expect({ valid: own(body), errors: own.errors }).toEqual({ valid: true, errors: null });
        expect({ valid: webhookEvent(body), errors: webhookEvent.errors }).toEqual({ valid: true, errors: null });
      }
    });

    // The schemas above would be worthless if they accepted anything: the same validators refuse
    // bodies that break the shape.
    it('refuses bodies that break the shape (the validators are not vacuous)', () => {
      const valid = JSON.parse(renderWebhookBody(event(), BASE_URL));
      expect(webhookEvent(valid)).toBe(true);
      expect(webhookEvent({ ...valid, event_type: 'job.unheard_of.completed' })).toBe(false);
      const { account_id: _accountId, ...withoutAccount } = valid;
      expect(webhookEvent(withoutAccount)).toBe(false);
      expect(webhookEvent({ ...valid, entity_id: null })).toBe(false);
      expect(validator('JobCompletionEvent')({ ...valid, data: { job_id: 'job_1' } })).toBe(false);
      expect(validator('PaymentEvent')({ ...valid, event_type: 'payment.created', data: { payment_id: 'pay_1' } })).toBe(false);
      expect(validator('DirectoryEvent')({ ...valid, event_type: 'directory.created', data: null })).toBe(false);
    });
  });
});
