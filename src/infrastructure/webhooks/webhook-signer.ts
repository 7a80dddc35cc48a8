import { Webhook } from 'standardwebhooks';

/**
 * The signature headers of one delivery attempt, by the Standard Webhooks scheme:
 * `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under each live secret (two during a
 * rotation, space-separated). Sent under the standard names and under the API family's own,
 * so either kind of verifier accepts them unchanged.
 */
export function signatureHeaders(eventId: string, timestamp: Date, body: string, secrets: readonly string[]): Record<string, string> {
  const seconds = String(Math.floor(timestamp.getTime() / 1000));
  const signature = secrets.map((secret) => new Webhook(secret).sign(eventId, timestamp, body)).join(' ');
  return {
    'webhook-id': eventId,
    'webhook-timestamp': seconds,
    'webhook-signature': signature,
    'finch-event-id': eventId,
    'finch-timestamp': seconds,
    'finch-signature': signature,
  };
}
