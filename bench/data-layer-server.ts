/**
 * The second baseline of the HTTP benchmark: a bare `node:http` server that does the database
 * work of each read the way the service does it — the access token's SHA-256, the
 * connection lookup (ConnectionsRepository.findByTokenDigest) and the synced read
 * (EmployerDataRepository) through TypeORM on a pool of the service's default size — and
 * answers JSON.stringify of the same shape, with nothing else (no framework, guards, pipes,
 * interceptors, hooks, logging or metrics). service ÷ this server is what the framework
 * layers cost; this server ÷ the bare one is what the database round trips cost.
 *
 * Started by startDataLayerServer (bench-service.ts) as a child process; receives the
 * database URL over IPC and answers with the port it listens on.
 */
import 'reflect-metadata';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { DataSource } from 'typeorm';
import { digestOf } from '../src/domain/auth/opaque-secret';
import { dataSourceOptions } from '../src/infrastructure/database/data-source';
import { ConnectionsRepository } from '../src/infrastructure/database/repositories/connections.repository';
import { EmployerDataRepository } from '../src/infrastructure/database/repositories/employer-data.repository';

const PAGE = { limit: 100, offset: 0 };

process.once('message', async (message: { databaseUrl: string; poolSize: number }) => {
  const dataSource = new DataSource({ ...dataSourceOptions({ url: message.databaseUrl, poolSize: message.poolSize }), migrationsRun: false });
  await dataSource.initialize();
  const connections = new ConnectionsRepository(dataSource);
  const employerData = new EmployerDataRepository(dataSource);

  async function answer(request: IncomingMessage, body: string): Promise<{ status: number; json: unknown }> {
    const token = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const principal = token === undefined ? undefined : await connections.findByTokenDigest(digestOf(token));
    if (!principal) return { status: 401, json: { code: 401 } };
    const entityId = principal.connection.entities[0].id;
    const path = request.url ?? '';
    if (request.method === 'GET' && path === '/employer/company') {
      return { status: 200, json: (await employerData.syncedCompany(entityId))!.value };
    }
    if (request.method === 'GET' && path === '/employer/directory') {
      const page = (await employerData.syncedDirectory(entityId, PAGE))!.value;
      return { status: 200, json: { paging: { count: page.count, offset: page.offset }, individuals: page.items } };
    }
    if (request.method === 'POST' && path === '/employer/pay-statement') {
      const requests = (JSON.parse(body) as { requests: { payment_id: string }[] }).requests;
      const responses = await Promise.all(
        requests.map(async ({ payment_id }) => {
          const page = (await employerData.syncedPayStatements(entityId, payment_id.toLowerCase(), PAGE))!.value!;
          return { payment_id, code: 200, body: { paging: { count: page.count, offset: page.offset }, pay_statements: page.items } };
        }),
      );
      return { status: 200, json: { responses } };
    }
    return { status: 404, json: { code: 404 } };
  }

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      answer(request, Buffer.concat(chunks).toString()).then(
        ({ status, json }) => {
          const bytes = Buffer.from(JSON.stringify(json));
          response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(bytes.length) });
          response.end(bytes);
        },
        (error: Error) => {
          response.writeHead(500, { 'content-type': 'text/plain' });
          response.end(error.stack);
        },
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
  });
  process.once('SIGTERM', () => server.close(() => void dataSource.destroy().finally(() => process.exit(0))));
});
