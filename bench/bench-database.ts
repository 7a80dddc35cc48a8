import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/infrastructure/database/data-source';

/**
 * Runs `work` on a fresh, migrated database on TEST_DATABASE_URL / DATABASE_URL's server
 * (default postgres://postgres@127.0.0.1:5432/postgres) and drops it afterwards.
 */
export async function withBenchDatabase<T>(prefix: string, work: (dataSource: DataSource) => Promise<T>): Promise<T> {
  const server = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  const dataSource = new DataSource(dataSourceOptions({ url: url.toString(), poolSize: 4 }));
  try {
    await dataSource.initialize();
    return await work(dataSource);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** Writes a benchmark's figures to bench/results/<name>.json. */
export function writeBenchResult(name: string, result: unknown): void {
  const folder = join(__dirname, 'results');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

/** The entry point of a benchmark script: failures print and exit 1. */
export function runBenchmark(main: () => Promise<void>): void {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
