import { randomBytes, randomUUID } from 'node:crypto';
import { measureJson } from '../../src/domain/shared/hostile-input';
import { describeWithPostgres } from '../setup/test-env';
import { bearer } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { OPS_BASIC, ServiceProcess, startHeapFlags, startServiceProcess } from '../utils/service-process';
import { json, request, TestResponse } from '../utils/test-app';
import { createTestDatabase, TestDatabase } from '../utils/test-database';
import { bodyOfShape, bodyOverValues, largestHostileBody, LIMIT_SHAPES, limitOf } from './limit-bodies';
import { FuzzRoute, FuzzTargets, ROUTES } from './route-catalogue';

const CONCURRENT = 50;
const name = (route: FuzzRoute) => `${route.method} ${route.path}`;
// FUZZ_ROUTE narrows the run to routes whose `METHOD path` contains it, as in routes.fuzz-spec.ts.
const BODY_ROUTES = ROUTES.filter((route) => route.body !== undefined && `${route.method} ${route.path}`.includes(process.env.FUZZ_ROUTE ?? ''));
const APPLICATION = { clientId: randomUUID(), clientSecret: `secret-${randomBytes(16).toString('hex')}` };
const APPLICATION_BASIC = `Basic ${Buffer.from(`${APPLICATION.clientId}:${APPLICATION.clientSecret}`).toString('base64')}`;

/**
 * Every route that reads a body, against the service in the heap `npm start` gives it: a body
 * over its route's byte bound and one over its value bound are refused with 413, bodies exactly
 * at the byte bound in the costliest shapes are answered below 500, and 50 of the largest bodies
 * the route takes, sent at once, leave the instance alive and ready with its heap bounded.
 * (One body of about 2 MB once took the whole heap of an instance.)
 */
describeWithPostgres('fuzz: bodies at and over every route’s limits, heap capped as npm start caps it', () => {
  let database: TestDatabase;
  let service: ServiceProcess;
  let targets: FuzzTargets;
  const heapLimitBytes = Number(/--max-old-space-size=(\d+)/.exec(startHeapFlags().join(' '))?.[1]) * 1024 * 1024;
  const peakHeap: Record<string, number> = {};

  beforeAll(async () => {
    expect(heapLimitBytes).toBeGreaterThan(0);
    database = await createTestDatabase();
    service = await startServiceProcess({
      name: 'body-limits',
      databaseUrl: database.url,
      nodeOptions: startHeapFlags(),
      env: { APP_CLIENT_ID: APPLICATION.clientId, APP_CLIENT_SECRET: APPLICATION.clientSecret },
    });
    targets = await employerTargets(service);
  }, 240_000);

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    console.log(`[body-limits] heap used after 50 of the largest bodies, by route (MiB):\n${Object.entries(peakHeap).map(([route, bytes]) => `  ${route}: ${(bytes / 2 ** 20).toFixed(0)}`).join('\n')}`);
  });

  const send = (route: FuzzRoute, body: Buffer): Promise<TestResponse> => {
    const contentType = route.body === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
    return service.request(pathOf(route, targets), { method: route.method, headers: { ...authOf(route, targets), 'content-type': contentType }, body });
  };

  const expectRefusedAsTooLarge = (res: TestResponse, route: FuzzRoute) => {
    expect({ route: name(route), status: res.status }).toEqual({ route: name(route), status: 413 });
    if (route.errors !== 'html') expect(res.body).toMatchObject({ code: 413, name: 'invalid_request_error', service_code: 'payload_too_large' });
  };

  const expectAnsweredWell = (res: TestResponse, route: FuzzRoute) => {
    expect({ route: name(route), status: res.status < 500 }).toEqual({ route: name(route), status: true });
    if (res.status >= 400 && route.errors !== 'html') expect(res.body).toMatchObject({ code: res.status, name: expect.any(String), message: expect.any(String) });
  };

  const expectAliveAndBounded = async (route: FuzzRoute) => {
    if (service.hasExited()) throw new Error(`the service exited during ${name(route)}:\n${service.output().slice(-3_000)}`);
    // Ready again soon: right after a burst the database pool may still be busy with the work it
    // accepted (readiness pings through the pool), but the instance must come back by itself.
    await expectEventually(async () => expect((await service.request('/health/ready')).status).toBe(200), { timeoutMs: 60_000 });
    const metrics = await request(service.url, '/metrics');
    const heapUsed = Number(/^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?)/m.exec(metrics.text)?.[1]);
    peakHeap[name(route)] = heapUsed;
    expect(heapUsed).toBeLessThan(heapLimitBytes);
  };

  it.each(BODY_ROUTES.map((route) => [name(route), route] as const))('%s', async (_name, route) => {
    const limit = limitOf(route);

    expectRefusedAsTooLarge(await send(route, bodyOfShape('string', limit.bytes + 1)), route);
    if (route.body === 'json') {
      const overValues = bodyOverValues(limit);
      if (overValues) expectRefusedAsTooLarge(await send(route, overValues), route);
      for (const shape of LIMIT_SHAPES) expectAnsweredWell(await send(route, bodyOfShape(shape, limit.bytes)), route);
    }

    const largest = route.body === 'json' ? (grownValidBody(route, targets) ?? largestHostileBody(limit)) : bodyOfShape('string', limit.bytes);
    expect(largest.length).toBeLessThanOrEqual(limit.bytes);
    const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => send(route, largest))).catch((error: Error) => {
      throw new Error(`${error.message} (${String(error.cause)}); the service ${service.hasExited() ? 'exited' : 'runs'}:\n${service.output().slice(-3_000)}`);
    });
    const failed = answers.find((res) => res.status >= 500);
    if (failed) throw new Error(`${name(route)} answered ${failed.status}: ${failed.text}\nthe service's errors:\n${loggedErrors(service.output())}\n${service.output().slice(-3_000)}`);
    for (const res of answers) expectAnsweredWell(res, route);
    await expectAliveAndBounded(route);
  }, 180_000);
});


