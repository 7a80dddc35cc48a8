/**
 * What the HTTP benchmarks share: the service under test and a bare Node `http` server, each
 * in a child process of its own (a load generator in the same process as the server would
 * slow both), the child's memory and CPU read from /proc, the machine's description, and the
 * `--quick` switch.
 */
import { ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { writeBenchResult } from './bench-database';
import { freePort, startNodeArgs, trackChild } from './service-child';
import { serviceDatabaseEnv } from './database-pooler';

const ROOT = resolve(__dirname, '..');

/** The node flags `npm start` runs the service with (package.json), so a benchmark runs it as deployed. */
export const START_NODE_ARGS: readonly string[] = startNodeArgs();

/** The application the service creates at start (APP_CLIENT_ID/APP_CLIENT_SECRET). */
export const BENCH_APPLICATION = {
  clientId: '6f1d6a52-4b7e-4c39-9a3e-2f0c8d9b1e47',
  clientSecret: 'bench-client-secret-not-for-production',
} as const;

export const basicAuth = () => ({
  authorization: `Basic ${Buffer.from(`${BENCH_APPLICATION.clientId}:${BENCH_APPLICATION.clientSecret}`).toString('base64')}`,
});

export const bearerAuth = (token: string) => ({ authorization: `Bearer ${token}`, 'service-api-version': '2020-09-17' });

export interface BenchOptions {
  /** A short run: fewer seconds of load, smaller sizes; results go to `<name>.tmp.json`. */
  quick: boolean;
}

/** `--quick` on the command line, or BENCH_QUICK=1. */
export function benchOptions(argv: string[] = process.argv): BenchOptions {
  return { quick: argv.includes('--quick') || /^(1|true|yes)$/i.test(process.env.BENCH_QUICK ?? '') };
}

/** A full run writes bench/results/<name>.json; a quick one a git-ignored <name>.tmp.json. */
export function writeResult(name: string, options: BenchOptions, result: unknown): string {
  const file = options.quick ? `${name}.tmp` : name;
  writeBenchResult(file, result);
  return `bench/results/${file}.json`;
}

/** One line per figure with its target, for the result file and the run's summary. */
export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

/** The value of a `--name=value` argument (everything after the first `=`), undefined without one. */
export function argValue(name: string, argv: readonly string[] = process.argv): string | undefined {
  const prefix = `--${name}=`;
  return argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}

export const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** The median of these values (the mean of the middle two for an even count, rounded to `digits`). */
export function median(values: readonly number[], digits = 1): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : round((sorted[mid - 1] + sorted[mid]) / 2, digits);
}

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

let built = false;

/**
 * Compiles the service (`tsc -p tsconfig.build.json`, incremental) once per process: the
 * service under test runs from dist/, as `npm start` runs it, not under ts-node, whose
 * compiler would sit in the measured process's memory.
 */
export function ensureBuild(): string {
  const main = join(ROOT, 'dist', 'main.js');
  if (built) return main;
  const tsc = require.resolve('typescript/bin/tsc', { paths: [ROOT] });
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'pipe' });
  } catch (error) {
    // tsc still emits on type errors; a dist that exists is what the benchmark can run.
    const output = String((error as { stdout?: Buffer }).stdout ?? error);
    if (!existsSync(main)) throw new Error(`the build failed and dist/main.js is missing:\n${output}`);
    console.warn(`[bench] the build reported errors; running the emitted dist/ anyway:\n${output.split('\n').slice(0, 10).join('\n')}`);
  }
  built = true;
  return main;
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>, graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export interface ProcessMemory {
  rssMb: number;
  /** The highest RSS since start or since the last resetPeak(). */
  peakRssMb: number;
}

/** Memory and CPU of one process, from /proc (Linux). */
export class ProcessStats {
  private static ticksPerSecond?: number;

  constructor(readonly pid: number) {}

