import { request as httpRequest, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { FastifyInstance } from 'fastify';
import { PinoLogger } from 'nestjs-pino';
import { Options, pinoHttp } from 'pino-http';
import { loadConfig } from '../../config/app-config';
import { Principal } from '../../domain/connections/connection';
import { ManualClock } from '../../domain/shared/clock';
import { httpLoggerOptions } from '../../infrastructure/http/http-logger';
import { REQUEST_ID_HEADER, requestIdOf } from '../../infrastructure/http/request-id';
import { Metrics } from '../../infrastructure/observability/metrics';
import { TokenLookup } from '../auth/token-lookup';
import { TokenRateLimiter } from '../auth/token-rate-limiter';
import { GenerationLookup } from './generation-lookup';
import { ReadCache } from './read-cache';

const TOKEN = 'token-of-the-test';
const ENTITY = '6f1d5c1e-7f0b-4c0e-9a49-0d6f6a1c2b3d';

/**
 * The early path of the read cache, on a real Fastify server and socket: which requests it
 * answers ahead of Fastify, and that it leaves everything else to Fastify as if never looked at.
 * The token and generation lookups are stand-ins (their own tests use PostgreSQL).
 */
describe('ReadCache ahead of Fastify', () => {
  let fastify: FastifyInstance;
  let base: string;
  let agent: Agent;
  let handled: number;
  let hooksRun: number;
  let tokensCached: (digest: string) => Principal | undefined;
  let metrics: Metrics;
  let holdClose: Promise<void>;
  let logLines: Record<string, unknown>[];
  const principal: Principal = {
    tokenId: 'token-1',
    connection: {
      id: 'c1',
      applicationId: 'a1',
      customerId: null,
      customerName: null,
      customerEmail: null,
      providerId: 'sandbox',
      authenticationType: 'api_token',
      accountId: 'acc',
      companyId: 'co',
      products: ['company'],
      status: 'connected',
      sandbox: true,
      manual: false,
      employeeSize: null,
      createdAt: new Date(0),
      entities: [{ id: ENTITY, name: 'E', status: 'active' }],
    },
  };

  const get = (path: string, headers: Record<string, string> = {}, body?: string) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
      const call = httpRequest(`${base}${path}`, { agent, method: 'GET', headers: { authorization: `Bearer ${TOKEN}`, ...headers } }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
      });
      call.on('error', reject);
      call.end(body);
    });
  const hits = async () => (await metrics.readCacheRequests.get()).values.find((v) => v.labels.outcome === 'hit')?.value ?? 0;

  beforeEach(async () => {
    handled = 0;
    hooksRun = 0;
    tokensCached = () => principal;
    metrics = new Metrics();
    const config = loadConfig({}, { OPS_PASSWORD: 'correct horse battery', RATE_LIMIT_PER_MINUTE: 3 });
    const tokens = { cached: (digest: string) => tokensCached(digest) } as unknown as TokenLookup;
    const generations = {
      cached: () => 'g1',
      find: async () => ({ generation: 'g1', changes: 0 }),
      changedSince: () => false,
    } as unknown as GenerationLookup;
    const cache = new ReadCache(config, tokens, generations, new TokenRateLimiter(config, new ManualClock(new Date())), metrics);
    // Closing waits for open connections, so a request can still arrive while Fastify closes.
    fastify = Fastify({ return503OnClosing: true, forceCloseConnections: false, genReqId: requestIdOf });
    logLines = [];
    const httpLogger = pinoHttp({ ...(httpLoggerOptions(config).pinoHttp as Options), level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line)) });
    (PinoLogger as unknown as { root: unknown }).root = httpLogger.logger;
    fastify.addHook('onRequest', (request, reply, done) => {
      httpLogger(request.raw, reply.raw);
      hooksRun++;
      reply.header(REQUEST_ID_HEADER, request.id).header('x-pipeline', 'yes');
      done();
    });
    cache.install(fastify, { 'x-pipeline': 'yes' });
    fastify.get('/employer/company', async (request) => {
      handled++;
      await cache.markSynced(request, ENTITY, 'company');
      // Stands in for the guard, which answers a refusal with the decision memory took.
      const refused = (request as { rateLimit?: unknown }).rateLimit;
      return refused ? { refused } : { id: ENTITY, legal_name: 'Acme' };
    });
    holdClose = Promise.resolve();
    fastify.addHook('preClose', (done) => void holdClose.then(() => done()));
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });

  afterEach(async () => {
    (PinoLogger as unknown as { root: unknown }).root = undefined;
    agent.destroy();
    if (fastify.server.listening) await fastify.close();
  });

  it('answers a repeated GET before Fastify runs a hook, with the headers and bytes Fastify sent, and 304 to its tag', async () => {
    const first = await get('/employer/company');
    expect(first.status).toBe(200);
    expect([handled, hooksRun]).toEqual([1, 1]);

    const again = await get('/employer/company');
    expect([handled, hooksRun]).toEqual([1, 1]);
    expect(await hits()).toBe(1);
    expect(again.text).toBe(first.text);
    for (const name of ['etag', 'cache-control', 'content-type', 'content-length', 'x-pipeline']) expect([name, again.headers[name]]).toEqual([name, first.headers[name]]);
    expect(again.headers['x-request-id']).toMatch(/\S/);

    const notModified = await get('/employer/company', { 'if-none-match': String(first.headers.etag) });
    expect([notModified.status, notModified.text, hooksRun]).toEqual([304, '', 1]);
    const timed = (await metrics.httpRequestDuration.get()).values.filter((v) => v.metricName === 'http_request_duration_seconds_count' && v.labels.route === '/employer/company');
    expect(timed.map((v) => [v.labels.status_code, v.value]).sort()).toEqual([
      ['200', 1],
      ['304', 1],
    ]);
  });

  it('logs an answer sent ahead of Fastify as the HTTP logger logs every request', async () => {
    const first = await get('/employer/company?a=1&b=2');
    // The same request, its parameters in another order: answered from memory.
    const again = await get('/employer/company?b=2&a=1', { 'x-request-id': 'caller-id-1' });
    await get('/employer/company?a=1&b=2', { 'if-none-match': String(first.headers.etag) });
    expect([again.status, hooksRun]).toEqual([200, 1]);

    const line = (n: number) => ({ msg: logLines[n].msg, level: logLines[n].level, req: logLines[n].req, res: logLines[n].res });
    expect(logLines).toHaveLength(3);
    expect(line(0)).toEqual({ msg: 'request completed', level: 30, req: { id: first.headers['x-request-id'], method: 'GET', url: '/employer/company?a=1&b=2' }, res: { statusCode: 200 } });
    expect(line(1)).toEqual({ msg: 'request completed', level: 30, req: { id: 'caller-id-1', method: 'GET', url: '/employer/company?b=2&a=1' }, res: { statusCode: 200 } });
    expect(line(2)).toMatchObject({ req: { method: 'GET', url: '/employer/company?a=1&b=2' }, res: { statusCode: 304 } });
    expect(Object.keys(logLines[2]).sort()).toEqual(Object.keys(logLines[0]).sort());
  });

  it('leaves to Fastify a GET with a body, another token, and one whose look at memory fails', async () => {
    await get('/employer/company');
    expect((await get('/employer/company', { 'content-type': 'application/json', 'content-length': '2' }, '{}')).status).toBe(200);
    expect(hooksRun).toBe(2);

    tokensCached = () => undefined;
    expect((await get('/employer/company')).status).toBe(200);
    expect(hooksRun).toBe(3);

    // A failure of the early look (once): Fastify's own pass answers it from memory all the same.
    let failures = 1;
    tokensCached = () => {
      if (failures-- > 0) throw new Error('lookup failed');
      return principal;
    };
    const answered = await get('/employer/company');
    expect([answered.status, answered.headers['x-pipeline'], hooksRun, handled]).toEqual([200, 'yes', 4, 2]);
  });

  it("hands Fastify the rate limit's refusal it took, so the guard does not take the limit again", async () => {
    await get('/employer/company');
    for (let n = 0; n < 3; n++) expect((await get('/employer/company')).status).toBe(200);
    expect(await hits()).toBe(3);

    const refused = await get('/employer/company');
    expect(JSON.parse(refused.text)).toEqual({ refused: { allowed: false, retryAfterSeconds: 60 } });
    expect(hooksRun).toBe(2);
  });

  it('leaves requests to Fastify once it is closing, which refuses them with 503', async () => {
    await get('/employer/company');
    expect((await get('/employer/company')).status).toBe(200);
    // Closing held in a pre-close hook: the server still reads requests on open connections.
    let release!: () => void;
    holdClose = new Promise((resolve) => (release = resolve));
    const closed = fastify.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const during = await get('/employer/company');
    release();
    agent.destroy();
    await closed;
    expect(during.status).toBe(503);
  });
});
