import 'reflect-metadata';
import { startService } from './app.factory';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { resolveOpsCredentials } from './config/ops-credentials';
import { DataDirLockedError } from './infrastructure/database/data-dir-lock';
import { DOCS_PATH } from './infrastructure/http/api-docs';
import { ApplicationsBootstrap, StartupApplication } from './modules/applications/applications.bootstrap';
import { connectLinkOf, SANDBOX_SIGN_IN, tokenExchangeCommand } from './modules/applications/demo-connect';

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

/** How to try the application start-up created or updated: its credentials, connect link and next step. */
function applicationLines({ source, credentials }: StartupApplication, base: string, config: AppConfig): string[] {
  const lines = [`  application (${source === 'demo' ? 'sandbox demo' : 'from APP_CLIENT_ID'}): client_id ${credentials.client_id}`];
  if (source === 'demo') {
    lines.push(`    client_secret ${credentials.client_secret}  (kept in ${config.EMBEDDED_DATA_DIR}/demo-application.json)`);
  }
  lines.push(
    `    redirect URIs: ${credentials.redirect_uris.join(', ') || '(none: leave redirect_uri out; the connect page shows the code at the end)'}`,
    `  connect page: ${connectLinkOf(credentials, base)}`,
    `    sandbox sign-in: ${SANDBOX_SIGN_IN}; then exchange the code the page shows:`,
    `    ${tokenExchangeCommand(credentials, source === 'demo' ? credentials.client_secret : '$APP_CLIENT_SECRET', base)}`,
    `  quickstart (every step to a pay statement): docs/quickstart.md`,
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
    `  home:     ${base}/   API docs: ${base}/${DOCS_PATH}   ops dashboard: ${base}/ops`,
    `  health:   ${base}/health/ready   metrics: ${base}/metrics`,
  ];
  const startup = service.app.get(ApplicationsBootstrap).startupApplication;
  if (startup) lines.push(...applicationLines(startup, base, config));
  if (ops.generated) lines.push(`  ops login: ${ops.username} / ${ops.password}  (generated; set OPS_USERNAME/OPS_PASSWORD to choose)`);
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
  // Only now: a pipe's reader has the report as soon as it is written (pipes are synchronous
  // on Linux), and may stop the service at once; the handlers must already be there.
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error) => {
  // A locked embedded database is the user's situation to resolve, not a crash: the message only.
  process.stderr.write(`failed to start: ${error instanceof DataDirLockedError ? error.message : ((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
