import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migration-list';
import { PreparedStatementsClient } from './prepared-statements-client';

export interface DatabaseSettings {
  url: string;
  /** The embedded database is one backend session, so its pool holds exactly one connection. */
  poolSize: number;
  /** How long an idle pooled connection is kept (0: until the pool ends); the client library's 10 s when unset. */
  idleTimeoutMs?: number;
  logging?: boolean;
  /** Parameterised statements run prepared, once per connection (PreparedStatementsClient); default true. */
  preparedStatements?: boolean;
}

/** The one data source shape for production, the embedded database and tests. */
export function dataSourceOptions(settings: DatabaseSettings): DataSourceOptions {
  return {
    type: 'postgres',
    url: settings.url,
    entities: [],
    migrations: MIGRATIONS,
    migrationsRun: true,
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: settings.logging ? ['error', 'warn', 'migration'] : ['error'],
    // UUIDs are minted in code or by gen_random_uuid() (core since PG 13; PGlite lacks uuid-ossp).
    uuidExtension: 'pgcrypto',
    extra: {
      max: settings.poolSize,
      ...(settings.idleTimeoutMs !== undefined && { idleTimeoutMillis: settings.idleTimeoutMs }),
      connectionTimeoutMillis: 10_000,
      ...(settings.preparedStatements !== false && { Client: PreparedStatementsClient }),
    },
  };
}

/** Entry point for the TypeORM CLI (migration:generate / migration:run). */
export default new DataSource(
  dataSourceOptions({
    url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/benefits',
    poolSize: 2,
    logging: true,
  }),
);
