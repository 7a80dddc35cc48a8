import { isIP } from 'node:net';
import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';

/** What a request counts as when its peer's address is gone (the socket closed early). */
export const UNKNOWN_CLIENT_ADDRESS = 'unknown';

/**
 * The client's address, as the limits on failed sign-ins and client secrets count it.
 *
 * Fastify walks X-Forwarded-For from the peer inward for as long as TRUST_PROXY trusts the hop
 * (`request.ips`: the peer first, then each entry a trusted hop passed on). Here the walk also
 * stops at the first entry that is not a well-formed IP address (an optional port is allowed),
 * and the hop that passed it on is the client: text a client wrote into the header never becomes
 * an address of its own, so it cannot pick a new one per request. Addresses are normalized
 * (IPv4-mapped IPv6 as IPv4, IPv6 compressed), so one client is one key however it is written.
 */
export function clientAddressOf(request: FastifyRequest): string {
  // `ips` exists only when a proxy is trusted; `ip` is then the last of them, else the peer's.
  const chain: readonly (string | undefined)[] = request.ips ?? [request.socket?.remoteAddress];
  let client: string | undefined;
  for (const entry of chain) {
    const address = wellFormed(entry);
    if (address === undefined) break;
    client = address;
  }
  return client ?? UNKNOWN_CLIENT_ADDRESS;
}

/** `@ClientAddress() address: string` in a handler: clientAddressOf its request. */
export const ClientAddress = createParamDecorator((_: unknown, context: ExecutionContext): string =>
  clientAddressOf(context.switchToHttp().getRequest<FastifyRequest>()),
);

const WITH_PORT = /^(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([0-9A-Fa-f:.]+)\]):\d{1,5}$/;

/** The address in its normal form, or undefined when `entry` is not one (a port, as some proxies add, is dropped). */
function wellFormed(entry: string | undefined): string | undefined {
  if (entry === undefined) return undefined;
  let text = entry.trim();
  if (isIP(text) === 0) {
    const withPort = WITH_PORT.exec(text);
    text = withPort?.[1] ?? withPort?.[2] ?? '';
    if (isIP(text) === 0) return undefined;
  }
  // Zone ids (fe80::1%eth0) are kept as written: they name a link of this host, not a client.
  if (text.includes('%')) return text;
  try {
    return ipaddr.process(text).toString();
  } catch {
    return undefined;
  }
}
