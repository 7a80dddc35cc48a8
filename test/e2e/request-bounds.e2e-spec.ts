import { connect, Socket } from 'node:net';
import { DEFAULT_BODY_LIMIT, ROUTE_BODY_LIMITS } from '../../src/infrastructure/http/body-limits';
import { describeWithPostgres } from '../setup/test-env';
import { expectEventually } from '../utils/expect-eventually';
import { ServiceProcess, startHeapFlags, startServiceProcess } from '../utils/service-process';
import { createTestDatabase, TestDatabase } from '../utils/test-database';

const REQUEST_TIMEOUT_MS = 2_000;
const HEADERS_TIMEOUT_MS = 1_500;

/**
 * What one request may hold of an instance, over raw sockets against the service as `npm start`
 * runs it (its heap flags): bodies over their route's bounds refused before they are parsed,
 * requests that arrive too slowly answered 408 and closed, and a client that goes away
 * mid-body not logged as the service's error.
 */
describeWithPostgres('request bounds: body size, values and arrival time', () => {
  let database: TestDatabase;
  let service: ServiceProcess;

  beforeAll(async () => {
    database = await createTestDatabase();
    service = await startServiceProcess({
      name: 'request-bounds',
      databaseUrl: database.url,
      nodeOptions: startHeapFlags(),
      env: { LOG_LEVEL: 'info', HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) },
    });
  }, 180_000);

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
  });

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    service.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it('refuses the ~2 MB body of empty objects that once took the whole heap, and stays up', async () => {
    const hostile = `[${Array(699_050).fill('{}').join(',')}]`;
    for (const path of ['/auth/token', '/connect/sessions', '/webhooks/endpoints', '/hris/events']) {
      const res = await post(path, hostile);
      expect({ path, status: res.status, body: res.body }).toMatchObject({ path, status: 413, body: { code: 413, name: 'invalid_request_error', service_code: 'payload_too_large' } });
    }
    expect(service.hasExited()).toBe(false);
    expect((await service.request('/health/ready')).status).toBe(200);
  });

  it('names the route’s byte limit when a declared length is over it, before reading the body', async () => {
    const tokenLimit = ROUTE_BODY_LIMITS['POST /auth/token'].bytes;
    const answer = await rawExchange(service.port, `POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${tokenLimit + 1}\r\n\r\n{`);
    expect(answer).toMatch(/^HTTP\/1.1 413 /);
    expect(answer).toContain(`this route accepts (${tokenLimit} bytes)`);
    const res = await post('/webhooks/endpoints', `{"a":"${'x'.repeat(DEFAULT_BODY_LIMIT.bytes)}"}`);
    expect(res.status).toBe(413);
    expect(res.body.message).toContain(`(${DEFAULT_BODY_LIMIT.bytes} bytes)`);
  });

  it('counts JSON values before parsing: more than a route takes is 413, however few the bytes', async () => {
    const { values } = ROUTE_BODY_LIMITS['POST /auth/token'];
    const res = await post('/auth/token', `[${Array(values).fill('0').join(',')}]`);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ service_code: 'payload_too_large', message: `Request body holds more JSON values than this route accepts (${values})` });
    const fits = await post('/auth/token', `[${Array(values - 2).fill('0').join(',')}]`);
    expect(fits.status).toBe(400);
  });

  it('answers 408 and closes a request whose body arrives a byte at a time', async () => {
    const socket = await open(service.port);
    socket.write('POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
    const drip = setInterval(() => socket.writable && socket.write(' '), 200);
    try {
      const answer = await untilClosed(socket);
      expect(answer).toMatch(/^HTTP\/1.1 408 /);
      expect(answer).toContain('"service_code":"request_timeout"');
    } finally {
      clearInterval(drip);
    }
  });

  it('answers 408 and closes a request whose headers arrive a byte at a time', async () => {
    const socket = await open(service.port);
    socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => socket.writable && socket.write('X-Slow: y\r\n'), 200);
    try {
      expect(await untilClosed(socket)).toMatch(/^HTTP\/1.1 408 /);
    } finally {
      clearInterval(drip);
    }
  });

  it('does not log a client that drops the connection mid-body as an error of its own', async () => {
    const before = service.output().length;
    for (let i = 0; i < 3; i++) {
      const socket = await open(service.port);
      socket.write('POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"client_id":');
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
    }
    await expectEventually(() => expect(service.output().slice(before)).toContain('the client closed the connection before its request had arrived'));
    const logged = service.output().slice(before);
    expect(logged).not.toMatch(/"level":50/);
    expect(logged).not.toContain('abortIncoming');
  });
});

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sent until it closed the connection. */
function untilClosed(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(received));
  });
}

async function rawExchange(port: number, text: string): Promise<string> {
  const socket = await open(port);
  const answer = untilClosed(socket);
  socket.write(text);
  // The answer comes before the body: Fastify closes after refusing a declared length.
  const timer = setTimeout(() => socket.destroy(), 10_000);
  try {
    return await answer;
  } finally {
    clearTimeout(timer);
  }
}
