import { DataSource } from 'typeorm';
import { withAdminClient } from '../setup/admin-client';
import { expectEventually } from '../utils/expect-eventually';
import { startTestService, TestService } from '../utils/test-app';
import { describeWithPostgres, testEnv } from '../setup/test-env';

/**
 * Readiness says whether the database answers, not whether the instance's pool is free: an
 * instance busy with accepted work stays in rotation; one whose database refuses it leaves.
 */
describeWithPostgres('readiness: the database’s answer, not the pool’s queue', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService();
  }, 60_000);

  afterAll(async () => {
    await withAdminClient(testEnv.databaseUrl!, (c) => c.query(`ALTER DATABASE ${service.database.name} ALLOW_CONNECTIONS true`)).catch(() => undefined);
    await service?.close();
  });

  it('stays ready while every pooled connection is busy, and answers at once', async () => {
    const dataSource = service.app.get(DataSource);
    // The test service's pool has 5 connections: ten 4-second queries hold it for 8 s.
    const busy = Array.from({ length: 10 }, () => dataSource.query('SELECT pg_sleep(4)'));
    await expectEventually(async () => {
      const [{ active }] = await withAdminClient(testEnv.databaseUrl!, (c) =>
        c.query(`SELECT count(*)::int AS active FROM pg_stat_activity WHERE datname = $1 AND query = 'SELECT pg_sleep(4)'`, [service.database.name]).then((r) => r.rows),
      );
      expect(active).toBe(5);
    });
    const started = Date.now();
    const ready = await service.request('/health/ready');
    expect({ status: ready.status, body: ready.body }).toMatchObject({ status: 200, body: { status: 'ok', info: { database: { status: 'up' } } } });
    // Answered beside the queue, not behind it (the old probe through the pool timed out at 2 s).
    expect(Date.now() - started).toBeLessThan(2_000);
    await Promise.all(busy);
  }, 30_000);

  it('is not ready while the database refuses the instance, and is ready again once it takes it back', async () => {
    const name = service.database.name;
    await withAdminClient(testEnv.databaseUrl!, async (c) => {
      await c.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      // Every session of the instance: behind a pooler the probe's queries go out on whichever
      // server connection is open, so the database refuses the instance only once none is left.
      await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]);
    });
    await expectEventually(async () => expect((await service.request('/health/ready')).status).toBe(503));
    const down = await service.request('/health/ready');
    expect(down.body).toMatchObject({ status: 'error', error: { database: { status: 'down' } } });
    await withAdminClient(testEnv.databaseUrl!, (c) => c.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`));
    await expectEventually(async () => expect((await service.request('/health/ready')).status).toBe(200));
  }, 30_000);
});
