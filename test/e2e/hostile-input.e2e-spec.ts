import net from 'node:net';
import { bodyLimitOf } from '../../src/infrastructure/http/body-limits';
import type { ErrorBody } from '../../src/infrastructure/http/error-response';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { json, startTestService, TestService } from '../utils/test-app';

/**
 * Inputs that once reached a 500 or were wrongly accepted, each refused at its root: one depth
 * bound before parsing, one rule for text PostgreSQL cannot store, the framework's own
 * refusals as the error object, and the scope checks every token operation shares.
 */

const OPS = { authorization: `Basic ${Buffer.from('ops:ops-password-for-tests').toString('base64')}` };

/** Sends bytes as they are (fetch would normalise the URL) and parses the answer. */
function rawRequest(url: string, head: string): Promise<{ status: number; headers: string; body: ErrorBody }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    let out = '';
    socket.on('data', (d) => (out += d.toString('utf8')));
    socket.on('close', () => {
      const [headers, ...rest] = out.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]);
      resolve({ status, headers, body: JSON.parse(rest.join('\r\n\r\n')) });
    });
    socket.on('error', reject);
    socket.write(`${head}\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  });
}

function expectErrorObject(res: { status: number; body: ErrorBody }, status: number, name: string, message?: RegExp) {
  expect(res.status).toBe(status);
  expect(res.body).toEqual(expect.objectContaining({ code: status, name, message: expect.any(String) }));
  if (message) expect(res.body.message).toMatch(message);
}

const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const nestedArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describeWithPostgres('hostile input', () => {
  let service: TestService;
  let app: Awaited<ReturnType<typeof createApplication>>;
  let token: string;
  let entityId: string;
  let other: { access_token: string; entity_id: string };

  const raw = (path: string, body: string, headers: Record<string, string> = {}) =>
    service.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  beforeAll(async () => {
    service = await startTestService();
    app = await createApplication(service);
    const connect = async () => (await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 3 }, basic(app)))).body;
    const mine = await connect();
    token = mine.access_token;
    entityId = mine.entity_id;
    other = await connect();
  });
  afterAll(async () => service?.close());

  describe('deep JSON', () => {
    it.each([
      ['anonymous POST /auth/token', '/auth/token', () => ({})],
      ['POST /hris/events', '/hris/events', () => basic(app)],
      ['POST /employer/benefits', '/employer/benefits', () => bearer(token)],
    ])('is refused before parsing on %s', async (_name, path, headers) => {
      const { bytes } = bodyLimitOf('POST', path);
      for (const body of [nested(5_000), nested(100_000), nestedArray(200_000), `{"a":${nested(65)}}`]) {
        const res = await raw(path, body, headers());
        // Past the route's byte limit a body is refused before it is read at all.
        if (Buffer.byteLength(body) > bytes) expectErrorObject(res, 413, 'invalid_request_error', /larger than this route accepts/);
        else expectErrorObject(res, 400, 'bad_request_error', /nests objects or arrays deeper than 64 levels/);
      }
    });

    it('lets 64 levels through to validation', async () => {
      const res = await raw('/auth/token', `{"client_id":${nested(63)}}`);
      expectErrorObject(res, 400, 'invalid_request_error', /client_id/);
    });

    it('does not count brackets inside strings', async () => {
      const res = await raw('/auth/token', JSON.stringify({ client_id: '['.repeat(1_000), client_secret: '{'.repeat(1_000) }));
      expect(res.status).toBeLessThan(500);
      expect(res.body.message).not.toMatch(/deeper/);
    });

    it('leaves the service ready after a burst', async () => {
      await Promise.all(Array.from({ length: 50 }, () => raw('/auth/token', nested(10_000))));
      expect((await service.request('/health/ready')).status).toBe(200);
    });
  });

  describe('text PostgreSQL cannot store', () => {
    it.each([
      ['U+0000 in a connect session', '/connect/sessions', () => ({ customer_id: 'a\u0000b', customer_name: 'Acme', products: ['directory'] }), () => basic(app), 'customer_id'],
      ['U+0000 in an HRIS event id', '/hris/events', () => ({ id: 'e\u0000', type: 'EmployeeHired' }), () => basic(app), 'id'],
      ['a lone surrogate in a benefit description', '/employer/benefits', () => ({ type: '401k', description: 'x\ud800', frequency: 'every_paycheck' }), () => bearer(token), 'description'],
      ['a lone low surrogate nested in an array', '/employer/benefits', () => ({ type: '401k', description: 'ok', frequency: 'every_paycheck', x: [{ y: '\udc00' }] }), () => bearer(token), 'x\\[0\\]\\.y'],
      ['U+0000 in a field name', '/auth/token', () => ({ 'client\u0000id': 'x' }), () => ({}), 'body'],
    ])('refuses %s with the field named', async (_name, path, body, headers, field) => {
      const res = await raw(path, JSON.stringify(body()), headers());
      expectErrorObject(res, 400, 'invalid_request_error', new RegExp(`^Invalid request: ${field}: .*U\\+0000 or an unpaired UTF-16 surrogate`));
    });

    it('keeps a well-formed surrogate pair', async () => {
      const res = await raw('/employer/benefits', JSON.stringify({ type: '401k', description: 'Plan 🌴', frequency: 'every_paycheck' }), bearer(token));
      expect(res.status).toBe(200);
    });

    it.each([
      ['/ops/api/dead-letters?topic=a%00b', 'query.topic'],
      ['/ops/api/dead-letters?consumer=%00', 'query.consumer'],
      ['/ops/api/audit?actor=x%00', 'query.actor'],
      ['/ops/api/connections?provider_id=%00', 'query.provider_id'],
    ])('refuses it in the query %s', async (path, field) => {
      const res = await service.request(path, { headers: OPS });
      expectErrorObject(res, 400, 'invalid_request_error', new RegExp(`${field.replace('.', '\\.')}: `));
    });

    it('reads a percent-encoded surrogate (not UTF-8) in a query as U+FFFD, never a 500', async () => {
      const res = await service.request('/ops/api/dead-letters?consumer=%ED%A0%80', { headers: OPS });
      expect(res.status).toBe(200);
    });

    it('refuses it in a path parameter', async () => {
      const res = await service.request('/ops/api/dead-letters/a%00b', { headers: OPS });
      expectErrorObject(res, 400, 'invalid_request_error', /path\.dead_letter_id: /);
    });
  });

  describe('object machinery keys', () => {
    it.each(['constructor', 'prototype'])('refuses %s as an unknown field, as any other', async (key) => {
      const body = `{"type":"401k","description":"ok","frequency":"every_paycheck","${key}":{"x":1}}`;
      expectErrorObject(await raw('/employer/benefits', body, bearer(token)), 400, 'invalid_request_error', new RegExp(`${key}: unknown field`));
      const nestedKey = `{"type":"401k","description":"ok","frequency":"every_paycheck","company_contribution":{"${key}":1}}`;
      expectErrorObject(await raw('/employer/benefits', nestedKey, bearer(token)), 400, 'invalid_request_error', new RegExp(`company_contribution\\.${key}: unknown field`));
    });
  });

  describe('lists of lists where a list of objects is expected', () => {
    it.each([
      ['PUT', '/sandbox/company', { departments: [[]] }, 'departments\\[0\\]'],
      ['PUT', '/sandbox/company', { locations: [[]] }, 'locations\\[0\\]'],
      ['POST', '/employer/individual', { requests: [[]] }, 'requests\\[0\\]'],
    ])('%s %s %j is refused naming the element, nothing stored', async (method, path, body, field) => {
      const before = await service.request('/sandbox/company', { headers: bearer(token) });
      const res = await service.request(path, { ...json(body, bearer(token)), method });
      expectErrorObject(res, 400, 'invalid_request_error', new RegExp(`${field}: must be an object, not a list`));
      expect((await service.request('/sandbox/company', { headers: bearer(token) })).body).toEqual(before.body);
    });
  });

  describe('framework refusals', () => {
    it('answers a path that is not valid percent-encoding with the error object', async () => {
      const res = await rawRequest(service.url, 'GET /jobs/automated/%ff%fe HTTP/1.1');
      expectErrorObject(res, 400, 'bad_request_error', /not valid percent-encoded/);
      expect(res.body.service_code).toBe('malformed_request');
    });

    it('answers an over-long path parameter with 414 and the error object', async () => {
      const res = await service.request(`/jobs/automated/${'a'.repeat(500)}`, { headers: bearer(token) });
      expectErrorObject(res, 414, 'invalid_request_error', /path parameter is longer/);
    });

    it('answers a 100k-character query string with 431 and the error object', async () => {
      const res = await rawRequest(service.url, `GET /employer/directory?x=${'a'.repeat(100_000)} HTTP/1.1`);
      expectErrorObject(res, 431, 'invalid_request_error', /headers are larger/);
    });

    it('answers an Expect header it cannot meet with 417 and the error object', async () => {
      const res = await rawRequest(service.url, 'GET /health/ready HTTP/1.1\r\nExpect: 200-ok');
      expectErrorObject(res, 417, 'invalid_request_error', /only Expect: 100-continue/);
    });

    it('answers malformed HTTP with 400 and the error object', async () => {
      const res = await rawRequest(service.url, 'GET /health/ready HTTP/1.1\r\nBad Header: y');
      expectErrorObject(res, 400, 'bad_request_error', /not valid HTTP/);
    });
  });

  describe('scope of a token', () => {
    it.each([
      ['POST /jobs/automated', (q: string) => service.request(`/jobs/automated${q}`, json({ type: 'data_sync_all' }, bearer(token)))],
      ['PUT /sandbox/jobs/configuration', (q: string) => service.request(`/sandbox/jobs/configuration${q}`, { ...json({ type: 'data_sync_all', completion_status: 'complete' }, bearer(token)), method: 'PUT' })],
      ['GET /introspect', (q: string) => service.request(`/introspect${q}`, { headers: bearer(token) })],
    ])("refuses another connection's entity on %s", async (_name, call) => {
      expectErrorObject(await call(`?entity_ids=${other.entity_id}`), 403, 'forbidden_error', /not authorized/);
      expect((await call(`?entity_ids[]=${entityId}&entity_ids[]=${other.entity_id}`)).status).toBe(403);
      expect((await call(`?entity_ids=${entityId}`)).status).toBeLessThan(300);
    });
  });

  describe('Service-API-Version', () => {
    it.each(['2099-01-01', '2021-01-01', '2020-09-16'])('refuses %s, a date that is not a version of this API', async (version) => {
      const res = await service.request('/employer/directory', { headers: { ...bearer(token), 'service-api-version': version } });
      expectErrorObject(res, 400, 'invalid_request_error', /known versions: 2020-09-17/);
      expect(res.body.service_code).toBe('invalid_version_header');
    });
  });

  describe('effective_date', () => {
    it('is refused beyond two years ahead, for enroll and unenroll', async () => {
      const benefit = await raw('/employer/benefits', JSON.stringify({ type: '401k', description: 'far', frequency: 'every_paycheck' }), bearer(token));
      expect(benefit.status).toBe(200);
      const directory = await service.request('/employer/directory', { headers: bearer(token) });
      const individualId = directory.body.individuals[0].id;
      const path = `/employer/benefits/${benefit.body.benefit_id}/individuals`;
      const element = { individual_id: individualId, configuration: { employee_deduction: { type: 'fixed', amount: 1000 }, effective_date: '9999-12-31' } };
      expectErrorObject(await raw(path, JSON.stringify([element]), bearer(token)), 400, 'invalid_request_error', /effective_date must be within two years of today/);
      const unenroll = await service.request(path, { ...json({ individual_ids: [individualId], effective_date: '9999-12-31' }, bearer(token)), method: 'DELETE' });
      expect(unenroll.status).toBe(400);
    });
  });
});
