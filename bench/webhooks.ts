/**
 * Benchmark: webhook delivery, and what webhooks add to the enrollment job path.
 *
 *   npx ts-node --transpile-only bench/webhooks.ts [--quick] [--only=delivery|enrollment]
 *     [--events=20000] [--jobs=1000] [--history=20000] [--rows=one-64,bare-64-a,…] [--paced-rate=N] [--paced-seconds=10]
 *
 * 1. Deliveries/s to a local receiver (a bare node:http server in a child process answering 200
 *    at once). N `account.updated` events are queued in one `webhook_enqueue(…)` call against the
 *    service's database (as the database triggers queue them) for endpoints made through
 *    `POST /webhooks/endpoints`; measured from the commit of that call until every delivery is
 *    `delivered` in the database: deliveries/s, and queued → received p50/p99 at the receiver.
 *    Rows (--rows picks some): `one-64` one endpoint with max_concurrency 64 (the instance's
 *    WEBHOOK_CONCURRENCY, 64 by default); `one-64-empty` the same with the queue tables analyzed
 *    empty (see Statistics); `four-64` four endpoints (N/4 events each fanned out to all four: N
 *    deliveries); `one-4` one endpoint at the default max_concurrency 4 (N/4 events); `paced` one
 *    endpoint at half of one-64's rate for 10 s (latency when not saturated); `one-64-load` (only
 *    when named) statistics analyzed with the burst.
 *    Baseline in the same run: a bare loop in this process POSTing the same number of bodies of
 *    the same size, each signed with HMAC-SHA256 (node:crypto) under the same headers, to the same
 *    receiver with the same concurrency (keep-alive agent): "service deliveries/s as % of a bare
 *    signed HTTP client". `bare-64-a` before and `bare-64-b` after the service's rows (the better
 *    one counts), `bare-4` at 4 in flight for `one-4`.
 * 2. Added cost per enrollment job: M requests `POST /employer/benefits/{id}/individuals`, each
 *    enrolling one individual (one `benefit_enroll` job each), 8 requests in flight, in a fresh
 *    401(k) per run; until every job is `complete`. Four runs alternating: without any webhook
 *    endpoint, with one endpoint subscribed to every standard type (default max_concurrency 4, the
 *    receiver answering 200), without, with. Jobs/s, ms per job, service and PostgreSQL CPU per
 *    job (PostgreSQL's from /proc of the database's backends); the "with" runs count CPU until
 *    every job's webhook is delivered too.
 *
 * Every run starts from the same queue: the tables hold --history delivered deliveries of a
 * disabled endpoint (a queue in use, at rest), vacuumed and analyzed. SQL statements per delivery
 * and per job come from pg_stat_statements when the server loads it (not the machine's shared
 * server: point TEST_DATABASE_URL at one that does). The service runs compiled (dist/) in a child
 * process (bench-service.ts) with production defaults, plus WEBHOOK_SECRETS_KEY; any WEBHOOK_*
 * variable set for this process is passed on (e.g. WEBHOOK_POLL_MS=20, WEBHOOK_CONCURRENCY=256).
 * BENCH_CPU_PROF=<dir> writes the service's CPU profile there. Prints tables and writes
 * bench/results/webhooks.json (webhooks.tmp.json with --quick); `measureWebhooks` is ready for
 * bench/run.ts. Target (a missed one is reported, not a failure): one-64 ≥ 50 % of the bare client.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { ChildProcess, execFileSync, fork } from 'node:child_process';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { runBenchmark, withBenchDatabase } from './bench-database';
import {
  argValue,
  basicAuth,
  BenchOptions,
  benchOptions,
  BenchService,
  bearerAuth,
  call,
  DatabaseCpu,
  describeMachine,
  machineInfo,
  printTable,
  printTargets,
  ProcessStats,
  round,
  sleep,
  startBenchService,
  TargetCheck,
  urlOf,
  writeResult,
} from './bench-service';
import { trackChild } from './service-child';
import { renderWebhookBody } from '../src/domain/webhooks/webhook-body';

const RECEIVER_ARG = '--webhook-receiver';
const SERVICE_CONCURRENCY = 64;
const DEFAULT_ENDPOINT_CONCURRENCY = 4;
const ENROLL_IN_FLIGHT = 8;
const ACCOUNT_DATA = { status: 'connected', authentication_method: { type: 'credential' } };

/** Wall-clock milliseconds with a fraction, comparable across processes of this machine. */
const nowMs = () => performance.timeOrigin + performance.now();

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const fmt = (value: number) => (Number.isFinite(value) ? value.toLocaleString('en-US') : '–');

// --- the receiver (a child process) ---------------------------------------------------------

interface ReceiverRecord {
  id: string;
  path: string;
  at: number;
}

/** The child: answers every request 200 with an empty body once its body has arrived. */
function runReceiver(): void {
  let ids: string[] = [];
  let paths: string[] = [];
  let times: number[] = [];
  let distinct = new Set<string>();
  let bodyBytes = 0;
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      const id = String(req.headers['webhook-id'] ?? '');
      times.push(nowMs());
      ids.push(id);
      paths.push(req.url ?? '');
      distinct.add(`${req.url} ${id}`);
      bodyBytes = bytes;
      res.writeHead(200, { 'content-length': '0' });
      res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!({ type: 'port', port: (server.address() as AddressInfo).port }));
  process.on('message', (message: { type: string }) => {
    if (message.type === 'count') process.send!({ type: 'count', total: ids.length, distinct: distinct.size });
    if (message.type === 'take') {
      const records = ids.map((id, i) => ({ id, path: paths[i], at: times[i] }));
      process.send!({ type: 'take', records, bodyBytes });
      ids = [];
      paths = [];
      times = [];
      distinct = new Set();
    }
  });
  process.on('disconnect', () => process.exit(0));
}

