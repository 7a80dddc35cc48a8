import { loadConfig, trustProxyOption } from '../../src/config/app-config';
import { ConfigError } from '../../src/config/app-config';
import { ManualClock } from '../../src/domain/shared/clock';
import { MAX_TRACKED } from '../../src/modules/ops-auth/ops-sign-in-throttle';
import { describeWithPostgres } from '../setup/test-env';
import { startTestService, TestResponse, TestService } from '../utils/test-app';

const basicOf = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const RIGHT = basicOf('ops', 'ops-password-for-tests');
const WRONG = basicOf('ops', 'not-the-password');
const T0 = '2026-07-02T15:00:00Z';

/** The device token a successful sign-in hands out, and the header it is sent back in. */
const DEVICE_HEADER = 'ops-device-token';

/**
 * Failed ops sign-ins are limited per client address: three wrong tries in a minute here
 * (OPS_SIGN_IN_MAX_FAILURES=3, OPS_SIGN_IN_LOCKOUT_SECONDS=60), on the ops API and the
 * dashboard's sign-in check alike. The client address comes from X-Forwarded-For because the
 * test talks over loopback and names loopback a trusted proxy (TRUST_PROXY=loopback).
 */
describeWithPostgres('limit on failed ops sign-ins', () => {
  let service: TestService;
  const clock = new ManualClock(T0);
  let client = 0;
  /** A fresh client address for each test, so the tests do not share failures. */
  let address: string;

  beforeAll(async () => {
    service = await startTestService({
      clock,
      env: { OPS_SIGN_IN_MAX_FAILURES: '3', OPS_SIGN_IN_LOCKOUT_SECONDS: '60', TRUST_PROXY: 'loopback' },
    });
  });
  afterAll(() => service?.close());
  beforeEach(() => {
    clock.set(T0);
    address = `198.51.100.${++client}`;
  });

  const overview = (authorization: string | undefined, from = address): Promise<TestResponse> =>
    service.request('/ops/api/overview', { headers: { 'x-forwarded-for': from, ...(authorization && { authorization }) } });
  const signIn = (authorization: string, from = address): Promise<TestResponse> =>
    service.request('/ops/session', { method: 'POST', headers: { 'x-forwarded-for': from, authorization } });

  const expectLockedOut = (res: TestResponse, seconds: number) => {
    expect({ status: res.status, body: res.body }).toEqual({
      status: 429,
      body: {
        code: 429,
        name: 'rate_limit_error',
        service_code: 'too_many_failed_sign_ins',
        message: `Too many failed ops sign-ins from this address; try again in ${seconds} s`,
        retry_after: seconds,
      },
    });
    expect(res.headers.get('retry-after')).toBe(String(seconds));
  };

  it('refuses an address after its wrong tries, the right password included, until the window ends', async () => {
    for (let i = 0; i < 3; i++) expect((await overview(WRONG)).status).toBe(401);
    clock.set('2026-07-02T15:00:20Z');
    expectLockedOut(await overview(WRONG), 40);
    expectLockedOut(await overview(RIGHT), 40);
    // Another address is not affected.
    expect((await overview(RIGHT, '203.0.113.9')).status).toBe(200);
    clock.set('2026-07-02T15:01:00Z');
    expect((await overview(RIGHT)).status).toBe(200);
  });

  it('a success clears the count: wrong tries before it do not add up with later ones', async () => {
    for (let i = 0; i < 2; i++) expect((await overview(WRONG)).status).toBe(401);
    expect((await overview(RIGHT)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await overview(WRONG)).status).toBe(401);
    expect((await overview(RIGHT)).status).toBe(200);
  });

  it('does not count a request without credentials (nothing was guessed)', async () => {
    for (let i = 0; i < 5; i++) expect((await overview(undefined)).status).toBe(401);
    expect((await overview(RIGHT)).status).toBe(200);
  });

  it('counts the dashboard sign-in check and the ops API together', async () => {
    expect((await signIn(WRONG)).body).toEqual({ signed_in: false, message: 'The username or password is not right.' });
    expect((await overview(WRONG)).status).toBe(401);
    expect((await signIn(WRONG)).body.signed_in).toBe(false);
    expectLockedOut(await signIn(RIGHT), 60);
    expectLockedOut(await overview(RIGHT), 60);
  });

  it('believes no X-Forwarded-For by default, not even from loopback', async () => {
    const untrusted = await startTestService({ clock, env: { OPS_SIGN_IN_MAX_FAILURES: '2' } });
    try {
      // Each try claims a new address; the peer's own address is what is counted.
      for (let i = 0; i < 2; i++) {
        const res = await untrusted.request('/ops/api/overview', { headers: { 'x-forwarded-for': `192.0.2.${i}`, authorization: WRONG } });
        expect(res.status).toBe(401);
      }
      const res = await untrusted.request('/ops/api/overview', { headers: { 'x-forwarded-for': '192.0.2.99', authorization: RIGHT } });
      expect(res.status).toBe(429);
    } finally {
      await untrusted.close();
    }
  });

  // Last in this suite: it locks the loopback address itself.
  it('counts a malformed X-Forwarded-For entry as the proxy that passed it on, never as an address of its own', async () => {
    // A day on, past the username's window that the tests above used up.
    clock.set('2026-07-03T15:00:00Z');
    for (const forwarded of ['garbage-not-an-ip', 'garbage-2', '198.51.100.250, garbage-3']) {
      expect((await overview(WRONG, forwarded)).status).toBe(401);
    }
    // All three were counted against the proxy (loopback), which is now refused...
    expectLockedOut(await overview(RIGHT, 'garbage-4'), 60);
    // ...while a well-formed address it passes on is counted as itself.
    expect((await overview(RIGHT, '198.51.100.251')).status).toBe(200);
  });
});

