import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { request, TestResponse } from './test-app';

const ROOT = resolve(__dirname, '../..');

/** The ops credentials every service process is started with (`OPS_BASIC` is their header). */
export const OPS_CREDENTIALS = { username: 'ops', password: 'ops-password-for-tests' } as const;
export const OPS_BASIC = {
  authorization: `Basic ${Buffer.from(`${OPS_CREDENTIALS.username}:${OPS_CREDENTIALS.password}`).toString('base64')}`,
};

/** Output kept per process: enough for the last few hundred log lines of a failure. */
const MAX_OUTPUT_CHARS = 1_000_000;

export interface ServiceProcessKafka {
  /** `host:port,…`, e.g. testEnv.kafkaBrokers. */
  brokers: string;
  topicPrefix: string;
  groupId: string;
  /** Partitions of the topics the service creates (KAFKA_TOPIC_PARTITIONS); default 6. */
  partitions?: number;
}

export interface ServiceProcessOptions {
  /** A label for messages and the Kafka client id, e.g. `consumer-a`. */
  name?: string;
  /** The database to run on (several processes may share one), e.g. createTestDatabase().url. */
  databaseUrl: string;
  /** Without: the in-process transport. */
  kafka?: ServiceProcessKafka;
  /** Default: a free port. */
  port?: number;
  /** More settings; they win over the defaults here (LOG_LEVEL, JOB_POLL_MS, APP_CLIENT_ID, …). */
  env?: Record<string, string>;
  /** How long start-up may take until /health/ready answers 200; default 90 s. */
  readyTimeoutMs?: number;
}

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  name: string;
  pid: number;
  port: number;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** Settled when the process has exited (never rejects). */
  exited: Promise<ServiceExit>;
  /** Everything written to stdout and stderr so far (the latest MAX_OUTPUT_CHARS). */
  output(): string;
  request(path: string, init?: RequestInit): Promise<TestResponse>;
  /** Sends the signal and waits for the exit. */
  kill(signal: 'SIGKILL' | 'SIGTERM'): Promise<ServiceExit>;
  /** SIGTERM, then SIGKILL when it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<ServiceExit>;
}

/** Processes started and not yet exited: killed when the test process goes, whatever happens. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

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

/**
 * Runs the service (src/main.ts, transpile-only) as a child process on the given database and
 * broker, and resolves once /health/ready answers 200: by then the Kafka consumer has joined
 * its group. The settings are test defaults (fast polls, short leases, no provider latency,
 * the ops credentials above); nothing is inherited from this process but PATH. A free port
 * taken by someone else between the pick and the listen is picked again.
 */
export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, options.port ?? (await freePort()));
    } catch (error) {
      if (options.port !== undefined || attempt >= 3 || !/EADDRINUSE/.test((error as Error).message)) throw error;
    }
  }
}

async function startOnce(options: ServiceProcessOptions, port: number): Promise<ServiceProcess> {
  const name = options.name ?? 'service';
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: options.databaseUrl,
    DATABASE_POOL_SIZE: '5',
    OPS_USERNAME: OPS_CREDENTIALS.username,
    OPS_PASSWORD: OPS_CREDENTIALS.password,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    OUTBOX_POLL_MS: '20',
    JOB_POLL_MS: '20',
    // A killed process's jobs and outbox lanes are taken over once its leases run out.
    JOB_LEASE_MS: '5000',
    OUTBOX_LEASE_MS: '5000',
    PROVIDER_LATENCY_MS: '0',
    SHUTDOWN_TIMEOUT_MS: '10000',
    ...(options.kafka && {
      KAFKA_BROKERS: options.kafka.brokers,
      KAFKA_TOPIC_PREFIX: options.kafka.topicPrefix,
      KAFKA_GROUP_ID: options.kafka.groupId,
      KAFKA_TOPIC_PARTITIONS: String(options.kafka.partitions ?? 6),
      // Tells the members of one group apart in describeGroups.
      KAFKA_CLIENT_ID: name.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100),
    }),
    ...options.env,
  };
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > MAX_OUTPUT_CHARS) output = output.slice(-MAX_OUTPUT_CHARS);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<ServiceExit>((done) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      done({ code, signal });
    });
    // A process that could not be spawned at all emits only 'error'.
    child.once('error', (error) => {
      running.delete(child);
      output += `\n${error.stack ?? error.message}`;
      done({ code: null, signal: null });
    });
  });
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const url = `http://127.0.0.1:${port}`;
  const kill = async (signal: 'SIGKILL' | 'SIGTERM') => {
    if (!hasExited) child.kill(signal);
    return exited;
  };
  const service: ServiceProcess = {
    name,
    pid: child.pid ?? -1,
    port,
    url,
    exited,
    output: () => output,
    request: (path, init) => request(url, path, init),
    kill,
    stop: async (graceMs = 20_000) => {
      if (hasExited) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
  for (;;) {
    if (hasExited) {
      const { code, signal } = await exited;
      throw new Error(`${name} exited before it was ready (code ${code}, signal ${signal}):\n${tail(output)}`);
    }
    const ready = await request(url, '/health/ready', { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    if (ready?.status === 200) return service;
    if (Date.now() > deadline) {
      await kill('SIGKILL');
      throw new Error(`${name} was not ready within ${options.readyTimeoutMs ?? 90_000} ms:\n${tail(output)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The last lines of a process's output, for an error message. */
export function tail(output: string, lines = 60): string {
  return output.split('\n').slice(-lines).join('\n');
}
