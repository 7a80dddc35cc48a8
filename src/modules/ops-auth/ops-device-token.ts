import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** The header a successful ops sign-in answers with its device token, and that carries it back. */
export const OPS_DEVICE_HEADER = 'ops-device-token';
/** How long a device token proves an earlier sign-in; every sign-in with it renews it. */
export const DEVICE_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;
/** Tokens dated this far ahead of this instance's clock are still taken (clocks of instances differ a little). */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

const TOKEN = /^([A-Za-z0-9_-]{22})\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})$/;

/**
 * Device tokens: proof that a client signed in as an ops username before, which a guesser
 * cannot make or copy (unlike its address, which it can share or, through a trusted proxy,
 * name). A token is `<device id>.<issued at, ms, base 36>.<HMAC-SHA256 of both and the
 * username's digest>` under OPS_DEVICE_SIGNING_KEY, so instances sharing the key accept each
 * other's tokens without shared state; unset, the key is random per process, and a restart
 * only makes devices sign in once more before they count as known.
 */
export class OpsDeviceTokens {
  private constructor(private readonly key: Buffer) {}

  static fromSecret(secret: string | undefined): OpsDeviceTokens {
    // Derived under its own label, so the key serves this purpose only.
    const key = secret === undefined ? randomBytes(32) : createHmac('sha256', secret).update('ops-device-token/v1').digest();
    return new OpsDeviceTokens(key);
  }

  /** A token for `username`; the same device id when renewing a device's token, else a new one. */
  issue(username: string, now: number, deviceId: string = randomBytes(16).toString('base64url')): string {
    const body = `${deviceId}.${now.toString(36)}`;
    return `${body}.${this.mac(body, username)}`;
  }

  /** The device id of a token issued here to `username` within DEVICE_TOKEN_TTL_MS; undefined for anything else. */
  deviceOf(token: string | undefined, username: string, now: number): string | undefined {
    const match = TOKEN.exec(token ?? '');
    if (!match) return undefined;
    const [, deviceId, issued, mac] = match;
    // Compared as text, not decoded: the last base64url character has bits that decoding drops.
    const expected = Buffer.from(this.mac(`${deviceId}.${issued}`, username));
    if (!timingSafeEqual(Buffer.from(mac), expected)) return undefined;
    const issuedAt = parseInt(issued, 36);
    return now - issuedAt < DEVICE_TOKEN_TTL_MS && issuedAt - now < CLOCK_SKEW_MS ? deviceId : undefined;
  }

  private mac(body: string, username: string): string {
    const user = createHash('sha256').update(username, 'utf8').digest('base64url');
    return createHmac('sha256', this.key).update(`${body}.${user}`).digest('base64url');
  }
}

/** The device token a request carries (the header's first value), if any. */
export function deviceTokenOf(request: FastifyRequest): string | undefined {
  const value = request.headers[OPS_DEVICE_HEADER];
  return Array.isArray(value) ? value[0] : value;
}
