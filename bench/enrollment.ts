/**
 * Benchmark: one request enrolling 1,000 and one enrolling 10,000 individuals of a 10,000-person
 * sandbox employer in a benefit (a fresh 401(k) each), with a zero-latency provider: time from
 * the POST to the job's `complete`, rows written per second, the service process's peak RSS
 * during the enrollment, and how the cost grows with the size. Baseline in the same run: the
 * same number of enrollment rows (service side and provider side) written by two raw
 * INSERT … SELECT statements in one transaction, the database's own speed for these rows.
 * Prints a table and writes bench/results/enrollment.json.
 *
 *   npx ts-node --transpile-only bench/enrollment.ts [--quick]
 *
 * The service runs compiled in a child process (bench-service.ts). The employer is generated
 * by this process before the service first touches it (the sandbox keeps it in the database),
 * so its generation is neither timed nor in the service's memory.
 *
 * Targets (issue "figures, not assertions"): 10,000 individuals complete in < 20 s, cost linear
 * in size.
 */
import { DataSource } from 'typeorm';
import { runBenchmark, withBenchDatabase } from './bench-database';
import {
  basicAuth,
  BenchOptions,
  benchOptions,
  BenchService,
  bearerAuth,
  call,
  describeMachine,
  machineInfo,
  printTable,
  printTargets,
  round,
  RssSampler,
  sleep,
  startBenchService,
  TargetCheck,
  urlOf,
  writeResult,
} from './bench-service';
import { waitForJob } from './http-reads';
import { employerRefOf } from '../src/domain/providers/provider-port';
import { ProviderCatalogue } from '../src/domain/providers/provider-catalogue';
import { SystemClock } from '../src/domain/shared/clock';
import { ConnectionsRepository } from '../src/infrastructure/database/repositories/connections.repository';
import { SandboxEmployerStore } from '../src/infrastructure/providers/sandbox/sandbox-employer.store';

const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;

export interface Employer {
  token: string;
  entityId: string;
  individualIds: string[];
}

export interface EnrollmentRun {
  individuals: number;
  /** POST until the 200 with the job id (validation and the request's transaction). */
  accept_seconds: number;
  /** POST until the job is `complete`. */
  complete_seconds: number;
  /** Rows the enrollment leaves: enrollments, provider (sandbox) enrollments, groups, jobs. */
  rows: number;
  rows_by_table: Record<string, number>;
  rows_per_second: number;
  /** complete_seconds per 1,000 individuals. */
  seconds_per_1000: number;
  individuals_enrolled: number;
  service_rss_before_mb: number;
  service_peak_rss_mb: number;
  service_cpu_seconds: number;
  /** The same enrollment rows written by raw INSERT … SELECT, one statement per table, one transaction. */
  baseline_seconds: number;
  baseline_rows_per_second: number;
}

export interface EnrollmentResult {
  machine: Awaited<ReturnType<typeof machineInfo>>;
  employer_size: number;
  employer_generation_seconds: number;
  runs: EnrollmentRun[];
  /** (time of the largest ÷ time of the smallest) ÷ (size ratio): 1 is linear, above 1 worse than linear. */
  linearity: number;
  targets: TargetCheck[];
  quick: boolean;
}

/** A sandbox employer behind the bench application, generated here (untimed), with everybody's id. */
export async function prepareEmployer(service: BenchService, dataSource: DataSource, employeeSize: number): Promise<Employer & { generationSeconds: number }> {
  const { body } = await call(`${service.url}/sandbox/connections`, {
    method: 'POST',
    headers: basicAuth(),
    body: { provider_id: 'sandbox_automated', employee_size: employeeSize, products: ['benefits', 'directory'] },
  });
  const connection = (await new ConnectionsRepository(dataSource).find(body.connection_id))!;
  const entity = connection.entities.find((e) => e.id === body.entity_id)!;
  const started = process.hrtime.bigint();
  await new SandboxEmployerStore(dataSource, new SystemClock(), new ProviderCatalogue()).ensureEmployer(employerRefOf(connection, entity));
  const generationSeconds = seconds(started);
  const { body: directory } = await call(`${service.url}/employer/directory?limit=${employeeSize}`, { headers: bearerAuth(body.access_token) });
  return {
    token: body.access_token,
    entityId: body.entity_id,
    individualIds: directory.individuals.map((i: { id: string }) => i.id),
    generationSeconds: round(generationSeconds, 2),
  };
}

