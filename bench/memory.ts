/**
 * Benchmark: the service process's memory under a steady load — the three reads of
 * bench/http-reads.ts in turn on every connection, at full speed, for a minute — sampled from
 * /proc every 250 ms: RSS when idle before the load, the highest RSS in each tenth of the load
 * (a leak shows as a climb from the first tenths to the last), the highest overall, and the
 * RSS once the load has stopped and the process has idled; with V8's heap and garbage
 * collections from the service's /metrics. Twice: with node's default settings, and with the
 * flags `npm start` uses (START_NODE_ARGS: the old generation capped, the young one sized).
 * Writes bench/results/memory.json.
 *
 *   npx ts-node --transpile-only bench/memory.ts [--quick]
 *
 * Target (issue "figures, not assertions"): RSS < 300 MB.
 */
import autocannon from 'autocannon';
import { runBenchmark, withBenchDatabase } from './bench-database';
import {
  BenchOptions,
  benchOptions,
  bearerAuth,
  describeMachine,
  machineInfo,
  printTable,
  printTargets,
  round,
  RssSampler,
  sleep,
  startBenchService,
  START_NODE_ARGS,
  TargetCheck,
  urlOf,
  writeResult,
} from './bench-service';
import { prepareReadEmployer } from './http-reads';

const WINDOWS = 10;

/** V8's heap as the service's own /metrics reports it (prom-client default metrics), in MB. */
export interface HeapFigures {
  heap_total: number;
  heap_used: number;
  external: number;
  /** Size of each V8 heap space (new, old, code, large_object, …). */
  spaces: Record<string, number>;
  /** Garbage collections since start by kind (minor, major, incremental, …): count and seconds. */
  gc: Record<string, { count: number; seconds: number }>;
}

export async function heapOf(baseUrl: string): Promise<HeapFigures> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? NaN);
  const mb = (bytes: number) => round(bytes / 1024 / 1024);
  const spaces: Record<string, number> = {};
  for (const match of text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="([^"]+)"\} ([0-9.e+]+)/gm)) {
    if (Number(match[2]) > 0) spaces[match[1]] = mb(Number(match[2]));
  }
  const gc: HeapFigures['gc'] = {};
  for (const match of text.matchAll(/^nodejs_gc_duration_seconds_(sum|count)\{kind="([^"]+)"\} ([0-9.e+-]+)/gm)) {
    const kind = (gc[match[2]] ??= { count: 0, seconds: 0 });
    if (match[1] === 'count') kind.count = Number(match[3]);
    else kind.seconds = round(Number(match[3]), 3);
  }
  return {
    gc,
    heap_total: mb(value('nodejs_heap_size_total_bytes')),
    heap_used: mb(value('nodejs_heap_size_used_bytes')),
    external: mb(value('nodejs_external_memory_bytes')),
    spaces,
  };
}

export interface MemoryRun {
  /** `default` (node dist/main.js, as `npm start` and the Dockerfile run it) or the node flags. */
  settings: string;
  node_args: string[];
  load: {
    connections: number;
    seconds: number;
    requests: number;
    requests_per_second: number;
    latency_p50_ms: number;
    latency_p99_ms: number;
    errors: number;
    non_2xx: number;
  };
  rss_mb: {
    idle_before_load: number;
    /** Highest RSS in each tenth of the load, in order: a leak climbs from the first to the last. */
    max_by_tenth_of_load: number[];
    max_during_load: number;
    /** After the load stopped and the process idled `settle_seconds`. */
    settled_after_load: number;
    settle_seconds: number;
    /** The process's peak RSS since it started (start-up and the sync included). */
    process_peak: number;
  };
  /** V8's heap (the service's /metrics): how much of the RSS is JavaScript heap. */
  heap_mb: { idle_before_load: HeapFigures; end_of_load: HeapFigures; settled: HeapFigures };
  /** Garbage collections during the load, by kind: how many, and the mean pause. */
  gc_during_load: Record<string, { count: number; mean_ms: number }>;
}

export interface MemoryResult {
  machine: Awaited<ReturnType<typeof machineInfo>>;
  runs: MemoryRun[];
  targets: TargetCheck[];
  quick: boolean;
}

