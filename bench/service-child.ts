/**
 * Child processes of the benchmarks, the fault suite and the e2e tests: a free loopback port,
 * children killed when this process goes (also when it is killed: see exit-with-parent.js), and
 * the service itself (src/main.ts transpiled once to .transpiled/, no type check, no build step)
 * started on a database and, optionally, the broker. The fault
 * suite (bench/hris-kit.ts) and the tests (test/utils/service-process.ts) each start it with
 * their own settings on top. Plain Node only, no jest: `npm run faults` runs this under ts-node.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { transpiledEntry } from './transpiled-service';
import { serviceDatabaseEnv } from './database-pooler';

const ROOT = resolve(__dirname, '..');

/** Output kept per process: enough for the last few hundred log lines of a failure. */
const MAX_OUTPUT_CHARS = 1_000_000;

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Node arguments that make a child exit when this process is gone, however it went: the child
 * watches its stdin, a pipe from this process (spawn it with stdin 'pipe'), and exits when it
 * closes. A jest worker killed at a timeout runs no 'exit' listener; without this its services
 * would live on and hold the run open.
 */
export const EXIT_WITH_PARENT: readonly string[] = ['-r', resolve(__dirname, 'exit-with-parent.js')];

/** Children still running: killed when this process goes, whatever happens. */
const children = new Set<ChildProcess>();
const killChildren = () => {
  for (const child of children) child.kill('SIGKILL');
};
process.once('exit', killChildren);
// A benchmark stopped by a signal runs no 'exit' listener: its services would outlive it and load
// the machine under the next measurements. Kill them, then die of the same signal.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killChildren();
    process.kill(process.pid, signal);
  });
}

/**
 * Keeps `child` on the list of children killed when this process goes. Settled (never rejects)
 * when it has exited, or when it could not be spawned at all (then only 'error' comes, which
 * `onError` hears).
 */
export function trackChild(child: ChildProcess, onError?: (error: Error) => void): Promise<ServiceExit> {
  children.add(child);
  return new Promise((done) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      done({ code, signal });
    });
    child.once('error', (error) => {
      children.delete(child);
      onError?.(error);
      done({ code: null, signal: null });
    });
  });
}

export interface ServiceChild {
  name: string;
  pid: number;
  port: number;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** Settled when the process has exited (never rejects). */
  exited: Promise<ServiceExit>;
  hasExited(): boolean;
  /** The latest stdout and stderr. */
  output(): string;
  /** Sends the signal and waits for the exit. */
  kill(signal: 'SIGKILL' | 'SIGTERM'): Promise<ServiceExit>;
  /** SIGTERM, then SIGKILL when it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<ServiceExit>;
}

export interface ServiceKafka {
  /** `host:port,…` */
  brokers: string;
  topicPrefix: string;
  groupId: string;
  /** Partitions of the topics the service creates (KAFKA_TOPIC_PARTITIONS); default 6. */
  partitions?: number;
}

export interface ServiceChildOptions {
  /** A label for messages and the Kafka client id, e.g. `consumer-a`. */
  name: string;
  /** The database to run on (several processes may share one). */
  databaseUrl: string;
  /** A pooler in front of that database's server, which the pool goes through (serviceDatabaseEnv); default as the run has it. */
  poolerUrl?: string;
  /** Without: the in-process transport. */
  kafka?: ServiceKafka;
  /**
   * Default: the process binds a port the system picks and says which when it listens. (A port
   * found free here and handed over could be taken by another process before the child listened,
   * and then a readiness probe reached that other process.)
   */
  port?: number;
  /**
   * More settings; they win over the defaults here. The callers set at least DATABASE_POOL_SIZE,
   * OPS_USERNAME, OPS_PASSWORD and LOG_LEVEL.
   */
  env?: Record<string, string>;
  /** How long start-up may take until /health/ready answers 200; default 120 s. */
  readyTimeoutMs?: number;
  /** Options for node itself, e.g. startHeapFlags() to run with the heap `npm start` gives. */
  nodeOptions?: string[];
}

