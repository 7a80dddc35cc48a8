import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source';
import { isTransientDatabaseError } from './transient-errors';

/** The advisory lock the instances of one database take to migrate it one at a time. */
const MIGRATIONS_LOCK = 7_982_000_001;

/** As TypeORM's own start-up does: a database still starting is waited for, ten tries 3 s apart. */
const CONNECT_ATTEMPTS = 10;
const CONNECT_RETRY_MS = 3_000;

/**
 * Brings the database's schema up to date before the service opens its pool, one instance at a
 * time: instances starting together on a database behind in migrations would otherwise each
 * see the same migration pending and run it twice (the second failing on what the first
 * created). The lock is a session's, so it is taken on the database itself (`sessionUrl`,
 * DATABASE_DIRECT_URL when a transaction pooler stands in front), and the DDL goes that way too.
 * The embedded database is one connection of one process: there TypeORM migrates on start.
 */
export async function migrateDatabase(sessionUrl: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(sessionUrl);
    } catch (error) {
      if (attempt >= CONNECT_ATTEMPTS || !isTransientDatabaseError(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, CONNECT_RETRY_MS));
    }
  }
}

async function migrateOnce(sessionUrl: string): Promise<void> {
  const lock = new Client({ connectionString: sessionUrl, application_name: 'benefits-migrations' });
  // Lost, the lock's session fails the migration through its queries; unheard, its 'error' event would end the process.
  lock.on('error', () => undefined);
  await lock.connect();
  try {
    await lock.query(`SELECT pg_advisory_lock($1)`, [MIGRATIONS_LOCK]);
    const dataSource = new DataSource({ ...dataSourceOptions({ url: sessionUrl, poolSize: 1, preparedStatements: false }), migrationsRun: false });
    await dataSource.initialize();
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await dataSource.destroy();
    }
  } finally {
    // Ending the session releases its lock, whatever happened.
    await lock.end().catch(() => undefined);
  }
}
