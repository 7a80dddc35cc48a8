import 'reflect-metadata';
import { parseArgs } from 'node:util';
import type { AppConfig } from './config/app-config';
import { DataDirLockedError } from './infrastructure/database/data-dir-lock';
import { parseOrigins } from './domain/applications/application-origins';
import type { ApplicationChanges, ApplicationsService } from './modules/applications/applications.service';

const USAGE = `usage: npm run cli -- applications create --name NAME [--redirect-uri URI ...] [--origin ORIGIN ...] [--sandbox]
       npm run cli -- applications update --client-id ID [--name NAME] [--redirect-uri URI ...] [--origin ORIGIN ...]

create registers an API application and prints its client_id and client_secret as JSON.
The secret is shown once: only a slow hash of it is stored.
update replaces the name, the redirect URIs or the origins given, and prints the application.
--origin (repeatable) is an origin the embedded connect flow may post its result to:
scheme://host[:port], http or https, no path. Without one, create registers the origins
of the redirect URIs.
Uses DATABASE_URL, or the embedded database under EMBEDDED_DATA_DIR (stop a running
embedded service first: the embedded database has a single owner).`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

/**
 * The framework, the ORM and the database are loaded only here, once the command line has been
 * checked: a mistyped command is answered at once, not after a second of loading.
 */
async function withApplications<T>(config: AppConfig, work: (service: ApplicationsService) => Promise<T>): Promise<T> {
  const [
    { Module },
    { NestFactory },
    { TypeOrmModule },
    { ConfigModule },
    { EmbeddedPostgres },
    { dataSourceOptions },
    { ApplicationsService },
    { SecretHasher },
    { ClientSecretCheck },
    { ClockModule },
  ] = await Promise.all([
    import('@nestjs/common'),
    import('@nestjs/core'),
    import('@nestjs/typeorm'),
    import('./config/config.module'),
    import('./infrastructure/database/embedded-postgres'),
    import('./infrastructure/database/data-source'),
    import('./modules/applications/applications.service'),
    import('./infrastructure/auth/secret-hasher'),
    import('./modules/applications/client-secret-check'),
    import('./infrastructure/clock/clock.module'),
  ]);
  const embedded = config.embedded ? await EmbeddedPostgres.start(config.EMBEDDED_DATA_DIR) : undefined;
  class CliModule {}
  Module({
    imports: [
      ConfigModule.forRoot(config),
      TypeOrmModule.forRoot(dataSourceOptions({ url: config.DATABASE_URL ?? embedded!.url, poolSize: 1 })),
      ClockModule.forRoot(),
    ],
    providers: [SecretHasher, ClientSecretCheck, ApplicationsService],
  })(CliModule);
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

const OPTIONS = {
  'client-id': { type: 'string' },
  name: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  origin: { type: 'string', multiple: true },
  sandbox: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; strict: true }>>['values'];

function nameOf(value: string | undefined): string {
  const name = value?.trim();
  if (!name || name.length > 255) fail('--name is required (1-255 characters)');
  return name;
}

function redirectUrisOf(values: string[]): string[] {
  for (const uri of values) {
    const problem = redirectUriProblem(uri);
    if (problem) fail(`--redirect-uri ${uri} ${problem}`);
  }
  return values;
}

function originsOf(values: string[]): string[] {
  const { origins, problems } = parseOrigins(values);
  if (problems.length > 0) fail(`--origin ${problems[0]}: give scheme://host[:port] (http or https, no path), such as https://app.example.com`);
  return origins;
}

async function loadToolConfig(): Promise<AppConfig> {
  const { ConfigError, loadConfig } = await import('./config/app-config');
  try {
    return loadConfig(process.env, { LOG_LEVEL: 'error' }, { tool: true });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}

async function create(values: Values): Promise<void> {
  if (values['client-id'] !== undefined) fail('--client-id is for update: create draws a new one');
  const name = nameOf(values.name);
  const redirectUris = redirectUrisOf(values['redirect-uri'] ?? []);
  const allowedOrigins = values.origin === undefined ? undefined : originsOf(values.origin);
  const credentials = await withApplications(await loadToolConfig(), (service) =>
    service.create({ name, redirectUris, allowedOrigins, sandbox: values.sandbox ?? false }),
  );
  process.stdout.write(`${JSON.stringify(credentials, null, 2)}\n`);
}

async function update(values: Values): Promise<void> {
  const clientId = values['client-id'];
  if (!clientId) fail('--client-id is required');
  if (values.sandbox !== undefined) fail('--sandbox is chosen at create and cannot change');
  const changes: ApplicationChanges = {
    name: values.name === undefined ? undefined : nameOf(values.name),
    redirectUris: values['redirect-uri'] === undefined ? undefined : redirectUrisOf(values['redirect-uri']),
    allowedOrigins: values.origin === undefined ? undefined : originsOf(values.origin),
  };
  if (Object.values(changes).every((change) => change === undefined)) fail('nothing to update: give --name, --redirect-uri or --origin');
  const application = await withApplications(await loadToolConfig(), (service) => service.update(clientId, changes));
  if (!application) {
    process.stderr.write(`No application has client_id ${clientId}.\n`);
    process.exit(1);
  }
  const { toRegisteredApplication } = await import('./modules/applications/applications.service');
  process.stdout.write(`${JSON.stringify(toRegisteredApplication(application), null, 2)}\n`);
}

async function main(argv: string[]): Promise<void> {
  const [resource, action, ...rest] = argv;
  if (resource !== 'applications' || (action !== 'create' && action !== 'update')) fail('unknown command');
  let values: Values;
  try {
    ({ values } = parseArgs({ args: rest, options: OPTIONS, strict: true }));
  } catch (error) {
    fail((error as Error).message);
  }
  await (action === 'create' ? create(values) : update(values));
}

main(process.argv.slice(2)).catch((error) => {
  // A locked embedded database is the user's situation to resolve, not a crash: the message only.
  process.stderr.write(`${error instanceof DataDirLockedError ? error.message : ((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
