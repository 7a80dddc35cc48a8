import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { expectEventually } from '../../../../test/utils/expect-eventually';
import { OpenApiContract } from '../../../../test/utils/openapi-contract';
import { DomainError } from '../../../domain/shared/domain-error';
import { GustoApiError, GustoConflict, GustoHttp, GustoHttpOptions, GustoUnauthorized, GustoUnprocessable, retryAfterMs } from './gusto-http';
import { GustoRateLimiter } from './gusto-rate-limiter';

const API_VERSION = '2026-02-01';
const COMPANY = '7b1d0df1-6403-4a06-8768-c1dd7d24d27a';

interface Received {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: unknown;
}

type Handler = (request: Received, response: ServerResponse) => void;

/** A local stand-in for Gusto: answers with the handler given for each request, in turn (the last one repeats). */
class FakeGusto {
  readonly received: Received[] = [];
  private handlers: Handler[] = [];
  private server!: Server;
  baseUrl = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const text = Buffer.concat(chunks).toString('utf8');
        const received: Received = {
          method: req.method ?? '',
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          headers: req.headers,
          body: text ? JSON.parse(text) : undefined,
        };
        this.received.push(received);
        const handler = this.handlers.length > 1 ? (this.handlers.shift() as Handler) : this.handlers[0];
        handler(received, res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  answer(...handlers: Handler[]): void {
    this.handlers = handlers;
    this.received.length = 0;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };

/** Never answers: the client's timeout has to end it. */
const silent: Handler = () => undefined;

describe('GustoHttp', () => {
  const gusto = new FakeGusto();
  const contract = OpenApiContract.fromFile('test/fixtures/gusto-openapi.yaml');

  beforeAll(() => gusto.start());
  afterAll(() => gusto.stop());

  const client = (options: Partial<GustoHttpOptions> = {}) =>
    new GustoHttp({
      baseUrl: gusto.baseUrl,
      apiVersion: API_VERSION,
      timeoutMs: 2_000,
      backoffBaseMs: 5,
      backoffMaxMs: 20,
      random: () => 1,
      ...options,
    });

  const get = (http: GustoHttp, path = `/v1/companies/${COMPANY}`) => http.request<unknown>({ method: 'GET', path, accessToken: 'token-1', key: COMPANY });

  it('sends the bearer token, the API version, JSON in and out, and the query', async () => {
    gusto.answer(json(201, { uuid: 'e1' }, { 'x-request-id': 'r-1' }));
    const response = await client().request<{ uuid: string }>({
      method: 'POST',
      path: `/v1/companies/${COMPANY}/employees`,
      query: { include: 'all_compensations', skip: undefined },
      body: { first_name: 'Ada', last_name: 'Lovelace' },
      accessToken: 'token-1',
      key: COMPANY,
    });

    expect(response).toEqual({ status: 201, body: { uuid: 'e1' }, headers: expect.objectContaining({ 'x-request-id': 'r-1' }) });
    const [sent] = gusto.received;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe(`/v1/companies/${COMPANY}/employees`);
    expect(sent.query).toEqual({ include: 'all_compensations' });
    expect(sent.headers.authorization).toBe('Bearer token-1');
    expect(sent.headers['x-gusto-api-version']).toBe(API_VERSION);
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers.accept).toBe('application/json');
    expect(sent.body).toEqual({ first_name: 'Ada', last_name: 'Lovelace' });
  });

  it('sends what the document asks of a GET (version header and page parameters)', async () => {
    gusto.answer(json(200, []));
    await client().paginate({ path: `/v1/companies/${COMPANY}/employees`, accessToken: 'token-1', key: COMPANY, per: 50 });
    const [sent] = gusto.received;
    expect(contract.checkRequest({ method: sent.method, path: sent.path, query: sent.query, headers: sent.headers })).toEqual([]);
  });

  it('answers an empty body (204) with an undefined body', async () => {
    gusto.answer((_req, res) => res.writeHead(204).end());
    await expect(client().request({ method: 'DELETE', path: '/v1/x', accessToken: 't', key: 'k' })).resolves.toMatchObject({ status: 204, body: undefined });
  });

  describe('retries', () => {
    it('repeats a GET after 500s, with backoff, until it succeeds', async () => {
      gusto.answer(json(500, { errors: [{ error_key: 'request', category: 'internal_error', message: 'An unexpected error has occurred.' }] }), json(503, {}), json(200, { ok: true }));
      await expect(get(client())).resolves.toMatchObject({ status: 200, body: { ok: true } });
      expect(gusto.received).toHaveLength(3);
    });

    it('gives up after maxAttempts with a transient provider_error carrying the last status and message', async () => {
      gusto.answer(json(500, { errors: [{ error_key: 'request', category: 'internal_error', message: 'An unexpected error has occurred.' }] }));
      const error = await get(client({ maxAttempts: 2 })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GustoApiError);
      expect(error).toMatchObject({ family: 'provider_error', status: 500, attempts: 2, outcomeUnknown: false });
      expect((error as Error).message).toContain('An unexpected error has occurred.');
      expect(gusto.received).toHaveLength(2);
    });

    it('never repeats a POST after a 500: the error is transient and says the outcome is unknown', async () => {
      gusto.answer(json(500, {}), json(201, {}));
      const error = await client()
        .request({ method: 'POST', path: `/v1/companies/${COMPANY}/employees`, body: { first_name: 'A' }, accessToken: 't', key: COMPANY })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ family: 'provider_error', status: 500, attempts: 1, outcomeUnknown: true });
      expect((error as Error).message).toMatch(/look it up/);
      expect(gusto.received).toHaveLength(1);
    });

    it('never repeats a PATCH either', async () => {
      gusto.answer(json(502, {}), json(200, {}));
      await expect(client().request({ method: 'PATCH', path: '/v1/x', body: {}, accessToken: 't', key: 'k' })).rejects.toMatchObject({ outcomeUnknown: true });
      expect(gusto.received).toHaveLength(1);
    });

    it('repeats a PUT after a network failure (a connection dropped mid-answer)', async () => {
      gusto.answer((_req, res) => res.socket?.destroy(), json(200, { version: 'v2' }));
      await expect(client().request({ method: 'PUT', path: '/v1/x', body: { version: 'v1' }, accessToken: 't', key: 'k' })).resolves.toMatchObject({ status: 200 });
      expect(gusto.received).toHaveLength(2);
    });

    it('reports an unreachable Gusto as provider_error after the attempts', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const { port } = closed.address() as AddressInfo;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const error = await get(client({ baseUrl: `http://127.0.0.1:${port}`, maxAttempts: 2 })).catch((e: unknown) => e);
      expect(error).toMatchObject({ family: 'provider_error', status: undefined, attempts: 2 });
      expect((error as Error).message).toContain('ECONNREFUSED');
    });
  });

  describe('timeouts', () => {
    /**
     * The requests of one path that reached the fake: each test its own path, since a request
     * whose client gave up may still arrive later on a loaded host (into the next test).
     */
    const arrived = (path: string) => gusto.received.filter((r) => r.path === path);

    it('turns a silent Gusto into provider_timeout after the attempts of a GET', async () => {
      gusto.answer(silent);
      const error = await client({ timeoutMs: 100, maxAttempts: 2 })
        .request({ method: 'GET', path: '/v1/silent-get', accessToken: 't', key: 'k' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ family: 'provider_timeout', attempts: 2 });
      expect((error as Error).message).toContain('within 100 ms');
      await expectEventually(async () => expect(arrived('/v1/silent-get')).toHaveLength(2));
    });

    it('times out a POST once, without repeating it', async () => {
      gusto.answer(silent);
      const error = await client({ timeoutMs: 100 })
        .request({ method: 'POST', path: '/v1/silent-post', body: {}, accessToken: 't', key: 'k' })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ family: 'provider_timeout', outcomeUnknown: true, attempts: 1 });
      await expectEventually(async () => expect(arrived('/v1/silent-post')).toHaveLength(1));
      // Longer than another attempt would take to be sent and arrive: none comes.
      await new Promise((done) => setTimeout(done, 300));
      expect(arrived('/v1/silent-post')).toHaveLength(1);
    });

    it('leaves the caller’s abort as it is: not Gusto’s failure, not retried', async () => {
      gusto.answer(silent);
      const controller = new AbortController();
      const pending = client().request({ method: 'GET', path: '/v1/aborted', accessToken: 't', key: 'k', signal: controller.signal });
      // Aborted once Gusto has the request (not while it is still being sent).
      await expectEventually(async () => expect(arrived('/v1/aborted')).toHaveLength(1));
      controller.abort(new Error('worker shutting down'));
      const error = await pending.catch((e: unknown) => e);
      expect(error).not.toBeInstanceOf(DomainError);
      expect((error as Error).message).toBe('worker shutting down');
      await new Promise((done) => setTimeout(done, 300));
      expect(arrived('/v1/aborted')).toHaveLength(1);
    });
  });

  describe('rate limits', () => {
    it('waits Retry-After on a 429, for every request on that grant, then retries', async () => {
      const limiter = new GustoRateLimiter();
      const http = client({ limiter });
      gusto.answer(json(429, { errors: [] }, { 'retry-after': '1' }), json(200, { ok: 1 }));
      const started = Date.now();
      const first = get(http);
      // Sent while the grant is paused: it waits too, though nothing refused it.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = get(http);
      await expect(first).resolves.toMatchObject({ status: 200 });
      await expect(second).resolves.toMatchObject({ status: 200 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(gusto.received).toHaveLength(3);
    });

    it('retries a rate-limited POST: a 429 is refused before any processing', async () => {
      gusto.answer(json(429, {}, { 'retry-after': '0' }), json(201, { uuid: 'p1' }));
      await expect(client().request({ method: 'POST', path: '/v1/x', body: {}, accessToken: 't', key: 'k' })).resolves.toMatchObject({ status: 201 });
      expect(gusto.received).toHaveLength(2);
    });

    it('gives up after maxRateLimitRetries with a transient error carrying retry_after', async () => {
      gusto.answer(json(429, {}, { 'retry-after': '0' }));
      const error = await get(client({ maxRateLimitRetries: 2 })).catch((e: unknown) => e);
      expect(error).toMatchObject({ family: 'provider_error', status: 429, serviceCode: 'provider_rate_limited', details: { retry_after: 0 } });
      expect(gusto.received).toHaveLength(3);
    });

    it('does not sit out a Retry-After longer than maxRetryAfterMs in process', async () => {
      gusto.answer(json(429, {}, { 'retry-after': '120' }));
      const started = Date.now();
      await expect(get(client())).rejects.toMatchObject({ family: 'provider_error', details: { retry_after: 120 } });
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(gusto.received).toHaveLength(1);
    });

    it('reads Retry-After as seconds or as an HTTP date', () => {
      const now = new Date('2026-03-02T09:00:00Z');
      expect(retryAfterMs('3', now)).toBe(3_000);
      expect(retryAfterMs('Mon, 02 Mar 2026 09:00:05 GMT', now)).toBe(5_000);
      expect(retryAfterMs('soon', now)).toBeUndefined();
      expect(retryAfterMs(undefined, now)).toBeUndefined();
    });
  });

  describe('errors', () => {
    it('401 is GustoUnauthorized, not retried, so the caller can refresh the token once', async () => {
      gusto.answer(json(401, { errors: [{ error_key: 'request', category: 'invalid_token', message: 'The access token is invalid' }] }));
      const error = await get(client()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GustoUnauthorized);
      expect(error).toMatchObject({ family: 'authentication_error', serviceCode: 'reauthenticate_user', status: 401 });
      expect((error as Error).message).toContain('The access token is invalid');
      expect(gusto.received).toHaveLength(1);
    });

    it('409 is GustoConflict with Gusto’s message', async () => {
      const body = { errors: [{ error_key: 'version', category: 'invalid_attribute_value', message: 'The resource has been modified. Please refetch and try again.' }] };
      gusto.answer(json(409, body));
      const error = await client().request({ method: 'PUT', path: '/v1/x', body: { version: 'old' }, accessToken: 't', key: 'k' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GustoConflict);
      expect(error).toMatchObject({ family: 'conflict_error', status: 409, errors: body.errors, retried: false });
      expect((error as Error).message).toContain('version: The resource has been modified. Please refetch and try again.');
    });

    it('422 is GustoUnprocessable carrying the errors array, nested messages included', async () => {
      // The document's Unprocessable-Entity-Error-Object examples, "Resource" and "Nested".
      const errors = [
        { error_key: 'first_name', category: 'invalid_attribute_value', message: 'First name is required' },
        { error_key: 'base', category: 'payroll_blocker', message: 'Company must complete all onboarding requirements in order to run payroll.', metadata: { key: 'needs_onboarding' } },
        {
          error_key: 'contractor_payments',
          category: 'nested_errors',
          metadata: { contractor_uuid: '72ae4617-daa9-4ed7-85e0-18ed5d0ee835' },
          errors: [{ error_key: 'hours', category: 'invalid_attribute_value', message: 'Ella Fitzgerald is paid fixed wage and hours cannot be set on a contractor payment' }],
        },
      ];
      expect(contract.checkResponse(`POST /v1/companies/{company_id}/employees`, 422, { errors })).toEqual([]);
      gusto.answer(json(422, { errors }));
      const error = await client()
        .request({ method: 'POST', path: `/v1/companies/${COMPANY}/employees`, body: {}, accessToken: 't', key: COMPANY })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GustoUnprocessable);
      expect(error).toMatchObject({ family: 'unprocessable_request_error', status: 422, errors, outcomeUnknown: false });
      const message = (error as Error).message;
      expect(message).toContain('first_name: First name is required');
      expect(message).toContain('Company must complete all onboarding requirements in order to run payroll.');
      expect(message).toContain('contractor_payments.hours: Ella Fitzgerald is paid fixed wage');
    });

    it.each([
      [404, 'not_found_error'],
      [403, 'forbidden_error'],
      [400, 'invalid_request_error'],
      [406, 'invalid_request_error'],
    ])('%i is a final DomainError (%s) with Gusto’s message', async (status, family) => {
      gusto.answer(json(status, { errors: [{ error_key: 'request', category: 'some_category', message: `Gusto says ${status}` }] }));
      const error = await get(client()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ family, status });
      expect((error as Error).message).toContain(`Gusto says ${status}`);
      expect(gusto.received).toHaveLength(1);
    });

    it('leaves a proxy’s HTML page out of the message', async () => {
      gusto.answer((_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>Bad gateway</body></html>'));
      const error = await get(client({ maxAttempts: 1 })).catch((e: unknown) => e);
      expect((error as Error).message).toBe(`Gusto answered GET /v1/companies/${COMPANY} with 502 Bad Gateway`);
    });

    it('marks an error that answers a repeated request as retried', async () => {
      gusto.answer(json(500, {}), json(404, { errors: [{ error_key: 'request', category: 'not_found', message: 'gone' }] }));
      await expect(client().request({ method: 'DELETE', path: '/v1/x', accessToken: 't', key: 'k' })).rejects.toMatchObject({ status: 404, retried: true });
    });
  });

  describe('paginate', () => {
    const page = (records: unknown[], headers: Record<string, string> = {}) => json(200, records, headers);

    it('collects three pages, following X-Total-Pages', async () => {
      const totals = { 'x-total-pages': '3', 'x-total-count': '5', 'x-per-page': '2' };
      gusto.answer(page([{ n: 1 }, { n: 2 }], { ...totals, 'x-page': '1' }), page([{ n: 3 }, { n: 4 }], { ...totals, 'x-page': '2' }), page([{ n: 5 }], { ...totals, 'x-page': '3' }));
      const records = await client().paginate<{ n: number }>({ path: `/v1/companies/${COMPANY}/employees`, query: { terminated: false }, accessToken: 't', key: COMPANY, per: 2 });
      expect(records.map((r) => r.n)).toEqual([1, 2, 3, 4, 5]);
      expect(gusto.received.map((r) => r.query)).toEqual([
        { terminated: 'false', page: '1', per: '2' },
        { terminated: 'false', page: '2', per: '2' },
        { terminated: 'false', page: '3', per: '2' },
      ]);
    });

    it('without total headers, reads on until an empty page: a short page may only mean Gusto capped per', async () => {
      gusto.answer(page([{ n: 1 }]), page([{ n: 2 }]), page([{ n: 3 }]), page([]));
      const records = await client().paginate<{ n: number }>({ path: '/v1/x', accessToken: 't', key: 'k', per: 2 });
      expect(records.map((r) => r.n)).toEqual([1, 2, 3]);
      expect(gusto.received).toHaveLength(4);
    });

    it('fails rather than cut a listing short at maxPages', async () => {
      gusto.answer(page([{ n: 1 }], { 'x-total-pages': '99' }));
      await expect(client().paginate({ path: '/v1/x', accessToken: 't', key: 'k', maxPages: 3 })).rejects.toMatchObject({ family: 'server_error' });
      expect(gusto.received).toHaveLength(3);
    });

    it('reads wrapped records with `items`', async () => {
      gusto.answer(page({ employees: [{ n: 1 }] } as unknown as unknown[], { 'x-total-pages': '1' }));
      const records = await client().paginate({ path: '/v1/x', accessToken: 't', key: 'k', items: (body) => (body as { employees: unknown[] }).employees });
      expect(records).toEqual([{ n: 1 }]);
    });
  });
});
