/**
 * Benchmark: a data sync (`data_sync_all`) of a 10,000-employee sandbox employer. Generates the
 * employer first (timed apart), then runs the sync the way the service does — a job leased by
 * the worker, the provider snapshot streamed into a new generation of `employer_data` with
 * multi-row inserts, the switch committed with the job — and measures it. Prints the times and
 * memory and writes bench/results/sandbox-sync.json.
 *
 *   npx ts-node bench/sandbox-sync.ts [employee_size]
 *
 * Uses a fresh database on TEST_DATABASE_URL / DATABASE_URL's server (default
 * postgres://postgres@127.0.0.1:5432/postgres) and drops it afterwards.
 */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { insertBenchConnection, runBenchmark, withBenchDatabase, writeBenchResult } from './bench-database';
import { loadConfig } from '../src/config/app-config';
import { DATA_SYNC_ALL, DEFAULT_RETRY_POLICY } from '../src/domain/jobs/job';
import { ProviderCatalogue } from '../src/domain/providers/provider-catalogue';
import { Clock, SystemClock } from '../src/domain/shared/clock';
import { ConnectionsRepository } from '../src/infrastructure/database/repositories/connections.repository';
import { EmployerDataRepository } from '../src/infrastructure/database/repositories/employer-data.repository';
import { SandboxEmployerStore } from '../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { SandboxProviderAdapter } from '../src/infrastructure/providers/sandbox/sandbox-provider.adapter';
import { JobHandlerRegistry } from '../src/modules/jobs/job-handler';
import { JobSignal } from '../src/modules/jobs/job-signal';
import { JobWorker } from '../src/modules/jobs/job-worker';
import { JobsRepository } from '../src/modules/jobs/jobs.repository';
import { OutboxSignal } from '../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../src/infrastructure/messaging/outbox/outbox-writer';
import { DataSyncHandler } from '../src/modules/sync/data-sync.handler';
import { SandboxJobConfigurationsRepository } from '../src/modules/sync/sandbox-job-configurations.repository';
import { UnitOfWork } from '../src/infrastructure/database/unit-of-work';
import { DomainEventBus } from '../src/domain/events/domain-event-bus';

export interface SandboxSyncResult {
  employee_size: number;
  provider_id: string;
  job_status: string;
  generation_seconds: number;
  sync_seconds: number;
  rows: number;
  rows_by_kind: Record<string, number>;
  rows_per_second: number;
  rss_before_sync_mb: number;
  /** Highest RSS sampled (every 20 ms) while the sync ran. */
  peak_rss_during_sync_mb: number;
  /** The process's peak RSS, generation included. */
  peak_rss_process_mb: number;
  node: string;
  measured_at: string;
}

const megabytes = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const seconds = (since: bigint) => Math.round((Number(process.hrtime.bigint() - since) / 1e9) * 100) / 100;


/** Generates one sandbox employer, then syncs it through a job worker, and measures the sync. */
export async function measureSandboxSync(
  dataSource: DataSource,
  { employeeSize = 10_000, providerId = 'sandbox_automated', clock = new SystemClock() as Clock } = {},
): Promise<SandboxSyncResult> {
  const catalogue = new ProviderCatalogue();
  const store = new SandboxEmployerStore(dataSource, clock, catalogue);
  const provider = new SandboxProviderAdapter(store, catalogue, loadConfig({ PROVIDER_LATENCY_MS: '0' }));
  const employerData = new EmployerDataRepository(dataSource);
  const jobs = new JobsRepository(dataSource);
  const registry = new JobHandlerRegistry();
  registry.register(
    new DataSyncHandler(
      new ConnectionsRepository(dataSource),
      new SandboxJobConfigurationsRepository(dataSource),
      employerData,
      provider,
      clock,
      new OutboxWriter(new OutboxSignal()),
    ),
  );
  const signal = new JobSignal();
  const worker = new JobWorker(new UnitOfWork(dataSource), jobs, registry, signal, clock, {
    pollMs: 50,
    leaseMs: 120_000,
    concurrency: 1,
    retry: DEFAULT_RETRY_POLICY,
    shutdownGraceMs: 5_000,
  }, new DomainEventBus());

  const ref = await insertBenchConnection(dataSource, providerId, employeeSize);
  const generationStarted = process.hrtime.bigint();
  await store.ensureEmployer(ref);
  const generationSeconds = seconds(generationStarted);

  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let peakRss = rssBefore;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const syncStarted = process.hrtime.bigint();
  let status: string;
  try {
    const job = await jobs.insert({ id: randomUUID(), connectionId: ref.connectionId, kind: 'automated', type: DATA_SYNC_ALL, createdAt: clock.now() });
    worker.start();
    signal.nudge();
    for (;;) {
      status = (await jobs.find(job.id))!.status;
      if (status !== 'pending' && status !== 'in_progress') break;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    clearInterval(sampler);
    await worker.stop();
  }
  const syncSeconds = seconds(syncStarted);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);

  const generation = await employerData.currentGeneration(ref.entityId);
  const counts: { kind: string; n: number }[] = await dataSource.query(
    `SELECT kind, count(*)::int AS n FROM employer_data WHERE entity_id = $1 AND generation = $2 GROUP BY kind ORDER BY kind`,
    [ref.entityId, generation],
  );
  const rows = counts.reduce((sum, c) => sum + c.n, 0);
  return {
    employee_size: employeeSize,
    provider_id: providerId,
    job_status: status,
    generation_seconds: generationSeconds,
    sync_seconds: syncSeconds,
    rows,
    rows_by_kind: Object.fromEntries(counts.map((c) => [c.kind, c.n])),
    rows_per_second: Math.round(rows / syncSeconds),
    rss_before_sync_mb: megabytes(rssBefore),
    peak_rss_during_sync_mb: megabytes(peakRss),
    peak_rss_process_mb: megabytes(process.resourceUsage().maxRSS * 1024),
    node: process.version,
    measured_at: new Date().toISOString(),
  };
}

export function describeSandboxSync(result: SandboxSyncResult): string {
  return (
    `sandbox sync: ${result.employee_size} employees, ${result.rows} rows (${result.rows_by_kind.pay_statement ?? 0} pay statements) ` +
    `synced in ${result.sync_seconds} s (${result.rows_per_second} rows/s; generation took ${result.generation_seconds} s); ` +
    `RSS ${result.rss_before_sync_mb} MB before, peak ${result.peak_rss_during_sync_mb} MB during the sync; job ${result.job_status}`
  );
}

async function main(): Promise<void> {
  const employeeSize = Number(process.argv[2] ?? 10_000);
  await withBenchDatabase('bench_sync', async (dataSource) => {
    const result = await measureSandboxSync(dataSource, { employeeSize });
    console.log(describeSandboxSync(result));
    writeBenchResult('sandbox-sync', result);
  });
}

if (require.main === module) runBenchmark(main);