/** The service's last error lines (pino level 50 and over), which a burst's request lines push out of the output's tail. */
function loggedErrors(output: string, last = 5): string {
  const errors = output.split('\n').filter((line) => /"level":(50|60)\b/.test(line));
  return errors.slice(-last).map((line) => line.slice(0, 2_000)).join('\n') || '(none logged)';
}

/** A real employer (token, entity, people, a benefit) made over HTTP; ids the test does not make are random. */
async function employerTargets(service: ServiceProcess): Promise<FuzzTargets> {
  const connection = await service.request(
    '/sandbox/connections',
    json({ provider_id: 'sandbox_automated', employee_size: 3 }, { authorization: APPLICATION_BASIC }),
  );
  if (connection.status !== 200) throw new Error(`sandbox connection: ${connection.text}`);
  const token: string = connection.body.access_token;
  const directory = await service.request('/employer/directory', { headers: bearer(token) });
  const individualIds: string[] = directory.body.individuals.map((person: { id: string }) => person.id);
  const benefit = await service.request(
    '/employer/benefits',
    json({ type: '401k', description: 'Limits 401(k)', frequency: 'every_paycheck' }, bearer(token)),
  );
  if (benefit.status !== 200) throw new Error(`benefit: ${benefit.text}`);
  const some = () => [randomUUID()];
  return {
    employer: {
      token,
      connectionId: connection.body.connection_id,
      entityId: connection.body.entity_id,
      companyId: connection.body.company_id,
      individualIds,
      benefitIds: [benefit.body.benefit_id],
      jobIds: some(),
      ruleIds: some(),
      payGroupIds: some(),
      paymentIds: some(),
    },
    application: APPLICATION,
    connect: { sessionId: randomUUID(), providerFlow: randomUUID(), signInFlow: randomUUID(), consentFlow: randomUUID(), entityName: 'Acme' },
    ops: { taskIds: some(), sagaIds: some(), jobIds: some(), deadLetterIds: some(), connectionIds: some(), policyIds: some(), discrepancyIds: some() },
    webhooks: { endpointIds: some(), deletableEndpointIds: some(), deliveryIds: some() },
  };
}

function authOf(route: FuzzRoute, targets: FuzzTargets): Record<string, string> {
  switch (route.auth) {
    case 'bearer':
      return bearer(targets.employer.token);
    case 'application':
      return { authorization: APPLICATION_BASIC };
    case 'ops':
      return OPS_BASIC;
    case 'none':
      return {};
  }
}

/** The route's path with a real id for each parameter the catalogue names, a random one otherwise. */
function pathOf(route: FuzzRoute, targets: FuzzTargets): string {
  return route.path.replace(/:(\w+)/g, (_match, param: string) => route.ids?.[param]?.(targets)[0] ?? randomUUID());
}

/**
 * The route's valid body grown to the most its bounds take, for routes whose body is a list:
 * the first element of the list repeated (each with an id of its own), up to the byte and value
 * bounds and 10,000 elements. What the route does with the most it accepts is the load it must carry.
 */
function grownValidBody(route: FuzzRoute, targets: FuzzTargets): Buffer | undefined {
  const valid = route.valid?.(targets);
  const holder = Array.isArray(valid) ? { list: valid } : (valid as Record<string, unknown> | undefined);
  const key = holder && Object.keys(holder).find((k) => Array.isArray(holder[k]) && (holder[k] as unknown[]).length > 0);
  if (!holder || key === undefined) return undefined;
  const element = (holder[key] as unknown[])[0];
  const limit = limitOf(route);
  const fresh = () => JSON.stringify(withOwnIds(element));
  const perElement = Buffer.byteLength(fresh()) + 1;
  const valuesPerElement = measureValues(fresh()) + 1;
  const count = Math.min(10_000, Math.floor((limit.bytes * 0.95) / perElement), Math.floor((limit.values * 0.95) / valuesPerElement));
  const list = Array.from({ length: count }, () => withOwnIds(element));
  const body = Array.isArray(valid) ? list : { ...holder, [key]: list };
  return Buffer.from(JSON.stringify(body));
}

function withOwnIds(element: unknown): unknown {
  if (typeof element === 'string') return /^[0-9a-f-]{36}$/.test(element) ? randomUUID() : element;
  if (typeof element !== 'object' || element === null) return element;
  const copy = JSON.parse(JSON.stringify(element)) as Record<string, unknown>;
  for (const field of ['id', 'individual_id']) if (typeof copy[field] === 'string') copy[field] = randomUUID();
  return copy;
}

const measureValues = (text: string) => measureJson(text, { depth: 64, values: Infinity }).values;
