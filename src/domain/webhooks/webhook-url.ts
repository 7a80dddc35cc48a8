import { isIP } from 'node:net';

/**
 * The rules a webhook endpoint's URL passes when it is saved. This is the creation-time check
 * that gives a clear answer early; the sender checks every address again at connect time, which
 * is the real guard (a DNS name may resolve to a private address, or change to one later). An
 * IP literal is judged by the same address rule the sender applies (`WebhookAddressRule`).
 */

export const MAX_WEBHOOK_URL_LENGTH = 2000;

export interface WebhookUrlOptions {
  /** Sandbox applications may send to a receiver on loopback, over http too. */
  sandbox: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_ADDRESSES, for on-premises receivers; off unless set. */
  allowPrivate?: boolean;
  /** Judges an IP literal host. */
  addressRule: WebhookAddressRule;
}

export type WebhookUrlCheck = { ok: true; url: string } | { ok: false; message: string };

/** What an IP address may be used for: sandbox applications may use loopback; on-premises installs private ranges. */
export interface WebhookAddressPolicy {
  allowLoopback: boolean;
  allowPrivate: boolean;
}

export type WebhookAddressVerdict =
  | { allowed: true; loopback: boolean }
  | {
      allowed: false;
      loopback: boolean;
      /** The IPv4 address judged in place of the IPv6 one that carries it (::ffff:a.b.c.d, 64:ff9b::/96); else null. */
      carried: string | null;
      /** What it is, for messages: `a private address`, `a 6to4 address`… */
      what: string;
    };

/**
 * The address rule, a port: `judgeWebhookAddress` of infrastructure/webhooks/webhook-address.ts,
 * the rule the sender applies at connect time too, so a saved URL and a sent one can never be
 * judged apart (IP classification needs a library the domain does not import).
 */
export type WebhookAddressRule = (ip: string, policy: WebhookAddressPolicy) => WebhookAddressVerdict;

export function checkWebhookUrl(raw: string, options: WebhookUrlOptions): WebhookUrlCheck {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return refused(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refused('url must be an absolute URL (https://…)');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return refused(HTTPS_ONLY);
  if (url.username || url.password) return refused('url must not contain a username or password');
  // `href`, not `hash`: an empty fragment (`…/#`) has an empty hash but is still there.
  if (url.href.includes('#')) return refused('url must not contain a fragment (#…)');

  const host = url.hostname;
  const ip = unbracketed(host);
  let loopback: boolean;
  if (isIP(ip)) {
    const verdict = options.addressRule(ip, { allowLoopback: options.sandbox, allowPrivate: options.allowPrivate ?? false });
    loopback = verdict.loopback;
    if (!verdict.allowed) {
      if (loopback) return refused(`url host ${host} is a loopback address; only sandbox applications may use one`);
      const carried = verdict.carried ? ` (${verdict.carried})` : '';
      return refused(`url host ${host}${carried} is ${verdict.what}; webhooks go to public addresses`);
    }
  } else {
    loopback = isLocalhostName(host);
    if (loopback && !options.sandbox) {
      return refused(`url host ${host} is a loopback address; only sandbox applications may use one`);
    }
  }
  if (url.protocol === 'http:' && !(loopback && options.sandbox)) return refused(HTTPS_ONLY);

  // Normalizing can lengthen it (punycode, percent-encoding); the stored form is what counts.
  const normalized = url.toString();
  if (normalized.length > MAX_WEBHOOK_URL_LENGTH) {
    return refused(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters once normalized`);
  }
  return { ok: true, url: normalized };
}

const HTTPS_ONLY = 'url must use https (http is allowed only for a loopback receiver of a sandbox application)';

function refused(message: string): WebhookUrlCheck {
  return { ok: false, message };
}

/** `localhost` and its subdomains (RFC 6761), trailing dot or not. */
function isLocalhostName(host: string): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The URL form of an IPv6 host (`[::1]`) without its brackets. */
function unbracketed(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
