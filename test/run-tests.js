#!/usr/bin/env node
/**
 * `npm test`: finds PostgreSQL and Kafka, starts the local broker if it can, then runs jest.
 * Suites whose service is unreachable are skipped with a printed reason, except under CI=true,
 * where a missing service fails the run before any test starts.
 *
 *   TEST_DATABASE_URL / DATABASE_URL   server the tests create databases on
 *                                      (default postgres://postgres@127.0.0.1:5432/postgres)
 *   TEST_KAFKA_BROKERS / KAFKA_BROKERS broker list (default 127.0.0.1:9092)
 *   TEST_DATABASE_POOLER_URL           PgBouncer (transaction mode) in front of that server, which the
 *                                      services' pools go through (DATABASE_URL), their sessions going
 *                                      to the server itself (DATABASE_DIRECT_URL); default: started by
 *                                      scripts/pgbouncer/run on 127.0.0.1:6432 where pgbouncer is
 *                                      installed (required under CI=true); `off`: straight to the server
 *   TEST_WORKERS                       suites run at once (default 4; jest's --maxWorkers wins)
 * Extra arguments go to jest, e.g. `npm test -- --selectProjects unit`.
 *
 * Suites run in parallel: each has its own databases, topic prefixes, consumer groups, ports and
 * data directories, and most of a suite's time is spent waiting (on Kafka, on child processes,
 * on the database), so more suites than cores keep both cores busy. `--forceExit` ends the run
 * once the last suite is done, whatever a failed or timed-out test left open, and the children a
 * suite starts exit with it (bench/exit-with-parent.js).
 */
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const ci = /^(1|true|yes)$/i.test(process.env.CI || '');

function reachable(host, port, timeoutMs = 1500) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function findPostgres() {
  const url = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const { hostname, port } = new URL(url);
  if (await reachable(hostname, port || 5432)) return { url };
  return { reason: `PostgreSQL is not reachable at ${hostname}:${port || 5432}` };
}

async function findKafka() {
  const brokers = process.env.TEST_KAFKA_BROKERS || process.env.KAFKA_BROKERS || '127.0.0.1:9092';
  const [host, port] = brokers.split(',')[0].split(':');
  if (await reachable(host, port)) return { brokers };
  const local = brokers === '127.0.0.1:9092' || brokers === 'localhost:9092';
  if (local && process.env.TEST_NO_KAFKA_START !== 'true') {
    console.log('[test] Kafka is not running; starting the local broker (scripts/kafka/run up) ...');
    const up = spawnSync('bash', [path.join(root, 'scripts/kafka/run'), 'up'], { stdio: 'inherit' });
    if (up.status === 0 && (await reachable(host, port))) return { brokers };
  }
  return { reason: `Kafka is not reachable at ${brokers}` };
}

/**
 * PgBouncer in transaction mode in front of the run's PostgreSQL, as deployments run the service:
 * given (TEST_DATABASE_POOLER_URL), or started by scripts/pgbouncer/run when pgbouncer is
 * installed and the server is on this machine.
 */
async function findPooler(postgresUrl) {
  const given = process.env.TEST_DATABASE_POOLER_URL;
  if (given === 'off') return { off: true };
  if (given) {
    const { hostname, port } = new URL(given);
    return (await reachable(hostname, port || 6432)) ? { url: given } : { reason: `the pooler is not reachable at ${hostname}:${port || 6432}` };
  }
  const server = new URL(postgresUrl);
  if (!['127.0.0.1', 'localhost'].includes(server.hostname)) return { reason: `PostgreSQL at ${server.hostname} is not on this machine` };
  const script = path.join(root, 'scripts/pgbouncer/run');
  const up = spawnSync('bash', [script, 'up', '--server-port', server.port || '5432'], { stdio: 'inherit' });
  if (up.status !== 0) return { reason: 'PgBouncer could not be started (apt-get install pgbouncer)' };
  return { url: 'postgres://postgres@127.0.0.1:6432/postgres' };
}

/**
 * Whether the run can only reach unit specs (the .spec.ts files under src/), which need neither service:
 * `--selectProjects unit` alone, or only paths under src/. Then nothing is probed or started.
 */
function unitSpecsOnly(args) {
  const projects = [];
  const positional = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--selectProjects') {
      while (i + 1 < args.length && !args[i + 1].startsWith('-')) projects.push(args[++i]);
    } else if (arg.startsWith('--selectProjects=')) {
      projects.push(...arg.slice('--selectProjects='.length).split(','));
    } else if (!arg.startsWith('-')) {
      // A path pattern, or the value of another option (`-t name`): not under src/, so services.
      positional.push(arg);
    }
  }
  if (projects.length > 0) return projects.every((p) => p === 'unit');
  const src = path.join(root, 'src');
  return positional.length > 0 && positional.every((p) => (path.resolve(root, p) + path.sep).startsWith(src + path.sep));
}