export async function createBenefit(service: BenchService, employer: Employer, description: string): Promise<string> {
  const { body } = await call(`${service.url}/employer/benefits`, {
    method: 'POST',
    headers: bearerAuth(employer.token),
    body: { type: '401k', description, frequency: 'every_paycheck' },
  });
  await waitForJob(service.url, employer.token, body.job_id, 60_000);
  return body.benefit_id;
}

async function countRows(dataSource: DataSource, benefitId: string, jobId: string): Promise<Record<string, number>> {
  const [row] = await dataSource.query(
    `SELECT (SELECT count(*) FROM enrollments WHERE benefit_id = $1)::int AS enrollments,
            (SELECT count(*) FROM sandbox_enrollments WHERE benefit_id = $1)::int AS sandbox_enrollments,
            (SELECT count(*) FROM enrollment_groups WHERE job_id = $2)::int AS enrollment_groups,
            (SELECT count(*) FROM jobs WHERE id = $2
               OR (type = 'benefit_enrollment_group' AND params->>'group_id' IN (SELECT id::text FROM enrollment_groups WHERE job_id = $2)))::int AS jobs`,
    [benefitId, jobId],
  );
  return row;
}

/** Raw INSERT … SELECT of `size` rows into enrollments and sandbox_enrollments, committed; then removed. */
async function baselineInsert(dataSource: DataSource, benefitId: string, entityId: string, size: number): Promise<number> {
  const configuration = JSON.stringify({ employee_deduction: { type: 'percent', amount: 500 } });
  const started = process.hrtime.bigint();
  await dataSource.transaction(async (manager) => {
    await manager.query(
      `INSERT INTO enrollments (benefit_id, individual_id, entity_id, configuration, effective_date, status, updated_at, occurred_at)
       SELECT $1, i.id, $2, $4::jsonb, current_date, 'enrolled', now(), now()
       FROM (SELECT id FROM sandbox_individuals WHERE entity_id = $2 ORDER BY position LIMIT $3) i`,
      [benefitId, entityId, size, configuration],
    );
    await manager.query(
      `INSERT INTO sandbox_enrollments (entity_id, benefit_id, individual_id, effective_date, configuration, updated_at)
       SELECT $2, $1, i.id, current_date, $4::jsonb, now()
       FROM (SELECT id FROM sandbox_individuals WHERE entity_id = $2 ORDER BY position LIMIT $3) i`,
      [benefitId, entityId, size, configuration],
    );
  });
  const elapsed = seconds(started);
  await dataSource.query(`DELETE FROM enrollments WHERE benefit_id = $1`, [benefitId]);
  await dataSource.query(`DELETE FROM sandbox_enrollments WHERE benefit_id = $1`, [benefitId]);
  return elapsed;
}

async function enroll(service: BenchService, dataSource: DataSource, employer: Employer, benefitId: string, size: number) {
  const body = employer.individualIds.slice(0, size).map((id) => ({
    individual_id: id,
    configuration: { employee_deduction: { type: 'percent', amount: 500 } },
  }));
  if (body.length !== size) throw new Error(`the employer has ${employer.individualIds.length} individuals, ${size} asked for`);
  await sleep(500);
  const rssBefore = service.stats.memory().rssMb;
  const peakReset = service.stats.resetPeak();
  const sampler = new RssSampler(service.stats, 20).start();
  const cpuBefore = service.stats.cpuSeconds();

  const started = process.hrtime.bigint();
  const { body: accepted } = await call(`${service.url}/employer/benefits/${benefitId}/individuals`, {
    method: 'POST',
    headers: bearerAuth(employer.token),
    body,
  });
  const acceptSeconds = seconds(started);
  // The job's status straight from its row: polling GET /jobs/automated/{id}, whose answer
  // carries every individual's result, would load the service it measures.
  let status = 'pending';
  while (status === 'pending' || status === 'in_progress') {
    if (seconds(started) > 300) throw new Error(`enrollment job ${accepted.job_id} not done after 300 s`);
    await sleep(20);
    [{ status }] = await dataSource.query(`SELECT status FROM jobs WHERE id = $1`, [accepted.job_id]);
  }
  const completeSeconds = seconds(started);
  const cpuSeconds = service.stats.cpuSeconds() - cpuBefore;
  sampler.stop();
  const peakRss = peakReset ? service.stats.memory().peakRssMb : sampler.maxMb();
  if (status !== 'complete') throw new Error(`enrollment job ${accepted.job_id} ended ${status}`);

  // The API's view of the finished job: one result per individual.
  const { body: job } = await call(`${service.url}/jobs/automated/${accepted.job_id}`, { headers: bearerAuth(employer.token) });
  const enrolled = (job.body as { code: number }[]).filter((r) => r.code === 200).length;
  const rowsByTable = await countRows(dataSource, benefitId, accepted.job_id);
  const rows = Object.values(rowsByTable).reduce((a, b) => a + b, 0);
  return {
    acceptSeconds,
    completeSeconds,
    enrolled,
    rowsByTable,
    rows,
    rssBefore,
    peakRss,
    cpuSeconds,
  };
}

