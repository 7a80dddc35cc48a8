import { randomUUID } from 'node:crypto';
import { ManualClock } from '../../src/domain/shared/clock';
import { SecretHasher } from '../../src/infrastructure/auth/secret-hasher';
import { ApplicationsService, IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { createApplication } from '../utils/connect';
import { json, startTestService, TestService } from '../utils/test-app';

const T0 = '2026-07-02T15:00:00Z';
const basicOf = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/**
 * Wrong client secrets are limited per client address and per client_id (here 3 per address
 * and 9 per client_id in a minute: CLIENT_SECRET_MAX_FAILURES=3, CLIENT_SECRET_LOCKOUT_SECONDS=60),
 * unknown client ids cost what known ones cost, and a secret already verified is not hashed
 * again. No time is measured here: the mechanism is (bench/client-secret-timing.ts measures).
 */
describeWithPostgres('wrong client secrets', () => {
  let service: TestService;
  const clock = new ManualClock(T0);
  let day = 0;
  let peer = 0;
  /** A client address not seen before. */
  const fresh = () => `10.9.${(++peer >> 8) & 255}.${peer & 255}`;
  let verify: jest.SpyInstance;

  beforeAll(async () => {
    service = await startTestService({ clock, env: { CLIENT_SECRET_MAX_FAILURES: '3', CLIENT_SECRET_LOCKOUT_SECONDS: '60' } });
    verify = jest.spyOn(service.app.get(SecretHasher), 'verify');
  });
  afterAll(() => service?.close());
  // A day apart, so no test meets another's windows.
  beforeEach(() => {
    clock.set(new Date(Date.parse(T0) + ++day * 86_400_000));
    verify.mockClear();
  });

  /** GET /webhooks/event-types needs nothing but the application's credentials; sent from the peer `from`. */
  const call = async (clientId: string, secret: string, from: string) => {
    const res = await service.app.inject({
      method: 'GET',
      url: '/webhooks/event-types',
      remoteAddress: from,
      headers: { authorization: basicOf(clientId, secret) },
    });
    return { status: res.statusCode, body: res.json(), retryAfter: res.headers['retry-after'] };
  };
  const refused = (scope: 'from this address' | 'for this client_id', seconds: number) => ({
    status: 429,
    body: {
      code: 429,
      name: 'rate_limit_error',
      service_code: 'too_many_failed_authentications',
      message: `Too many failed client authentications ${scope}; try again in ${seconds} s`,
      retry_after: seconds,
    },
    retryAfter: String(seconds),
  });

  it('refuses an address after its wrong secrets, with the API error object and Retry-After, until the window ends', async () => {
    const app = await createApplication(service);
    const other = await createApplication(service);
    const from = fresh();
    for (let i = 0; i < 3; i++) expect((await call(app.client_id, 'wrong-secret', from)).status).toBe(401);
    clock.advance(20_000);
    expect(await call(app.client_id, 'wrong-secret', from)).toEqual(refused('from this address', 40));
    // Any client id not verified before is refused from there, without hashing anything.
    verify.mockClear();
    expect(await call(other.client_id, other.client_secret, from)).toEqual(refused('from this address', 40));
    expect(await call(randomUUID(), 'x', from)).toEqual(refused('from this address', 40));
    expect(verify).not.toHaveBeenCalled();
    // Another address is not affected; the window's end frees this one.
    expect((await call(app.client_id, app.client_secret, fresh())).status).toBe(200);
    clock.advance(40_000);
    expect((await call(other.client_id, other.client_secret, from)).status).toBe(200);
  });

  it('refuses a client id after wrong secrets from many addresses, except a secret already verified', async () => {
    const app = await createApplication(service);
    const cold = await createApplication(service);
    expect((await call(app.client_id, app.client_secret, fresh())).status).toBe(200);
    for (const target of [app, cold]) {
      for (let i = 0; i < 9; i++) expect((await call(target.client_id, 'wrong-secret', fresh())).status).toBe(401);
      expect(await call(target.client_id, 'wrong-secret', fresh())).toEqual(refused('for this client_id', 60));
    }
    // The application that already proved its secret goes on, from anywhere...
    verify.mockClear();
    expect((await call(app.client_id, app.client_secret, fresh())).status).toBe(200);
    expect(verify).not.toHaveBeenCalled();
    // ...one that has not waits for the window, like a guesser.
    expect(await call(cold.client_id, cold.client_secret, fresh())).toEqual(refused('for this client_id', 60));
    clock.advance(60_000);
    expect((await call(cold.client_id, cold.client_secret, fresh())).status).toBe(200);
  });

  it('checks an unknown client id, or one that is not a UUID, with one slow hash verification like a known one', async () => {
    const app = await createApplication(service);
    for (const clientId of [app.client_id, randomUUID(), 'not-a-uuid']) {
      verify.mockClear();
      expect({ clientId, status: (await call(clientId, 'wrong-secret', fresh())).status }).toEqual({ clientId, status: 401 });
      expect({ clientId, verifications: verify.mock.calls.length }).toEqual({ clientId, verifications: 1 });
    }
  });

  it('counts an unknown client id like a known one, so a 429 tells nothing about which exist', async () => {
    const app = await createApplication(service);
    const answers = async (clientId: string) => {
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await call(clientId, 'wrong-secret', fresh())).status);
      return statuses;
    };
    const expected = [...Array(9).fill(401), 429];
    expect(await answers(app.client_id)).toEqual(expected);
    expect(await answers(randomUUID())).toEqual(expected);
    expect(await answers('not-a-uuid')).toEqual(expected);
  });

  it('hashes a legitimate secret once, not on every call, from every route that takes application credentials', async () => {
    const app = await createApplication(service);
    const from = fresh();
    for (let i = 0; i < 5; i++) expect((await call(app.client_id, app.client_secret, from)).status).toBe(200);
    const session = await service.app.inject({
      method: 'POST',
      url: '/connect/sessions',
      remoteAddress: from,
      headers: { 'content-type': 'application/json', authorization: basicOf(app.client_id, app.client_secret) },
      payload: { customer_id: 'c-1', customer_name: 'Acme Corp', products: ['company'] },
    });
    expect(session.statusCode).toBe(201);
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('does not serve a rotated secret from memory', async () => {
    const applications = service.app.get(ApplicationsService);
    const clientId = randomUUID();
    const input = { name: 'Rotating', redirectUris: [], sandbox: true };
    await applications.ensure(clientId, 'first-secret-0123456789', input);
    expect((await call(clientId, 'first-secret-0123456789', fresh())).status).toBe(200);
    await applications.ensure(clientId, 'second-secret-0123456789', input);
    expect((await call(clientId, 'first-secret-0123456789', fresh())).status).toBe(401);
    expect((await call(clientId, 'second-secret-0123456789', fresh())).status).toBe(200);
  });

  it('limits the body credentials of POST /auth/token the same way', async () => {
    const app: IssuedCredentials = await createApplication(service);
    const exchange = (secret: string) =>
      service.request('/auth/token', json({ client_id: app.client_id, client_secret: secret, code: 'no-such-code', redirect_uri: 'http://127.0.0.1:9/callback' }));
    for (let i = 0; i < 3; i++) expect((await exchange('wrong-secret')).status).toBe(401);
    const res = await exchange('wrong-secret');
    expect({ status: res.status, body: res.body, retryAfter: res.headers.get('retry-after') }).toEqual(refused('from this address', 60));
  });
});
