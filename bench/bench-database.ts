import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { EmployerRef } from '../src/domain/providers/provider-port';
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

/** A sandbox connection with one entity, written straight into the tables the connect flow writes. */
export async function insertBenchConnection(dataSource: DataSource, providerId: string, employeeSize: number): Promise<EmployerRef> {
  const applicationId = randomUUID();
  const connectionId = randomUUID();
  const entityId = randomUUID();
  await dataSource.query(`INSERT INTO applications (id, name, secret_hash, sandbox) VALUES ($1, 'bench', 'not-a-secret', true)`, [applicationId]);
  await dataSource.query(
    `INSERT INTO connections (id, application_id, provider_id, authentication_type, account_id, company_id, products, status, sandbox, employee_size)
     VALUES ($1, $2, $3, 'credential', $4, $5, $6, 'connected', true, $7)`,
    [connectionId, applicationId, providerId, randomUUID(), entityId, ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement'], employeeSize],
  );
  await dataSource.query(`INSERT INTO connection_entities (id, connection_id, name, status) VALUES ($1, $2, 'Bench Corp', 'active')`, [
    entityId,
    connectionId,
  ]);
  return { connectionId, entityId, entityName: 'Bench Corp', providerId, authenticationType: 'credential', employeeSize };
}