class Receiver {
  private waiting: ((message: unknown) => void) | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly exited: Promise<unknown>,
    readonly port: number,
    readonly stats: ProcessStats,
  ) {
    child.on('message', (message) => {
      const done = this.waiting;
      this.waiting = undefined;
      done?.(message);
    });
  }

  static async start(): Promise<Receiver> {
    const child = fork(__filename, [RECEIVER_ARG], {
      cwd: resolve(__dirname, '..'),
      execArgv: ['-r', 'ts-node/register/transpile-only'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { PATH: process.env.PATH ?? '' },
    });
    const exited = trackChild(child);
    const port = await new Promise<number>((done, fail) => {
      child.once('message', (message: { port: number }) => done(message.port));
      child.once('exit', (code) => fail(new Error(`the receiver exited (code ${code})`)));
    });
    return new Receiver(child, exited, port, new ProcessStats(child.pid!));
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  private ask<T>(type: string): Promise<T> {
    if (this.waiting) throw new Error('one question to the receiver at a time');
    return new Promise<T>((done) => {
      this.waiting = done as (message: unknown) => void;
      this.child.send({ type });
    });
  }

  count(): Promise<{ total: number; distinct: number }> {
    return this.ask('count');
  }

  /** Every request since the last take, then forgets them. */
  take(): Promise<{ records: ReceiverRecord[]; bodyBytes: number }> {
    return this.ask('take');
  }

  async stop(): Promise<void> {
    if (this.child.connected) this.child.disconnect();
    await this.exited;
  }
}

// --- the service and its setup ----------------------------------------------------------------

interface Setup {
  service: BenchService;
  dataSource: DataSource;
  receiver: Receiver;
  connectionIds: string[];
  /** A disabled endpoint holding the queue's history: delivered deliveries, as the retention keeps them. */
  historyEndpointId: string;
  historySize: number;
  /** pg_stat_statements is loaded on the server: statement counts per delivery and per job. */
  statements: boolean;
}

/**
 * The statistics the service's statements are planned with, when a run's events are queued:
 * - `history`: the queue tables hold `historySize` delivered deliveries (and their events and
 *   attempts), vacuumed and analyzed, nothing pending: a queue in use, at rest;
 * - `load`: the same, and the enqueue's transaction ends with ANALYZE of the queue tables, so the
 *   statistics describe the queued burst (what autoanalyze reaches after a while);
 * - `empty`: the queue tables empty, vacuumed and analyzed: a new deployment, or statistics last
 *   gathered while the queue was empty.
 */
type Statistics = 'history' | 'load' | 'empty';

/** Settings of the service under test beside the production defaults. */
function serviceEnv(): Record<string, string> {
  const env: Record<string, string> = { WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64') };
  for (const [key, value] of Object.entries(process.env)) if (key.startsWith('WEBHOOK_') && value !== undefined) env[key] = value;
  return env;
}

async function createEndpoint(setup: Setup, body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const { body: created } = await call(`${setup.service.url}/webhooks/endpoints`, { method: 'POST', headers: basicAuth(), body }, [201]);
  return { id: created.id, secret: created.secret };
}

async function deleteEndpoint(setup: Setup, id: string): Promise<void> {
  await call(`${setup.service.url}/webhooks/endpoints/${id}`, { method: 'DELETE', headers: basicAuth() });
}

/** Queue tables as `statistics` says, vacuumed and analyzed, so every run starts alike. */
async function prepareQueue(setup: Setup, statistics: Statistics): Promise<void> {
  const { dataSource, historyEndpointId } = setup;
  if (statistics === 'empty') {
    await dataSource.query(`DELETE FROM webhook_deliveries`);
    await dataSource.query(`DELETE FROM webhook_events`);
  } else {
    await dataSource.query(`DELETE FROM webhook_deliveries WHERE endpoint_id <> $1`, [historyEndpointId]);
    await dataSource.query(`DELETE FROM webhook_events v WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = v.id)`);
    const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries`);
    if (n < setup.historySize) await insertHistory(setup, setup.historySize - n);
  }
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhook_events', 'webhook_endpoints']) await dataSource.query(`VACUUM ANALYZE ${table}`);
}

/** `count` events of an hour ago, each delivered to the history endpoint at its first attempt. */
async function insertHistory(setup: Setup, count: number): Promise<void> {
  await setup.dataSource.transaction(async (manager) => {
    const events: { id: string }[] = await manager.query(
      `INSERT INTO webhook_events (id, application_id, connection_id, company_id, account_id, event_type, data, created_at)
       SELECT gen_random_uuid(), c.application_id, c.id, c.company_id, c.account_id, 'account.updated', $2::jsonb, now() - interval '1 hour'
       FROM generate_series(1, $1::int) g JOIN connections c ON c.id = ($3::uuid[])[1 + g % cardinality($3::uuid[])]
       RETURNING id`,
      [count, JSON.stringify(ACCOUNT_DATA), setup.connectionIds],
    );
    await manager.query(
      `WITH d AS (
         INSERT INTO webhook_deliveries (endpoint_id, event_id, connection_id, status, attempts, next_attempt_at, retry_from, created_at, completed_at, last_status_code)
         SELECT $1, v.id, v.connection_id, 'delivered', 1, v.created_at, v.created_at, v.created_at, v.created_at + interval '5 milliseconds', 200
         FROM webhook_events v WHERE v.id = ANY($2::uuid[])
         RETURNING id, completed_at)
       INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, response_excerpt) SELECT id, completed_at, 200, 2, '' FROM d`,
      [setup.historyEndpointId, events.map((e) => e.id)],
    );
  });
}

/**
 * Queues `count` account.updated events over the connections in one call; answers the deliveries
 * queued. `analyze`: the same transaction ends with ANALYZE of the queue tables, so the statistics
 * the service's statements are planned with describe the queue as it now is (what autoanalyze
 * reaches within about a minute) instead of the empty queue it last saw.
 */
async function enqueue(dataSource: DataSource, connectionIds: string[], count: number, analyze = false): Promise<number> {
  const connections = Array.from({ length: count }, (_, i) => connectionIds[i % connectionIds.length]);
  return dataSource.transaction(async (manager) => {
    const [{ queued }] = await manager.query(`SELECT webhook_enqueue($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[]) AS queued`, [
      connections,
      connections.map(() => null),
      connections.map(() => 'account.updated'),
      connections.map(() => JSON.stringify(ACCOUNT_DATA)),
    ]);
    if (analyze) await manager.query(`ANALYZE webhook_deliveries, webhook_events`);
    return queued;
  });
}

interface StatementTotals {
  query: string;
  calls: number;
  ms: number;
}

interface Cpu {
  service: number;
  postgres: Map<number, number>;
  receiver: number;
  bench: number;
  /** pg_stat_statements of the database by query id, where the server has it loaded. */
  statements?: Map<string, StatementTotals>;
}

/** The benchmark's own statements (polls, set-up, counting), left out of the service's. */
const BENCH_STATEMENTS =
  /pg_stat_activity|pg_stat_statements|pg_database|FROM jobs WHERE id = ANY|AND endpoint_id = ANY|webhook_enqueue\(\$1|^\s*(ANALYZE|VACUUM|BEGIN|COMMIT)|DELETE FROM webhook_|INSERT INTO webhook_events \(id, application_id|WITH d AS \(|count\(\*\)::int AS n FROM webhook_deliveries|SELECT (v\.)?id::text/;

/** Whether the server has pg_stat_statements loaded (shared_preload_libraries); creates the extension in the bench database. */
async function statementsAvailable(dataSource: DataSource): Promise<boolean> {
  const [{ loaded }] = await dataSource.query(`SELECT current_setting('shared_preload_libraries') ~ 'pg_stat_statements' AS loaded`);
  if (!loaded) return false;
  await dataSource.query(`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`);
  return true;
}

async function statementTotals(dataSource: DataSource): Promise<Map<string, StatementTotals>> {
  const rows: { id: string; query: string; calls: string; ms: number }[] = await dataSource.query(
    `SELECT queryid::text || '/' || toplevel AS id, query, calls, total_exec_time AS ms FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return new Map(rows.filter((r) => !BENCH_STATEMENTS.test(r.query)).map((r) => [r.id, { query: r.query, calls: Number(r.calls), ms: Number(r.ms) }]));
}

async function cpuNow(setup: Setup, databaseCpu: DatabaseCpu): Promise<Cpu> {
  const usage = process.cpuUsage();
  return {
    service: setup.service.stats.cpuSeconds(),
    postgres: await databaseCpu.snapshot(),
    receiver: setup.receiver.stats.cpuSeconds(),
    bench: (usage.user + usage.system) / 1e6,
    ...(setup.statements && { statements: await statementTotals(setup.dataSource) }),
  };
}

/** CPU milliseconds per item between two readings. */
function cpuPer(before: Cpu, after: Cpu, items: number) {
  const per = (seconds: number) => round((seconds * 1000) / items, 3);
  return {
    service: per(after.service - before.service),
    postgres: per(DatabaseCpu.between(before.postgres, after.postgres)),
    receiver: per(after.receiver - before.receiver),
    bench: per(after.bench - before.bench),
  };
}

export interface StatementFigures {
  /** The service's SQL statements per item (delivery or job), transaction control included. */
  per_item: number;
  /** Their execution time in PostgreSQL per item. */
  exec_ms_per_item: number;
  top: { query: string; calls_per_item: number; ms_per_item: number; mean_ms: number }[];
}

/** The service's statements between two readings, per item; undefined without pg_stat_statements. */
function statementsPer(before: Cpu, after: Cpu, items: number): StatementFigures | undefined {
  if (!before.statements || !after.statements) return undefined;
  const delta: StatementTotals[] = [];
  for (const [id, now] of after.statements) {
    const then = before.statements.get(id) ?? { calls: 0, ms: 0 };
    if (now.calls > then.calls) delta.push({ query: now.query, calls: now.calls - then.calls, ms: now.ms - then.ms });
  }
  delta.sort((a, b) => b.ms - a.ms);
  const calls = delta.reduce((sum, d) => sum + d.calls, 0);
  const ms = delta.reduce((sum, d) => sum + d.ms, 0);
  return {
    per_item: round(calls / items, 2),
    exec_ms_per_item: round(ms / items, 4),
    top: delta.slice(0, 10).map((d) => ({
      query: d.query.replace(/\s+/g, ' ').slice(0, 100),
      calls_per_item: round(d.calls / items, 3),
      ms_per_item: round(d.ms / items, 4),
      mean_ms: round(d.ms / d.calls, 2),
    })),
  };
}

// --- 1. deliveries/s --------------------------------------------------------------------------

export interface DeliveryRow {
  name: string;
  kind: 'service' | 'bare client';
  /** Service rows: the statistics of the queue tables when the events were queued (see Statistics). */
  statistics?: Statistics;
  endpoints: number;
  /** Per endpoint (service), or requests in flight (bare client). */
  concurrency: number;
  events: number;
  deliveries: number;
  /** The enqueue call (insert of the events and their deliveries), before the clock starts. */
  enqueue_seconds?: number;
  seconds: number;
  deliveries_per_second: number;
  first_received_ms: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  /** Requests the receiver got beyond one per delivery. */
  repeats: number;
  body_bytes: number;
  cpu_ms_per_delivery: { service: number; postgres: number; receiver: number; bench: number };
  statements?: StatementFigures;
  /** Paced rows: events queued per second. */
  paced_rate?: number;
}

function latencyFigures(latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50_ms: round(percentile(sorted, 50), 1), p99_ms: round(percentile(sorted, 99), 1), max_ms: round(sorted[sorted.length - 1] ?? NaN, 1) };
}

/** Until the receiver has `distinct` deliveries (path and id); fails after `stallMs` without progress. */
async function waitReceived(receiver: Receiver, distinct: number, stallMs: number): Promise<void> {
  let seen = -1;
  let progressAt = Date.now();
  for (;;) {
    const count = await receiver.count();
    if (count.distinct >= distinct) return;
    if (count.distinct > seen) {
      seen = count.distinct;
      progressAt = Date.now();
    } else if (Date.now() - progressAt > stallMs) {
      throw new Error(`the receiver has ${count.distinct} of ${distinct} deliveries, none new for ${stallMs / 1000} s`);
    }
    await sleep(10);
  }
}

/** Until no delivery of these endpoints is pending; then checks none failed. */
async function waitRecorded(dataSource: DataSource, endpointIds: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [{ pending }] = await dataSource.query(
      `SELECT count(*)::int AS pending FROM webhook_deliveries WHERE status = 'pending' AND endpoint_id = ANY($1::uuid[])`,
      [endpointIds],
    );
    if (pending === 0) break;
    if (Date.now() > deadline) throw new Error(`${pending} deliveries still pending after ${timeoutMs / 1000} s`);
    await sleep(10);
  }
  const [{ failed }] = await dataSource.query(`SELECT count(*)::int AS failed FROM webhook_deliveries WHERE status <> 'delivered' AND endpoint_id = ANY($1::uuid[])`, [
    endpointIds,
  ]);
  if (failed > 0) throw new Error(`${failed} deliveries did not end delivered`);
}

