import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { WebhookAddressPolicy, WebhookAddressVerdict } from '../../domain/webhooks/webhook-url';

/**
 * Where a webhook may go: the one rule for an IP address, applied to the IP literal of a URL
 * when it is saved (`checkWebhookUrl`) and to every address the sender connects to
 * (`webhook-http.ts`). Two rules drifted before: the saved-URL check kept its own range table,
 * which knew no IPv6 form that carries an IPv4 address, so `https://[64:ff9b::a9fe:a9fe]/` was
 * saved and then never sent. ipaddr.js names the special ranges (RFC 6890 and its successors).
 *
 * Only ordinary unicast passes, plus loopback (`allowLoopback`) and the private ranges
 * (`allowPrivate`). Never the unspecified address, a cloud metadata service, a reserved or
 * special-purpose range, nor an IPv6 range that reaches IPv4 by translation (6to4, Teredo,
 * IPv4-translated, IPv4-compatible, local-use NAT64). IPv4-mapped addresses and the well-known
 * NAT64 prefix 64:ff9b::/96 are judged as the IPv4 address they carry: an IPv6-only host behind
 * DNS64 sees every IPv4-only receiver there.
 */
export function judgeWebhookAddress(ip: string, policy: WebhookAddressPolicy): WebhookAddressVerdict {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = parsed(ip);
  } catch {
    return { allowed: false, loopback: false, carried: null, what: 'not an IP address' };
  }
  if (address instanceof ipaddr.IPv6) {
    if (address.isIPv4MappedAddress()) address = address.toIPv4Address();
    else if (address.match(NAT64)) address = ipaddr.fromByteArray(address.toByteArray().slice(12));
  }
  const carried = carriedOf(ip, address);
  const range = rangeOf(address);
  const loopback = range === 'loopback';
  if (range === 'unicast') return { allowed: true, loopback };
  if (loopback && policy.allowLoopback) return { allowed: true, loopback };
  if (PRIVATE_RANGES.has(range) && policy.allowPrivate) return { allowed: true, loopback };
  return { allowed: false, loopback, carried, what: describeRange(range) };
}

/** Why the sender will not connect to `ip` (`address … is …`), or null when it may. */
export function addressRefusal(ip: string, policy: WebhookAddressPolicy): string | null {
  const verdict = judgeWebhookAddress(ip, policy);
  if (verdict.allowed) return null;
  return `address ${ip}${verdict.carried ? ` (${verdict.carried})` : ''} is ${verdict.what}`;
}

/** Ranges WEBHOOK_ALLOW_PRIVATE_ADDRESSES opens; the others stay closed whatever the setting. */
const PRIVATE_RANGES: ReadonlySet<string> = new Set(['private', 'uniqueLocal', 'linkLocal', 'carrierGradeNat']);

const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * ipaddr.js reads the IPv4-compatible `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d` (2.5.0),
 * which would judge a deprecated, reserved address as the IPv4 one it names; so an IPv6 address
 * (checked by Node first) with a trailing dotted quad is spelt in hex before parsing.
 */
function parsed(ip: string): ipaddr.IPv4 | ipaddr.IPv6 {
  if (isIP(ip) !== 6) return ipaddr.parse(ip);
  const hex = ip.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    [((+a << 8) | +b).toString(16), ((+c << 8) | +d).toString(16)].join(':'),
  );
  return ipaddr.parse(hex);
}

/**
 * Instance-metadata services of the clouds (AWS, GCP, Azure, ECS, EKS on 169.254.0.0/16; AWS
 * IPv6 on fd00:ec2::/32; Alibaba at 100.100.100.200). Refused even when private addresses are
 * allowed: no on-premises receiver lives there, and they hand out credentials.
 */
const CLOUD_METADATA = ['169.254.0.0/16', 'fd00:ec2::/32', '100.100.100.200/32'].map((cidr) => ipaddr.parseCIDR(cidr));

/** ipaddr.js's range name, or `cloudMetadata`; `unicast` for an ordinary address. */
function rangeOf(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  for (const cidr of CLOUD_METADATA) {
    if (address.kind() === cidr[0].kind() && address.match(cidr)) return 'cloudMetadata';
  }
  const range = address.range();
  // ::/8 is reserved by the IETF; ipaddr.js calls most of it unicast (IPv4-compatible ::a.b.c.d).
  if (range === 'unicast' && address instanceof ipaddr.IPv6 && address.parts[0] < 0x100) return 'reserved';
  return range;
}

/** The IPv4 address judged in place of an IPv6 one, to name it in messages; null when none. */
function carriedOf(ip: string, judged: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  return judged.kind() === 'ipv4' && !ipaddr.IPv4.isValid(ip) ? judged.toString() : null;
}

const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified address',
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local address',
  carrierGradeNat: 'a carrier-grade NAT address',
  cloudMetadata: 'a cloud metadata address',
  rfc6052: 'a NAT64 address',
  rfc6145: 'an IPv4-translated address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
  discard: 'a discard-only address',
  deprecatedSiteLocal: 'a site-local address',
};

/** `a private address`, `a 6to4 address`, `a special-purpose address (benchmarking)`… */
function describeRange(range: string): string {
  return RANGE_WORDS[range] ?? (['broadcast', 'multicast', 'reserved'].includes(range) ? `a ${range} address` : `a special-purpose address (${range})`);
}
