import { Client } from 'pg';
import { PlannerRandomPageCost1798900000000 } from '../../../src/infrastructure/database/migrations/1798900000000-planner-random-page-cost';
import { withAdminClient, withClient } from '../../setup/admin-client';
import { describeWithPostgres, templateDatabaseName, testEnv } from '../../setup/test-env';
import { createTestDatabase, TestDatabase } from '../../utils/test-database';

/**
 * Migration 1798900000000: the database's random page cost. Run here on a fresh clone whose
 * copy of the template's setting is taken off first (a database the migration has not reached),
 * through sessions of its own, since a database setting reaches only the sessions that start
 * after it.
 */
/** A session of its own on the database at `databaseUrl`, as `user` if given. */
function inSessionOn<T>(databaseUrl: string, work: (client: Client) => Promise<T>, user?: string): Promise<T> {
  const url = new URL(databaseUrl);
  if (user) url.username = user;
  return withClient(url.toString(), work);
}

/** The page cost a session sees. */
const cost = (client: Client) => client.query(`SELECT current_setting('random_page_cost') AS cost`).then((r) => Number(r.rows[0].cost));

describeWithPostgres('the planner random page cost migration', () => {
  let database: TestDatabase;
  const migration = new PlannerRandomPageCost1798900000000();

  beforeEach(async () => {
    database = await createTestDatabase();
    await inSession((c) => c.query(`ALTER DATABASE ${database.name} RESET random_page_cost`));
  });
  afterEach(async () => {
    await database?.drop();
  });

  /** A session of its own on the test database, as `user` if given. */
  const inSession = <T>(work: (client: Client) => Promise<T>, user?: string): Promise<T> => inSessionOn(database.url, work, user);
  // The migration's query runner is only asked to run SQL.
  const runnerOf = (client: Client) => ({ query: (sql: string) => client.query(sql).then((r) => r.rows) }) as never;

  it('sets 1.1 for the database where the server has the default, for new sessions and its own', async () => {
    // The server's default, as a session of the fresh clone starts with it.
    expect(await inSession(cost)).toBe(4);
    const own = await inSession(async (c) => {
      await migration.up(runnerOf(c));
      return cost(c);
    });
    expect(own).toBe(1.1);
    expect(await inSession(cost)).toBe(1.1);

    await inSession((c) => migration.down(runnerOf(c)));
    expect(await inSession(cost)).toBe(4);
  });

  it('leaves a price an operator chose for the database', async () => {
    await inSession((c) => c.query(`ALTER DATABASE ${database.name} SET random_page_cost = 2`));
    await inSession((c) => migration.up(runnerOf(c)));
    expect(await inSession(cost)).toBe(2);
  });

  it('without the right to alter the database, changes nothing and does not fail', async () => {
    const role = `bo_rpc_${database.name.slice(-8)}`;
    await inSession(async (c) => {
      await c.query(`CREATE ROLE ${role} LOGIN`);
      await c.query(`GRANT CONNECT ON DATABASE ${database.name} TO ${role}`);
    });
    try {
      await inSession((c) => migration.up(runnerOf(c)), role);
      expect(await inSession(cost)).toBe(4);
    } finally {
      await inSession((c) => c.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`));
    }
  });
});

describeWithPostgres('a test database', () => {
  it('starts with the settings the migrations gave the run’s template (the planner’s page cost), as a migrated database does', async () => {
    const database = await createTestDatabase();
    try {
      const settingsOf = (client: Client, name: string) =>
        client
          .query(
            `SELECT coalesce(s.setconfig, '{}') AS settings FROM pg_database d LEFT JOIN pg_db_role_setting s ON s.setdatabase = d.oid AND s.setrole = 0
             WHERE d.datname = $1`,
            [name],
          )
          .then((r) => r.rows[0].settings as string[]);
      const { template, copy, server } = await withAdminClient(testEnv.databaseUrl!, async (client) => ({
        template: await settingsOf(client, templateDatabaseName(testEnv.runId)),
        copy: await settingsOf(client, database.name),
        // The server's price, as a session of a database without settings of its own sees it.
        server: await cost(client),
      }));
      expect(copy).toEqual(template);
      // Where an operator set another price for the server, the migration left it, and so the copy.
      expect(await inSessionOn(database.url, cost)).toBe(server === 4 ? 1.1 : server);
    } finally {
      await database.drop();
    }
  });
});