async function serviceDeliveryRun(
  setup: Setup,
  name: string,
  { endpoints, concurrency, events, statistics = 'history' }: { endpoints: number; concurrency: number; events: number; statistics?: Statistics },
): Promise<DeliveryRow> {
  const { dataSource, receiver } = setup;
  const databaseCpu = new DatabaseCpu(dataSource);
  await prepareQueue(setup, statistics);
  const made: string[] = [];
  for (let i = 0; i < endpoints; i++) {
    const endpoint = await createEndpoint(setup, {
      url: receiver.url(`/${name}/${i}`),
      event_types: ['account.updated'],
      max_concurrency: concurrency,
      description: `bench ${name} ${i}`,
    });
    made.push(endpoint.id);
  }
  await receiver.take();
  // The dispatcher has seen the endpoints (created through the API, which wakes it).
  await sleep(500);
  const before = await cpuNow(setup, databaseCpu);
  const started = nowMs();
  const deliveries = await enqueue(dataSource, setup.connectionIds, events, statistics === 'load');
  const queuedAt = nowMs();
  if (deliveries !== events * endpoints) throw new Error(`queued ${deliveries} deliveries, expected ${events * endpoints}`);
  await waitReceived(receiver, deliveries, 60_000);
  await waitRecorded(dataSource, made, 120_000);
  const doneAt = nowMs();
  const after = await cpuNow(setup, databaseCpu);
  const { records, bodyBytes } = await receiver.take();
  for (const id of made) await deleteEndpoint(setup, id);
  const latencies = records.map((r) => r.at - queuedAt);
  const distinct = new Set(records.map((r) => `${r.path} ${r.id}`)).size;
  const seconds = (doneAt - queuedAt) / 1000;
  return {
    name,
    kind: 'service',
    statistics,
    endpoints,
    concurrency,
    events,
    deliveries,
    enqueue_seconds: round((queuedAt - started) / 1000, 3),
    seconds: round(seconds, 2),
    deliveries_per_second: Math.round(deliveries / seconds),
    first_received_ms: round(Math.min(...latencies), 1),
    ...latencyFigures(latencies),
    repeats: records.length - distinct,
    body_bytes: bodyBytes,
    cpu_ms_per_delivery: cpuPer(before, after, deliveries),
    statements: statementsPer(before, after, deliveries),
  };
}

