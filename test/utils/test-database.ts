import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source';
import { databaseUrl, withAdminClient } from '../setup/admin-client';
import { templateDatabaseName, testEnv } from '../setup/test-env';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh database for one test file, cloned from the run's migrated template, with the
 * template's own settings (`ALTER DATABASE … SET`, which a copy does not carry): the migrations
 * set some (the planner's page cost), and the suites run as a migrated database does.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const server = testEnv.databaseUrl;
  if (!server) throw new Error('no PostgreSQL for this run (TEST_DATABASE_URL unset)');
  const runId = testEnv.runId;
  const template = templateDatabaseName(runId);
  const name = `bo_t_${runId}_${randomBytes(4).toString('hex')}`;
  await withAdminClient(server, async (client) => {
    // A template can be copied by one session at a time; files starting together retry.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        break;
      } catch (error) {
        if (attempt >= 50 || !/being accessed by other users/.test((error as Error).message)) throw error;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 150));
      }
    }
    const { rows } = await client.query<{ statement: string }>(
      `SELECT format('ALTER DATABASE %I SET %I = %L', $2::text, split_part(c, '=', 1), substr(c, strpos(c, '=') + 1)) AS statement
       FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase, unnest(s.setconfig) AS c
       WHERE d.datname = $1 AND s.setrole = 0`,
      [template, name],
    );
    for (const { statement } of rows) await client.query(statement);
  });
  const url = databaseUrl(server, name);
  return {
    name,
    url,
    drop: () => withAdminClient(server, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined)),
  };
}

/** A migrated data source on a fresh test database. */
export async function openTestDataSource(poolSize = 5): Promise<{ dataSource: DataSource; database: TestDatabase }> {
  const database = await createTestDatabase();
  const dataSource = new DataSource(dataSourceOptions({ url: database.url, poolSize }));
  await dataSource.initialize();
  return { dataSource, database };
}