export async function measureEnrollment(options: BenchOptions = benchOptions()): Promise<TargetCheck[]> {
  const sizes = options.quick ? [100, 1_000] : [1_000, 10_000];
  const employerSize = Math.max(...sizes);
  return withBenchDatabase('bench_enroll', async (dataSource) => {
    const machine = await machineInfo(dataSource);
    console.log(`enrollment: ${describeMachine(machine)}`);
    const service = await startBenchService(urlOf(dataSource));
    try {
      const employer = await prepareEmployer(service, dataSource, employerSize);
      console.log(`  sandbox employer of ${employer.individualIds.length} individuals generated in ${employer.generationSeconds} s (not timed below)`);
      const baselineBenefit = await createBenefit(service, employer, 'Bench baseline');
      const runs: EnrollmentRun[] = [];
      for (const size of sizes) {
        const benefitId = await createBenefit(service, employer, `Bench 401(k) ${size}`);
        const run = await enroll(service, dataSource, employer, benefitId, size);
        const baselineSeconds = await baselineInsert(dataSource, baselineBenefit, employer.entityId, size);
        runs.push({
          individuals: size,
          accept_seconds: round(run.acceptSeconds, 3),
          complete_seconds: round(run.completeSeconds, 3),
          rows: run.rows,
          rows_by_table: run.rowsByTable,
          rows_per_second: Math.round(run.rows / run.completeSeconds),
          seconds_per_1000: round((run.completeSeconds / size) * 1000, 3),
          individuals_enrolled: run.enrolled,
          service_rss_before_mb: run.rssBefore,
          service_peak_rss_mb: run.peakRss,
          service_cpu_seconds: round(run.cpuSeconds, 2),
          baseline_seconds: round(baselineSeconds, 3),
          baseline_rows_per_second: Math.round((2 * size) / baselineSeconds),
        });
        console.log(`  ${size} individuals: complete in ${round(run.completeSeconds, 2)} s`);
      }
      const smallest = runs[0];
      const largest = runs[runs.length - 1];
      const linearity = round(largest.complete_seconds / smallest.complete_seconds / (largest.individuals / smallest.individuals), 2);
      const targets: TargetCheck[] = [
        {
          target: `${largest.individuals} individuals in one request complete in < 20 s`,
          measured: `${largest.complete_seconds} s (accepted in ${largest.accept_seconds} s)`,
          met: largest.complete_seconds < 20 && largest.individuals_enrolled === largest.individuals,
        },
        {
          target: 'cost linear in size (time per individual at the largest size ≤ 1.25 × at the smallest)',
          measured: `${largest.seconds_per_1000} vs ${smallest.seconds_per_1000} s per 1,000 (linearity ${linearity})`,
          met: linearity <= 1.25,
        },
      ];
      const result: EnrollmentResult = {
        machine,
        employer_size: employer.individualIds.length,
        employer_generation_seconds: employer.generationSeconds,
        runs,
        linearity,
        targets,
        quick: options.quick,
      };
      console.log('');
      printTable(
        ['individuals', 'accepted s', 'complete s', 's / 1,000', 'rows', 'rows/s', 'baseline rows/s', 'enrolled', 'RSS before MB', 'peak RSS MB', 'CPU s'],
        runs.map((r) => [
          r.individuals,
          r.accept_seconds,
          r.complete_seconds,
          r.seconds_per_1000,
          r.rows,
          r.rows_per_second,
          r.baseline_rows_per_second,
          r.individuals_enrolled,
          r.service_rss_before_mb,
          r.service_peak_rss_mb,
          r.service_cpu_seconds,
        ]),
      );
      console.log(`linearity ${linearity} (1 = linear)`);
      printTargets(targets);
      console.log(`written to ${writeResult('enrollment', options, result)}`);
      return targets;
    } finally {
      await service.stop();
    }
  });
}

if (require.main === module) runBenchmark(async () => void (await measureEnrollment()));
