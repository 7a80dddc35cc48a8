import { AddressInfo, createServer, Server, Socket } from 'node:net';
import { Pool } from 'pg';
import { QueryFailedError } from 'typeorm';
import { INTERNAL_ERROR_MESSAGE, toErrorResponse } from './error-response';

/**
 * What a request that could not reach the database is answered, with the errors node-postgres's
 * pool really raises: against a server that accepts and never answers (overloaded), and one that
 * drops the connection (lost).
 */
describe('toErrorResponse for the database pool', () => {
  const sockets = new Set<Socket>();
  let server: Server;
  let dropping = false;

  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      if (dropping) socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const poolOf = (max: number) =>
    new Pool({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, user: 'u', database: 'd', max, connectionTimeoutMillis: 150 });

  const failureOf = async (work: Promise<unknown>): Promise<unknown> => work.then(() => new Error('no failure'), (error: unknown) => error);

  it('answers 429 server_busy with Retry-After when no connection came within the wait: a new one not established, or none free', async () => {
    dropping = false;
    const pool = poolOf(1);
    try {
      const [establishing, waiting] = await Promise.all([failureOf(pool.connect()), failureOf(pool.connect())]);
      expect([(establishing as Error).message, (waiting as Error).message]).toEqual([
        'Connection terminated due to connection timeout',
        'timeout exceeded when trying to connect',
      ]);
      for (const error of [establishing, waiting]) {
        expect(toErrorResponse(error)).toEqual({
          status: 429,
          body: { code: 429, name: 'rate_limit_error', service_code: 'server_busy', message: 'The service is busy; retry shortly', retry_after: 1 },
          headers: { 'retry-after': '1' },
          unexpected: false,
        });
      }
    } finally {
      await pool.end();
    }
  });

  it('answers 500 without internals when the connection was lost: the work may have been done', async () => {
    dropping = true;
    const pool = poolOf(1);
    try {
      const lost = await failureOf(pool.query('SELECT 1'));
      expect((lost as Error).message).toMatch(/Connection terminated unexpectedly/);
      expect(toErrorResponse(lost)).toMatchObject({
        status: 500,
        body: { code: 500, name: 'server_error', message: INTERNAL_ERROR_MESSAGE },
        unexpected: true,
      });
    } finally {
      await pool.end();
    }
  });
});

describe('toErrorResponse for a transaction the database refused or undid', () => {
  const failed = (code: string, message: string) => new QueryFailedError('UPDATE t SET x = 1', [], Object.assign(new Error(message), { code }));

  it('answers 429 server_busy with Retry-After for a deadlock, a serialization failure, a lock or statement timeout, no connection slot', () => {
    const busy = [
      failed('40P01', 'deadlock detected'),
      failed('40001', 'could not serialize access due to concurrent update'),
      failed('55P03', 'canceling statement due to lock timeout'),
      failed('57014', 'canceling statement due to user request'),
      failed('53300', 'sorry, too many clients already'),
    ];
    for (const error of busy) {
      expect(toErrorResponse(error)).toEqual({
        status: 429,
        body: { code: 429, name: 'rate_limit_error', service_code: 'server_busy', message: 'The service is busy; retry shortly', retry_after: 1 },
        headers: { 'retry-after': '1' },
        unexpected: false,
      });
    }
  });

  it('answers 500 without internals when the outcome is unknown or the server is broken, not busy', () => {
    for (const error of [failed('40003', 'statement completion unknown'), failed('53100', 'could not extend file: No space left on device'), failed('23505', 'duplicate key')]) {
      expect(toErrorResponse(error)).toMatchObject({ status: 500, body: { code: 500, name: 'server_error', message: INTERNAL_ERROR_MESSAGE }, unexpected: true });
      expect(JSON.stringify(toErrorResponse(error).body)).not.toContain((error.driverError as Error).message);
    }
  });
});
