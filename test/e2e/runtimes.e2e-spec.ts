import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { DataSource } from 'typeorm';
import { startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { describeWithKafka, describeWithPostgres, testEnv } from '../setup/test-env';
import { startEntry } from '../utils/child-process';
import { request, startTestService } from '../utils/test-app';

/** Runs the service in a child process and collects its output. */
function runMain(env: Record<string, string>) {
  const run = startEntry('main', [], { env: { LOG_LEVEL: 'warn', ...env } });
  return { ...run, exited: run.exited.then((exit) => exit.code) };
}

describe('the embedded default', () => {
  it('runs the same migrations on embedded PostgreSQL and serves the API', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bo-embedded-'));
    const service = await startService(loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', EMBEDDED_DATA_DIR: dataDir }));
    try {
      expect(service.embeddedDatabase).toBeDefined();
      const ready = await request(service.url, '/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.details.database.status).toBe('up');
      const dataSource = service.app.get(DataSource);
      const applied = await dataSource.query(`SELECT name FROM migrations ORDER BY id`);
      expect(applied.map((m: { name: string }) => m.name)).toEqual(dataSource.migrations.map((m) => m.name));
      const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM outbox_lanes`);
      expect(n).toBe(64);
    } finally {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe('start-up', () => {
  it('refuses bad settings with a message naming each one', async () => {
    const run = runMain({ PORT: 'http', KAFKA_BROKERS: 'kafka', DATABASE_URL: 'postgres://db/x' });
    expect(await run.exited).toBe(78);
    expect(run.output()).toMatch(/Invalid configuration/);
    expect(run.output()).toMatch(/PORT/);
    expect(run.output()).toMatch(/KAFKA_BROKERS must be a comma-separated list of host:port/);
    expect(run.output()).toMatch(/OPS_PASSWORD is required/);
    expect(run.output()).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });
});

describeWithPostgres('a running service', () => {
  it('stops cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bo-main-'));
    const run = runMain({ PORT: '0', HOST: '127.0.0.1', EMBEDDED_DATA_DIR: dataDir });
    try {
      await run.waitFor(/listening on/, 90_000);
      expect(run.output()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
      expect(run.output()).toMatch(/ops login: ops \/ \S{12,}/);
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    } finally {
      run.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);

  it('reports not ready, with the failing dependency, when the database goes away', async () => {
    const service = await startTestService();
    try {
      expect((await service.request('/health/ready')).status).toBe(200);
      await service.database.drop();
      const res = await service.request('/health/ready');
      expect(res.status).toBe(503);
      expect(res.body.status).toBe('error');
      expect(res.body.error.database.status).toBe('down');
      expect((await service.request('/health/live')).status).toBe(200);
    } finally {
      await service.close();
    }
  });
});

describeWithKafka('on Kafka', () => {
  it('creates the topics it needs at start and reports the broker in readiness', async () => {
    const service = await startTestService({ kafka: true });
    const kafka = new Kafka({ brokers: testEnv.kafkaBrokers!.split(','), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const topics = await admin.listTopics();
      for (const topic of ['hris.events', 'hris.events.dlq', 'benefits.events']) {
        expect(topics).toContain(`${service.topicPrefix}${topic}`);
      }
      const ready = await service.request('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.details.kafka.status).toBe('up');
    } finally {
      await admin.disconnect();
      await service.close();
    }
  });
});
