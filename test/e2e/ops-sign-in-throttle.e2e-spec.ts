import { loadConfig, trustProxyOption } from '../../src/config/app-config';
import { ConfigError } from '../../src/config/app-config';
import { ManualClock } from '../../src/domain/shared/clock';
import { describeWithPostgres } from '../setup/test-env';
import { startTestService, TestResponse, TestService } from '../utils/test-app';

const basicOf = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const RIGHT = basicOf('ops', 'ops-password-for-tests');
const WRONG = basicOf('ops', 'not-the-password');
const T0 = '2026-07-02T15:00:00Z';

/**
 * Failed ops sign-ins are limited per client address: three wrong tries in a minute here
 * (OPS_SIGN_IN_MAX_FAILURES=3, OPS_SIGN_IN_LOCKOUT_SECONDS=60), on the ops API and the
 * dashboard's sign-in check alike. The client address comes from X-Forwarded-For only because
 * the test talks over loopback, a trusted proxy by default (TRUST_PROXY).
 */
describeWithPostgres('limit on failed ops sign-ins', () => {
  let service: TestService;
  const clock = new ManualClock(T0);
  let client = 0;
  /** A fresh client address for each test, so the tests do not share failures. */
  let address: string;

  beforeAll(async () => {
    service = await startTestService({ clock, env: { OPS_SIGN_IN_MAX_FAILURES: '3', OPS_SIGN_IN_LOCKOUT_SECONDS: '60' } });
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

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const untrusted = await startTestService({ clock, env: { OPS_SIGN_IN_MAX_FAILURES: '2', TRUST_PROXY: 'false' } });
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
});

/**
 * The same limits with every setting at its default: 10 wrong tries per address and 30 per
 * username in 15 minutes, and X-Forwarded-For believed only from loopback. Each test starts a
 * day after the last, so their windows never overlap.
 */
describeWithPostgres('limit on failed ops sign-ins, default settings', () => {
  let service: TestService;
  const clock = new ManualClock(T0);
  let day = 0;
  let client = 0;
  /** A fresh client address per call site. */
  const fresh = () => `198.51.${100 + (client >> 8)}.${++client & 255}`;

  beforeAll(async () => {
    service = await startTestService({ clock });
  });
  afterAll(() => service?.close());
  beforeEach(() => clock.set(new Date(Date.parse(T0) + ++day * 86_400_000)));

  const overview = (authorization: string, from: string): Promise<TestResponse> =>
    service.request('/ops/api/overview', { headers: { 'x-forwarded-for': from, authorization } });
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
  const lockedFor = (scope: 'from this address' | 'for this username', seconds: number) => ({
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
    expect((await overview(RIGHT, known)).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await overview(WRONG, fresh())).status);
    expect(statuses).toEqual([...Array(30).fill(401), ...Array(10).fill(429)]);
    const res = await overview(RIGHT, fresh());
    expect({ status: res.status, body: res.body }).toEqual(lockedFor('for this username', 900));
    const signIn = await service.request('/ops/session', { method: 'POST', headers: { 'x-forwarded-for': fresh(), authorization: RIGHT } });
    expect(signIn.status).toBe(429);
    // Where the ops user already signed in, they still can; another username is not locked.
    expect((await overview(RIGHT, known)).status).toBe(200);
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
});

describe('TRUST_PROXY and the sign-in limits as settings', () => {
  const problemsOf = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env, {}, { tool: true });
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  };

  it('takes true, false, hop counts and lists of addresses, ranges and names', () => {
    expect(loadConfig({}, {}, { tool: true }).TRUST_PROXY).toBe('loopback');
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
  ])('refuses %s=%s', (name, value, message) => {
    expect(problemsOf({ [name]: value })).toEqual([message]);
  });
});
