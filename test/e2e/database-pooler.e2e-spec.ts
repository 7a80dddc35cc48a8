import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { serviceDatabaseEnv } from '../../bench/database-pooler';
import { RunningService, startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { ChangeNotifications } from '../../src/infrastructure/database/change-notifications';
import { MIGRATIONS } from '../../src/infrastructure/database/migration-list';
import { TableUpkeep } from '../../src/infrastructure/database/table-upkeep';
import { databaseUrl, withAdminClient } from '../setup/admin-client';
import { testEnv } from '../setup/test-env';
import { createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { startTestService, TestService } from '../utils/test-app';

/** The run's PgBouncer (test/run-tests.js starts it; required under CI=true). */
const poolerUrl = process.env.TEST_DATABASE_POOLER_URL || undefined;
const describeWithPooler: jest.Describe = testEnv.databaseUrl && poolerUrl ? describe : describe.skip;

/** What PgBouncer's admin console answers to a SHOW command. */
async function poolerShow(what: 'CLIENTS' | 'SERVERS'): Promise<Record<string, string>[]> {
  const admin = new URL(poolerUrl!);
  admin.pathname = '/pgbouncer';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    return (await client.query(`SHOW ${what}`)).rows;
  } finally {
    await client.end();
  }
}

/**
 * The service behind PgBouncer in transaction mode (scripts/pgbouncer/run), as the deployments
 * it is for run it: its pool goes through the pooler (DATABASE_URL), and what needs a session
 * of its own goes to the database itself (DATABASE_DIRECT_URL): the LISTEN of change
 * notifications, the migrations' lock, the table upkeep's settings. The rest of the run goes
 * through the pooler too whenever it runs (run-tests.js); this suite checks that it really does.
 */
describeWithPooler('behind PgBouncer in transaction mode', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ env: { DATABASE_TABLE_UPKEEP: 'on', DATABASE_TABLE_UPKEEP_INTERVAL_MS: '3600000' } });
  }, 60_000);
  afterAll(() => service?.close());

  it('sends the pool through the pooler, with prepared statements off, and the service works', async () => {
    expect(service.config.DATABASE_URL).toContain(`:${new URL(poolerUrl!).port}/`);
    expect(service.config.DATABASE_DIRECT_URL).toBe(service.database.url);
    expect(service.config.preparedStatements).toBe(false);
    const app = await createApplication(service);
    expect(app.client_id).toBeTruthy();
    const clients = await poolerShow('CLIENTS');
    expect(clients.filter((c) => c.database === service.database.name).length).toBeGreaterThan(0);
  });

  it('listens for change notifications on a session of the database itself', async () => {
    const notifications = service.app.get(ChangeNotifications);
    await expectEventually(() => expect(notifications.live).toBe(true));
    const listening = await withAdminClient(testEnv.databaseUrl!, (c) =>
      c.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'change-notifications'`, [service.database.name]),
    );
    expect(listening.rows[0].n).toBe(1);
    // Not one of the pooler's clients: the pooler would hand the LISTEN's server connection to others.
    const clients = await poolerShow('CLIENTS');
    expect(clients.some((c) => c.database === service.database.name && c.application_name === 'change-notifications')).toBe(false);
    // A notification sent through the pool is heard on that session: the barrier answers without its timeout's fallback.
    let reset = 0;
    notifications.onReset(() => reset++);
    await notifications.caughtUp();
    expect(reset).toBe(0);
  });

  it('runs the table upkeep\'s settings and VACUUM on a session of the database itself', async () => {
    const probe = new Client({ connectionString: service.database.url });
    await probe.connect();
    try {
      await probe.query(`CREATE TABLE upkeep_probe (id int)`);
      await probe.query(`INSERT INTO upkeep_probe SELECT generate_series(1, 2000)`);
      await probe.query(`DELETE FROM upkeep_probe WHERE id > 100`);
      const upkeep = service.app.get(TableUpkeep);
      await expectEventually(
        async () => {
          await upkeep.round('all');
          const { rows } = await probe.query(`SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = 'upkeep_probe'`);
          expect(rows[0].last_vacuum).not.toBeNull();
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      );
    } finally {
      await probe.end();
    }
  });

  it('migrates a new database once when two instances start on it together', async () => {
    const name = `bo_t_${testEnv.runId}_mig_${randomBytes(3).toString('hex')}`;
    await withAdminClient(testEnv.databaseUrl!, (c) => c.query(`CREATE DATABASE ${name}`));
    const url = databaseUrl(testEnv.databaseUrl!, name);
    const started: RunningService[] = [];
    try {
      const config = () =>
        loadConfig({
          PORT: '0',
          HOST: '127.0.0.1',
          ...serviceDatabaseEnv(url),
          DATABASE_POOL_SIZE: '2',
          OPS_USERNAME: 'ops',
          OPS_PASSWORD: 'ops-password-for-tests',
          LOG_LEVEL: 'silent',
          KAFKA_BROKERS: '',
          WORKERS_ENABLED: 'false',
          WEBHOOK_SECRETS_KEY: 'webhook-secrets-key-of-the-test-services-0123',
        });
      const results = await Promise.allSettled([startService(config()), startService(config())]);
      for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
      expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'started'))).toEqual(['started', 'started']);
      const { rows } = await withAdminClient(testEnv.databaseUrl!, async () => {
        const c = new Client({ connectionString: url });
        await c.connect();
        try {
          return await c.query(`SELECT count(*)::int AS n, count(DISTINCT name)::int AS names FROM migrations`);
        } finally {
          await c.end();
        }
      });
      expect(rows[0]).toEqual({ n: MIGRATIONS.length, names: MIGRATIONS.length });
    } finally {
      await Promise.all(started.map((s) => s.close()));
      await withAdminClient(testEnv.databaseUrl!, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    }
  }, 120_000);
});