/**
 * The same limits at their defaults: 10 wrong tries per address and 30 per username in 15
 * minutes; X-Forwarded-For believed from loopback (TRUST_PROXY=loopback, as behind a proxy on
 * this host). Each test starts a day after the last, so their windows never overlap.
 */
describeWithPostgres('limit on failed ops sign-ins, default limits', () => {
  let service: TestService;
  const clock = new ManualClock(T0);
  let day = 0;
  let client = 0;
  /** A fresh client address per call site. */
  const fresh = () => `198.51.${100 + (client >> 8)}.${++client & 255}`;

  beforeAll(async () => {
    service = await startTestService({ clock, env: { TRUST_PROXY: 'loopback' } });
  });
  afterAll(() => service?.close());
  beforeEach(() => clock.set(new Date(Date.parse(T0) + ++day * 86_400_000)));

  const overview = (authorization: string, from: string, device?: string): Promise<TestResponse> =>
    service.request('/ops/api/overview', { headers: { 'x-forwarded-for': from, authorization, ...(device && { [DEVICE_HEADER]: device }) } });
  /** A request from a peer on the private network rather than over loopback. */
  const fromPeer = async (peer: string, authorization: string, forwardedFor: string) => {
    const res = await service.app.inject({
      method: 'GET',
      url: '/ops/api/overview',
      remoteAddress: peer,
      headers: { 'x-forwarded-for': forwardedFor, authorization },
    });
    return { status: res.statusCode, body: res.json() };
  };
  const lockedFor = (scope: 'from this address' | 'for this username' | 'from this device', seconds: number) => ({
    status: 429,
    body: expect.objectContaining({
      service_code: 'too_many_failed_sign_ins',
      message: `Too many failed ops sign-ins ${scope}; try again in ${seconds} s`,
    }),
  });

  it('counts a private-network peer by its own address, whatever X-Forwarded-For it sends', async () => {
    for (let i = 0; i < 10; i++) expect((await fromPeer('10.0.0.7', WRONG, `192.0.2.${i}`)).status).toBe(401);
    expect(await fromPeer('10.0.0.7', RIGHT, '192.0.2.99')).toEqual(lockedFor('from this address', 900));
    // The addresses it claimed are not locked out, and neither is another peer.
    expect((await overview(RIGHT, '192.0.2.0')).status).toBe(200);
    expect((await fromPeer('10.0.0.8', RIGHT, '192.0.2.99')).status).toBe(200);
  });

  it('refuses a username after 30 wrong passwords from changing addresses, and a new address with the right one', async () => {
    const known = fresh();
    const first = await overview(RIGHT, known);
    expect(first.status).toBe(200);
    const device = first.headers.get(DEVICE_HEADER)!;
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await overview(WRONG, fresh())).status);
    expect(statuses).toEqual([...Array(30).fill(401), ...Array(10).fill(429)]);
    const res = await overview(RIGHT, fresh());
    expect({ status: res.status, body: res.body }).toEqual(lockedFor('for this username', 900));
    const signIn = await service.request('/ops/session', { method: 'POST', headers: { 'x-forwarded-for': fresh(), authorization: RIGHT } });
    expect(signIn.status).toBe(429);
    // With the device token of their earlier sign-in the ops user still can, from anywhere;
    // the address they signed in from is not enough. Another username is not locked.
    expect((await overview(RIGHT, fresh(), device)).status).toBe(200);
    expect(await overview(RIGHT, known).then(({ status, body }) => ({ status, body }))).toEqual(lockedFor('for this username', 900));
    expect((await overview(basicOf('someone-else', 'x'), fresh())).status).toBe(401);
    clock.advance(900_000);
    expect((await overview(RIGHT, fresh())).status).toBe(200);
  });

  it('counts a made-up username like the real one, so a 429 tells nothing about which is right', async () => {
    const made = basicOf('not-the-user', 'not-the-password');
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await overview(made, fresh())).status);
    expect(statuses).toEqual([...Array(30).fill(401), 429]);
  });

  it('never lets one address lock the username by itself, window after window', async () => {
    const address = fresh();
    for (let window = 0; window < 4; window++) {
      for (let i = 0; i < 10; i++) expect((await overview(WRONG, address)).status).toBe(401);
      expect((await overview(WRONG, address)).status).toBe(429);
      clock.advance(900_000);
    }
    expect((await overview(RIGHT, fresh())).status).toBe(200);
  });

  it('a success does not clear the username count', async () => {
    for (let i = 0; i < 29; i++) expect((await overview(WRONG, fresh())).status).toBe(401);
    expect((await overview(RIGHT, fresh())).status).toBe(200);
    expect((await overview(WRONG, fresh())).status).toBe(401);
    expect((await overview(RIGHT, fresh())).status).toBe(429);
  });

  it('gives an address where the ops user signed in no guesses past the username limit, however many addresses come between', async () => {
    // The ops user signs in from an address an attacker shares (an office NAT, or one named in X-Forwarded-For).
    const shared = fresh();
    expect((await overview(RIGHT, shared)).status).toBe(200);
    let guesses = 0;
    const guess = async (from: string) => {
      const { status } = await overview(WRONG, from);
      expect([401, 429]).toContain(status);
      if (status === 401) guesses++;
    };
    for (let i = 0; i < 10; i++) await guess(shared);
    for (let i = 0; i < 20; i++) await guess(fresh());
    expect(guesses).toBe(30);
    // More failing addresses than the address table holds (made-up usernames, so they are counted):
    // the shared address's window is forgotten...
    for (let i = 0; i < MAX_TRACKED + 10; i++) {
      const res = await service.app.inject({
        method: 'GET',
        url: '/ops/api/overview',
        headers: { 'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, authorization: basicOf(`made-up-${i}`, 'x') },
      });
      expect([401, 429]).toContain(res.statusCode);
    }
    // ...which gives it no further guess at the username it used up.
    for (let i = 0; i < 10; i++) await guess(shared);
    expect(guesses).toBe(30);
  });

  it('lets a device that signed in through a locked username, counting its own failures, and no one without its token', async () => {
    const signIn = await service.request('/ops/session', { method: 'POST', headers: { 'x-forwarded-for': fresh(), authorization: RIGHT } });
    expect(signIn.body).toEqual({ signed_in: true, username: 'ops' });
    const device = signIn.headers.get(DEVICE_HEADER)!;
    expect(device).toMatch(/^[A-Za-z0-9_.-]{40,200}$/);
    for (let i = 0; i < 30; i++) expect((await overview(WRONG, fresh())).status).toBe(401);
    expect(await overview(RIGHT, fresh()).then(({ status, body }) => ({ status, body }))).toEqual(lockedFor('for this username', 900));
    // The token works from any address, on the ops API and the sign-in check alike, and is renewed.
    const through = await overview(RIGHT, fresh(), device);
    expect(through.status).toBe(200);
    expect(through.headers.get(DEVICE_HEADER)).toMatch(/^[A-Za-z0-9_.-]{40,200}$/);
    const check = await service.request('/ops/session', {
      method: 'POST',
      headers: { 'x-forwarded-for': fresh(), authorization: RIGHT, [DEVICE_HEADER]: device },
    });
    expect(check.body).toEqual({ signed_in: true, username: 'ops' });
    // A token changed by one character, or made up, is no token.
    const last = device.slice(-1) === 'A' ? 'B' : 'A';
    for (const forged of [`${device.slice(0, -1)}${last}`, 'made-up-token', `x${device}`]) {
      expect((await overview(RIGHT, fresh(), forged)).status).toBe(429);
    }
    // Wrong passwords with the token count against the token: ten, from as many addresses.
    for (let i = 0; i < 10; i++) expect((await overview(WRONG, fresh(), device)).status).toBe(401);
    const spent = await overview(RIGHT, fresh(), device);
    expect({ status: spent.status, body: spent.body }).toEqual(lockedFor('from this device', 900));
  });
});

