import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { EmbeddedPostgres } from './infrastructure/database/embedded-postgres';
import { dataSourceOptions } from './infrastructure/database/data-source';
import { ApplicationsService } from './modules/applications/applications.service';
import { SecretHasher } from './infrastructure/auth/secret-hasher';

const USAGE = `usage: npm run cli -- applications create --name NAME --redirect-uri URI [--redirect-uri URI2] [--sandbox]

Registers an API application and prints its client_id and client_secret as JSON.
The secret is shown once: only a slow hash of it is stored.
Uses DATABASE_URL, or the embedded database under EMBEDDED_DATA_DIR (stop a running
embedded service first: the embedded database has a single owner).`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

async function withApplications<T>(config: AppConfig, work: (service: ApplicationsService) => Promise<T>): Promise<T> {
  const embedded = config.embedded ? await EmbeddedPostgres.start(config.EMBEDDED_DATA_DIR) : undefined;
  @Module({
    imports: [
      ConfigModule.forRoot(config),
      TypeOrmModule.forRoot(dataSourceOptions({ url: config.DATABASE_URL ?? embedded!.url, poolSize: 1 })),
    ],
    providers: [SecretHasher, ApplicationsService],
  })
  class CliModule {}
  const context = await NestFactory.createApplicationContext(CliModule, { logger: ['error'] });
  try {
    return await work(context.get(ApplicationsService));
  } finally {
    await context.close();
    await embedded?.stop();
  }
}

/** OAuth redirect URIs are absolute http(s) URLs without a fragment (RFC 6749 §3.1.2). */
function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.hash || uri.includes('#')) return 'must not have a fragment (#...)';
  if (uri.length > 2000) return 'is longer than 2000 characters';
  return undefined;
}

async function main(argv: string[]): Promise<void> {
  const [resource, action, ...rest] = argv;
  if (resource !== 'applications' || action !== 'create') fail('unknown command');
  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        sandbox: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  const name = values.name?.trim();
  if (!name || name.length > 255) fail('--name is required (1-255 characters)');
  const redirectUris = values['redirect-uri'] ?? [];
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) fail(`--redirect-uri ${uri} ${problem}`);
  }
  let config: AppConfig;
  try {
    config = loadConfig(process.env, { LOG_LEVEL: 'error' }, { tool: true });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const credentials = await withApplications(config, (service) =>
    service.create({ name, redirectUris, sandbox: values.sandbox ?? false }),
  );
  process.stdout.write(`${JSON.stringify(credentials, null, 2)}\n`);
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
