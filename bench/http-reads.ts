/**
 * Benchmark: the employer reads the Unified API serves most — `GET /employer/directory` (a page
 * of 100 individuals), `GET /employer/company` and `POST /employer/pay-statement` (the
 * statements of the latest regular pay run, about 90) — from a synced 100-employee sandbox
 * employer, each next to a bare `node:http` server answering the same bytes (the limit), in
 * the same run, at the same connections; and next to a second baseline that does only each
 * read's database work (data-layer-server.ts), which tells the framework's cost from the
 * database's. The service is also run at a fixed half of its own top rate, for its latency
 * when not saturated. Each server runs in a child process of its own; autocannon runs here.
 * Prints a table and writes bench/results/http-reads.json.
 *
 *   npx ts-node --transpile-only bench/http-reads.ts [--quick]
 *
 * BENCH_HTTP_ENDPOINTS=company,… measures only those reads; BENCH_CPU_PROF=<dir> profiles the
 * service (see bench/README.md).
 *
 * Targets (issue "figures, not assertions"): the service ≥ 50 % of the bare server's requests
 * per second, and its p99 < 20 ms at that load. Figures and the reasons for them: bench/README.md.
 */
import autocannon from 'autocannon';
import { runBenchmark, withBenchDatabase } from './bench-database';
import {
  BareRoute,
  basicAuth,
  ChildServer,
  DatabaseCpu,
  BenchOptions,
  benchOptions,
  BenchService,
  bearerAuth,
  call,
  describeMachine,
  machineInfo,
  printTable,
  printTargets,
  ProcessStats,
  round,
  RssSampler,
  sleep,
  startBareServer,
  startBenchService,
  startDataLayerServer,
  TargetCheck,
  urlOf,
  writeResult,
} from './bench-service';

export interface ReadEndpoint {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
}

export interface LoadSettings {
  connections: number;
  pipelining: number;
  warmupSeconds: number;
  seconds: number;
}

export interface LoadFigures {
  requests_per_second: number;
  requests: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  latency_mean_ms: number;
  latency_max_ms: number;
  /** Server process CPU (user + system) per request: what one request costs, whatever the load. */
  cpu_ms_per_request: number;
  /** CPU of the PostgreSQL backends of the benchmark's database, per request. */
  database_cpu_ms_per_request: number;
  /** CPU of this process (autocannon, the load generator), per request. */
  load_generator_cpu_ms_per_request: number;
  response_bytes: number;
  errors: number;
  non_2xx: number;
}

/** Runs autocannon against one endpoint: a warm-up, then the measured run; CPU of `server` alongside. */
export async function load(
  baseUrl: string,
  endpoint: ReadEndpoint,
  headers: Record<string, string>,
  settings: LoadSettings,
  server: ProcessStats,
  database: DatabaseCpu,
  /** Requests per second in all; unset: as fast as the server answers. */
  overallRate?: number,
): Promise<LoadFigures> {
  const options = {
    url: `${baseUrl}${endpoint.path}`,
    method: endpoint.method,
    headers: { ...headers, ...(endpoint.body !== undefined && { 'content-type': 'application/json' }) },
    body: endpoint.body === undefined ? undefined : JSON.stringify(endpoint.body),
    connections: settings.connections,
    pipelining: settings.pipelining,
    ...(overallRate !== undefined && { overallRate }),
  };
  if (settings.warmupSeconds > 0) await autocannon({ ...options, duration: settings.warmupSeconds });
  const databaseBefore = await database.snapshot();
  const ownBefore = process.cpuUsage();
  const cpuBefore = server.cpuSeconds();
  const result = await autocannon({ ...options, duration: settings.seconds });
  const cpu = server.cpuSeconds() - cpuBefore;
  const own = process.cpuUsage(ownBefore);
  const databaseCpu = DatabaseCpu.between(databaseBefore, await database.snapshot());
  const completed = result.requests.total;
  const perRequest = (seconds: number) => (completed === 0 ? NaN : round((seconds * 1000) / completed, 3));
  return {
    requests_per_second: Math.round(completed / result.duration),
    requests: completed,
    latency_p50_ms: result.latency.p50,
    latency_p99_ms: result.latency.p99,
    latency_mean_ms: round(result.latency.mean, 2),
    latency_max_ms: result.latency.max,
    cpu_ms_per_request: perRequest(cpu),
    database_cpu_ms_per_request: perRequest(databaseCpu),
    load_generator_cpu_ms_per_request: perRequest((own.user + own.system) / 1e6),
    response_bytes: completed === 0 ? 0 : Math.round(result.throughput.total / completed),
    errors: result.errors,
    non_2xx: result.non2xx,
  };
}