describe('TRUST_PROXY and the sign-in and client-secret limits as settings', () => {
  const problemsOf = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env, {}, { tool: true });
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  };

  it('trusts no proxy by default; takes true, false, hop counts and lists of addresses, ranges and names', () => {
    expect(loadConfig({}, {}, { tool: true }).TRUST_PROXY).toBe('false');
    expect(trustProxyOption(loadConfig({}, {}, { tool: true }).TRUST_PROXY)).toBe(false);
    expect(trustProxyOption('loopback')).toBe('loopback');
    expect(trustProxyOption('true')).toBe(true);
    expect(trustProxyOption('false')).toBe(false);
    expect(trustProxyOption('2')).toBe(2);
    for (const value of ['true', 'false', '0', '10', '10.0.0.1', '10.0.0.0/8, 192.168.1.1', 'fd00::/8,loopback', '::1']) {
      expect({ value, problems: problemsOf({ TRUST_PROXY: value }) }).toEqual({ value, problems: [] });
    }
  });

  it.each(['yes', '11', '10.0.0.0/33', '10.0.0.1/8/2', 'proxy.example', 'fd00::/129', ''])('refuses TRUST_PROXY=%j', (value) => {
    expect(problemsOf({ TRUST_PROXY: value })).toEqual([expect.stringContaining('TRUST_PROXY must be true, false, a number of proxy hops')]);
  });

  it.each([
    ['OPS_SIGN_IN_MAX_FAILURES', '0', 'OPS_SIGN_IN_MAX_FAILURES must be a whole number from 1 to 1000'],
    ['OPS_SIGN_IN_MAX_FAILURES', 'ten', 'OPS_SIGN_IN_MAX_FAILURES must be a whole number from 1 to 1000'],
    ['OPS_SIGN_IN_LOCKOUT_SECONDS', '86401', 'OPS_SIGN_IN_LOCKOUT_SECONDS must be a whole number of seconds from 1 to 86400'],
    ['OPS_DEVICE_SIGNING_KEY', 'too-short', 'OPS_DEVICE_SIGNING_KEY must be at least 32 characters'],
    ['CLIENT_SECRET_MAX_FAILURES', '0', 'CLIENT_SECRET_MAX_FAILURES must be a whole number from 1 to 1000'],
    ['CLIENT_SECRET_LOCKOUT_SECONDS', '86401', 'CLIENT_SECRET_LOCKOUT_SECONDS must be a whole number of seconds from 1 to 86400'],
  ])('refuses %s=%s', (name, value, message) => {
    expect(problemsOf({ [name]: value })).toEqual([message]);
  });
});