/** The service with these node flags, a synced 100-person employer, the load, the samples. */
async function measureRun(databaseUrl: string, nodeArgs: readonly string[], loadSeconds: number, settleSeconds: number): Promise<MemoryRun> {
  const connections = 10;
  const service = await startBenchService(databaseUrl, { nodeArgs });
  try {
    const employer = await prepareReadEmployer(service);
    const headers = bearerAuth(employer.token);
    await sleep(2_000);
    const idle = service.stats.memory().rssMb;
    const heapIdle = await heapOf(service.url);

    const sampler = new RssSampler(service.stats, 250).start();
    const result = await autocannon({
      url: service.url,
      connections,
      duration: loadSeconds,
      requests: employer.endpoints.map((e) => ({
        method: e.method,
        path: e.path,
        headers: e.body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body: e.body === undefined ? undefined : JSON.stringify(e.body),
      })),
    });
    const loadMs = sampler.samples[sampler.samples.length - 1].atMs;
    const heapEndOfLoad = await heapOf(service.url);
    await sleep(settleSeconds * 1_000);
    sampler.stop();
    const settled = service.stats.memory().rssMb;
    const heapSettled = await heapOf(service.url);
    if (result.errors > 0 || result.non2xx > 0) throw new Error(`the load met ${result.errors} errors and ${result.non2xx} non-2xx answers`);
    const tenth = loadMs / WINDOWS;
    const gc: MemoryRun['gc_during_load'] = {};
    for (const [kind, g] of Object.entries(heapEndOfLoad.gc)) {
      const count = g.count - (heapIdle.gc[kind]?.count ?? 0);
      const seconds = g.seconds - (heapIdle.gc[kind]?.seconds ?? 0);
      if (count > 0) gc[kind] = { count, mean_ms: round((seconds * 1000) / count, 2) };
    }
    return {
      settings: nodeArgs.length === 0 ? 'default' : nodeArgs.join(' '),
      node_args: [...nodeArgs],
      load: {
        connections,
        seconds: loadSeconds,
        requests: result.requests.total,
        requests_per_second: Math.round(result.requests.total / result.duration),
        latency_p50_ms: result.latency.p50,
        latency_p99_ms: result.latency.p99,
        errors: result.errors,
        non_2xx: result.non2xx,
      },
      rss_mb: {
        idle_before_load: idle,
        max_by_tenth_of_load: Array.from({ length: WINDOWS }, (_, i) => sampler.maxMb(i * tenth, (i + 1) * tenth)),
        max_during_load: sampler.maxMb(0, loadMs),
        settled_after_load: settled,
        settle_seconds: settleSeconds,
        process_peak: service.stats.memory().peakRssMb,
      },
      heap_mb: { idle_before_load: heapIdle, end_of_load: heapEndOfLoad, settled: heapSettled },
      gc_during_load: gc,
    };
  } finally {
    await service.stop();
  }
}

export async function measureMemory(options: BenchOptions = benchOptions()): Promise<TargetCheck[]> {
  const loadSeconds = options.quick ? 10 : 60;
  const settleSeconds = options.quick ? 3 : 10;
  return withBenchDatabase('bench_memory', async (dataSource) => {
    const machine = await machineInfo(dataSource);
    console.log(`memory: ${describeMachine(machine)}`);
    const runs: MemoryRun[] = [];
    for (const nodeArgs of [[], START_NODE_ARGS]) runs.push(await measureRun(urlOf(dataSource), nodeArgs, loadSeconds, settleSeconds));

    const targets: TargetCheck[] = runs.map((run) => ({
      target: `RSS < 300 MB under load (${run.settings === 'default' ? 'default node settings' : run.settings})`,
      measured: `max ${run.rss_mb.max_during_load} MB during ${run.load.seconds} s at ${run.load.requests_per_second} req/s; ${run.rss_mb.settled_after_load} MB settled`,
      met: run.rss_mb.max_during_load < 300,
    }));
    const result: MemoryResult = { machine, runs, targets, quick: options.quick };

    console.log(`\ndirectory, company and pay-statement in turn on ${runs[0].load.connections} connections for ${loadSeconds} s, RSS in MB:`);
    printTable(
      ['settings', 'req/s', 'p99 ms', 'idle', ...Array.from({ length: WINDOWS }, (_, i) => `${(i + 1) * 10} %`), 'max', 'settled'],
      runs.map((run) => [
        run.settings,
        run.load.requests_per_second,
        run.load.latency_p99_ms,
        run.rss_mb.idle_before_load,
        ...run.rss_mb.max_by_tenth_of_load.map((v) => round(v)),
        run.rss_mb.max_during_load,
        run.rss_mb.settled_after_load,
      ]),
    );
    const heapLine = (h: HeapFigures) =>
      `${h.heap_used} MB used of ${h.heap_total} (${Object.entries(h.spaces).map(([k, v]) => `${k} ${v}`).join(', ')}), external ${h.external}`;
    for (const run of runs) {
      console.log(`${run.settings}:`);
      console.log(`  garbage collections during the load: ${Object.entries(run.gc_during_load).map(([k, g]) => `${k} ${g.count} × ${g.mean_ms} ms`).join(', ')}`);
      console.log(`  heap idle:        ${heapLine(run.heap_mb.idle_before_load)}`);
      console.log(`  heap end of load: ${heapLine(run.heap_mb.end_of_load)}`);
    }
    printTargets(targets);
    console.log(`written to ${writeResult('memory', options, result)}`);
    return targets;
  });
}

if (require.main === module) runBenchmark(async () => void (await measureMemory()));