  memory(): ProcessMemory {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: round(kb('VmRSS') / 1024), peakRssMb: round(kb('VmHWM') / 1024) };
  }

  /** Resets the peak RSS to the current RSS (clear_refs 5); false where the kernel refuses. */
  resetPeak(): boolean {
    try {
      writeFileSync(`/proc/${this.pid}/clear_refs`, '5');
      return true;
    } catch {
      return false;
    }
  }

  /** User + system CPU seconds the process has used so far. */
  cpuSeconds(): number {
    return ProcessStats.cpuSecondsIn(`/proc/${this.pid}/stat`);
  }

  /**
   * The same of its main thread alone: in Node, the JavaScript. The rest is the process's other
   * threads: V8's (its optimizing compiler, the collector's concurrent and parallel work) and
   * libuv's pool.
   */
  mainThreadCpuSeconds(): number {
    return ProcessStats.cpuSecondsIn(`/proc/${this.pid}/task/${this.pid}/stat`);
  }

  /**
   * Seconds its main thread has been runnable but waiting for a core (the scheduler's run delay,
   * `/proc/<pid>/task/<pid>/schedstat`): what the other threads and processes on the same cores
   * took from it. NaN where the kernel keeps no such counters.
   */
  mainThreadWaitSeconds(): number {
    try {
      const [, waitingNs] = readFileSync(`/proc/${this.pid}/task/${this.pid}/schedstat`, 'utf8').split(' ');
      return Number(waitingNs) / 1e9;
    } catch {
      return NaN;
    }
  }

  private static cpuSecondsIn(statFile: string): number {
    const stat = readFileSync(statFile, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ProcessStats.clockTicks();
  }

  private static clockTicks(): number {
    if (ProcessStats.ticksPerSecond === undefined) {
      try {
        ProcessStats.ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
      } catch {
        ProcessStats.ticksPerSecond = 100;
      }
    }
    return ProcessStats.ticksPerSecond;
  }
}

/**
 * CPU used by the PostgreSQL backends serving one database (pg_stat_activity, then /proc):
 * the database's share of a request's cost, which runs on the same cores.
 */
export class DatabaseCpu {
  /**
   * `backends`: those of one application_name only (`only`), or of every other (`excluding`), e.g.
   * to tell the service's backends from those of the benchmark's own progress reads.
   */
  constructor(
    private readonly dataSource: DataSource,
    private readonly backends: { only?: string; excluding?: string } = {},
  ) {}

