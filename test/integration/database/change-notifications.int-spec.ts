import { DataSource } from 'typeorm';
import { AppConfig } from '../../../src/config/app-config';
import { ChangeNotifications } from '../../../src/infrastructure/database/change-notifications';
import { describeWithPostgres } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

/** The triggers of migration 1797200000000 and the listening session, on real PostgreSQL. */
describeWithPostgres('change notifications', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let notifications: ChangeNotifications;
  const heard: { channel: string; payload: string }[] = [];
  let resets = 0;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(2));
    notifications = new ChangeNotifications(dataSource, { embedded: false } as AppConfig);
    notifications.on('auth_changed', (payload) => heard.push({ channel: 'auth_changed', payload }));
    notifications.on('employer_sync', (payload) => heard.push({ channel: 'employer_sync', payload }));
    notifications.onReset(() => resets++);
    await notifications.onApplicationBootstrap();
  });
  afterAll(async () => {
    await notifications?.onApplicationShutdown();
    await dataSource?.destroy();
    await database?.drop();
  });

  it('hears a change to a token, its connection or an entity, and a sync switching a generation, when each commits', async () => {
    expect(notifications.live).toBe(true);
    const [app] = await dataSource.query(
      `INSERT INTO applications (id, name, secret_hash) VALUES (gen_random_uuid(), 'n', 'h') RETURNING id`,
    );
    const [connection] = await dataSource.query(
      `INSERT INTO connections (id, application_id, customer_id, provider_id, authentication_type, account_id, company_id, products, status, sandbox, manual, employee_size)
       VALUES (gen_random_uuid(), $1, 'c', 'sandbox_automated', 'credential', gen_random_uuid(), gen_random_uuid(), '{company}', 'connected', true, false, 1) RETURNING id`,
      [app.id],
    );
    await dataSource.query(`INSERT INTO connection_entities (id, connection_id, name, status) VALUES (gen_random_uuid(), $1, 'e', 'active')`, [connection.id]);
    await expectEventually(() => expect(heard).toContainEqual({ channel: 'auth_changed', payload: connection.id }));

    heard.length = 0;
    await dataSource.transaction(async (manager) => {
      await manager.query(`UPDATE connections SET status = 'disconnected' WHERE id = $1`, [connection.id]);
      // Not before the commit.
      await new Promise((done) => setTimeout(done, 100));
      expect(heard).toEqual([]);
    });
    await expectEventually(() => expect(heard).toEqual([{ channel: 'auth_changed', payload: connection.id }]));

    heard.length = 0;
    const [entity] = await dataSource.query(`SELECT id FROM connection_entities WHERE connection_id = $1`, [connection.id]);
    await dataSource.query(
      `INSERT INTO employer_syncs (entity_id, connection_id, generation, job_id, completed_at) VALUES ($1, $2, 7, NULL, now())`,
      [entity.id, connection.id],
    );
    await expectEventually(() => expect(heard).toContainEqual({ channel: 'employer_sync', payload: entity.id }));
  });

  it('caughtUp resolves only once every change committed before it was heard, in commit order', async () => {
    const [connection] = await dataSource.query(`SELECT id FROM connections LIMIT 1`);
    for (let round = 0; round < 20; round++) {
      heard.length = 0;
      await dataSource.query(`UPDATE connections SET updated_at = now() WHERE id = $1`, [connection.id]);
      await notifications.caughtUp();
      // No waiting: the change's notification came before the barrier's.
      expect(heard).toEqual([{ channel: 'auth_changed', payload: connection.id }]);
    }
  });

  it('caughtUp drops every cache when its own notification cannot be sent', async () => {
    const resetsBefore = resets;
    const broken = new ChangeNotifications(
      { query: () => Promise.reject(new Error('the pool is closed')), options: dataSource.options } as unknown as DataSource,
      { embedded: false } as AppConfig,
    );
    let brokenResets = 0;
    broken.onReset(() => brokenResets++);
    try {
      await broken.onApplicationBootstrap();
      const afterBootstrap = brokenResets;
      await broken.caughtUp();
      expect(brokenResets).toBe(afterBootstrap + 1);
    } finally {
      await broken.onApplicationShutdown();
    }
    expect(resets).toBe(resetsBefore);
  });

  it('goes down when its session is cut (caches then answer nothing), and comes back clearing them', async () => {
    const resetsBefore = resets;
    await dataSource.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'change-notifications' AND datname = current_database()`,
    );
    await expectEventually(() => expect(notifications.live).toBe(false), { timeoutMs: 5_000 });
    expect(resets).toBeGreaterThan(resetsBefore);
    await expectEventually(() => expect(notifications.live).toBe(true), { timeoutMs: 10_000 });
    expect(resets).toBeGreaterThan(resetsBefore + 1);
  });
});
