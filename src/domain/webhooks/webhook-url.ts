import { BlockList, isIP } from 'node:net';

/**
 * The rules a webhook endpoint's URL passes when it is saved. This is the creation-time check
 * that gives a clear answer early; the sender checks every address again at connect time, which
 * is the real guard (a DNS name may resolve to a private address, or change to one later).
 */

export const MAX_WEBHOOK_URL_LENGTH = 2000;

export interface WebhookUrlOptions {
  /** Sandbox applications may send to a receiver on loopback, over http too. */
  sandbox: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_ADDRESSES, for on-premises receivers; off unless set. */
  allowPrivate?: boolean;
}

export type WebhookUrlCheck = { ok: true; url: string } | { ok: false; message: string };

/** Address ranges named as ipaddr.js names them, so the creation check and the sender agree. */
export type SpecialAddressRange =
  | 'unspecified'
  | 'broadcast'
  | 'multicast'
  | 'linkLocal'
  | 'loopback'
  | 'carrierGradeNat'
  | 'private'
  | 'uniqueLocal'
  | 'reserved';

/** Ranges WEBHOOK_ALLOW_PRIVATE_ADDRESSES opens; the others stay closed whatever the setting. */
export const PRIVATE_RANGES: ReadonlySet<string> = new Set(['private', 'uniqueLocal', 'linkLocal', 'carrierGradeNat']);

const RANGE_WORDS: Record<string, string> = {
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'carrier-grade NAT',
  ipv4Mapped: 'IPv4-mapped',
};

/** The range in words for messages: `link-local`, `carrier-grade NAT`, `private`… */
export function describeAddressRange(range: string): string {
  return RANGE_WORDS[range] ?? range;
}

// Order matters only for the name in a message: broadcast before the reserved 240.0.0.0/4.
const RANGES: [SpecialAddressRange, string, number, 'ipv4' | 'ipv6'][] = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['broadcast', '255.255.255.255', 32, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['linkLocal', '169.254.0.0', 16, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['carrierGradeNat', '100.64.0.0', 10, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['reserved', '192.88.99.0', 24, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['linkLocal', 'fe80::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
  ['uniqueLocal', 'fc00::', 7, 'ipv6'],
  ['reserved', '2001::', 23, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['reserved', '3fff::', 20, 'ipv6'],
];

// One list per range. BlockList matches an IPv4 rule against an IPv4-mapped IPv6 address
// (::ffff:127.0.0.1), so a mapped address gets the range of the IPv4 address it stands for.
const RANGE_LISTS = RANGES.map(([range, network, prefix, family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { range, list };
});

/**
 * Instance-metadata services of the clouds (AWS, GCP, Azure, ECS, EKS on 169.254.0.0/16; AWS
 * IPv6 on fd00:ec2::/32; Alibaba at 100.100.100.200). Refused even when private addresses are
 * allowed: no on-premises receiver lives there, and they hand out credentials.
 */
const CLOUD_METADATA = new BlockList();
CLOUD_METADATA.addSubnet('169.254.0.0', 16, 'ipv4');
CLOUD_METADATA.addSubnet('fd00:ec2::', 32, 'ipv6');
CLOUD_METADATA.addAddress('100.100.100.200', 'ipv4');

/** The special range of an IP address (IPv4-mapped IPv6 included), or null for an ordinary one. */
export function specialRangeOf(ip: string): SpecialAddressRange | null {
  const family = ipFamily(ip);
  if (!family) return null;
  return RANGE_LISTS.find(({ list }) => list.check(ip, family))?.range ?? null;
}

export function isCloudMetadataAddress(ip: string): boolean {
  const family = ipFamily(ip);
  return family !== null && CLOUD_METADATA.check(ip, family);
}

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
  const loopback = isLoopbackHost(host);
  if (loopback && !options.sandbox) {
    return refused(`url host ${host} is a loopback address; only sandbox applications may use one`);
  }
  if (!loopback) {
    const ip = unbracketed(host);
    if (isCloudMetadataAddress(ip)) {
      return refused(`url host ${host} is a cloud metadata address; webhooks go to public addresses`);
    }
    const range = specialRangeOf(ip);
    if (range && !(options.allowPrivate && PRIVATE_RANGES.has(range))) {
      const article = range === 'unspecified' ? 'an' : 'a';
      const what = `${article} ${describeAddressRange(range)} address`;
      return refused(`url host ${host} is ${what}; webhooks go to public addresses`);
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

/** `localhost` and its subdomains (RFC 6761), trailing dot or not, or a loopback IP literal. */
function isLoopbackHost(host: string): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  return specialRangeOf(unbracketed(host)) === 'loopback';
}

/** The URL form of an IPv6 host (`[::1]`) without its brackets. */
function unbracketed(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function ipFamily(ip: string): 'ipv4' | 'ipv6' | null {
  const version = isIP(ip);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : null;
}
