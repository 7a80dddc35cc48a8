import { createHmac } from 'node:crypto';
import {
  GustoEvent,
  gustoSignatureOf,
  isVerificationTokenPayload,
  parseGustoEvent,
  parseGustoWebhookPayload,
  parseVerificationToken,
  syncTargetOf,
  verifyGustoSignature,
} from './gusto-webhooks';

const TOKEN = 'asefasedfe23e234easd';
const COMPANY = '5df911a0-e8e9-412d-8aaf-a46ad193dd96';

/** The webhook guide's example payload, as Gusto sends it. */
const wire = (overrides: Record<string, unknown> = {}) => ({
  uuid: 'f7397a24-57ad-4fae-b011-d258e8232900',
  event_type: 'payroll.paid',
  resource_type: 'Company',
  resource_uuid: COMPANY,
  entity_type: 'Payroll',
  entity_uuid: '92a20431-9489-4bde-ad27-6feb20b969d5',
  timestamp: 1686784995,
  ...overrides,
});

const event = (eventType: string, entityType: string | null = null): GustoEvent => ({
  uuid: 'e1',
  eventType,
  companyUuid: COMPANY,
  entityType,
  entityUuid: null,
  occurredAt: null,
});

describe('Gusto webhook signatures', () => {
  const body = Buffer.from(JSON.stringify(wire()));
  const signature = createHmac('sha256', TOKEN).update(body).digest('hex');

  it('is the hex HMAC-SHA256 of the raw body keyed with the verification token', () => {
    expect(gustoSignatureOf(body, TOKEN)).toBe(signature);
    expect(gustoSignatureOf(body.toString('utf8'), TOKEN)).toBe(signature);
  });

  it('accepts the signature of exactly these bytes under a known token, in either case', () => {
    expect(verifyGustoSignature(body, signature, [TOKEN])).toBe(true);
    expect(verifyGustoSignature(body, signature.toUpperCase(), [TOKEN])).toBe(true);
    expect(verifyGustoSignature(body, ` ${signature} `, [TOKEN])).toBe(true);
  });

  it('accepts a signature under any of several tokens (a subscription being replaced)', () => {
    expect(verifyGustoSignature(body, signature, ['another-token', TOKEN])).toBe(true);
  });

  it('refuses another token, another body, and the same JSON spaced differently', () => {
    expect(verifyGustoSignature(body, signature, ['another-token'])).toBe(false);
    expect(verifyGustoSignature(Buffer.from(JSON.stringify(wire({ event_type: 'payroll.cancelled' }))), signature, [TOKEN])).toBe(false);
    expect(verifyGustoSignature(Buffer.from(JSON.stringify(wire(), null, 1)), signature, [TOKEN])).toBe(false);
  });

  it('refuses a missing, empty, repeated, truncated or non-hex signature, and any signature without tokens', () => {
    expect(verifyGustoSignature(body, undefined, [TOKEN])).toBe(false);
    expect(verifyGustoSignature(body, '', [TOKEN])).toBe(false);
    expect(verifyGustoSignature(body, [signature, signature], [TOKEN])).toBe(false);
    expect(verifyGustoSignature(body, signature.slice(0, 63), [TOKEN])).toBe(false);
    expect(verifyGustoSignature(body, `${signature}00`, [TOKEN])).toBe(false);
    expect(verifyGustoSignature(body, `sha256=${signature}`, [TOKEN])).toBe(false);
    expect(verifyGustoSignature(body, 'z'.repeat(64), [TOKEN])).toBe(false);
    expect(verifyGustoSignature(body, createHmac('sha256', TOKEN).update(body).digest('base64'), [TOKEN])).toBe(false);
    expect(verifyGustoSignature(body, signature, [])).toBe(false);
  });
});

