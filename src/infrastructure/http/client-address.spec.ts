import Fastify from 'fastify';
import { trustProxyOption } from '../../config/app-config';
import { clientAddressOf } from './client-address';

/** The address a request from `peer` with `forwarded` (X-Forwarded-For) counts as, behind TRUST_PROXY=`trust`. */
async function addressOf(trust: string, forwarded: string | undefined, peer = '127.0.0.1'): Promise<string> {
  const fastify = Fastify({ trustProxy: trustProxyOption(trust) });
  fastify.get('/', async (request) => ({ address: clientAddressOf(request) }));
  try {
    const res = await fastify.inject({ url: '/', remoteAddress: peer, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } });
    return res.json().address;
  } finally {
    await fastify.close();
  }
}

describe('clientAddressOf', () => {
  it('is the peer when no proxy is trusted, whatever X-Forwarded-For says', async () => {
    expect(await addressOf('false', '198.51.100.7')).toBe('127.0.0.1');
    expect(await addressOf('false', undefined, '203.0.113.9')).toBe('203.0.113.9');
  });

  it('is the first address a trusted proxy passed on, from the peer inward', async () => {
    expect(await addressOf('loopback', '198.51.100.7')).toBe('198.51.100.7');
    // The entry the proxy added is the client; what the client wrote before it is not believed.
    expect(await addressOf('loopback', '192.0.2.1, 198.51.100.7')).toBe('198.51.100.7');
    expect(await addressOf('loopback', '198.51.100.7', '10.0.0.7')).toBe('10.0.0.7');
  });

  it('never takes an entry that is not an address: the hop that passed it on is the client', async () => {
    expect(await addressOf('loopback', 'garbage-not-an-ip')).toBe('127.0.0.1');
    expect(await addressOf('loopback', '198.51.100.7, garbage-not-an-ip')).toBe('127.0.0.1');
    expect(await addressOf('loopback', '')).toBe('127.0.0.1');
    expect(await addressOf('loopback', '999.1.1.1')).toBe('127.0.0.1');
    expect(await addressOf('loopback', '01.2.3.4')).toBe('127.0.0.1');
    // A text entry left of the client's address is never reached.
    expect(await addressOf('loopback', 'garbage, 198.51.100.7')).toBe('198.51.100.7');
    // Two trusted hops where there is one: the entry the client wrote is reached, and refused.
    expect(await addressOf('2', '203.0.113.5, garbage')).toBe('127.0.0.1');
    expect(await addressOf('2', 'garbage, 203.0.113.5')).toBe('203.0.113.5');
  });

  it('writes one client one way: IPv4-mapped IPv6 as IPv4, IPv6 compressed and lower case, a port dropped', async () => {
    expect(await addressOf('loopback', '::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(await addressOf('loopback', '2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(await addressOf('loopback', '198.51.100.7:4711')).toBe('198.51.100.7');
    expect(await addressOf('loopback', '[2001:db8::1]:443')).toBe('2001:db8::1');
    expect(await addressOf('false', undefined, '::ffff:127.0.0.1')).toBe('127.0.0.1');
  });
});