export interface ReadEmployer {
  token: string;
  endpoints: ReadEndpoint[];
}

/**
 * A sandbox employer of `employeeSize` people behind the bench application, synced (reads are
 * served from the latest completed sync, as in production after the first one), and the three
 * reads of this benchmark.
 */
export async function prepareReadEmployer(service: BenchService, employeeSize = 100): Promise<ReadEmployer> {
  const { body: connection } = await call(`${service.url}/sandbox/connections`, {
    method: 'POST',
    headers: basicAuth(),
    body: { provider_id: 'sandbox_automated', employee_size: employeeSize, products: ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement'] },
  });
  const token: string = connection.access_token;
  const auth = bearerAuth(token);
  const { body: sync } = await call(`${service.url}/jobs/automated`, { method: 'POST', headers: auth, body: { type: 'data_sync_all' } }, [201, 202]);
  await waitForJob(service.url, token, sync.job_id, 120_000);

  const { body: payments } = await call<{ id: string; pay_date: string; individual_ids: string[] }[]>(
    `${service.url}/employer/payment?start_date=2000-01-01&end_date=2100-12-31`,
    { headers: auth },
  );
  // The latest regular pay run: the one that pays everybody.
  const regular = payments.filter((p) => p.individual_ids.length === Math.max(...payments.map((q) => q.individual_ids.length)));
  const payment = regular[regular.length - 1];
  return {
    token,
    endpoints: [
      { name: 'directory', method: 'GET', path: '/employer/directory' },
      { name: 'company', method: 'GET', path: '/employer/company' },
      { name: 'pay-statement', method: 'POST', path: '/employer/pay-statement', body: { requests: [{ payment_id: payment.id }] } },
    ],
  };
}

/** Polls GET /jobs/automated/{id} until the job ends; throws unless it ends `complete`. */
export async function waitForJob(baseUrl: string, token: string, jobId: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await call(`${baseUrl}/jobs/automated/${jobId}`, { headers: bearerAuth(token) });
    if (body.status === 'complete') return;
    if (body.status !== 'pending' && body.status !== 'in_progress') throw new Error(`job ${jobId} ended ${body.status}`);
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${body.status} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

export interface HttpReadsResult {
  machine: Awaited<ReturnType<typeof machineInfo>>;
  settings: LoadSettings;
  employee_size: number;
  endpoints: {
    name: string;
    method: string;
    path: string;
    /** Items in the answer (individuals, statements). */
    items: number | null;
    /** The service as it runs, at full speed. */
    service: LoadFigures;
    /** The service at a fixed load of half its own full-speed requests/s: latency when not saturated. */
    service_at_half_load: LoadFigures & { rate: number };
    /** A second instance on the same database with READ_CACHE_MB=0: every read a cold one, through the whole pipeline. */
    service_without_cache: LoadFigures;
    /** The same read's database work with nothing else (data-layer-server.ts). */
    data_layer: LoadFigures;
    /** The service's bytes from a bare node:http server: the limit. */
    bare: LoadFigures;
    /** service requests/s ÷ bare server requests/s (the target's figure). */
    throughput_ratio: number;
    /** service requests/s ÷ data-layer server requests/s. */
    throughput_ratio_to_data_layer: number;
    /** Whether the data-layer server answered the service's exact bytes. */
    data_layer_same_bytes: boolean;
  }[];
  /** A token disconnected through the instance without cache, until the cached instance refuses it (ms). */
  revocation_ms: { count: number; p50: number; p99: number; max: number };
  /** The service process's RSS while this benchmark ran. */
  service_rss_mb: { before_load: number; max_during_load: number; after_load: number };
  targets: TargetCheck[];
  quick: boolean;
}

export async function measureHttpReads(options: BenchOptions = benchOptions()): Promise<TargetCheck[]> {
  const settings: LoadSettings = options.quick
    ? { connections: 10, pipelining: 1, warmupSeconds: 1, seconds: 3 }
    : { connections: 10, pipelining: 1, warmupSeconds: 3, seconds: 10 };
  const employeeSize = 100;
  return withBenchDatabase('bench_http', async (dataSource) => {
    const machine = await machineInfo(dataSource);
    console.log(`http reads: ${describeMachine(machine)}`);
    const service = await startBenchService(urlOf(dataSource));
    // The same service with no answers kept: each read is a cold one (as the first after a sync).
    const uncached = await startBenchService(urlOf(dataSource), { env: { READ_CACHE_MB: '0' } });
    const baselines: ChildServer[] = [];
    try {
      const employer = await prepareReadEmployer(service, employeeSize);
      // BENCH_HTTP_ENDPOINTS=company,directory narrows a run (e.g. for a CPU profile of one read).
      const only = process.env.BENCH_HTTP_ENDPOINTS?.split(',').map((name) => name.trim());
      if (only) employer.endpoints = employer.endpoints.filter((e) => only.includes(e.name));
      const auth = bearerAuth(employer.token);
      // The exact bytes the service answers, for the bare server to answer with.
      const answers = new Map<string, { route: BareRoute; items: number | null }>();
      for (const endpoint of employer.endpoints) {
        const answer = await call(`${service.url}${endpoint.path}`, { method: endpoint.method, headers: auth, body: endpoint.body });
        const items = answer.body.individuals?.length ?? answer.body.responses?.[0]?.body?.pay_statements?.length ?? null;
        answers.set(endpoint.name, {
          route: { method: endpoint.method, path: endpoint.path, status: answer.status, contentType: answer.contentType, body: answer.bytes },
          items,
        });
      }
      const bare = await startBareServer([...answers.values()].map((a) => a.route));
      baselines.push(bare);
      const dataLayer = await startDataLayerServer(urlOf(dataSource));
      baselines.push(dataLayer);

      const database = new DatabaseCpu(dataSource);
      await sleep(1_000);
      const rss = new RssSampler(service.stats, 100).start();
      const rssBefore = service.stats.memory().rssMb;
      const endpoints: HttpReadsResult['endpoints'] = [];
      for (const endpoint of employer.endpoints) {
        const sameBytes = (
          await call(`${dataLayer.url}${endpoint.path}`, { method: endpoint.method, headers: auth, body: endpoint.body })
        ).bytes.equals(answers.get(endpoint.name)!.route.body);
        const serviceFigures = await load(service.url, endpoint, auth, settings, service.stats, database);
        const halfRate = Math.max(1, Math.round(serviceFigures.requests_per_second / 2));
        const halfLoad = {
          ...(await load(service.url, endpoint, auth, { ...settings, warmupSeconds: 0 }, service.stats, database, halfRate)),
          rate: halfRate,
        };
        const withoutCache = await load(uncached.url, endpoint, auth, settings, uncached.stats, database);
        const dataLayerFigures = await load(dataLayer.url, endpoint, auth, settings, dataLayer.stats, database);
        const bareFigures = await load(bare.url, endpoint, auth, settings, bare.stats, database);
        const runs = [['service', serviceFigures], ['service at half load', halfLoad], ['service without cache', withoutCache], ['data layer', dataLayerFigures], ['bare server', bareFigures]] as const;
        for (const [who, f] of runs) {
          if (f.errors > 0 || f.non_2xx > 0) throw new Error(`${endpoint.name} (${who}): ${f.errors} errors, ${f.non_2xx} non-2xx answers`);
        }
        endpoints.push({
          name: endpoint.name,
          method: endpoint.method,
          path: endpoint.path,
          items: answers.get(endpoint.name)!.items,
          service: serviceFigures,
          service_at_half_load: halfLoad,
          service_without_cache: withoutCache,
          data_layer: dataLayerFigures,
          bare: bareFigures,
          throughput_ratio: round(serviceFigures.requests_per_second / bareFigures.requests_per_second, 3),
          throughput_ratio_to_data_layer: round(serviceFigures.requests_per_second / dataLayerFigures.requests_per_second, 3),
          data_layer_same_bytes: sameBytes,
        });
      }
      const loadEndedMs = rss.samples[rss.samples.length - 1]?.atMs ?? Infinity;
      const revocation = await revocationDelays(uncached, service, options.quick ? 20 : 50);
      await sleep(2_000);
      rss.stop();
      const serviceRss = { before_load: rssBefore, max_during_load: rss.maxMb(0, loadEndedMs), after_load: service.stats.memory().rssMb };

      const targets: TargetCheck[] = [
        ...endpoints.flatMap((e) => {
          // A page of pay statements is a large body: its target is half the others'.
          const share = e.name === 'pay-statement' ? 0.25 : 0.5;
          return [
            {
              target: `${e.name}: service ≥ ${share * 100} % of the bare server's requests/s`,
              measured: `${e.service.requests_per_second} vs ${e.bare.requests_per_second} req/s (${round(e.throughput_ratio * 100)} %)`,
              met: e.throughput_ratio >= share,
            },
            {
              target: `${e.name}: service p99 < 20 ms at half its full-speed rate`,
              measured: `p99 ${e.service_at_half_load.latency_p99_ms} ms at ${e.service_at_half_load.rate} req/s (${e.service.latency_p99_ms} ms at full speed)`,
              met: e.service_at_half_load.latency_p99_ms < 20,
            },
          ];
        }),
        {
          target: 'a token disconnected through one instance refused by the other: p99 < 1 s',
          measured: `p50 ${revocation.p50} ms, p99 ${revocation.p99} ms, max ${revocation.max} ms over ${revocation.count} tokens`,
          met: revocation.p99 < 1_000,
        },
      ];
      const result: HttpReadsResult = {
        machine,
        settings,
        employee_size: employeeSize,
        endpoints,
        revocation_ms: revocation,
        service_rss_mb: serviceRss,
        targets,
        quick: options.quick,
      };

      console.log(
        `\n${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s measured per row`,
      );
      const row = (endpoint: string, server: string, f: LoadFigures, ratio: string) => [
        endpoint,
        server,
        f.requests_per_second,
        f.latency_p50_ms,
        f.latency_p99_ms,
        f.latency_mean_ms,
        f.cpu_ms_per_request,
        f.database_cpu_ms_per_request,
        f.load_generator_cpu_ms_per_request,
        f.response_bytes,
        ratio,
      ];
      printTable(
        ['endpoint', 'server', 'req/s', 'p50 ms', 'p99 ms', 'mean ms', 'CPU ms/req', 'PG ms/req', 'client ms/req', 'bytes/resp', 'of bare'],
        endpoints.flatMap((e) => [
          row(e.name, 'service', e.service, `${round(e.throughput_ratio * 100)} %`),
          row('', `service @ ${e.service_at_half_load.rate}/s`, e.service_at_half_load, ''),
          row('', 'service, no cache', e.service_without_cache, `${round((e.service_without_cache.requests_per_second / e.bare.requests_per_second) * 100)} %`),
          row('', 'data layer', e.data_layer, `${round((e.data_layer.requests_per_second / e.bare.requests_per_second) * 100)} %`),
          row('', 'bare', e.bare, '100 %'),
        ]),
      );
      console.log(`revocation seen by the other instance: p50 ${revocation.p50} ms, p99 ${revocation.p99} ms, max ${revocation.max} ms (${revocation.count} tokens)`);
      console.log(`service RSS: ${serviceRss.before_load} MB before, max ${serviceRss.max_during_load} MB during the load, ${serviceRss.after_load} MB after`);
      printTargets(targets);
      console.log(`written to ${writeResult('http-reads', options, result)}`);
      return targets;
    } finally {
      for (const server of baselines) await server.stop();
      await uncached.stop();
      await service.stop();
    }
  });
}

/**
 * Tokens of `count` sandbox connections, each read twice on `cached` (so that instance holds it
 * in memory), then disconnected through `other`: the time from the disconnect's answer to the
 * first 401 from `cached`, polled every 2 ms.
 */
async function revocationDelays(other: BenchService, cached: BenchService, count: number): Promise<HttpReadsResult['revocation_ms']> {
  const delays: number[] = [];
  for (let i = 0; i < count; i++) {
    const { body } = await call(`${other.url}/sandbox/connections`, {
      method: 'POST',
      headers: basicAuth(),
      body: { provider_id: 'sandbox_automated', employee_size: 1, products: ['company'] },
    });
    const auth = bearerAuth(body.access_token);
    for (let read = 0; read < 2; read++) await call(`${cached.url}/employer/company`, { headers: auth });
    await call(`${other.url}/disconnect`, { method: 'POST', headers: auth });
    const disconnectedAt = performance.now();
    for (;;) {
      const { status } = await call(`${cached.url}/employer/company`, { headers: auth }, [200, 401]);
      if (status === 401) break;
      if (performance.now() - disconnectedAt > 10_000) throw new Error('a disconnected token was still served after 10 s');
      await sleep(2);
    }
    delays.push(performance.now() - disconnectedAt);
  }
  const sorted = delays.sort((x, y) => x - y);
  const at = (p: number) => round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)], 1);
  return { count, p50: at(50), p99: at(99), max: round(sorted[sorted.length - 1], 1) };
}

if (require.main === module) runBenchmark(async () => void (await measureHttpReads()));