/** The node flags `npm start` runs the service with (package.json's `node <flags> dist/main.js`). */
export function startNodeArgs(): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { scripts } = require(resolve(ROOT, 'package.json')) as { scripts: Record<string, string> };
  const args = /^node\s+(.*?)\s*dist\/main\.js$/.exec(scripts.start.trim());
  if (!args) throw new Error(`package.json's start script is not "node <flags> dist/main.js": ${scripts.start}`);
  return args[1].split(/\s+/).filter(Boolean);
}

/** The V8 heap flags of `npm start`, so that a child runs in the heap a deployment has. */
export function startHeapFlags(): string[] {
  return startNodeArgs().filter((word) => /^--(max-old-space-size|max-semi-space-size|heap-growing-percent)=/.test(word));
}

/**
 * The service as a child process on loopback, resolved once /health/ready answers 200 (by then
 * its Kafka consumer has joined the group). Settings: fast polls, short leases (a killed
 * process's jobs and outbox lanes are taken over within seconds), no provider latency, then
 * `options.env`; nothing is inherited from this process but PATH.
 */
export async function startServiceChild(options: ServiceChildOptions): Promise<ServiceChild> {
  const { name, kafka } = options;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOST: '127.0.0.1',
    PORT: String(options.port ?? 0),
    ...serviceDatabaseEnv(options.databaseUrl, options.poolerUrl),
    OUTBOX_POLL_MS: '20',
    JOB_POLL_MS: '20',
    JOB_LEASE_MS: '5000',
    OUTBOX_LEASE_MS: '5000',
    PROVIDER_LATENCY_MS: '0',
    SHUTDOWN_TIMEOUT_MS: '10000',
    // Every child of one run shares it, as the instances of one deployment must.
    WEBHOOK_SECRETS_KEY: 'webhook-secrets-key-shared-by-child-services',
    WEBHOOK_POLL_MS: '20',
    ...(kafka && {
      KAFKA_BROKERS: kafka.brokers,
      KAFKA_TOPIC_PREFIX: kafka.topicPrefix,
      KAFKA_GROUP_ID: kafka.groupId,
      KAFKA_TOPIC_PARTITIONS: String(kafka.partitions ?? 6),
      // Tells the members of one group apart in describeGroups.
      KAFKA_CLIENT_ID: name.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100),
    }),
    ...options.env,
  };
  const child = spawn(process.execPath, [...(options.nodeOptions ?? []), ...EXIT_WITH_PARENT, ...transpiledEntry('main')], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let listeningOn = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    // The address it listens on, as src/main.ts prints it once the server is bound.
    listeningOn ||= /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? '';
    if (output.length > MAX_OUTPUT_CHARS) output = output.slice(-MAX_OUTPUT_CHARS);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let exitedYet = false;
  const exited = trackChild(child, (error) => (output += `\n${error.stack ?? error.message}`)).then((exit) => {
    exitedYet = true;
    return exit;
  });
  const kill = async (signal: 'SIGKILL' | 'SIGTERM') => {
    if (!exitedYet) child.kill(signal);
    return exited;
  };
  const service: ServiceChild = {
    name,
    pid: child.pid ?? -1,
    port: options.port ?? 0,
    url: '',
    exited,
    hasExited: () => exitedYet,
    output: () => output,
    kill,
    stop: async (graceMs = 20_000) => {
      if (exitedYet) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exitedYet) {
      const { code, signal } = await exited;
      throw new Error(`${name} exited before it was ready (code ${code}, signal ${signal}):\n${tail(output)}`);
    }
    if (service.url === '' && listeningOn !== '') {
      service.url = listeningOn;
      service.port = Number(new URL(listeningOn).port);
    }
    const ready = service.url === '' ? undefined : await fetch(`${service.url}/health/ready`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    if (ready?.status === 200) return service;
    if (Date.now() > deadline) {
      await kill('SIGKILL');
      throw new Error(`${name} was not ready within ${readyTimeoutMs / 1000} s:\n${tail(output)}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** The last lines of a process's output, for an error message. */
export function tail(output: string, lines = 60): string {
  return output.split('\n').slice(-lines).join('\n');
}