async function main() {
  const args = process.argv.slice(2);
  if (unitSpecsOnly(args)) {
    console.log('[test] unit specs only: PostgreSQL and Kafka are not needed, none is probed');
    // CPU-bound specs: one worker a core.
    process.exit(runJest(args, { TEST_DATABASE_URL: '', TEST_KAFKA_BROKERS: '' }, os.availableParallelism()));
  }
  const postgres = await findPostgres();
  const kafka = await findKafka();
  const missing = [postgres.reason, kafka.reason].filter(Boolean);
  if (missing.length > 0) {
    if (ci) {
      console.error(`[test] CI=true and a required service is missing:\n  - ${missing.join('\n  - ')}`);
      process.exit(1);
    }
    for (const reason of missing) console.warn(`[test] SKIPPING suites that need it: ${reason}`);
  }
  const pooler = postgres.url ? await findPooler(postgres.url) : { off: true };
  if (pooler.reason) {
    if (ci) {
      console.error(`[test] CI=true and the connection pooler is missing: ${pooler.reason}`);
      process.exit(1);
    }
    console.warn(`[test] services use PostgreSQL directly, not through PgBouncer: ${pooler.reason}`);
  }
  const cluster = kafka.brokers && wholeRun(args) ? startClusterEarly() : undefined;
  const status = runJest(args, { TEST_DATABASE_URL: postgres.url || '', TEST_KAFKA_BROKERS: kafka.brokers || '', TEST_DATABASE_POOLER_URL: pooler.url || '' });
  if (cluster) cluster.stop();
  process.exit(status);
}

/** No path, name or project filter: every suite runs, the three-broker cluster's among them. */
function wholeRun(args) {
  return !args.some((arg) => !arg.startsWith('-') || /^(--selectProjects|--testNamePattern|-t|--testPathPattern)(=|$)/.test(arg));
}

/**
 * The three-broker cluster takes 15–45 s to start, and the suite that needs it is the longest of
 * the run (test/e2e/kafka-cluster.e2e-spec.ts): started here, beside jest's own start, it is ready
 * or nearly so when that suite begins. Stopped after the run if this started it (the suite also
 * stops a cluster it had to wait for; `scripts/kafka/run` is idempotent and locked).
 */
function startClusterEarly() {
  const script = path.join(root, 'scripts/kafka/run');
  if (process.env.TEST_NO_KAFKA_START === 'true') return undefined;
  if (spawnSync('bash', [script, 'status', '--brokers', '3'], { stdio: 'ignore' }).status === 0) return undefined;
  const log = path.join(os.tmpdir(), `kafka-cluster-up-${process.pid}.log`);
  const out = fs.openSync(log, 'w');
  spawn('bash', [script, 'up', '--brokers', '3'], { cwd: root, env: { ...process.env, KAFKA_CLUSTER_HEAP_OPTS: clusterJvmOptions() }, stdio: ['ignore', out, out] }).unref();
  console.log(`[test] starting the three-broker Kafka cluster in the background (log: ${log})`);
  return {
    stop: () => {
      spawnSync('bash', [script, 'down', '--brokers', '3'], { stdio: 'ignore' });
      fs.rmSync(log, { force: true });
    },
  };
}

/**
 * The three-broker cluster's JVMs without the optimizing compiler: 40 % less CPU to start and to
 * idle (17 s against 30 s to start), on a machine the suites keep busy; the scenarios are small.
 * KAFKA_CLUSTER_HEAP_OPTS set by the caller wins.
 */
function clusterJvmOptions() {
  return process.env.KAFKA_CLUSTER_HEAP_OPTS || '-Xms256m -Xmx512m -XX:TieredStopAtLevel=1';
}

/** Suites at once: jest's --maxWorkers or --runInBand when given, else TEST_WORKERS, else `workers`. */
function runJest(args, services, workers = 4) {
  const env = {
    ...process.env,
    ...services,
    // For the nodes the cluster suite starts and restarts itself.
    KAFKA_CLUSTER_HEAP_OPTS: clusterJvmOptions(),
    // The service's own settings must not leak into tests that build their own config.
    DATABASE_URL: '',
    DATABASE_DIRECT_URL: '',
    KAFKA_BROKERS: '',
  };
  const jest = require.resolve('jest/bin/jest', { paths: [root] });
  const parallel = args.some((a) => /^(--maxWorkers|-w|--runInBand|-i)(=|$)/.test(a)) ? [] : [`--maxWorkers=${process.env.TEST_WORKERS || workers}`];
  const runArgs = [...parallel, ...(args.includes('--watch') || args.includes('--watchAll') ? [] : ['--forceExit']), ...args];
  // PGlite (the embedded database) loads its WebAssembly with a dynamic import, which jest's
  // module sandbox allows only with VM modules enabled.
  const result = spawnSync(process.execPath, ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', jest, ...runArgs], { cwd: root, env, stdio: 'inherit' });
  return result.status ?? 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