  async snapshot(): Promise<Map<number, number>> {
    const rows: { pid: number }[] = await this.dataSource.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database()
         AND ($1::text IS NULL OR application_name = $1) AND ($2::text IS NULL OR application_name IS DISTINCT FROM $2)`,
      [this.backends.only ?? null, this.backends.excluding ?? null],
    );
    const cpu = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        cpu.set(pid, new ProcessStats(pid).cpuSeconds());
      } catch {
        // The backend ended meanwhile.
      }
    }
    return cpu;
  }

  /** CPU seconds used between two snapshots (backends that started in between count whole). */
  static between(before: Map<number, number>, after: Map<number, number>): number {
    let total = 0;
    for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
    return total;
  }

  /** Backends that started between two snapshots, and the CPU seconds they used (their start-up and caches' warm-up included). */
  static started(before: Map<number, number>, after: Map<number, number>): { count: number; cpu_seconds: number } {
    const fresh = [...after].filter(([pid]) => !before.has(pid));
    return { count: fresh.length, cpu_seconds: round(fresh.reduce((n, [, seconds]) => n + seconds, 0), 2) };
  }
}

/** RSS of a process sampled on an interval, for max / settled figures. */
export class RssSampler {
  readonly samples: { atMs: number; rssMb: number }[] = [];
  private timer?: NodeJS.Timeout;
  private started = 0;

  constructor(
    private readonly stats: ProcessStats,
    private readonly intervalMs = 100,
  ) {}

  start(): this {
    this.started = Date.now();
    this.take();
    this.timer = setInterval(() => this.take(), this.intervalMs);
    return this;
  }

  stop(): this {
    clearInterval(this.timer);
    this.take();
    return this;
  }

  maxMb(fromMs = 0, toMs = Infinity): number {
    const inRange = this.samples.filter((s) => s.atMs >= fromMs && s.atMs <= toMs);
    return inRange.length === 0 ? NaN : Math.max(...inRange.map((s) => s.rssMb));
  }

  private take(): void {
    try {
      this.samples.push({ atMs: Date.now() - this.started, rssMb: this.stats.memory().rssMb });
    } catch {
      // The process has gone; the samples so far stand.
    }
  }
}

export interface BenchService {
  pid: number;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** Every instance's, when this stands for several (`together`); else only `url`. */
  urls?: string[];
  stats: ProcessStats;
  output(): string;
  stop(): Promise<void>;
}

/**
 * The compiled service (dist/main.js) in a child process on `databaseUrl`, ready when
 * /health/ready answers 200. Settings are the production defaults except: no log output, no
 * provider latency, a per-token rate limit no benchmark reaches (the limiter still runs on
 * every request) and the bench application. BENCH_CPU_PROF=<dir> writes a V8 CPU profile of
 * the service there when it stops; BENCH_HEAP_SAMPLES=<dir>, what it allocated, a profile every
 * five seconds (heap-sampling.js; heap-samples.ts reads them). Node runs it with `nodeArgs`, by
 * default the flags `npm start` uses (START_NODE_ARGS); BENCH_SERVICE_NODE_ARGS adds more (e.g.
 * `--trace-gc`).
 */
export async function startBenchService(
  databaseUrl: string,
  { env = {}, nodeArgs: extraNodeArgs = START_NODE_ARGS }: { env?: Record<string, string>; nodeArgs?: readonly string[] } = {},
): Promise<BenchService> {
  const main = ensureBuild();
  const port = await freePort();
  const nodeArgs = [...extraNodeArgs, ...(process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)];
  if (process.env.BENCH_CPU_PROF) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`);
  const heapSamples = process.env.BENCH_HEAP_SAMPLES ? resolve(process.env.BENCH_HEAP_SAMPLES) : undefined;
  if (heapSamples) {
    mkdirSync(heapSamples, { recursive: true });
    nodeArgs.push('-r', resolve(__dirname, 'heap-sampling.js'));
  }
  const child = spawn(process.execPath, [...nodeArgs, main], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      ...serviceDatabaseEnv(databaseUrl),
      OPS_USERNAME: 'ops',
      OPS_PASSWORD: 'ops-password-for-bench',
      APP_CLIENT_ID: BENCH_APPLICATION.clientId,
      APP_CLIENT_SECRET: BENCH_APPLICATION.clientSecret,
      LOG_LEVEL: 'silent',
      PROVIDER_LATENCY_MS: '0',
      RATE_LIMIT_PER_MINUTE: '1000000',
      SANDBOX_REFRESHES_PER_HOUR: '1000',
      // A/B of the prepared statements: DATABASE_PREPARED_STATEMENTS=false npm run bench …
      ...(process.env.DATABASE_PREPARED_STATEMENTS && { DATABASE_PREPARED_STATEMENTS: process.env.DATABASE_PREPARED_STATEMENTS }),
      // Settings under study, e.g. BENCH_SERVICE_ENV='{"KAFKA_BATCH_MAX":"100"}'
      ...(JSON.parse(process.env.BENCH_SERVICE_ENV ?? '{}') as Record<string, string>),
      ...(heapSamples && { BENCH_HEAP_SAMPLES_DIR: heapSamples, BENCH_HEAP_SAMPLES_MS: process.env.BENCH_HEAP_SAMPLES_MS ?? '5000' }),
      ...env,
    },
  });
  const exited = trackChild(child);
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-200_000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  if (process.env.BENCH_SERVICE_OUTPUT) {
    // e.g. with BENCH_SERVICE_NODE_ARGS="--trace-gc": what the service prints, kept whole.
    const file = createWriteStream(resolve(process.env.BENCH_SERVICE_OUTPUT), { flags: 'a' });
    child.stdout!.pipe(file);
    child.stderr!.pipe(file);
  }

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the service exited before it was ready:\n${output}`);
    const ready = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    if (ready?.status === 200) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service was not ready within 90 s:\n${output}`);
    }
    await sleep(100);
  }
  return { pid: child.pid!, url, stats: new ProcessStats(child.pid!), output: () => output, stop: () => stopChild(child, exited) };
}

