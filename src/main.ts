import 'reflect-metadata';
import { startService } from './app.factory';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { resolveOpsCredentials } from './config/ops-credentials';
import { DataDirLockedError } from './infrastructure/database/data-dir-lock';
import { DOCS_PATH } from './infrastructure/http/api-docs';
import { SANDBOX_CREDENTIALS } from './domain/connections/sandbox-login';
import { ApplicationsBootstrap, StartupApplication } from './modules/applications/applications.bootstrap';

function readConfig(): AppConfig {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`${error.message}\nFix the settings above (see README.md, "Configuration") and start again.`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
}

/** How to try the application start-up created or updated: its credentials and connect link. */
function applicationLines({ source, credentials }: StartupApplication, base: string, config: AppConfig): string[] {
  const redirectUri = credentials.redirect_uris[0];
  const authorize = new URL(`${base}/connect/authorize`);
  authorize.searchParams.set('client_id', credentials.client_id);
  authorize.searchParams.set('products', 'company directory individual employment benefits');
  if (redirectUri) authorize.searchParams.set('redirect_uri', redirectUri);
  if (credentials.sandbox) authorize.searchParams.set('sandbox', 'finch');
  const lines = [`  application (${source === 'demo' ? 'sandbox demo' : 'from APP_CLIENT_ID'}): client_id ${credentials.client_id}`];
  if (source === 'demo') {
    lines.push(`    client_secret ${credentials.client_secret}  (kept in ${config.EMBEDDED_DATA_DIR}/demo-application.json)`);
  }
  lines.push(
    `    redirect URIs: ${credentials.redirect_uris.join(', ') || '(none: the connect page shows the code at the end)'}`,
    `  connect page: ${authorize.toString().replace(/\+/g, '%20')}`,
    `    sandbox sign-in: ${SANDBOX_CREDENTIALS.map((c) => `${c.username} / ${c.password}`).join(' or ')}; then exchange the code at POST ${base}/auth/token`,
  );
  return lines;
}

async function main(): Promise<void> {
  const config = readConfig();
  const ops = resolveOpsCredentials(config);
  config.OPS_USERNAME = ops.username;
  config.OPS_PASSWORD = ops.password;

  const service = await startService(config);
  const base = config.PUBLIC_BASE_URL ?? service.url;
  const lines = [
    `Benefits orchestration service listening on ${service.url}`,
    `  database: ${config.embedded ? `embedded PostgreSQL (data in ${config.EMBEDDED_DATA_DIR}/pglite)` : 'PostgreSQL (DATABASE_URL)'}`,
    `  events:   ${config.kafkaEnabled ? `Kafka ${config.KAFKA_BROKERS}` : 'in-process (no KAFKA_BROKERS)'}`,
    `  API docs: ${base}/${DOCS_PATH}`,
    `  health:   ${base}/health/ready   metrics: ${base}/metrics`,
  ];
  const startup = service.app.get(ApplicationsBootstrap).startupApplication;
  if (startup) lines.push(...applicationLines(startup, base, config));
  if (ops.generated) lines.push(`  ops login: ${ops.username} / ${ops.password}  (generated; set OPS_USERNAME/OPS_PASSWORD to choose)`);
  process.stdout.write(`${lines.join('\n')}\n`);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: finishing in-flight work, then stopping\n`);
    const force = setTimeout(() => {
      process.stderr.write(`shutdown took longer than ${config.SHUTDOWN_TIMEOUT_MS} ms; exiting\n`);
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS);
    force.unref();
    service.close().then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`shutdown failed: ${(error as Error).stack}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error) => {
  // A locked embedded database is the user's situation to resolve, not a crash: the message only.
  process.stderr.write(`failed to start: ${error instanceof DataDirLockedError ? error.message : ((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
