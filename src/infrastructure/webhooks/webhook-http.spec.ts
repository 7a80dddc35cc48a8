import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import * as http from 'node:http';
import * as https from 'node:https';
import { AddressInfo } from 'node:net';
import {
  destroyWebhookAgents,
  outcomeOf,
  sendWebhook,
  WEBHOOK_USER_AGENT,
  WebhookSendPolicy,
} from './webhook-http';

const policy: WebhookSendPolicy = { timeoutMs: 2000, maxResponseBytes: 1024, allowLoopback: true, allowPrivate: false };
const liveApp: WebhookSendPolicy = { ...policy, allowLoopback: false };

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

interface TestServer {
  url: string;
  port: number;
  received: Received[];
  connections: number;
}

const servers: http.Server[] = [];

/** A receiver on 127.0.0.1 that records each request, then lets `answer` respond (or not). */
async function startServer(
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  create: (listener: http.RequestListener) => http.Server = (listener) => http.createServer(listener),
): Promise<TestServer> {
  const state = { received: [] as Received[], connections: 0 };
  const server = create((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      state.received.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
      answer(req, res);
    });
  });
  server.on('connection', () => state.connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const scheme = server instanceof https.Server ? 'https' : 'http';
  return Object.assign(state, { url: `${scheme}://127.0.0.1:${port}/hooks`, port }) as TestServer;
}

/**
 * TCP connections this process starts while `run` runs, seen through Node's diagnostics channel
 * (published by net.connect, which http uses; tls.connect does not publish it, so use http URLs).
 */
async function socketsOpenedBy<T>(run: () => Promise<T>): Promise<{ result: T; sockets: number }> {
  let sockets = 0;
  const count = () => sockets++;
  subscribe('net.client.socket', count);
  try {
    return { result: await run(), sockets };
  } finally {
    unsubscribe('net.client.socket', count);
  }
}

const send = (url: string, sendPolicy = policy, body = '{"type":"test"}', headers: Record<string, string> = {}) =>
  sendWebhook({ url, headers, body }, sendPolicy);

