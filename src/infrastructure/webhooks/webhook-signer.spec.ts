import { createHmac } from 'node:crypto';
import Finch from '@tryfinch/finch-api';
import { Webhook } from 'standardwebhooks';
import { signatureHeaders } from './webhook-signer';

// Two 32-byte secrets in standard base64, as newSigningSecret() makes them.
const CURRENT = 'q5rG1Xo2b4S8TQ7y0fWJ9m3Kc6VvLhN+ZpE2u/ItRkA=';
const PREVIOUS = 'R2hC8vQk1Zp4sX7mN0bT5yW3eL6jU9aF+oD/cHgIiKs=';
const EVENT_ID = 'evt_01HV6Z8Q2W3E4R5T6Y7U8I9O0P';
const BODY =
  '{"event_type":"job.benefit_enroll.completed","connection_id":"conn_7f3c2a9e","company_id":"comp_51a0b6d4",' +
  '"account_id":"acct_9d2e4f10","data":{"job_id":"job_0c5e8a21","job_url":"https://benefits.example.com/jobs/automated/job_0c5e8a21"}}';

/** The Standard Webhooks signature, computed without the code under test. */
function expectedSignature(secret: string, id: string, seconds: number, body: string): string {
  return 'v1,' + createHmac('sha256', Buffer.from(secret, 'base64')).update(`${id}.${seconds}.${body}`).digest('base64');
}

// Verifiers refuse timestamps more than five minutes from their clock: sign at the real now.
const now = () => new Date();

describe('signatureHeaders', () => {
  it('sends the id, timestamp and signature under the standard names and the API family’s, with equal values', () => {
    const headers = signatureHeaders(EVENT_ID, now(), BODY, [CURRENT]);
    expect(Object.keys(headers).sort()).toEqual(
      ['finch-event-id', 'finch-signature', 'finch-timestamp', 'webhook-id', 'webhook-signature', 'webhook-timestamp'].sort(),
    );
    expect(headers['webhook-id']).toBe(EVENT_ID);
    expect(headers['finch-event-id']).toBe(headers['webhook-id']);
    expect(headers['finch-timestamp']).toBe(headers['webhook-timestamp']);
    expect(headers['finch-signature']).toBe(headers['webhook-signature']);
    expect(headers['webhook-signature']).not.toBe('');
  });

  it('signs id.timestamp.body with HMAC-SHA256 under the decoded secret', () => {
    const at = new Date('2025-03-01T12:00:00.000Z');
    const headers = signatureHeaders(EVENT_ID, at, BODY, [CURRENT]);
    expect(headers['webhook-timestamp']).toBe('1740830400');
    expect(headers['webhook-signature']).toBe(expectedSignature(CURRENT, EVENT_ID, 1_740_830_400, BODY));
    // Each input is signed: change one and the signature changes.
    expect(signatureHeaders('evt_other', at, BODY, [CURRENT])['webhook-signature']).not.toBe(headers['webhook-signature']);
    expect(signatureHeaders(EVENT_ID, new Date(at.getTime() + 1_000), BODY, [CURRENT])['webhook-signature']).not.toBe(
      headers['webhook-signature'],
    );
    expect(signatureHeaders(EVENT_ID, at, BODY + ' ', [CURRENT])['webhook-signature']).not.toBe(headers['webhook-signature']);
  });

  it('sends whole seconds as the timestamp and signs with those seconds', () => {
    const at = new Date('2025-03-01T12:00:00.999Z');
    const headers = signatureHeaders(EVENT_ID, at, BODY, [CURRENT]);
    expect(headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(headers['webhook-timestamp']).toBe('1740830400');
    expect(headers['finch-timestamp']).toBe('1740830400');
    expect(headers['webhook-signature']).toBe(expectedSignature(CURRENT, EVENT_ID, 1_740_830_400, BODY));
  });

  it('signs under each secret during a rotation, space-separated in the order given', () => {
    const at = new Date('2025-03-01T12:00:00.000Z');
    const current = expectedSignature(CURRENT, EVENT_ID, 1_740_830_400, BODY);
    const previous = expectedSignature(PREVIOUS, EVENT_ID, 1_740_830_400, BODY);
    expect(signatureHeaders(EVENT_ID, at, BODY, [CURRENT, PREVIOUS])['webhook-signature']).toBe(`${current} ${previous}`);
    expect(signatureHeaders(EVENT_ID, at, BODY, [PREVIOUS, CURRENT])['finch-signature']).toBe(`${previous} ${current}`);
  });

  describe('verified by the receivers’ libraries', () => {
    const headers = signatureHeaders(EVENT_ID, now(), BODY, [CURRENT, PREVIOUS]);
    const finch = new Finch({ accessToken: 'x' });

    it.each([
      ['the current secret', CURRENT],
      ['the previous secret', PREVIOUS],
    ])('standardwebhooks accepts it under %s', (_name, secret) => {
      expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
    });

    it.each([
      ['the current secret', CURRENT],
      ['the previous secret', PREVIOUS],
    ])('the API family’s SDK accepts it under %s', (_name, secret) => {
      expect(finch.webhooks.unwrap(BODY, headers, secret)).toEqual(JSON.parse(BODY));
    });

    // Without these the two above would pass for verifiers that accept anything.
    it('both refuse it under a secret it was not signed with, or with the body changed', () => {
      const stranger = 'zT0w6a9B3cD+eF2gH5iJ8kL1mN4oP7qR0sT3uV6wX9Y=';
      expect(() => new Webhook(stranger).verify(BODY, headers)).toThrow('No matching signature found');
      expect(() => finch.webhooks.unwrap(BODY, headers, stranger)).toThrow('None of the given webhook signatures match');
      expect(() => new Webhook(CURRENT).verify(BODY.replace('conn_7f3c2a9e', 'conn_00000000'), headers)).toThrow();
      expect(() => finch.webhooks.unwrap(BODY.replace('conn_7f3c2a9e', 'conn_00000000'), headers, CURRENT)).toThrow();
    });
  });
});
