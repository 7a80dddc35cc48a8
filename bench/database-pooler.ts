import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const SCRIPT = resolve(__dirname, '../scripts/pgbouncer/run');
const run = promisify(execFile);

/** The server the run's databases are made on (as test/run-tests.js and bench/hris-kit.ts find it). */
function databaseServer(): URL {
  return new URL(process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
}

/**
 * The database settings of a service on the database at `directUrl`. With a pooler (PgBouncer in
 * transaction mode, `scripts/pgbouncer/run`) in front of that database's server, the service's
 * pool goes through it (DATABASE_URL) and its sessions go to the server itself
 * (DATABASE_DIRECT_URL), as a deployment behind a pooler runs. `poolerUrl`: the pooler's
 * address; default TEST_DATABASE_POOLER_URL, for databases on the run's server (`npm test` sets
 * it when PgBouncer runs). Without: the database itself for both.
 */
export function serviceDatabaseEnv(directUrl: string, poolerUrl = poolerFor(directUrl)): Record<string, string> {
  if (!poolerUrl) return { DATABASE_URL: directUrl };
  const pooled = new URL(directUrl);
  const pooler = new URL(poolerUrl);
  pooled.hostname = pooler.hostname;
  pooled.port = pooler.port;
  return { DATABASE_URL: pooled.toString(), DATABASE_DIRECT_URL: directUrl };
}

function poolerFor(directUrl: string): string | undefined {
  const pooler = process.env.TEST_DATABASE_POOLER_URL;
  if (!pooler) return undefined;
  const server = databaseServer();
  const target = new URL(directUrl);
  // Only the run's server is behind that pooler; a private cluster (the fault suite's) is not.
  return target.hostname === server.hostname && (target.port || '5432') === (server.port || '5432') ? pooler : undefined;
}

/** Whether the run routes services through a pooler (TEST_DATABASE_POOLER_URL). */
export function poolerInUse(): boolean {
  return Boolean(process.env.TEST_DATABASE_POOLER_URL);
}

export interface PrivatePooler {
  url: string;
  stop(): Promise<void>;
}

/** A PgBouncer of its own in front of a private cluster on `serverPort`, listening on `port`. */
export async function startPrivatePooler(serverPort: number, port: number, dir: string): Promise<PrivatePooler> {
  const args = ['--port', String(port), '--server-port', String(serverPort), '--dir', dir];
  await run('bash', [SCRIPT, 'up', ...args]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => run('bash', [SCRIPT, 'down', ...args]).then(() => undefined),
  };
}
