/**
 * The limit the HTTP benchmark compares the service with: a bare `node:http` server answering
 * each known method and path with canned bytes (the service's own answer), nothing else.
 * Started by startBareServer (bench-service.ts) as a child process; receives its routes over
 * IPC and answers with the port it listens on.
 */
import { createServer } from 'node:http';

interface Route {
  method: string;
  path: string;
  status: number;
  contentType: string;
  /** base64 */
  body: string;
}

process.once('message', (message: { routes: Route[] }) => {
  const routes = new Map(
    message.routes.map((r) => [`${r.method} ${r.path}`, { status: r.status, contentType: r.contentType, body: Buffer.from(r.body, 'base64') }]),
  );
  const server = createServer((request, response) => {
    // Read the request body like any server would before answering.
    request.on('data', () => undefined);
    request.on('end', () => {
      const route = routes.get(`${request.method} ${request.url}`);
      if (!route) {
        response.writeHead(404, { 'content-length': '0' });
        response.end();
        return;
      }
      response.writeHead(route.status, { 'content-type': route.contentType, 'content-length': String(route.body.length) });
      response.end(route.body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
});