/** Paced: `rate` events/s queued in small calls for `seconds`; latency from each event's creation. */
async function servicePacedRun(setup: Setup, name: string, { rate, seconds }: { rate: number; seconds: number }): Promise<DeliveryRow> {
  const { dataSource, receiver } = setup;
  const databaseCpu = new DatabaseCpu(dataSource);
  await prepareQueue(setup, 'history');
  const endpoint = await createEndpoint(setup, {
    url: receiver.url(`/${name}`),
    event_types: ['account.updated'],
    max_concurrency: SERVICE_CONCURRENCY,
  });
  await receiver.take();
  await sleep(500);
  const tickMs = 20;
  const before = await cpuNow(setup, databaseCpu);
  const started = nowMs();
  let queued = 0;
  for (let tick = 1; nowMs() - started < seconds * 1000; tick++) {
    const due = Math.round(((nowMs() - started) / 1000) * rate);
    if (due > queued) queued += await enqueue(dataSource, setup.connectionIds, due - queued);
    const wait = started + tick * tickMs - nowMs();
    if (wait > 0) await sleep(wait);
  }
  await waitReceived(receiver, queued, 60_000);
  await waitRecorded(dataSource, [endpoint.id], 120_000);
  const doneAt = nowMs();
  const after = await cpuNow(setup, databaseCpu);
  const { records, bodyBytes } = await receiver.take();
  const created = new Map<string, number>(
    (await dataSource.query(`SELECT v.id::text, extract(epoch FROM v.created_at) * 1000 AS at FROM webhook_events v JOIN webhook_deliveries d ON d.event_id = v.id WHERE d.endpoint_id = $1`, [endpoint.id])).map((r: { id: string; at: string }) => [
      r.id,
      Number(r.at),
    ]),
  );
  await deleteEndpoint(setup, endpoint.id);
  const latencies = records.map((r) => r.at - created.get(r.id)!);
  return {
    name,
    kind: 'service',
    statistics: 'history',
    endpoints: 1,
    concurrency: SERVICE_CONCURRENCY,
    events: queued,
    deliveries: queued,
    seconds: round((doneAt - started) / 1000, 2),
    deliveries_per_second: Math.round(queued / ((doneAt - started) / 1000)),
    first_received_ms: round(Math.min(...latencies), 1),
    ...latencyFigures(latencies),
    repeats: records.length - new Set(records.map((r) => r.id)).size,
    body_bytes: bodyBytes,
    cpu_ms_per_delivery: cpuPer(before, after, queued),
    statements: statementsPer(before, after, queued),
    paced_rate: rate,
  };
}