afterEach(async () => {
  destroyWebhookAgents();
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

describe('outcomeOf', () => {
  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [408, 'retry'],
    [429, 'retry'],
    [400, 'stop'],
    [401, 'stop'],
    [404, 'stop'],
    [410, 'stop'],
    [499, 'stop'],
    [301, 'retry'],
    [302, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
    [599, 'retry'],
    [101, 'retry'],
    [null, 'retry'],
  ] as const)('%s → %s', (status, outcome) => {
    expect(outcomeOf(status)).toBe(outcome);
  });
});

describe('sendWebhook', () => {
  it('POSTs the body byte-exact with the given headers and delivers on 200', async () => {
    const server = await startServer((_req, res) => res.end('{"ok":true}'));
    const body = JSON.stringify({ name: 'Zoë 🌴', note: 'line\nbreak' });

    const response = await send(server.url, policy, body, { 'Webhook-Id': 'msg_1', 'webhook-signature': 'v1,abc' });

    expect(response).toEqual({
      statusCode: 200,
      latencyMs: expect.any(Number),
      excerpt: '{"ok":true}',
      error: null,
      outcome: 'delivered',
    });
    expect(Number.isInteger(response.latencyMs)).toBe(true);
    const [received] = server.received;
    expect(received.method).toBe('POST');
    expect(received.url).toBe('/hooks');
    expect(received.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(received.headers).toMatchObject({
      'webhook-id': 'msg_1',
      'webhook-signature': 'v1,abc',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': WEBHOOK_USER_AGENT,
    });
  });

  it('keeps a given user-agent, and its own content-type and content-length over given ones', async () => {
    const server = await startServer((_req, res) => res.end());

    await send(server.url, policy, '{}', { 'User-Agent': 'custom/2', 'Content-Type': 'text/plain', 'content-length': '99' });

    expect(server.received[0].headers).toMatchObject({
      'user-agent': 'custom/2',
      'content-type': 'application/json',
      'content-length': '2',
    });
  });

  it.each([
    [201, 'delivered'],
    [500, 'retry'],
    [503, 'retry'],
    [410, 'stop'],
    [400, 'stop'],
    [408, 'retry'],
    [429, 'retry'],
  ] as const)('answers %s with outcome %s', async (status, outcome) => {
    const server = await startServer((_req, res) => {
      res.statusCode = status;
      res.end(`status ${status}`);
    });

    const response = await send(server.url);

    expect(response).toMatchObject({ statusCode: status, outcome, excerpt: `status ${status}`, error: null });
  });

  it('does not follow a redirect: a 302 is retried and its target never hears of it', async () => {
    const target = await startServer((_req, res) => res.end('should not be reached'));
    const redirecting = await startServer((_req, res) => {
      res.writeHead(302, { location: target.url });
      res.end();
    });

    const response = await send(redirecting.url);

    expect(response).toMatchObject({ statusCode: 302, outcome: 'retry', error: null });
    expect(redirecting.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
  });

  it('reuses a kept-alive connection for the next delivery to the same receiver', async () => {
    const server = await startServer((_req, res) => res.end('ok'));

    await send(server.url);
    await send(server.url);

    expect(server.received).toHaveLength(2);
    expect(server.connections).toBe(1);
  });

  describe('timeout', () => {
    const quick = { ...policy, timeoutMs: 300 };

    it('gives up on a receiver that never answers', async () => {
      const server = await startServer(() => undefined);

      const response = await send(server.url, quick);

      expect(response).toMatchObject({ statusCode: null, excerpt: '', error: 'timed out after 300 ms', outcome: 'retry' });
      // libuv's timers may fire up to a millisecond early.
      expect(response.latencyMs).toBeGreaterThanOrEqual(299);
      expect(response.latencyMs).toBeLessThan(300 + 2000);
    });

    it('keeps the status of a receiver that answered but then stalled on the body', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      });

      const response = await send(server.url, quick);

      expect(response).toMatchObject({
        statusCode: 200,
        excerpt: 'partial',
        error: 'response body timed out after 300 ms',
        outcome: 'delivered',
      });
      expect(response.latencyMs).toBeGreaterThanOrEqual(299);
      expect(response.latencyMs).toBeLessThan(300 + 2000);
    });
  });

  it('reads an endless body only up to the cap, then hangs up', async () => {
    let serverHungUp!: () => void;
    const hungUp = new Promise<void>((resolve) => (serverHungUp = resolve));
    const server = await startServer((_req, res) => {
      res.writeHead(500);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      res.on('close', serverHungUp);
      pump();
    });

    const response = await send(server.url, { ...policy, timeoutMs: 10_000, maxResponseBytes: 1000 });

    expect(response).toMatchObject({ statusCode: 500, error: null, outcome: 'retry' });
    expect(response.excerpt).toBe('a'.repeat(1000));
    expect(response.latencyMs).toBeLessThan(2000);
    await hungUp;
  });

  it('reads nothing of the body when the cap is 0', async () => {
    const server = await startServer((_req, res) => res.end('ignored'));

    const response = await send(server.url, { ...policy, maxResponseBytes: 0 });

    expect(response).toMatchObject({ statusCode: 200, excerpt: '', outcome: 'delivered' });
  });

  it('turns the excerpt into storable text: invalid UTF-8 and U+0000 replaced', async () => {
    const server = await startServer((_req, res) => res.end(Buffer.from([0xff, 0x61, 0x00, 0x62])));

    expect((await send(server.url)).excerpt).toBe('\ufffda\ufffdb');
  });

  it('cuts a multi-byte character at the cap into U+FFFD rather than failing', async () => {
    const server = await startServer((_req, res) => res.end('ab€'));

    expect((await send(server.url, { ...policy, maxResponseBytes: 3 })).excerpt).toBe('ab\ufffd');
  });

  it('reports a connection refused', async () => {
    const server = await startServer(() => undefined);
    const { url } = server;
    await new Promise((resolve) => servers.pop()!.close(resolve));

    const response = await send(url);

    expect(response).toMatchObject({ statusCode: null, excerpt: '', error: 'connection refused', outcome: 'retry' });
  });

  it('reports a receiver that hangs up without an answer', async () => {
    const server = await startServer((req) => req.socket.destroy());

    const response = await send(server.url);

    expect(response).toMatchObject({ statusCode: null, error: 'connection closed without an answer', outcome: 'retry' });
  });

  it('verifies TLS certificates: a self-signed receiver gets nothing', async () => {
    const server = await startServer(
      (_req, res) => res.end('secret'),
      (listener) => https.createServer({ key: TEST_KEY, cert: TEST_CERT }, listener),
    );

    const response = await send(server.url);

    expect(response).toMatchObject({ statusCode: null, excerpt: '', outcome: 'retry' });
    expect(response.error).toMatch(/^TLS error: /);
    expect(server.received).toHaveLength(0);
  });

  it('never throws: a request Node cannot build, or no URL at all, stops', async () => {
    const server = await startServer((_req, res) => res.end());

    expect(await send(server.url, policy, '{}', { 'x-bad': 'line\nbreak' })).toMatchObject({
      statusCode: null,
      outcome: 'stop',
      error: expect.stringMatching(/^invalid request: /),
    });
    expect(await send('not a url')).toMatchObject({ statusCode: null, outcome: 'stop' });
    expect(await send('ftp://127.0.0.1/')).toMatchObject({ statusCode: null, outcome: 'stop' });
    expect(server.received).toHaveLength(0);
  });

  describe('address guard', () => {
    it('refuses a loopback literal when loopback is not allowed, before connecting', async () => {
      const server = await startServer((_req, res) => res.end());

      const { result, sockets } = await socketsOpenedBy(() => send(server.url, liveApp));

      expect(result).toMatchObject({ statusCode: null, error: 'address 127.0.0.1 is a loopback address', outcome: 'retry' });
      expect(sockets).toBe(0);
      expect(server.received).toHaveLength(0);
    });

    it('refuses a name resolving to loopback at connect time, through the keep-alive agent', async () => {
      const server = await startServer((_req, res) => res.end());

      const response = await send(`http://localhost:${server.port}/hooks`, liveApp);

      expect(response).toMatchObject({ statusCode: null, outcome: 'retry' });
      expect(response.error).toMatch(/^address (127\.0\.0\.1|::1) is a loopback address$/);
      expect(server.connections).toBe(0);
    });

    it('never lends a loopback connection opened for a sandbox application to a live one', async () => {
      const server = await startServer((_req, res) => res.end('ok'));
      const url = `http://localhost:${server.port}/hooks`;

      expect(await send(url, policy)).toMatchObject({ statusCode: 200 });
      expect(await send(url, liveApp)).toMatchObject({ statusCode: null, error: expect.stringMatching(/loopback/) });
      expect(server.received).toHaveLength(1);
    });

    it('treats an IPv4-mapped IPv6 literal as the IPv4 address it carries', async () => {
      const { result, sockets } = await socketsOpenedBy(() => send('http://[::ffff:127.0.0.1]:9/', liveApp));

      expect(result).toMatchObject({ statusCode: null, error: 'address ::ffff:7f00:1 (127.0.0.1) is a loopback address' });
      expect(sockets).toBe(0);
    });

    it('refuses a private literal without any connection attempt', async () => {
      const { result, sockets } = await socketsOpenedBy(() => send('http://10.1.2.3/hooks', policy));

      expect(result).toMatchObject({ statusCode: null, error: 'address 10.1.2.3 is a private address', outcome: 'retry' });
      expect(sockets).toBe(0);
    });

    // Letting a private literal through under allowPrivate is checked on the rule alone
    // (webhook-address.spec.ts): a test here would send a SYN into a private range.

    it('refuses the unspecified address whatever the policy', async () => {
      const anything = { ...policy, allowLoopback: true, allowPrivate: true };

      for (const url of ['http://0.0.0.0:9/', 'http://[::]:9/']) {
        const { result, sockets } = await socketsOpenedBy(() => send(url, anything));
        expect(result).toMatchObject({ statusCode: null, error: expect.stringMatching(/is an unspecified address$/) });
        expect(sockets).toBe(0);
      }
    });

    it.each([
      ['http://[64:ff9b::a9fe:a9fe]/', 'address 64:ff9b::a9fe:a9fe (169.254.169.254) is a cloud metadata address'],
      ['http://[64:ff9b:1::a9fe:a9fe]/', 'address 64:ff9b:1::a9fe:a9fe is a NAT64 address'],
      ['http://[2002:a9fe:a9fe::]/', 'address 2002:a9fe:a9fe:: is a 6to4 address'],
      ['http://[::a9fe:a9fe]/', 'address ::a9fe:a9fe is a reserved address'],
      ['http://[::10.0.0.1]/', 'address ::a00:1 is a reserved address'],
      ['http://[::ffff:0:a9fe:a9fe]/', 'address ::ffff:0:a9fe:a9fe is an IPv4-translated address'],
      ['http://[100::1]/', 'address 100::1 is a discard-only address'],
      ['http://169.254.169.254/', 'address 169.254.169.254 is a cloud metadata address'],
      ['http://10.0.0.1/', 'address 10.0.0.1 is a private address'],
    ])('refuses %s before connecting, under the rule saved URLs pass (issue 38, finding 6)', async (url, error) => {
      const { result, sockets } = await socketsOpenedBy(() => send(url, liveApp));
      expect(result).toMatchObject({ statusCode: null, error });
      expect(sockets).toBe(0);
    });
  });
});

