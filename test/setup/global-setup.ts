import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { transpileService } from '../../bench/transpiled-service';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source';
import { databaseUrl, templateDatabaseName, withAdminClient } from './admin-client';

/**
 * Transpiles the service once for the child processes the suites start (bench/transpiled-service.ts),
 * creates this run's template database and runs every migration on it once.
 */
export default async function globalSetup(): Promise<void> {
  transpileService();
  const runId = process.env.TEST_RUN_ID || `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  process.env.TEST_RUN_ID = runId;
  const server = process.env.TEST_DATABASE_URL;
  if (!server) return;
  const template = templateDatabaseName(runId);
  await withAdminClient(server, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${template}`);
    await client.query(`CREATE DATABASE ${template}`);
  });
  const dataSource = new DataSource(dataSourceOptions({ url: databaseUrl(server, template), poolSize: 1 }));
  await dataSource.initialize();
  await dataSource.destroy();
}
