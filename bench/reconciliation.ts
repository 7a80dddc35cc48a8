/**
 * Benchmark: payroll reconciliation (`deduction_reconciliation`) after a data sync, on a sandbox
 * employer of 10,000 employees. **Baseline:** the data sync (`data_sync_all`) that brings the
 * statements, measured in the same run; the figure that counts is reconciliation ÷ sync.
 *
 * Setup (not a figure): the employer is generated (as bench/sandbox-sync.ts does: six months of
 * bi-weekly pay runs up to today and an off-cycle one); one 401(k) with a company match is created in the service's `benefits`
 * (origin `created`, created the day after the last pay date of the history) and at the sandbox
 * provider with the same id; every employee is enrolled at the sandbox at 5 % (500 bp) from that
 * day and has the service's `enrollments` row with the same normalised configuration in its
 * `applied` timeline. 1 % of the employees still employed (every 100th) are wrong on purpose: the
 * sandbox deducts 6 % for them while the service applied 5 %.
 *
 * Then, each job leased and run by a JobWorker as the service runs it (run, then the final status
 * with the handler's commit, if any, in one transaction), each phase on its own worker so
 * the phases do not overlap and each starts on a settled server (a checkpoint, no VACUUM or ANALYZE
 * running), with the service's TableUpkeep rounds running beside them as in the service (a table
 * is analyzed within a second of its outgrowing its statistics; without them employer_data is
 * planned as an empty table: see BENCH_RECONCILIATION_UPKEEP):
 * 1. warm-up: a first sync, then the reconciliation it queues, which reads every statement of the
 *    year in the history (paid before the benefit existed: recorded for the IRS limits only, no
 *    results) and opens the configuration drifts of the wrong 1 %; reported, labelled warm-up;
 * 2. one regular pay run at the sandbox (store.runPayPeriod: one statement per employee paid);
 * 3. the sync that brings it (the baseline), then the reconciliation job that sync queued.
 *
 * Figures of 3: wall time, SQL statements (pg's Client.prototype.query, counted during each
 * phase; the in-process sandbox provider's own statements, those on sandbox_* tables, counted
 * apart), the process's and PostgreSQL's CPU, per pay-run statement; statements reconciled,
 * results written, discrepancies opened; reconciliation ÷ sync; the process's peak RSS during
 * the reconciliation (the kernel's high-water mark, reset before the phase); the statements that
 * took the most time, as pg answered them; and the sessions left waiting on a lock (the worker
 * renews its lease every third of the service's JOB_LEASE_MS, on the job's row).
 * The warm-up's figures are reported the same way.
 *
 * Checked, not only timed (exit 1 otherwise): the reconciliation_results rows of the pay run's
 * payment equal its statements of people enrolled in the benefit, and the discrepancies the
 * reconciliation opened are exactly the wrong 1 % (one `amount_mismatch` each).
 *
 *   npx ts-node --transpile-only bench/reconciliation.ts [--quick]
 *   BENCH_RECONCILIATION_EMPLOYEES=10000   (default 10,000; --quick 2,000)
 *   BENCH_CPU_PROF=/tmp/prof               V8 CPU profiles of the two reconciliations there
 *   BENCH_RECONCILIATION_UPKEEP=off        without the service's table upkeep (no statistics: written to the .tmp.json)
 *   BENCH_RECONCILIATION_EXPLAIN=1         EXPLAIN (ANALYZE, BUFFERS) of the heavy reads before each reconciliation
 *                                          (read only, but they warm the cache: written to the .tmp.json)
 *
 * Uses a fresh database on TEST_DATABASE_URL / DATABASE_URL's server (default
 * postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards. Writes
 * bench/results/reconciliation.json (reconciliation.tmp.json with --quick).
 */
import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig, loadConfig } from '../src/config/app-config';
import { DomainEventBus } from '../src/domain/events/domain-event-bus';
import { DATA_SYNC_ALL, DEFAULT_RETRY_POLICY, Job } from '../src/domain/jobs/job';
import { ProviderCatalogue } from '../src/domain/providers/provider-catalogue';
import { EmployerRef } from '../src/domain/providers/provider-port';
import { Clock, SystemClock } from '../src/domain/shared/clock';
import { ConnectionsRepository } from '../src/infrastructure/database/repositories/connections.repository';
import { EmployerDataRepository } from '../src/infrastructure/database/repositories/employer-data.repository';
import { TableUpkeep } from '../src/infrastructure/database/table-upkeep';
import { UnitOfWork } from '../src/infrastructure/database/unit-of-work';
import { BenefitEventsWriter } from '../src/infrastructure/messaging/outbox/benefit-events.writer';
import { OutboxSignal } from '../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../src/infrastructure/messaging/outbox/outbox-writer';
import { Metrics } from '../src/infrastructure/observability/metrics';
import { SandboxEmployerStore } from '../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { addDays } from '../src/infrastructure/providers/sandbox/sandbox-pay-calendar';
import { SandboxEnrollmentConfiguration } from '../src/infrastructure/providers/sandbox/sandbox-payroll.types';
import { SandboxProviderAdapter } from '../src/infrastructure/providers/sandbox/sandbox-provider.adapter';
import { JobHandler, JobHandlerRegistry } from '../src/modules/jobs/job-handler';
import { JobSignal } from '../src/modules/jobs/job-signal';
import { JobWorker } from '../src/modules/jobs/job-worker';
import { JobsRepository } from '../src/modules/jobs/jobs.repository';
import { DEDUCTION_RECONCILIATION, DeductionReconciliationHandler } from '../src/modules/reconciliation/deduction-reconciliation.handler';
import { DiscrepancyEvents } from '../src/modules/reconciliation/discrepancy-events';
import { ReconciliationRepository, StatementToReconcile } from '../src/modules/reconciliation/reconciliation.repository';
import { DataSyncHandler } from '../src/modules/sync/data-sync.handler';
import { SandboxJobConfigurationsRepository } from '../src/modules/sync/sandbox-job-configurations.repository';
import { insertBenchConnection, runBenchmark, withBenchDatabase } from './bench-database';
import {
  BenchOptions,
  benchOptions,
  DatabaseCpu,
  describeMachine,
  machineInfo,
  printTable,
  printTargets,
  ProcessStats,
  round,
  TargetCheck,
  urlOf,
  writeResult,
} from './bench-service';