/**
 * The baseline: `count` POSTs from this process, `concurrency` in flight on a keep-alive agent,
 * each a fresh body of the service's shape and size signed with HMAC-SHA256 under the headers the
 * service sends; the answer read to its end.
 */
async function bareClientRun(setup: Setup, name: string, { count, concurrency }: { count: number; concurrency: number }): Promise<DeliveryRow> {
  const { receiver } = setup;
  const databaseCpu = new DatabaseCpu(setup.dataSource);
  const secret = randomBytes(32);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const path = `/${name}`;
  const [connectionId] = setup.connectionIds;
  const post = () =>
    new Promise<void>((done, fail) => {
      const id = randomUUID();
      const body = renderWebhookBody(
        {
          id,
          eventType: 'account.updated',
          connectionId,
          companyId: randomUUID(),
          accountId: randomUUID(),
          entityId: null,
          data: ACCOUNT_DATA,
          createdAt: new Date(),
        },
        'http://127.0.0.1',
      );
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = `v1,${createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
      const bytes = Buffer.from(body);
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: receiver.port,
          path,
          method: 'POST',
          agent,
          headers: {
            'webhook-id': id,
            'webhook-timestamp': timestamp,
            'webhook-signature': signature,
            'finch-event-id': id,
            'finch-timestamp': timestamp,
            'finch-signature': signature,
            'user-agent': 'bench-bare-client',
            'content-type': 'application/json',
            'content-length': String(bytes.length),
          },
        },
        (res) => {
          res.on('data', () => undefined);
          res.on('end', () => (res.statusCode === 200 ? done() : fail(new Error(`the receiver answered ${res.statusCode}`))));
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end(bytes);
    });
  await receiver.take();
  const before = await cpuNow(setup, databaseCpu);
  const started = nowMs();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        await post();
      }
    }),
  );
  const doneAt = nowMs();
  const after = await cpuNow(setup, databaseCpu);
  agent.destroy();
  const { records, bodyBytes } = await receiver.take();
  const latencies = records.map((r) => r.at - started);
  const seconds = (doneAt - started) / 1000;
  return {
    name,
    kind: 'bare client',
    endpoints: 1,
    concurrency,
    events: count,
    deliveries: count,
    seconds: round(seconds, 2),
    deliveries_per_second: Math.round(count / seconds),
    first_received_ms: round(Math.min(...latencies), 1),
    ...latencyFigures(latencies),
    repeats: records.length - count,
    body_bytes: bodyBytes,
    cpu_ms_per_delivery: cpuPer(before, after, count),
  };
}

// --- 2. added cost per enrollment job ----------------------------------------------------------

interface Employer {
  token: string;
  individualIds: string[];
}

export interface EnrollmentJobsRow {
  run: number;
  webhooks: boolean;
  jobs: number;
  /** First POST until every job is complete. */
  jobs_seconds: number;
  jobs_per_second: number;
  ms_per_job: number;
  /** First POST until every job's webhook is delivered (with an endpoint). */
  webhooks_delivered_seconds?: number;
  webhooks_received: Record<string, number>;
  /** CPU until the last job completed, or the last webhook was recorded (with an endpoint). */
  cpu_ms_per_job: { service: number; postgres: number };
  statements?: StatementFigures;
}

async function prepareEmployer(setup: Setup, size: number): Promise<Employer> {
  const { body } = await call(`${setup.service.url}/sandbox/connections`, {
    method: 'POST',
    headers: basicAuth(),
    body: { provider_id: 'sandbox_automated', employee_size: size, products: ['benefits', 'directory'] },
  });
  const { body: directory } = await call(`${setup.service.url}/employer/directory?limit=${size}`, { headers: bearerAuth(body.access_token) });
  return { token: body.access_token, individualIds: directory.individuals.map((i: { id: string }) => i.id) };
}

async function waitJobs(dataSource: DataSource, jobIds: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [state] = await dataSource.query(
      `SELECT count(*) FILTER (WHERE status IN ('pending', 'in_progress'))::int AS open, count(*) FILTER (WHERE status <> 'complete')::int AS bad
       FROM jobs WHERE id = ANY($1::uuid[])`,
      [jobIds],
    );
    if (state.open === 0) {
      if (state.bad > 0) throw new Error(`${state.bad} enrollment jobs did not complete`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`${state.open} enrollment jobs still open after ${timeoutMs / 1000} s`);
    await sleep(20);
  }
}

async function enrollmentRun(setup: Setup, employer: Employer, run: number, webhooks: boolean, jobs: number): Promise<EnrollmentJobsRow> {
  const { service, dataSource, receiver } = setup;
  const databaseCpu = new DatabaseCpu(dataSource);
  const { body: benefit } = await call(`${service.url}/employer/benefits`, {
    method: 'POST',
    headers: bearerAuth(employer.token),
    body: { type: '401k', description: `Bench webhooks ${run}`, frequency: 'every_paycheck' },
  });
  await waitJobs(dataSource, [benefit.job_id], 60_000);
  await prepareQueue(setup, 'history');
  const endpoint = webhooks ? await createEndpoint(setup, { url: receiver.url(`/enroll-${run}`), description: 'every standard type' }) : undefined;
  await receiver.take();
  await sleep(500);

  const before = await cpuNow(setup, databaseCpu);
  const started = nowMs();
  const jobIds: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: ENROLL_IN_FLIGHT }, async () => {
      while (next < jobs) {
        const i = next++;
        const { body } = await call(`${service.url}/employer/benefits/${benefit.benefit_id}/individuals`, {
          method: 'POST',
          headers: bearerAuth(employer.token),
          body: [{ individual_id: employer.individualIds[i % employer.individualIds.length], configuration: { employee_deduction: { type: 'percent', amount: 500 } } }],
        });
        jobIds.push(body.job_id);
      }
    }),
  );
  await waitJobs(dataSource, jobIds, 300_000);
  const jobsDoneAt = nowMs();
  let deliveredAt: number | undefined;
  if (endpoint) {
    await waitReceived(receiver, jobs, 60_000);
    await waitRecorded(dataSource, [endpoint.id], 120_000);
    deliveredAt = nowMs();
  }
  const after = await cpuNow(setup, databaseCpu);
  const { records } = await receiver.take();
  const received: Record<string, number> = {};
  if (endpoint) {
    const types = new Map<string, string>(
      (await dataSource.query(`SELECT id::text, event_type FROM webhook_events`)).map((r: { id: string; event_type: string }) => [r.id, r.event_type]),
    );
    for (const r of records) {
      const type = types.get(r.id) ?? 'unknown';
      received[type] = (received[type] ?? 0) + 1;
    }
    await deleteEndpoint(setup, endpoint.id);
  }
  const jobsSeconds = (jobsDoneAt - started) / 1000;
  const cpu = cpuPer(before, after, jobs);
  return {
    run,
    webhooks,
    jobs,
    jobs_seconds: round(jobsSeconds, 2),
    jobs_per_second: round(jobs / jobsSeconds, 1),
    ms_per_job: round((jobsSeconds * 1000) / jobs, 2),
    ...(deliveredAt !== undefined && { webhooks_delivered_seconds: round((deliveredAt - started) / 1000, 2) }),
    webhooks_received: received,
    cpu_ms_per_job: { service: cpu.service, postgres: cpu.postgres },
    statements: statementsPer(before, after, jobs),
  };
}

// --- the run ----------------------------------------------------------------------------------

export interface WebhooksResult {
  machine: Awaited<ReturnType<typeof machineInfo>>;
  settings: Record<string, string | number>;
  delivery?: {
    rows: DeliveryRow[];
    /** Service deliveries/s as % of the better bare-client run at the same concurrency. */
    of_bare_percent: Record<string, number>;
  };
  enrollment?: {
    rows: EnrollmentJobsRow[];
    /** Mean over the runs of each kind. */
    without: { ms_per_job: number; cpu_ms_per_job: { service: number; postgres: number } };
    with: { ms_per_job: number; cpu_ms_per_job: { service: number; postgres: number } };
    added_ms_per_job: number;
    added_cpu_ms_per_job: { service: number; postgres: number };
  };
  targets: TargetCheck[];
  quick: boolean;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

function printDeliveryTable(rows: DeliveryRow[], ofBare: (row: DeliveryRow) => string): void {
  printTable(
    ['run', 'endpoints × max', 'deliveries', 'enqueue s', 'seconds', 'deliveries/s', 'of bare', 'first ms', 'p50 ms', 'p99 ms', 'service CPU ms', 'PG CPU ms', 'client CPU ms', 'receiver CPU ms'],
    rows.map((r) => [
      r.name,
      r.kind === 'bare client'
        ? `bare × ${r.concurrency}`
        : `${r.endpoints} × ${r.concurrency}${r.paced_rate ? ` @ ${fmt(r.paced_rate)}/s` : ''}${r.statistics && r.statistics !== 'history' ? `, ${r.statistics} stats` : ''}`,
      fmt(r.deliveries),
      r.enqueue_seconds ?? '–',
      r.seconds,
      fmt(r.deliveries_per_second),
      ofBare(r),
      r.first_received_ms,
      r.p50_ms,
      r.p99_ms,
      r.kind === 'service' ? r.cpu_ms_per_delivery.service : '–',
      r.kind === 'service' ? r.cpu_ms_per_delivery.postgres : '–',
      r.kind === 'bare client' ? r.cpu_ms_per_delivery.bench : '–',
      r.cpu_ms_per_delivery.receiver,
    ]),
  );
}

/** The commit measured, marked when the working tree differs from it. */
function codeVersion(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: resolve(__dirname, '..'), stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', 'src') ? ' (src changed)' : ''}`;
  } catch {
    return 'unknown';
  }
}

function printStatements(setup: Setup, runs: [string, StatementFigures | undefined][], item: string): void {
  if (!setup.statements) {
    console.log(`SQL statements per ${item}: n/a (pg_stat_statements is not loaded on this server; TEST_DATABASE_URL of a server that loads it gives them)`);
    return;
  }
  console.log(`\nSQL statements of the service per ${item} (pg_stat_statements; execution time in PostgreSQL):`);
  for (const [name, figures] of runs) {
    if (!figures) continue;
    console.log(`  ${name}: ${figures.per_item} statements, ${figures.exec_ms_per_item} ms per ${item}`);
    for (const t of figures.top.slice(0, 3)) console.log(`      ${t.ms_per_item} ms (${t.calls_per_item} calls, ${t.mean_ms} ms each)  ${t.query}`);
  }
}

export async function measureWebhooks(options: BenchOptions = benchOptions()): Promise<TargetCheck[]> {
  const events = Number(argValue('events') ?? (options.quick ? 2_000 : 20_000));
  const jobs = Number(argValue('jobs') ?? (options.quick ? 200 : 1_000));
  const pacedSeconds = Number(argValue('paced-seconds') ?? (options.quick ? 5 : 10));
  const only = argValue('only');
  const historySize = Number(argValue('history') ?? 20_000);
  return withBenchDatabase('bench_webhooks', async (dataSource) => {
    const machine = await machineInfo(dataSource);
    console.log(`webhooks: ${describeMachine(machine)}`);
    const receiver = await Receiver.start();
    const env = serviceEnv();
    const service = await startBenchService(urlOf(dataSource), { env });
    const settings: WebhooksResult['settings'] = {
      commit: codeVersion(),
      events,
      enrollment_jobs: jobs,
      enroll_requests_in_flight: ENROLL_IN_FLIGHT,
      paced_seconds: pacedSeconds,
      history_deliveries: historySize,
      WEBHOOK_CONCURRENCY: env.WEBHOOK_CONCURRENCY ?? `${SERVICE_CONCURRENCY} (default)`,
      WEBHOOK_POLL_MS: env.WEBHOOK_POLL_MS ?? '200 (default)',
      JOB_POLL_MS: 'default',
    };
    try {
      const connectionIds: string[] = [];
      for (let i = 0; i < 8; i++) {
        const { body } = await call(`${service.url}/sandbox/connections`, {
          method: 'POST',
          headers: basicAuth(),
          body: { provider_id: 'sandbox_automated', employee_size: 1 },
        });
        connectionIds.push(body.connection_id);
      }
      const history = await call(
        `${service.url}/webhooks/endpoints`,
        { method: 'POST', headers: basicAuth(), body: { url: receiver.url('/history'), event_types: ['account.updated'], enabled: false, description: 'history' } },
        [201],
      );
      const setup: Setup = { service, dataSource, receiver, connectionIds, historyEndpointId: history.body.id, historySize, statements: await statementsAvailable(dataSource) };
      settings.pg_stat_statements = setup.statements ? 'loaded' : 'not loaded';
      console.log(`settings: ${JSON.stringify(settings)}`);
      const result: WebhooksResult = { machine, settings, targets: [], quick: options.quick };

      if (only === undefined || only === 'delivery') {
        const rows: DeliveryRow[] = [];
        const quarter = Math.max(1, Math.round(events / 4));
        const step = async (row: Promise<DeliveryRow>) => {
          const done = await row;
          rows.push(done);
          console.log(`  ${done.name}: ${fmt(done.deliveries)} in ${done.seconds} s, ${fmt(done.deliveries_per_second)}/s, p50 ${done.p50_ms} ms, p99 ${done.p99_ms} ms`);
        };
        // one-64-load (statistics analyzed with the burst) only when asked for: within the noise of one-64 in trials.
        const wanted = argValue('rows')?.split(',') ?? ['bare-64-a', 'one-64', 'one-64-empty', 'four-64', 'one-4', 'bare-4', 'paced', 'bare-64-b'];
        const runs: Record<string, () => Promise<DeliveryRow>> = {
          'bare-64-a': () => bareClientRun(setup, 'bare-64-a', { count: events, concurrency: SERVICE_CONCURRENCY }),
          'one-64': () => serviceDeliveryRun(setup, 'one-64', { endpoints: 1, concurrency: SERVICE_CONCURRENCY, events }),
          'one-64-load': () => serviceDeliveryRun(setup, 'one-64-load', { endpoints: 1, concurrency: SERVICE_CONCURRENCY, events, statistics: 'load' }),
          'one-64-empty': () => serviceDeliveryRun(setup, 'one-64-empty', { endpoints: 1, concurrency: SERVICE_CONCURRENCY, events, statistics: 'empty' }),
          'four-64': () => serviceDeliveryRun(setup, 'four-64', { endpoints: 4, concurrency: SERVICE_CONCURRENCY, events: quarter }),
          'one-4': () => serviceDeliveryRun(setup, 'one-4', { endpoints: 1, concurrency: DEFAULT_ENDPOINT_CONCURRENCY, events: quarter }),
          'bare-4': () => bareClientRun(setup, 'bare-4', { count: quarter, concurrency: DEFAULT_ENDPOINT_CONCURRENCY }),
          paced: () => {
            const one = rows.find((r) => r.name === 'one-64');
            const rate = Number(argValue('paced-rate') ?? (one ? Math.round(one.deliveries_per_second / 2) : 500));
            return servicePacedRun(setup, 'paced', { rate, seconds: pacedSeconds });
          },
          'bare-64-b': () => bareClientRun(setup, 'bare-64-b', { count: events, concurrency: SERVICE_CONCURRENCY }),
        };
        const unknown = wanted.filter((name) => !(name in runs));
        if (unknown.length > 0) throw new Error(`unknown --rows ${unknown.join(', ')}; known: ${Object.keys(runs).join(', ')}`);
        // Warm-up, not reported: the first deliveries of a fresh process run cold.
        await serviceDeliveryRun(setup, 'warm-up', { endpoints: 1, concurrency: SERVICE_CONCURRENCY, events: Math.min(2_000, events) });
        await bareClientRun(setup, 'warm-up-bare', { count: Math.min(2_000, events), concurrency: SERVICE_CONCURRENCY });
        for (const [name, run] of Object.entries(runs)) if (wanted.includes(name)) await step(run());

        const bareRate = (concurrency: number) => {
          const rates = rows.filter((r) => r.kind === 'bare client' && r.concurrency === concurrency).map((r) => r.deliveries_per_second);
          return rates.length === 0 ? NaN : Math.max(...rates);
        };
        const ofBareValue = (r: DeliveryRow) =>
          r.paced_rate ? NaN : round((100 * r.deliveries_per_second) / bareRate(r.concurrency === DEFAULT_ENDPOINT_CONCURRENCY && r.endpoints === 1 ? 4 : 64), 1);
        const ofBare: Record<string, number> = {};
        for (const r of rows) if (r.kind === 'service' && !r.paced_rate) ofBare[r.name] = ofBareValue(r);
        result.delivery = { rows, of_bare_percent: ofBare };
        console.log('');
        printDeliveryTable(rows, (r) => (r.kind === 'service' && !r.paced_rate ? `${ofBareValue(r)} %` : r.kind === 'bare client' ? '' : '–'));
        console.log(`(CPU in ms per delivery; "of bare": deliveries/s over the better bare-client run at the same concurrency; body ${rows[0]?.body_bytes} bytes)`);
        printStatements(
          setup,
          rows.filter((r) => r.kind === 'service').map((r) => [r.name, r.statements]),
          'delivery',
        );
        const one = rows.find((r) => r.name === 'one-64');
        if (one && rows.some((r) => r.kind === 'bare client' && r.concurrency === SERVICE_CONCURRENCY)) {
          result.targets.push({
            target: 'service deliveries/s ≥ 50 % of a bare signed HTTP client (one endpoint, 64 in flight)',
            measured: `${fmt(one.deliveries_per_second)} vs ${fmt(bareRate(SERVICE_CONCURRENCY))}/s (${ofBare['one-64']} %)`,
            met: ofBare['one-64'] >= 50,
          });
        }
      }

      if (only === undefined || only === 'enrollment') {
        const employer = await prepareEmployer(setup, jobs);
        // Warm-up, not reported.
        await enrollmentRun(setup, employer, 0, true, Math.min(jobs, 50));
        const rows: EnrollmentJobsRow[] = [];
        for (const [run, webhooks] of [false, true, false, true].entries()) {
          const row = await enrollmentRun(setup, employer, run + 1, webhooks, jobs);
          rows.push(row);
          console.log(`  run ${row.run} ${webhooks ? 'with' : 'without'} webhooks: ${row.jobs} jobs in ${row.jobs_seconds} s (${row.ms_per_job} ms/job)`);
        }
        const summary = (webhooks: boolean) => {
          const of = rows.filter((r) => r.webhooks === webhooks);
          return {
            ms_per_job: round(mean(of.map((r) => r.ms_per_job)), 2),
            cpu_ms_per_job: { service: round(mean(of.map((r) => r.cpu_ms_per_job.service)), 3), postgres: round(mean(of.map((r) => r.cpu_ms_per_job.postgres)), 3) },
          };
        };
        const without = summary(false);
        const withHooks = summary(true);
        result.enrollment = {
          rows,
          without,
          with: withHooks,
          added_ms_per_job: round(withHooks.ms_per_job - without.ms_per_job, 2),
          added_cpu_ms_per_job: {
            service: round(withHooks.cpu_ms_per_job.service - without.cpu_ms_per_job.service, 3),
            postgres: round(withHooks.cpu_ms_per_job.postgres - without.cpu_ms_per_job.postgres, 3),
          },
        };
        console.log('');
        printTable(
          ['run', 'webhooks', 'jobs', 'jobs complete s', 'jobs/s', 'ms/job', 'webhooks delivered s', 'service CPU ms/job', 'PG CPU ms/job', 'statements/job', 'received'],
          rows.map((r) => [
            r.run,
            r.webhooks ? 'with' : 'without',
            r.jobs,
            r.jobs_seconds,
            r.jobs_per_second,
            r.ms_per_job,
            r.webhooks_delivered_seconds ?? '–',
            r.cpu_ms_per_job.service,
            r.cpu_ms_per_job.postgres,
            r.statements?.per_item ?? 'n/a',
            Object.entries(r.webhooks_received)
              .map(([type, n]) => `${n} ${type}`)
              .join(', ') || '–',
          ]),
        );
        printStatements(
          setup,
          rows.map((r) => [`run ${r.run} ${r.webhooks ? 'with' : 'without'}`, r.statements]),
          'job',
        );
        console.log(
          `mean: without ${without.ms_per_job} ms/job, with ${withHooks.ms_per_job} ms/job: ${result.enrollment.added_ms_per_job} ms added per job; ` +
            `CPU added per job: service ${result.enrollment.added_cpu_ms_per_job.service} ms, PostgreSQL ${result.enrollment.added_cpu_ms_per_job.postgres} ms`,
        );
      }
      printTargets(result.targets);
      console.log(`written to ${writeResult('webhooks', options, result)}`);
      return result.targets;
    } finally {
      await service.stop();
      await receiver.stop();
    }
  });
}

if (require.main === module) {
  if (process.argv.includes(RECEIVER_ARG)) runReceiver();
  else runBenchmark(async () => void (await measureWebhooks()));
}