// Self-signed, for 127.0.0.1 and localhost; made for this test only and trusted nowhere.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgpHxs/HmjFF9PhU1u
qQFr5sccuDXHCN6CLmikXaUyWlmhRANCAASMkdBK4e6SAfzN3eUcwAJmp6Yjki3O
AEUeG8qVxfMbBQf1ENvE7x0WqeovMC+u/09T/EpcnK5QeMFwlqJPA5XF
-----END PRIVATE KEY-----`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUTKSiYm0fHFVVXIcNr5HlVQHLXkIwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyNTE2NDg1NFoYDzIxMjYxMTAx
MTY0ODU0WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASMkdBK4e6SAfzN3eUcwAJmp6Yjki3OAEUeG8qVxfMbBQf1ENvE7x0W
qeovMC+u/09T/EpcnK5QeMFwlqJPA5XFo28wbTAdBgNVHQ4EFgQUopwzYKObVcqr
2xjGBZdfUzrkTrcwHwYDVR0jBBgwFoAUopwzYKObVcqr2xjGBZdfUzrkTrcwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
zj0EAwIDSQAwRgIhALdLipIq9g4ez/aCtbO0vQ2ux1h5MaKZsLNSj/4HkcypAiEA
v3rzoZ8+BfGNjIqts0W9dlC6aYx60mjxBafj+cG31sU=
-----END CERTIFICATE-----`;
