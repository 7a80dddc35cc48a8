/**
 * Benchmark: generating a 10,000-employee sandbox employer with its six months of pay history
 * (company, people, benefits, enrollments, 14 pay runs with their statements) into PostgreSQL.
 * Prints the time and the process's peak RSS and writes them to
 * bench/results/sandbox-generation.json.
 *
 *   npx ts-node bench/sandbox-generation.ts [employee_size]
 *
 * Uses a fresh database on TEST_DATABASE_URL / DATABASE_URL's server (default
 * postgres://postgres@127.0.0.1:5432/postgres) and drops it afterwards.
 */
import { DataSource } from 'typeorm';
import { insertBenchConnection, runBenchmark, withBenchDatabase, writeBenchResult } from './bench-database';
import { ProviderCatalogue } from '../src/domain/providers/provider-catalogue';
import { Clock, SystemClock } from '../src/domain/shared/clock';
import { SandboxEmployerStore } from '../src/infrastructure/providers/sandbox/sandbox-employer.store';

export interface SandboxGenerationResult {
  employee_size: number;
  provider_id: string;
  seconds: number;
  peak_rss_mb: number;
  rss_before_mb: number;
  individuals: number;
  payments: number;
  pay_statements: number;
  node: string;
  measured_at: string;
}

const megabytes = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;


/** Generates one employer of `employeeSize` on a migrated database and measures it. */
export async function measureSandboxGeneration(
  dataSource: DataSource,
  { employeeSize = 10_000, providerId = 'sandbox_automated', clock = new SystemClock() as Clock } = {},
): Promise<SandboxGenerationResult> {
  const store = new SandboxEmployerStore(dataSource, clock, new ProviderCatalogue());
  const ref = await insertBenchConnection(dataSource, providerId, employeeSize);
  const rssBefore = process.memoryUsage().rss;
  const started = process.hrtime.bigint();
  await store.ensureEmployer(ref);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const peakRss = process.resourceUsage().maxRSS * 1024;
  const counts = async (table: string) =>
    (await dataSource.query(`SELECT count(*)::int AS n FROM ${table} WHERE entity_id = $1`, [ref.entityId]))[0].n as number;
  return {
    employee_size: employeeSize,
    provider_id: providerId,
    seconds: Math.round(seconds * 100) / 100,
    peak_rss_mb: megabytes(peakRss),
    rss_before_mb: megabytes(rssBefore),
    individuals: await counts('sandbox_individuals'),
    payments: await counts('sandbox_payments'),
    pay_statements: await counts('sandbox_pay_statements'),
    node: process.version,
    measured_at: new Date().toISOString(),
  };
}

async function main(): Promise<void> {
  const employeeSize = Number(process.argv[2] ?? 10_000);
  await withBenchDatabase('bench_sandbox', async (dataSource) => {
    const result = await measureSandboxGeneration(dataSource, { employeeSize });
    console.log(
      `sandbox generation: ${result.employee_size} employees, ${result.payments} payments, ${result.pay_statements} statements ` +
        `in ${result.seconds} s; peak RSS ${result.peak_rss_mb} MB`,
    );
    writeBenchResult('sandbox-generation', result);
  });
}

if (require.main === module) runBenchmark(main);