describe('Gusto webhook payloads', () => {
  it('reads an event as the guide shows it', () => {
    expect(parseGustoEvent(wire())).toEqual({
      uuid: 'f7397a24-57ad-4fae-b011-d258e8232900',
      eventType: 'payroll.paid',
      companyUuid: COMPANY,
      entityType: 'Payroll',
      entityUuid: '92a20431-9489-4bde-ad27-6feb20b969d5',
      occurredAt: new Date(1686784995 * 1000),
    });
  });

  it('ignores members it does not use, and takes events without entity or timestamp', () => {
    const parsed = parseGustoEvent(wire({ resource_id: 7756341741171842, entity_id: 1, entity_type: undefined, entity_uuid: null, timestamp: undefined }));
    expect(parsed).toMatchObject({ entityType: null, entityUuid: null, occurredAt: null });
  });

  it.each([
    ['not an object', 'payroll.paid'],
    ['an array', [wire()]],
    ['null', null],
    ['no uuid', wire({ uuid: undefined })],
    ['a numeric uuid', wire({ uuid: 42 })],
    ['a uuid with spaces', wire({ uuid: 'a b' })],
    ['no event_type', wire({ event_type: undefined })],
    ['an event_type not like resource.change', wire({ event_type: 'Payroll Paid' })],
    ['another resource_type', wire({ resource_type: 'Employee' })],
    ['no resource_uuid', wire({ resource_uuid: undefined })],
    ['an entity_type that is no name', wire({ entity_type: 'Pay roll' })],
    ['a numeric entity_uuid', wire({ entity_uuid: 5 })],
    ['a timestamp in text', wire({ timestamp: '1686784995' })],
    ['a fractional timestamp', wire({ timestamp: 1.5 })],
  ])('refuses a payload with %s', (_case, body) => {
    expect(() => parseGustoEvent(body)).toThrow(expect.objectContaining({ family: 'invalid_request_error', serviceCode: 'invalid_gusto_webhook' }));
  });

  it('tells the handshake from an event: a lone verification_token', () => {
    expect(isVerificationTokenPayload({ verification_token: TOKEN })).toBe(true);
    expect(isVerificationTokenPayload({ verification_token: TOKEN, uuid: 'x' })).toBe(false);
    expect(isVerificationTokenPayload(wire())).toBe(false);
    expect(parseGustoWebhookPayload({ verification_token: TOKEN })).toEqual({ kind: 'verification_token', verificationToken: TOKEN });
    expect(parseGustoWebhookPayload(wire())).toMatchObject({ kind: 'event', event: { eventType: 'payroll.paid' } });
  });

  it('refuses a handshake whose token is not a non-empty bounded string', () => {
    for (const token of [42, '', '   ', 'x'.repeat(501), null]) {
      expect(() => parseVerificationToken({ verification_token: token })).toThrow(expect.objectContaining({ serviceCode: 'invalid_gusto_webhook' }));
    }
    expect(parseVerificationToken({ verification_token: 'x'.repeat(500) })).toHaveLength(500);
  });
});

describe('what an event asks to sync', () => {
  it.each([
    ['employee.created', 'Employee', ['directory', 'individual', 'employment']],
    ['employee.terminated', 'Employee', ['directory', 'individual', 'employment']],
    ['employee.bank_account.created', 'BankAccount', ['directory', 'individual', 'employment']],
    ['employee_job_compensation.updated', 'EmployeeJobCompensation', ['directory', 'individual', 'employment']],
    ['job.updated', null, ['directory', 'individual', 'employment']],
    ['compensation.created', null, ['directory', 'individual', 'employment']],
    ['payroll.paid', 'Payroll', ['payment', 'pay_statement']],
    ['payroll.reversed', 'Payroll', ['payment', 'pay_statement']],
    ['pay_schedule.updated', 'PaySchedule', ['payment']],
    ['company_benefit.created', 'CompanyBenefit', ['benefits']],
    ['employee_benefit.deleted', 'EmployeeBenefit', ['benefits']],
    ['company.updated', 'Company', ['company']],
    ['company.provisioned', 'Company', ['company']],
    ['location.created', 'Location', ['company']],
  ])('%s (%s) affects %j', (eventType, entityType, affects) => {
    expect(syncTargetOf(event(eventType, entityType))).toEqual({ companyUuid: COMPANY, affects });
  });

  it('falls back to the entity type for an event type it does not know', () => {
    expect(syncTargetOf(event('benefit_enrollment.changed', 'EmployeeBenefit'))).toEqual({ companyUuid: COMPANY, affects: ['benefits'] });
  });

  it.each([
    ['contractor.created', 'Contractor'],
    ['contractor_payment.created', 'ContractorPayment'],
    ['notification.created', 'Notification'],
    ['form.signed', 'Form'],
    ['bank_account.created', 'BankAccount'],
    ['something.new', null],
  ])('%s asks for nothing', (eventType, entityType) => {
    expect(syncTargetOf(event(eventType, entityType))).toBeUndefined();
  });
});