const BENEFIT_DESCRIPTION = 'Bench 401(k) Savings Plan';
/** 100 % of deferrals up to 3 % of pay, then 50 % up to 5 % (the sandbox generator's match). */
const MATCH = { type: 'match' as const, tiers: [{ match: 10_000, threshold: 300 }, { match: 5_000, threshold: 500 }] };
const configurationAt = (percentBp: number): SandboxEnrollmentConfiguration => ({
  employee_deduction: { type: 'percent', amount: percentBp },
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
});
const SERVICE_PERCENT_BP = 500;
const WRONG_PERCENT_BP = 600;
/** Every WRONG_EVERY-th employee still employed is deducted WRONG_PERCENT_BP at the sandbox: 1 %. */
const WRONG_EVERY = 100;

// ---------------------------------------------------------------------------------------------
// SQL statements, counted where node-postgres sends them

interface StatementTiming {
  calls: number;
  ms: number;
  /** Each call's time, the first 20. */
  each: number[];
}

/** What TableUpkeep sends (table-upkeep.ts). */
const UPKEEP_STATEMENT = /pg_stat_user_tables|^\s*(ANALYZE|VACUUM|SET vacuum_cost|RESET vacuum_cost)|FROM pg_settings WHERE name = ANY|current_setting\('autovacuum'\)/;

/**
 * Counts every statement any pg Client sends (TypeORM's pool, the prepared-statements client,
 * which calls Client.prototype.query once per statement) while active, with the time to its
 * answer per statement text. Statements on sandbox_* tables are the in-process sandbox
 * provider's (what a real provider's API would do), counted apart.
 */
class SqlCounter {
  active = false;
  total = 0;
  provider = 0;
  /** The table upkeep's statements (its look at pg_stat_user_tables, ANALYZE, VACUUM): not the phase's own. */
  upkeep = 0;
  readonly byText = new Map<string, StatementTiming>();
  private readonly original = Client.prototype.query;

  install(): void {
    const original = this.original;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const seen = (args: any[], result: any) => this.seen(args, result);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    (Client.prototype as any).query = function (this: Client, ...args: any[]) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const result: any = (original as any).apply(this, args);
      seen(args, result);
      return result;
    };
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private seen(args: any[], result: any): void {
    if (!this.active) return;
    const text: string = typeof args[0] === 'string' ? args[0] : String(args[0]?.text ?? '');
    if (UPKEEP_STATEMENT.test(text)) {
      this.upkeep++;
      return;
    }
    this.total++;
    if (/\bsandbox_/.test(text)) this.provider++;
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 110);
    const timing = this.byText.get(key) ?? { calls: 0, ms: 0, each: [] };
    timing.calls++;
    this.byText.set(key, timing);
    if (result && typeof result.then === 'function') {
      const started = performance.now();
      const done = () => {
        const ms = performance.now() - started;
        timing.ms += ms;
        if (timing.each.length < 20) timing.each.push(round(ms, 1));
      };
      result.then(done, done);
    }
  }

  uninstall(): void {
    Client.prototype.query = this.original;
  }

  /** A statement the counter does not see (the bench's own watching). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  uncounted<T = any>(client: Client, text: string, values: unknown[] = []): Promise<{ rows: T[] }> {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return (this.original as any).call(client, text, values);
  }

  reset(): void {
    this.total = 0;
    this.provider = 0;
    this.upkeep = 0;
    this.byText.clear();
  }

  top(n: number): { statement: string; calls: number; ms: number; each_ms: number[] }[] {
    return [...this.byText]
      .map(([statement, t]) => ({ statement, calls: t.calls, ms: round(t.ms, 1), each_ms: t.each }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, n);
  }
}

// ---------------------------------------------------------------------------------------------
// Phases

export interface PhaseFigures {
  wall_seconds: number;
  sql_statements: number;
  /** Of those, on sandbox_* tables: the in-process sandbox provider's. */
  sql_statements_provider: number;
  /** The table upkeep's statements meanwhile (not counted above; its ANALYZE is in the PostgreSQL CPU). */
  sql_statements_upkeep: number;
  /** This process's CPU (user + system). */
  process_cpu_seconds: number;
  /** CPU of the PostgreSQL backends of the bench database (null when /proc cannot see them). */
  postgres_cpu_seconds: number | null;
  rss_before_mb: number;
  /** The kernel's high-water mark, reset before the phase (sampled every 20 ms where it cannot be). */
  peak_rss_mb: number;
  /** The most sessions of the database waiting on a lock at once during the phase, and what they ran. */
  lock_waits: { most_at_once: number; statements: string[] };
  /** The statements that took the most time to be answered, as sent (first 110 characters). */
  top_statements: { statement: string; calls: number; ms: number; each_ms: number[] }[];
}

const megabytes = (bytes: number) => round(bytes / 1024 / 1024);

async function profiled<T>(file: string | undefined, work: () => Promise<T>): Promise<T> {
  if (!file) return work();
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params ?? {}, (error, answer) => (error ? reject(error) : resolve(answer))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 1000 });
  await post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
    console.log(`  CPU profile written to ${file}`);
  }
}