/** One canned answer of the bare server: the exact bytes the service answered. */
export interface BareRoute {
  method: string;
  /** Path with its query string. */
  path: string;
  status: number;
  contentType: string;
  body: Buffer;
}

export interface ChildServer {
  url: string;
  stats: ProcessStats;
  stop(): Promise<void>;
}

/** A bench server script (bench/<script>.ts) in a child process: sent `message`, answers its port. */
async function startChildServer(script: string, message: unknown): Promise<ChildServer> {
  const child = fork(join(__dirname, script), [], {
    cwd: ROOT,
    execArgv: ['-r', 'ts-node/register/transpile-only'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { PATH: process.env.PATH ?? '' },
  });
  const exited = trackChild(child);
  const port = await new Promise<number>((done, fail) => {
    child.once('message', (answer: { port: number }) => done(answer.port));
    child.once('exit', (code) => fail(new Error(`${script} exited (code ${code})`)));
    child.send(message as object);
  });
  child.disconnect();
  return { url: `http://127.0.0.1:${port}`, stats: new ProcessStats(child.pid!), stop: () => stopChild(child, exited, 5_000) };
}

/** A plain `node:http` server in a child process answering each route with its bytes: the limit. */
export function startBareServer(routes: BareRoute[]): Promise<ChildServer> {
  return startChildServer('bare-server.ts', { routes: routes.map((r) => ({ ...r, body: r.body.toString('base64') })) });
}

/** A plain `node:http` server doing each read's database work as the service does (data-layer-server.ts). */
export function startDataLayerServer(databaseUrl: string, poolSize = 10): Promise<ChildServer> {
  return startChildServer('data-layer-server.ts', { databaseUrl, poolSize });
}

export interface MachineInfo {
  cpus: number;
  cpu_model: string;
  memory_gb: number;
  node: string;
  postgres: string;
  /** 1, 5 and 15 minute load averages when the benchmark started (other work on the machine). */
  load_average: number[];
  measured_at: string;
}

export async function machineInfo(dataSource: DataSource): Promise<MachineInfo> {
  const [{ server_version }] = await dataSource.query(`SHOW server_version`);
  return {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    memory_gb: round(totalmem() / 1024 ** 3),
    node: process.version,
    postgres: server_version,
    load_average: loadavg().map((l) => round(l, 2)),
    measured_at: new Date().toISOString(),
  };
}

export function describeMachine(machine: MachineInfo): string {
  return (
    `${machine.cpus} × ${machine.cpu_model}, ${machine.memory_gb} GB, Node ${machine.node}, PostgreSQL ${machine.postgres}; ` +
    `load average ${machine.load_average.join(' / ')} at start`
  );
}

/** The database URL a bench DataSource is connected to. */
export function urlOf(dataSource: DataSource): string {
  const url = (dataSource.options as { url?: string }).url;
  if (!url) throw new Error('the bench DataSource has no url');
  return url;
}

/** Prints rows as an aligned text table. */
export function printTable(headers: string[], rows: (string | number)[][]): void {
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  const line = (row: string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  console.log(line(headers));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of cells.slice(1)) console.log(line(row));
}

export function printTargets(targets: TargetCheck[]): void {
  for (const t of targets) console.log(`  [${t.met ? 'met' : 'MISSED'}] ${t.target}: ${t.measured}`);
}

/** JSON over HTTP with a check of the status; the parsed body. */
export async function call<T = any>( // eslint-disable-line @typescript-eslint/no-explicit-any
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
  expected: number[] = [200],
): Promise<{ status: number; body: T; bytes: Buffer; contentType: string }> {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body !== undefined && { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  if (!expected.includes(response.status)) {
    throw new Error(`${init.method ?? 'GET'} ${url} answered ${response.status}: ${bytes.toString().slice(0, 500)}`);
  }
  const contentType = response.headers.get('content-type') ?? '';
  const body = contentType.includes('json') && bytes.length > 0 ? JSON.parse(bytes.toString()) : undefined;
  return { status: response.status, body, bytes, contentType };
}
