import { ServiceChild, ServiceKafka, startServiceChild } from '../../bench/service-child';
import { request, TestResponse } from './test-app';

export { freePort, startHeapFlags, tail } from '../../bench/service-child';
export type { ServiceExit } from '../../bench/service-child';

/** The ops credentials every service process is started with (`OPS_BASIC` is their header). */
export const OPS_CREDENTIALS = { username: 'ops', password: 'ops-password-for-tests' } as const;
export const OPS_BASIC = {
  authorization: `Basic ${Buffer.from(`${OPS_CREDENTIALS.username}:${OPS_CREDENTIALS.password}`).toString('base64')}`,
};

export type ServiceProcessKafka = ServiceKafka;

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
  /** Options for node itself, e.g. startHeapFlags(). */
  nodeOptions?: string[];
}

export interface ServiceProcess extends ServiceChild {
  request(path: string, init?: RequestInit): Promise<TestResponse>;
}

/**
 * Runs the service (transpiled once: bench/service-child.ts) as a child process on
 * the given database and broker, and resolves once /health/ready answers 200: by then the Kafka
 * consumer has joined its group. The settings are test defaults (fast polls, short leases, no
 * provider latency, the ops credentials above, a pool of 5, LOG_LEVEL from TEST_LOG_LEVEL, a
 * 10 s Kafka session);
 * nothing is inherited from this process but PATH. A free port taken by someone else between
 * the pick and the listen is picked again.
 */
export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServiceProcess> {
  const child = await startServiceChild({
    ...options,
    name: options.name ?? 'service',
    env: {
      DATABASE_POOL_SIZE: '5',
      OPS_USERNAME: OPS_CREDENTIALS.username,
      OPS_PASSWORD: OPS_CREDENTIALS.password,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
      // A killed member's partitions move after 10 s rather than the default 30 (as the fault suite has it).
      KAFKA_SESSION_TIMEOUT_MS: '10000',
      ...options.env,
    },
    readyTimeoutMs: options.readyTimeoutMs ?? 90_000,
  });
  return { ...child, request: (path, init) => request(child.url, path, init) };
}