/**
 * Sessions of the bench database waiting on a lock, sampled every 250 ms on a connection of its
 * own (uncounted): the most at once, and what they were running.
 */
class LockWatch {
  most = 0;
  readonly waiting = new Set<string>();
  private timer?: NodeJS.Timeout;
  private busy = false;

  constructor(
    private readonly client: Client,
    private readonly counter: SqlCounter,
  ) {}

  start(): void {
    this.most = 0;
    this.waiting.clear();
    this.timer = setInterval(() => void this.sample(), 250);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.busy) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  private async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const { rows } = await this.counter.uncounted<{ what: string }>(
        this.client,
        `SELECT wait_event || ': ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS what FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
      );
      this.most = Math.max(this.most, rows.length);
      for (const r of rows) this.waiting.add(r.what);
    } catch {
      // A sample missed; the next one counts.
    } finally {
      this.busy = false;
    }
  }
}

/** A session of this database doing background work on the tables: a VACUUM or ANALYZE (the table upkeep), or autovacuum. */
const BACKGROUND_WORK = `(backend_type = 'autovacuum worker' OR query ~* '^\\s*(VACUUM|ANALYZE)\\y')`;

/**
 * A settled server (bench/README.md, Method): a checkpoint, then no VACUUM or ANALYZE running in
 * this database, for at most 30 s; so one phase's clean-up is not charged to the next.
 */
async function settle(dataSource: DataSource): Promise<void> {
  const started = Date.now();
  await dataSource.query(`CHECKPOINT`);
  while (Date.now() - started < 30_000) {
    const [{ n }] = await dataSource.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${BACKGROUND_WORK} AND state <> 'idle'`,
    );
    if (n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Runs `work` on a settled server with the statement counter on, timing it; the database CPU is read around it, uncounted. */
async function measurePhase(
  dataSource: DataSource,
  counter: SqlCounter,
  locks: LockWatch,
  work: () => Promise<void>,
  profileFile?: string,
): Promise<PhaseFigures> {
  await settle(dataSource);
  const databaseCpu = new DatabaseCpu(dataSource);
  const dbBefore = await databaseCpu.snapshot().catch(() => null);
  global.gc?.();
  const self = new ProcessStats(process.pid);
  const kernelPeak = self.resetPeak();
  const rssBefore = process.memoryUsage().rss;
  let sampledPeak = rssBefore;
  // Sampled only where the kernel's high-water mark cannot be reset (a sample costs a /proc read).
  const sampler = kernelPeak ? undefined : setInterval(() => (sampledPeak = Math.max(sampledPeak, process.memoryUsage().rss)), 20);
  counter.reset();
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  counter.active = true;
  locks.start();
  try {
    await profiled(profileFile, work);
  } finally {
    counter.active = false;
    clearInterval(sampler);
    await locks.stop();
  }
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  sampledPeak = Math.max(sampledPeak, process.memoryUsage().rss);
  const dbAfter = dbBefore && (await databaseCpu.snapshot().catch(() => null));
  return {
    wall_seconds: round(wallSeconds, 3),
    sql_statements: counter.total,
    sql_statements_provider: counter.provider,
    sql_statements_upkeep: counter.upkeep,
    process_cpu_seconds: round((cpu.user + cpu.system) / 1e6, 2),
    postgres_cpu_seconds: dbBefore && dbAfter ? round(DatabaseCpu.between(dbBefore, dbAfter), 2) : null,
    rss_before_mb: megabytes(rssBefore),
    peak_rss_mb: kernelPeak ? Math.max(self.memory().peakRssMb, megabytes(sampledPeak)) : megabytes(sampledPeak),
    lock_waits: { most_at_once: locks.most, statements: [...locks.waiting] },
    top_statements: counter.top(8),
  };
}

/** A handler that hands its outcome's result back (the reconciliation fills its summary in its commit). */
function capturing(handler: JobHandler): { handler: JobHandler; result: () => Record<string, unknown> | undefined } {
  let result: Record<string, unknown> | undefined;
  const wrapper: JobHandler = {
    type: handler.type,
    run: async (job, context) => {
      const outcome = await handler.run(job, context);
      result = outcome.result;
      return outcome;
    },
    ...(handler.abandon && { abandon: handler.abandon.bind(handler) }),
    ...(handler.retryPolicy && { retryPolicy: handler.retryPolicy.bind(handler) }),
  };
  return { handler: wrapper, result: () => result };
}

/**
 * A JobWorker for one handler, as the service builds it (not polling: each phase leases its one
 * job with leaseRound() and waits until the worker has no job running).
 */
function workerFor(dataSource: DataSource, jobs: JobsRepository, clock: Clock, handler: JobHandler, leaseMs: number) {
  const registry = new JobHandlerRegistry();
  registry.register(handler);
  const signal = new JobSignal();
  const worker = new JobWorker(
    new UnitOfWork(dataSource),
    jobs,
    registry,
    signal,
    clock,
    { pollMs: 50, leaseMs, concurrency: 1, retry: DEFAULT_RETRY_POLICY, shutdownGraceMs: 5_000 },
    new DomainEventBus(),
  );
  return {
    /** Leases the due job of the handler's type and runs it to its end; answers how many were leased. */
    async runDue(): Promise<number> {
      const leased = await worker.leaseRound();
      while (worker.activeJobIds.length > 0) await signal.wait(1_000);
      return leased;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The run

interface SyncFigures extends PhaseFigures {
  job_status: string;
  /** Pay statements in the generation it wrote (the whole history it copied). */
  pay_statements_copied: number;
  rows_copied: number;
}

interface ReconciliationFigures extends PhaseFigures {
  job_status: string;
  statements_reconciled: number;
  results_written: number;
  discrepancies_opened: number;
  discrepancies_resolved: number;
  configurations_read: number;
  opened_by_kind: Record<string, number>;
  /** The `result` the jobs row recorded, beside what the handler's summary says after its commit. */
  job_row_result: Record<string, unknown> | null;
}

export interface ReconciliationResult {
  machine: Awaited<ReturnType<typeof machineInfo>>;
  employee_size: number;
  quick: boolean;
  /** Whether the service's table upkeep ran beside the jobs (it does in the service), and what it did. */
  table_upkeep: { running: boolean; scope: string | null; actions: string[] };
  setup: {
    generation_seconds: number;
    history_payments: number;
    history_pay_statements: number;
    last_history_pay_date: string;
    benefit_from: string;
    employees_enrolled: number;
    employees_wrong: number;
    setup_seconds: number;
  };
  warm_up: { sync: SyncFigures; reconciliation: ReconciliationFigures };
  pay_run: { payment_id: string; pay_date: string; statements: number; seconds: number };
  sync: SyncFigures;
  reconciliation: ReconciliationFigures;
  per_statement: {
    /** Statements of the pay run: what the sync brought anew and the reconciliation had to reconcile. */
    statements: number;
    sync_ms: number;
    sync_sql: number;
    reconciliation_ms: number;
    reconciliation_sql: number;
    /** The sync's cost per statement it copied (the whole history is copied again). */
    sync_ms_per_statement_copied: number;
  };
  reconciliation_over_sync: { wall: number; sql_statements: number; process_cpu: number; postgres_cpu: number | null };
  checks: {
    payment_statements: number;
    payment_statements_with_benefit: number;
    payment_statements_showing_benefit_line: number;
    payment_results: number;
    payment_results_by_kind: Record<string, number>;
    wrong_employees: number;
    opened_amount_mismatch_of_wrong: number;
    opened_of_others: number;
    live_discrepancies_by_kind: Record<string, number>;
  };
  explain?: string[];
  targets: TargetCheck[];
}

async function count(dataSource: DataSource, sql: string, params: unknown[]): Promise<number> {
  const [{ n }] = await dataSource.query(sql, params);
  return Number(n);
}

async function byKind(dataSource: DataSource, sql: string, params: unknown[]): Promise<Record<string, number>> {
  const rows: { kind: string; n: number }[] = await dataSource.query(sql, params);
  return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
}

export async function measureReconciliation(options: BenchOptions = benchOptions()): Promise<TargetCheck[]> {
  const employeeSize = Number(process.env.BENCH_RECONCILIATION_EMPLOYEES ?? (options.quick ? 2_000 : 10_000));
  if (!Number.isInteger(employeeSize) || employeeSize < 100) {
    throw new Error(`BENCH_RECONCILIATION_EMPLOYEES must be a whole number of at least 100, got ${process.env.BENCH_RECONCILIATION_EMPLOYEES}`);
  }
  const profileDir = process.env.BENCH_CPU_PROF;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const profileFile = (name: string) => (profileDir ? join(profileDir, `reconciliation-${name}-${process.pid}.cpuprofile`) : undefined);

  // The handlers' and the table upkeep's debug lines would bury the figures.
  Logger.overrideLogger(['error', 'warn']);
  return withBenchDatabase('bench_reconciliation', async (dataSource) => {
    const machine = await machineInfo(dataSource);
    console.log(`reconciliation: ${describeMachine(machine)}`);
    console.log(`  ${employeeSize} employees${options.quick ? ' (quick)' : ''}`);

    const clock: Clock = new SystemClock();
    /** The service's defaults (JOB_LEASE_MS: the worker renews a lease every third of it). */
    const serviceConfig = Object.assign(new AppConfig(), { DATABASE_URL: urlOf(dataSource) });
    const catalogue = new ProviderCatalogue();
    const store = new SandboxEmployerStore(dataSource, clock, catalogue);
    const provider = new SandboxProviderAdapter(store, catalogue, loadConfig({ PROVIDER_LATENCY_MS: '0' }));
    const connections = new ConnectionsRepository(dataSource);
    const employerData = new EmployerDataRepository(dataSource);
    const jobs = new JobsRepository(dataSource);
    const outbox = new OutboxWriter(new OutboxSignal());
    const sync = capturing(new DataSyncHandler(connections, new SandboxJobConfigurationsRepository(dataSource), employerData, provider, clock, outbox));
    const reconciliation = capturing(
      new DeductionReconciliationHandler(
        connections,
        dataSource,
        new ReconciliationRepository(),
        new DiscrepancyEvents(new BenefitEventsWriter(outbox, clock)),
        provider,
        clock,
      ),
    );
    const counter = new SqlCounter();
    counter.install();
    const watchClient = new Client({ connectionString: urlOf(dataSource) });
    await watchClient.connect();
    const locks = new LockWatch(watchClient, counter);
    // What the service runs beside its jobs: the table upkeep, whose rounds (one a second)
    // analyze a table within a second of its outgrowing its statistics. Its `statistics` scope,
    // as where autovacuum runs: its vacuums (autovacuum's work, on a server without it) would
    // land inside the phases at random; the phases start on a settled server instead.
    const upkeepOn = !/^(0|off|false|no)$/i.test(process.env.BENCH_RECONCILIATION_UPKEEP ?? '');
    const upkeepActions: string[] = [];
    const upkeep = new TableUpkeep(dataSource, serviceConfig, new Metrics());
    let upkeepRunning: Promise<unknown> = Promise.resolve();
    const upkeepTimer = upkeepOn
      ? setInterval(() => {
          upkeepRunning = upkeepRunning.then(() =>
            upkeep
              .round('statistics')
              .then((done) => done.forEach((d) => upkeepActions.push(`${d.action} ${d.table}`)))
              .catch((error) => console.warn(`table upkeep round failed: ${(error as Error).message}`)),
          );
        }, 1_000)
      : undefined;
    try {
      // --- Setup: the employer, the benefit on both sides, the enrollments on both sides.
      const ref = await insertBenchConnection(dataSource, 'sandbox_automated', employeeSize);
      const generationStarted = process.hrtime.bigint();
      await store.ensureEmployer(ref);
      const generationSeconds = round(Number(process.hrtime.bigint() - generationStarted) / 1e9, 2);
      const setupStarted = process.hrtime.bigint();
      const [history] = await dataSource.query(
        `SELECT to_char(max(pay_date), 'YYYY-MM-DD') AS last, count(*)::int AS payments,
                (SELECT count(*)::int FROM sandbox_pay_statements s WHERE s.entity_id = $1) AS statements
         FROM sandbox_payments WHERE entity_id = $1`,
        [ref.entityId],
      );
      // The service created the benefit after the history: older statements count for the limits only.
      const benefitFrom = addDays(history.last, 1);
      const benefitId = randomUUID();
      await dataSource.query(
        `INSERT INTO benefits (id, connection_id, entity_id, type, description, frequency, company_contribution, origin, job_id, created_at, updated_at)
         VALUES ($1, $2, $3, '401k', $4, 'every_paycheck', $5, 'created', NULL, $6, $6)`,
        [benefitId, ref.connectionId, ref.entityId, BENEFIT_DESCRIPTION, JSON.stringify(MATCH), `${benefitFrom}T00:00:00Z`],
      );
      await store.addBenefit(ref, { benefit_id: benefitId, type: '401k', description: BENEFIT_DESCRIPTION, frequency: 'every_paycheck', company_contribution: MATCH });
      const employees: string[] = [];
      const current = new Set<string>();
      for await (const page of store.peopleInPages(ref)) {
        for (const person of page) {
          if (person.employment.employment?.type !== 'employee') continue;
          employees.push(person.individual.id.toLowerCase());
          if (person.employment.end_date === null) current.add(person.individual.id.toLowerCase());
        }
      }
      // Among those still employed, so that each is paid by the run and has a statement to show it.
      const wrong = new Set(employees.filter((id) => current.has(id)).filter((_, i) => i % WRONG_EVERY === WRONG_EVERY / 2));
      const right = configurationAt(SERVICE_PERCENT_BP);
      await store.enroll(
        ref,
        benefitId,
        employees.map((id) => ({ individual_id: id, effective_date: benefitFrom, configuration: wrong.has(id) ? configurationAt(WRONG_PERCENT_BP) : right })),
      );
      // The service's side: what a completed enrollment request leaves (status enrolled, the applied timeline).
      await dataSource.query(
        `INSERT INTO enrollments (benefit_id, individual_id, entity_id, configuration, effective_date, status, ended_on, job_id, occurred_at, updated_at, applied)
         SELECT $1, u.id, $2, $3::jsonb, $4::date, 'enrolled', NULL, NULL, NULL, now(),
                jsonb_build_array(jsonb_build_object('from', $4::text, 'configuration', $3::jsonb, 'jobId', $5::text))
         FROM unnest($6::uuid[]) AS u (id)`,
        [benefitId, ref.entityId, JSON.stringify(right), benefitFrom, randomUUID(), employees],
      );
      const setupSeconds = round(Number(process.hrtime.bigint() - setupStarted) / 1e9, 2);
      console.log(
        `  setup: generated in ${generationSeconds} s (${history.payments} payments, ${history.statements} statements up to ${history.last}); ` +
          `benefit from ${benefitFrom}, ${employees.length} employees enrolled on both sides, ${wrong.size} wrong at the sandbox (${setupSeconds} s)`,
      );

      const syncPhase = async (label: string): Promise<SyncFigures> => {
        const job = await jobs.insert({ id: randomUUID(), connectionId: ref.connectionId, kind: 'automated', type: DATA_SYNC_ALL, createdAt: clock.now() });
        const worker = workerFor(dataSource, jobs, clock, sync.handler, serviceConfig.JOB_LEASE_MS);
        let leased = 0;
        const figures = await measurePhase(dataSource, counter, locks, async () => void (leased = await worker.runDue()));
        if (leased !== 1) throw new Error(`${label}: the worker leased ${leased} sync jobs, not 1`);
        const status = (await jobs.find(job.id))!.status;
        const generation = await employerData.currentGeneration(ref.entityId);
        const rows = await byKind(dataSource, `SELECT kind, count(*)::int AS n FROM employer_data WHERE entity_id = $1 AND generation = $2 GROUP BY kind`, [
          ref.entityId,
          generation,
        ]);
        if (status !== 'complete') throw new Error(`${label}: the sync ended ${status}`);
        return {
          ...figures,
          job_status: status,
          pay_statements_copied: rows.pay_statement ?? 0,
          rows_copied: Object.values(rows).reduce((a, b) => a + b, 0),
        };
      };

      const reconciliationPhase = async (label: string, profile?: string): Promise<ReconciliationFigures> => {
        const queued: { id: string }[] = await dataSource.query(`SELECT id FROM jobs WHERE type = $1 AND entity_id = $2 AND status = 'pending'`, [
          DEDUCTION_RECONCILIATION,
          ref.entityId,
        ]);
        if (queued.length !== 1) throw new Error(`${label}: ${queued.length} reconciliation jobs queued by the sync, not 1`);
        const openedBefore = await byKind(dataSource, `SELECT kind, count(*)::int AS n FROM deduction_discrepancies WHERE entity_id = $1 GROUP BY kind`, [
          ref.entityId,
        ]);
        const worker = workerFor(dataSource, jobs, clock, reconciliation.handler, serviceConfig.JOB_LEASE_MS);
        let leased = 0;
        const figures = await measurePhase(dataSource, counter, locks, async () => void (leased = await worker.runDue()), profile);
        if (leased !== 1) throw new Error(`${label}: the worker leased ${leased} reconciliation jobs, not 1`);
        const row: Job = (await jobs.find(queued[0].id))!;
        const openedAfter = await byKind(dataSource, `SELECT kind, count(*)::int AS n FROM deduction_discrepancies WHERE entity_id = $1 GROUP BY kind`, [
          ref.entityId,
        ]);
        const summary = (reconciliation.result() ?? {}) as Record<string, number>;
        if (row.status !== 'complete') throw new Error(`${label}: the reconciliation ended ${row.status}: ${JSON.stringify(row.result)}`);
        return {
          ...figures,
          job_status: row.status,
          statements_reconciled: summary.statements ?? 0,
          results_written: summary.results ?? 0,
          discrepancies_opened: summary.opened ?? 0,
          discrepancies_resolved: summary.resolved ?? 0,
          configurations_read: summary.configurations_read ?? 0,
          opened_by_kind: Object.fromEntries(
            Object.entries(openedAfter)
              .map(([kind, n]) => [kind, n - (openedBefore[kind] ?? 0)])
              .filter(([, n]) => Number(n) > 0),
          ),
          job_row_result: row.result ?? null,
        };
      };

      const explaining = /^(1|true|yes)$/i.test(process.env.BENCH_RECONCILIATION_EXPLAIN ?? '');
      const explain: string[] = [];

      // --- 1. Warm-up: the first sync and its reconciliation (the year's history).
      const warmSync = await syncPhase('warm-up sync');
      console.log(`  warm-up sync: ${warmSync.wall_seconds} s, ${warmSync.sql_statements} SQL statements, ${warmSync.pay_statements_copied} pay statements`);
      if (explaining) explain.push('--- before the warm-up reconciliation', ...(await explainSearch(dataSource, ref, benefitFrom)));
      const warmReconciliation = await reconciliationPhase('warm-up reconciliation', profileFile('warm-up'));
      console.log(
        `  warm-up reconciliation: ${warmReconciliation.wall_seconds} s, ${warmReconciliation.sql_statements} SQL statements, ` +
          `${warmReconciliation.statements_reconciled} statements, ${warmReconciliation.results_written} results, ${warmReconciliation.discrepancies_opened} opened`,
      );

      // --- 2. One regular pay run at the sandbox.
      const payStarted = process.hrtime.bigint();
      const payment = await store.runPayPeriod(ref);
      const paySeconds = round(Number(process.hrtime.bigint() - payStarted) / 1e9, 2);
      const payStatements = payment.individual_ids.length;
      console.log(`  pay run: ${payment.pay_date}, ${payStatements} statements in ${paySeconds} s`);

      // --- 3. The sync that brings it (baseline), then its reconciliation.
      const sync3 = await syncPhase('sync');
      console.log(`  sync: ${sync3.wall_seconds} s, ${sync3.sql_statements} SQL statements`);
      if (explaining) explain.push('--- before the reconciliation of the pay run', ...(await explainSearch(dataSource, ref, benefitFrom)));
      const rec3 = await reconciliationPhase('reconciliation', profileFile('pay-run'));
      console.log(`  reconciliation: ${rec3.wall_seconds} s, ${rec3.sql_statements} SQL statements`);

      // --- Right, not only fast.
      const generation = await employerData.currentGeneration(ref.entityId);
      const params = [ref.entityId, generation, payment.id];
      const paymentStatements = await count(
        dataSource,
        `SELECT count(*)::int AS n FROM employer_data WHERE entity_id = $1 AND generation = $2 AND kind = 'pay_statement' AND parent_id = $3`,
        params,
      );
      const withBenefit = await count(
        dataSource,
        `SELECT count(*)::int AS n FROM employer_data d
         WHERE d.entity_id = $1 AND d.generation = $2 AND d.kind = 'pay_statement' AND d.parent_id = $3
           AND EXISTS (SELECT 1 FROM enrollments e WHERE e.benefit_id = $4 AND e.individual_id::text = d.sort_key)`,
        [...params, benefitId],
      );
      const showingLine = await count(
        dataSource,
        `SELECT count(*)::int AS n FROM employer_data d
         WHERE d.entity_id = $1 AND d.generation = $2 AND d.kind = 'pay_statement' AND d.parent_id = $3
           AND EXISTS (SELECT 1 FROM jsonb_array_elements(d.body -> 'employee_deductions') x WHERE x ->> 'name' = $4)`,
        [...params, BENEFIT_DESCRIPTION],
      );
      const resultsByKind = await byKind(
        dataSource,
        `SELECT result AS kind, count(*)::int AS n FROM reconciliation_results WHERE entity_id = $1 AND payment_id = $2 AND benefit_id = $3 GROUP BY result`,
        [ref.entityId, payment.id, benefitId],
      );
      const paymentResults = Object.values(resultsByKind).reduce((a, b) => a + b, 0);
      const openedOfPayment: { individual_id: string; kind: string }[] = await dataSource.query(
        `SELECT individual_id, kind FROM deduction_discrepancies WHERE entity_id = $1 AND first_payment_id = $2`,
        [ref.entityId, payment.id],
      );
      const openedOfWrong = openedOfPayment.filter((d) => d.kind === 'amount_mismatch' && wrong.has(d.individual_id)).length;
      const live = await byKind(dataSource, `SELECT kind, count(*)::int AS n FROM deduction_discrepancies WHERE entity_id = $1 AND status <> 'resolved' GROUP BY kind`, [
        ref.entityId,
      ]);
      // The wrong ones paid by this run (a wrong employee not paid in the period has nothing to show).
      const wrongPaid = payment.individual_ids.filter((id) => wrong.has(id.toLowerCase())).length;

      const perStatement = (seconds: number, n: number) => (n === 0 ? 0 : round((seconds * 1000) / n, 3));
      const result: ReconciliationResult = {
        machine,
        employee_size: employeeSize,
        quick: options.quick,
        table_upkeep: { running: upkeepOn, scope: upkeepOn ? 'statistics' : null, actions: summarized(upkeepActions) },
        setup: {
          generation_seconds: generationSeconds,
          history_payments: history.payments,
          history_pay_statements: history.statements,
          last_history_pay_date: history.last,
          benefit_from: benefitFrom,
          employees_enrolled: employees.length,
          employees_wrong: wrong.size,
          setup_seconds: setupSeconds,
        },
        warm_up: { sync: warmSync, reconciliation: warmReconciliation },
        pay_run: { payment_id: payment.id, pay_date: payment.pay_date, statements: payStatements, seconds: paySeconds },
        sync: sync3,
        reconciliation: rec3,
        per_statement: {
          statements: payStatements,
          sync_ms: perStatement(sync3.wall_seconds, payStatements),
          sync_sql: round(sync3.sql_statements / payStatements, 3),
          reconciliation_ms: perStatement(rec3.wall_seconds, rec3.statements_reconciled),
          reconciliation_sql: rec3.statements_reconciled === 0 ? 0 : round(rec3.sql_statements / rec3.statements_reconciled, 4),
          sync_ms_per_statement_copied: perStatement(sync3.wall_seconds, sync3.pay_statements_copied),
        },
        reconciliation_over_sync: {
          wall: round(rec3.wall_seconds / sync3.wall_seconds, 3),
          sql_statements: round(rec3.sql_statements / sync3.sql_statements, 4),
          process_cpu: round(rec3.process_cpu_seconds / Math.max(0.01, sync3.process_cpu_seconds), 3),
          postgres_cpu:
            rec3.postgres_cpu_seconds !== null && sync3.postgres_cpu_seconds ? round(rec3.postgres_cpu_seconds / sync3.postgres_cpu_seconds, 3) : null,
        },
        checks: {
          payment_statements: paymentStatements,
          payment_statements_with_benefit: withBenefit,
          payment_statements_showing_benefit_line: showingLine,
          payment_results: paymentResults,
          payment_results_by_kind: resultsByKind,
          wrong_employees: wrongPaid,
          opened_amount_mismatch_of_wrong: openedOfWrong,
          opened_of_others: openedOfPayment.length - openedOfWrong,
          live_discrepancies_by_kind: live,
        },
        ...(explaining && { explain }),
        targets: [],
      };
      const recordedZeros =
        rec3.job_row_result !== null && rec3.statements_reconciled > 0 && Number((rec3.job_row_result as Record<string, unknown>).statements) !== rec3.statements_reconciled;
      result.targets = [
        {
          target: 'the reconciliation_results of the pay run equal its statements of people enrolled in the benefit',
          measured: `${paymentResults} results, ${withBenefit} statements with the benefit (of ${paymentStatements}; ${showingLine} show its line)`,
          met: paymentResults === withBenefit && withBenefit > 0,
        },
        {
          target: 'the discrepancies opened are the employees made wrong, one amount_mismatch each',
          measured:
            `${rec3.discrepancies_opened} opened (${JSON.stringify(rec3.opened_by_kind)}), ${openedOfWrong} amount_mismatch of the ${wrongPaid} wrong employees paid, ` +
            `${openedOfPayment.length - openedOfWrong} of others`,
          met: rec3.discrepancies_opened === wrongPaid && openedOfWrong === wrongPaid && openedOfPayment.length === wrongPaid && wrongPaid > 0,
        },
        {
          target: 'every statement of the pay run reconciled, and only those',
          measured: `${rec3.statements_reconciled} reconciled of ${paymentStatements}`,
          met: rec3.statements_reconciled === paymentStatements,
        },
      ];

      // --- The table.
      const phaseRow = (label: string, p: PhaseFigures, statements: number | string, results: number | string, opened: number | string) => [
        label,
        p.wall_seconds.toFixed(2),
        p.sql_statements,
        p.sql_statements_provider,
        p.process_cpu_seconds.toFixed(2),
        p.postgres_cpu_seconds === null ? '-' : p.postgres_cpu_seconds.toFixed(2),
        statements,
        results,
        opened,
        `${p.rss_before_mb.toFixed(0)} → ${p.peak_rss_mb.toFixed(0)}`,
      ];
      console.log('');
      printTable(
        ['phase', 'wall s', 'SQL', 'of which provider', 'node CPU s', 'PG CPU s', 'pay statements', 'results', 'opened', 'RSS before → peak MB'],
        [
          phaseRow('warm-up: first sync', warmSync, `${warmSync.pay_statements_copied} copied`, '-', '-'),
          phaseRow('warm-up: its reconciliation (history)', warmReconciliation, warmReconciliation.statements_reconciled, warmReconciliation.results_written, warmReconciliation.discrepancies_opened),
          ['pay run (setup)', paySeconds.toFixed(2), '-', '-', '-', '-', payStatements, '-', '-', '-'],
          phaseRow('sync of the pay run (baseline)', sync3, `${sync3.pay_statements_copied} copied`, '-', '-'),
          phaseRow('reconciliation of the pay run', rec3, rec3.statements_reconciled, rec3.results_written, rec3.discrepancies_opened),
        ],
      );
      console.log('');
      printTable(
        ['per pay-run statement', 'ms', 'SQL statements'],
        [
          ['sync (baseline)', result.per_statement.sync_ms, result.per_statement.sync_sql],
          ['reconciliation', result.per_statement.reconciliation_ms, result.per_statement.reconciliation_sql],
          ['reconciliation / sync', result.reconciliation_over_sync.wall, result.reconciliation_over_sync.sql_statements],
        ],
      );
      console.log('');
      console.log(`the reconciliation's slowest statements (time to pg's answer, summed):`);
      printTable(
        ['statement', 'calls', 'ms'],
        rec3.top_statements.map((s) => [s.statement, s.calls, s.ms]),
      );
      for (const [label, phase] of [
        ['warm-up sync', warmSync],
        ['warm-up reconciliation', warmReconciliation],
        ['sync', sync3],
        ['reconciliation', rec3],
      ] as const) {
        if (phase.lock_waits.most_at_once > 0) {
          console.log(`${label}: up to ${phase.lock_waits.most_at_once} sessions waiting on a lock at once: ${phase.lock_waits.statements.join(' | ')}`);
        }
      }
      for (const [label, phase] of [['warm-up reconciliation', warmReconciliation], ['reconciliation', rec3]] as const) {
        const [slowest] = phase.top_statements;
        if (slowest) console.log(`${label}: its slowest statement call by call (ms): ${slowest.each_ms.join(', ')}`);
      }
      console.log('');
      console.log(
        `results of the payment by kind: ${JSON.stringify(resultsByKind)}; live discrepancies by kind: ${JSON.stringify(live)}; ` +
          `warm-up opened ${JSON.stringify(warmReconciliation.opened_by_kind)}`,
      );
      if (recordedZeros) {
        console.log(
          `note: the jobs row of the reconciliation recorded ${JSON.stringify(rec3.job_row_result)}, not the summary after its commit ` +
            `(${rec3.statements_reconciled} statements, ${rec3.results_written} results, ${rec3.discrepancies_opened} opened)`,
        );
      }
      if (explaining) console.log(`\n${explain.join('\n')}`);
      printTargets(result.targets);
      console.log(`table upkeep: ${upkeepOn ? result.table_upkeep.actions.join(', ') || 'nothing done' : 'off (BENCH_RECONCILIATION_UPKEEP=off)'}`);
      // A run with EXPLAIN (warmed cache) or without the table upkeep never replaces the committed figures.
      console.log(`written to ${writeResult('reconciliation', explaining || !upkeepOn ? { ...options, quick: true } : options, result)}`);
      const failed = result.targets.filter((t) => !t.met);
      if (failed.length > 0) throw new Error(`the reconciliation's results are wrong: ${failed.map((t) => `${t.target}: ${t.measured}`).join('; ')}`);
      return result.targets;
    } finally {
      clearInterval(upkeepTimer);
      await upkeepRunning;
      await watchClient.end().catch(() => undefined);
      counter.uninstall();
    }
  });
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the statement search the reconciliation starts with, as it will
 * run it (read only: nothing is written), and of one chunk's body read.
 */
async function explainSearch(dataSource: DataSource, ref: EmployerRef, benefitFrom: string): Promise<string[]> {
  const repository = new ReconciliationRepository();
  return dataSource.transaction(async (manager) => {
    const generation = (await repository.currentGeneration(manager, ref.entityId))!;
    const from = `${benefitFrom.slice(0, 4)}-01-01`;
    const captured: { sql: string; params: unknown[] }[] = [];
    const recording = { query: async (sql: string, params: unknown[]) => (captured.push({ sql, params }), []) } as unknown as typeof manager;
    await repository.statementsToReconcile(recording, ref.entityId, generation, from);
    const out: string[] = ['EXPLAIN (ANALYZE, BUFFERS) statementsToReconcile:'];
    const plan: { 'QUERY PLAN': string }[] = await manager.query(`EXPLAIN (ANALYZE, BUFFERS) ${captured[0].sql}`, captured[0].params);
    out.push(...plan.map((r) => `  ${shortened(r['QUERY PLAN'])}`));
    const pending: StatementToReconcile[] = await repository.statementsToReconcile(manager, ref.entityId, generation, from);
    const people = [...new Set(pending.map((s) => s.individualId))].sort().slice(0, 1_000);
    const chunk = new Set(people);
    await repository.statementBodies(recording, ref.entityId, generation, pending.filter((s) => chunk.has(s.individualId)).map((s) => s.recordId));
    await repository.earlierStatementTotals(recording, ref.entityId, people, Number(benefitFrom.slice(0, 4)));
    for (const { sql, params } of captured.slice(1)) {
      const rows: { 'QUERY PLAN': string }[] = await manager.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
      out.push(`EXPLAIN (ANALYZE, BUFFERS) ${sql.replace(/\s+/g, ' ').slice(0, 80)}…:`, ...rows.map((r) => `  ${shortened(r['QUERY PLAN'])}`));
    }
    return out;
  });
}

/** `analyze employer_data` × 7, … */
function summarized(actions: string[]): string[] {
  const counts = new Map<string, number>();
  for (const a of actions) counts.set(a, (counts.get(a) ?? 0) + 1);
  return [...counts].map(([a, n]) => (n > 1 ? `${a} × ${n}` : a));
}

/** A plan line with its array literals cut to their first element and length. */
function shortened(line: string): string {
  return line.replace(/'\{([^,}']*),[^}']*\}'/g, (literal, first: string) => `'{${first},… ${literal.split(',').length} elements}'`);
}

if (require.main === module) runBenchmark(async () => void (await measureReconciliation()));
