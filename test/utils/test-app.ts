import { randomBytes } from 'node:crypto';
import { Type } from '@nestjs/common';
import { serviceDatabaseEnv } from '../../bench/database-pooler';
import { RunningService, startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { Clock } from '../../src/domain/shared/clock';
import { testEnv } from '../setup/test-env';
import { createTestDatabase, TestDatabase } from './test-database';

export interface TestService extends RunningService {
  database: TestDatabase;
  /** Unique per service, so parallel suites on one broker never share topics or groups. */
  topicPrefix: string;
  request(path: string, init?: RequestInit): Promise<TestResponse>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface TestServiceOptions {
  /** Connect to the real broker (else the in-process transport). */
  kafka?: boolean;
  /** Settings over the test defaults; `undefined` unsets one. */
  env?: Record<string, string | undefined>;
  extraModules?: Type[];
  /** The service's time; pass a ManualClock to move it. */
  clock?: Clock;
}

/** The whole service on a fresh database cloned from the migrated template, on a free port. */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const database = await createTestDatabase();
  const topicPrefix = `t-${testEnv.runId}-${randomBytes(3).toString('hex')}.`;
  if (options.kafka && !testEnv.kafkaBrokers) throw new Error('this test needs Kafka (TEST_KAFKA_BROKERS unset)');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    ...serviceDatabaseEnv(database.url),
    DATABASE_POOL_SIZE: '5',
    OPS_USERNAME: 'ops',
    OPS_PASSWORD: 'ops-password-for-tests',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // New work wakes its loop at once (in-process signals); polls find only work made elsewhere
    // or come due. Every 20 ms, an idle service cost about a tenth of a core: 100 ms is faster overall.
    OUTBOX_POLL_MS: '100',
    KAFKA_BROKERS: options.kafka ? testEnv.kafkaBrokers : '',
    KAFKA_TOPIC_PREFIX: topicPrefix,
    KAFKA_GROUP_ID: `${topicPrefix}group`,
    SHUTDOWN_TIMEOUT_MS: '10000',
    PROVIDER_LATENCY_MS: '0',
    JOB_POLL_MS: '100',
    WEBHOOK_SECRETS_KEY: 'webhook-secrets-key-of-the-test-services-0123',
    WEBHOOK_POLL_MS: '100',
    ...options.env,
  });
  let service: RunningService;
  try {
    service = await startService(config, { extraModules: options.extraModules, clock: options.clock });
  } catch (error) {
    await database.drop();
    throw error;
  }
  return {
    ...service,
    database,
    topicPrefix,
    request: (path, init) => request(service.url, path, init),
    close: async () => {
      await service.close();
      await database.drop();
    },
  };
}

export async function request(baseUrl: string, path: string, init: RequestInit = {}): Promise<TestResponse> {
  const response = await fetch(`${baseUrl}${path}`, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

export const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
