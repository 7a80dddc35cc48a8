import { Webhook } from 'standardwebhooks';

/**
 * The signature headers of one delivery attempt, by the Standard Webhooks scheme:
 * `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under each live secret (two during a
 * rotation, space-separated). Sent under the standard names and under the API family's own,
 * so either kind of verifier accepts them unchanged.
 */
export function signatureHeaders(eventId: string, timestamp: Date, body: string, secrets: readonly string[]): Record<string, string> {
  const seconds = String(Math.floor(timestamp.getTime() / 1000));
  const signature = secrets.map((secret) => signerOf(secret).sign(eventId, timestamp, body)).join(' ');
  return {
    'webhook-id': eventId,
    'webhook-timestamp': seconds,
    'webhook-signature': signature,
    'finch-event-id': eventId,
    'finch-timestamp': seconds,
    'finch-signature': signature,
  };
}

/** Signers by secret: building one decodes the secret, which every attempt would repeat. */
const signers = new Map<string, Webhook>();

function signerOf(secret: string): Webhook {
  let signer = signers.get(secret);
  if (!signer) {
    if (signers.size >= 10_000) signers.clear();
    signer = new Webhook(secret);
    signers.set(secret, signer);
  }
  return signer;
}
