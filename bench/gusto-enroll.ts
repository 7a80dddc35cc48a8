/**
 * Benchmark: enrolling 1,000 employees of a Gusto company in a 401(k) through the Gusto adapter,
 * against the fake Gusto with Gusto's rate limit on (200 requests per rolling window per grant,
 * 429 with Retry-After beyond it) and the adapter's own client-side limiter at its default
 * (GustoRateLimiter: 180 per window). Wall time and API calls made, against the floors:
 *
 * - the minimum wall time the rate limit allows for the calls made: calls ÷ 200 per window;
 * - the minimum calls the job needs with the endpoints the adapter uses: one POST per employee
 *   (Gusto's per-employee create) plus one page of the company benefit's employee benefits,
 *   read once per provider call before writing, so a retried call never writes twice.
 *
 * The enrollment is what an enrollment group does: the people of one effective date, packed
 * into provider calls of at most PROVIDER_CALL_MAX_CHANGES, all calls at once, each one
 * applyChanges. Baseline in the same run: the same enrollment with no rate limit on either side,
 * the time the work takes itself.
 *
 * Gusto's window is 60 s; the run shortens both the fake's and the limiter's to
 * BENCH_GUSTO_WINDOW_MS (default 6,000) so it takes seconds, not minutes. Converted to 60 s:
 * every pause of the request stream for the window (a gap between two sends longer than a
 * quarter of the window) lasts 60 s − window longer, the work between pauses does not scale.
 * Afterwards every employee's employee benefits are read back from the fake: exactly the one
 * window asked for each, or the run fails (exit 1), as it does on a contract violation.
 *
 *   npx ts-node --transpile-only bench/gusto-enroll.ts [--quick]
 *   BENCH_GUSTO_EMPLOYEES=1000 BENCH_GUSTO_WINDOW_MS=6000   (--quick: 200 employees)
 *
 * Writes bench/results/gusto-enroll.json.
 */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AppConfig } from '../src/config/app-config';
import { employerRefOf, ProviderBenefit, ProviderChange, ProviderEnrollmentConfiguration } from '../src/domain/providers/provider-port';
import { SystemClock } from '../src/domain/shared/clock';
import { ConnectionsRepository } from '../src/infrastructure/database/repositories/connections.repository';
import { GustoAccess } from '../src/infrastructure/providers/gusto/gusto-access';
import { GustoHttp } from '../src/infrastructure/providers/gusto/gusto-http';
import { GustoOAuth } from '../src/infrastructure/providers/gusto/gusto-oauth';
import { GustoProviderAdapter } from '../src/infrastructure/providers/gusto/gusto-provider.adapter';
import { GUSTO_RATE_LIMIT, GUSTO_RATE_WINDOW_MS, GustoRateLimiter } from '../src/infrastructure/providers/gusto/gusto-rate-limiter';
import { ProviderBenefitLinks } from '../src/infrastructure/providers/provider-benefit-links';
import { ProviderGrants } from '../src/infrastructure/providers/provider-grants';
import { SealingKey } from '../src/infrastructure/secrets/sealing-key';
import { FakeGusto, GUSTO_API_VERSION, GustoEmployee, GustoEmployeeBenefit } from '../test/fakes/gusto/fake-gusto';
import { runBenchmark, withBenchDatabase } from './bench-database';
import { BenchOptions, benchOptions, describeMachine, machineInfo, printTable, printTargets, round, sleep, TargetCheck, writeResult } from './bench-service';

const EFFECTIVE_DATE = '2026-01-01';
const HOUR = 3_600_000;
/** The employer match of the benefit: 100 % of the first 3 % of pay, 50 % of the next 2 %. */
const MATCH: ProviderBenefit['company_contribution'] = {
  type: 'match',
  tiers: [
    { match: 10_000, threshold: 300 },
    { match: 5_000, threshold: 500 },
  ],
};
const LISTING = 'GET /v1/company_benefits/{company_benefit_id}/employee_benefits';

/** Half percent (3 % to 10 %), half fixed (50.00 to 140.00 a paycheck, capped yearly, with catch-up). */
function configurationOf(index: number): ProviderEnrollmentConfiguration {
  return index % 2 === 0
    ? { employee_deduction: { type: 'percent', amount: 300 + (index % 8) * 100 }, company_contribution: null, annual_maximum: null, catch_up: false, hsa_contribution_limit: null }
    : { employee_deduction: { type: 'fixed', amount: 5_000 + (index % 10) * 1_000 }, company_contribution: null, annual_maximum: 2_000_000, catch_up: true, hsa_contribution_limit: null };
}

export interface GustoEnrollRun {
  rate_limited: boolean;
  employees: number;
  provider_calls: number;
  /** Requests the fake received during the enrollment, all statuses. */
  api_calls: number;
  calls_by_operation: Record<string, number>;
  answers_429: number;
  wall_seconds: number;
  /** Calls ÷ Gusto's 200 per window × the window: the least time the rate limit allows for these calls. */
  minimum_seconds: number;
  wall_over_minimum: number;
  /** Gaps of more than a quarter window between two sends: the stream held for the window. */
  window_pauses: number;
  /** Individuals the adapter did not answer 200 for. */
  failed_individuals: number;
  /** Employees whose employee benefits at the fake are not exactly the one window asked for. */
  mismatches: number;
  violations: string[];
}

export interface GustoEnrollResult {
  machine: Awaited<ReturnType<typeof machineInfo>>;
  window_ms: number;
  gusto_limit_per_window: number;
  limiter_limit_per_window: number;
  provider_call_max_changes: number;
  /** One POST per employee and one listing page per provider call. */
  minimum_calls: number;
  baseline: GustoEnrollRun;
  limited: GustoEnrollRun;
  /** The rate-limited run with Gusto's 60 s window: pauses lengthened to it, the work as measured. */
  at_gusto_window: { wall_seconds: number; minimum_seconds: number; wall_over_minimum: number };
  targets: TargetCheck[];
  quick: boolean;
}

/** A Gusto company of `size` employees on the fake, its connection and grant, and the adapter as production builds it. */
async function gustoCompany(dataSource: DataSource, size: number, windowMs: number | undefined) {
  const fake = await new FakeGusto(windowMs === undefined ? {} : { rateLimit: { perMinute: GUSTO_RATE_LIMIT, windowMs } }).start();
  const company = fake.addCompany({ pay_schedule_type: 'single', join_date: '2024-01-01' });
  const employees = fake.addEmployees(company.uuid, size);

  const config = Object.assign(new AppConfig(), { DATABASE_URL: 'postgres://set', WEBHOOK_SECRETS_KEY: 'gusto-enroll-bench-key-of-at-least-32-chars' });
  const grants = new ProviderGrants(dataSource, new SealingKey(config));
  const links = new ProviderBenefitLinks(dataSource);
  const applicationId = randomUUID();
  await dataSource.query(`INSERT INTO applications (id, name, secret_hash, sandbox) VALUES ($1, 'bench', 'not-a-secret', false)`, [applicationId]);
  const connection = await dataSource.transaction((manager) =>
    new ConnectionsRepository(dataSource).create(
      {
        applicationId,
        customerId: null,
        customerName: 'Bench Corp',
        customerEmail: null,
        providerId: 'gusto',
        authenticationType: 'credential',
        products: ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement'],
        sandbox: false,
        manual: false,
        employeeSize: size,
        entityNames: ['Bench Corp'],
      },
      manager,
    ),
  );
  const ref = employerRefOf(connection, connection.entities[0]);
  const tokens = fake.issueTokens(company.uuid);
  await grants.save({
    connectionId: connection.id,
    providerId: 'gusto',
    accountRef: company.uuid,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    expiresAt: new Date(Date.now() + 2 * HOUR),
  });

  /** When each request left: the pauses of the stream are the rate limit's. */
  const sends: number[] = [];
  const http = new GustoHttp({
    baseUrl: fake.url,
    apiVersion: GUSTO_API_VERSION,
    // The default limiter (Gusto's limit less its safety margin) on the scaled window; none at all for the baseline.
    limiter: windowMs === undefined ? new GustoRateLimiter({ limit: 1_000_000 }) : new GustoRateLimiter({ windowMs }),
    fetch: (input, init) => {
      sends.push(performance.now());
      return fetch(input, init);
    },
  });
  const oauth = new GustoOAuth({ http, clientId: fake.clientId, clientSecret: fake.clientSecret, redirectUri: 'http://127.0.0.1/callback' });
  const access = new GustoAccess(grants, oauth, new SystemClock(), async () => undefined);
  const adapter = new GustoProviderAdapter(http, access, links);
  return { fake, company, employees, ref, adapter, links, sends };
}

/** Every employee's windows of the company benefit, read from the fake (its listing, unlimited), against what was asked. */
async function mismatchesAt(fake: FakeGusto, companyUuid: string, companyBenefitUuid: string, employees: GustoEmployee[]): Promise<number> {
  fake.rateLimit = undefined;
  const { access_token } = fake.issueTokens(companyUuid);
  const windows: GustoEmployeeBenefit[] = [];
  for (let page = 1; ; page++) {
    const res = await fetch(`${fake.url}/v1/company_benefits/${companyBenefitUuid}/employee_benefits?include=all_benefits&page=${page}&per=100`, {
      headers: { authorization: `Bearer ${access_token}`, 'x-gusto-api-version': GUSTO_API_VERSION, accept: 'application/json' },
    });
    if (res.status !== 200) throw new Error(`reading the employee benefits back answered ${res.status}: ${await res.text()}`);
    const items = (await res.json()) as GustoEmployeeBenefit[];
    windows.push(...items);
    if (page >= Number(res.headers.get('x-total-pages') ?? page)) break;
  }
  const byEmployee = new Map<string, GustoEmployeeBenefit[]>();
  for (const w of windows) byEmployee.set(w.employee_uuid, [...(byEmployee.get(w.employee_uuid) ?? []), w]);
  const close = (value: string | null | undefined, expected: number) => value != null && Math.abs(Number(value) - expected) < 1e-9;
  let mismatches = 0;
  employees.forEach((employee, i) => {
    const asked = configurationOf(i);
    const deduction = asked.employee_deduction!;
    const found = byEmployee.get(employee.uuid) ?? [];
    byEmployee.delete(employee.uuid);
    const [w] = found;
    const tiers = w && typeof w.contribution?.value === 'object' ? w.contribution.value.tiers : [];
    const right =
      found.length === 1 &&
      w.company_benefit_uuid === companyBenefitUuid &&
      w.active === true &&
      w.effective_date === EFFECTIVE_DATE &&
      w.expiration_date == null &&
      w.deduct_as_percentage === (deduction.type === 'percent') &&
      close(w.employee_deduction, deduction.amount / 100) &&
      (asked.annual_maximum === null ? w.employee_deduction_annual_maximum == null : close(w.employee_deduction_annual_maximum, asked.annual_maximum / 100)) &&
      (w.catch_up === true) === asked.catch_up &&
      w.contribution?.type === 'tiered' &&
      tiers.length === MATCH!.tiers.length &&
      MATCH!.tiers.every((t, k) => close(tiers[k].rate, t.match / 100) && close(tiers[k].threshold, t.threshold / 100));
    if (!right) mismatches++;
  });
  // Windows of anyone not asked for are wrong too.
  return mismatches + byEmployee.size;
}

/** One enrollment of every employee, as the enrollment groups submit it; timed from the first request to the last answer. */
async function enrollEveryone(dataSource: DataSource, size: number, windowMs: number | undefined, maxChanges: number): Promise<GustoEnrollRun> {
  const { fake, company, employees, ref, adapter, links, sends } = await gustoCompany(dataSource, size, windowMs);
  try {
    const benefit: ProviderBenefit = { benefit_id: randomUUID(), type: '401k', description: 'Bench 401(k)', frequency: 'every_paycheck', company_contribution: MATCH };
    await adapter.createBenefit(ref, benefit);
    const companyBenefitUuid = (await links.find(ref.connectionId, ref.entityId, benefit.benefit_id))!.externalId;
    // The benefit's creation is setup: both windows empty again before the clock starts.
    if (windowMs !== undefined) await sleep(windowMs + 100);

    const changes: ProviderChange[] = employees.map((e, i) => ({ individual_id: e.uuid, effective_date: EFFECTIVE_DATE, configuration: configurationOf(i) }));
    const calls: ProviderChange[][] = [];
    for (let at = 0; at < changes.length; at += maxChanges) calls.push(changes.slice(at, at + maxChanges));
    const from = fake.requests.length;
    const firstSend = sends.length;
    const started = performance.now();
    const results = (await Promise.all(calls.map((call) => adapter.applyChanges(ref, benefit.benefit_id, call)))).flat();
    const wallMs = performance.now() - started;

    const sent = fake.requests.slice(from);
    const byOperation: Record<string, number> = {};
    for (const r of sent) {
      const key = `${r.operation ?? `${r.method} ${r.path}`}${r.status === 429 ? ' (429)' : ''}`;
      byOperation[key] = (byOperation[key] ?? 0) + 1;
    }
    const stream = sends.slice(firstSend);
    const pauses = windowMs === undefined ? 0 : stream.filter((at, i) => i > 0 && at - stream[i - 1] > windowMs / 4).length;
    const minimumMs = windowMs === undefined ? 0 : (sent.length / GUSTO_RATE_LIMIT) * windowMs;
    const violations = [...fake.violations];
    const mismatches = await mismatchesAt(fake, company.uuid, companyBenefitUuid, employees);
    return {
      rate_limited: windowMs !== undefined,
      employees: size,
      provider_calls: calls.length,
      api_calls: sent.length,
      calls_by_operation: byOperation,
      answers_429: sent.filter((r) => r.status === 429).length,
      wall_seconds: round(wallMs / 1000, 2),
      minimum_seconds: round(minimumMs / 1000, 2),
      wall_over_minimum: minimumMs > 0 ? round(wallMs / minimumMs, 3) : 0,
      window_pauses: pauses,
      failed_individuals: results.filter((r) => r.code !== 200).length,
      mismatches,
      violations,
    };
  } finally {
    await fake.stop();
  }
}

export async function measureGustoEnroll(options: BenchOptions = benchOptions()): Promise<TargetCheck[]> {
  const size = Number(process.env.BENCH_GUSTO_EMPLOYEES ?? (options.quick ? 200 : 1_000));
  const windowMs = Number(process.env.BENCH_GUSTO_WINDOW_MS ?? 6_000);
  if (!Number.isInteger(size) || size < 1) throw new Error(`BENCH_GUSTO_EMPLOYEES must be a positive whole number, got ${process.env.BENCH_GUSTO_EMPLOYEES}`);
  if (!(windowMs > 0)) throw new Error(`BENCH_GUSTO_WINDOW_MS must be positive, got ${process.env.BENCH_GUSTO_WINDOW_MS}`);
  const maxChanges = new AppConfig().PROVIDER_CALL_MAX_CHANGES;
  const limiterLimit = new GustoRateLimiter().limit;

  return withBenchDatabase('bench_gusto_enroll', async (dataSource) => {
    const machine = await machineInfo(dataSource);
    console.log(`gusto-enroll: ${describeMachine(machine)}`);
    console.log(
      `  ${size} employees, window ${windowMs} ms (Gusto's: ${GUSTO_RATE_WINDOW_MS} ms, scale 1:${round(GUSTO_RATE_WINDOW_MS / windowMs, 2)}), ` +
        `fake's limit ${GUSTO_RATE_LIMIT} per window, limiter's ${limiterLimit}, provider calls of at most ${maxChanges}`,
    );
    const baseline = await enrollEveryone(dataSource, size, undefined, maxChanges);
    console.log(`  baseline (no rate limit): ${baseline.api_calls} calls in ${baseline.wall_seconds} s`);
    const limited = await enrollEveryone(dataSource, size, windowMs, maxChanges);
    console.log(`  Gusto's rate limit: ${limited.api_calls} calls in ${limited.wall_seconds} s`);

    const minimumCalls = size + limited.provider_calls;
    const realWallMs = limited.wall_seconds * 1000 + limited.window_pauses * (GUSTO_RATE_WINDOW_MS - windowMs);
    const realMinimumMs = (limited.api_calls / GUSTO_RATE_LIMIT) * GUSTO_RATE_WINDOW_MS;
    const atGustoWindow = {
      wall_seconds: round(realWallMs / 1000, 1),
      minimum_seconds: round(realMinimumMs / 1000, 1),
      wall_over_minimum: round(realWallMs / realMinimumMs, 3),
    };
    const wrong = baseline.mismatches + limited.mismatches + baseline.failed_individuals + limited.failed_individuals;
    const violations = [...baseline.violations, ...limited.violations];
    const targets: TargetCheck[] = [
      {
        target: `every employee has exactly the enrollment asked for at the fake, no contract violation`,
        measured: `${limited.mismatches} mismatches and ${limited.failed_individuals} individuals failed of ${size} (baseline: ${baseline.mismatches} and ${baseline.failed_individuals}); ${violations.length} violations`,
        met: wrong === 0 && violations.length === 0,
      },
      {
        target: `no 429 from Gusto: the client-side limiter keeps under the limit`,
        measured: `${limited.answers_429} answers 429`,
        met: limited.answers_429 === 0,
      },
    ];
    const result: GustoEnrollResult = {
      machine,
      window_ms: windowMs,
      gusto_limit_per_window: GUSTO_RATE_LIMIT,
      limiter_limit_per_window: limiterLimit,
      provider_call_max_changes: maxChanges,
      minimum_calls: minimumCalls,
      baseline,
      limited,
      at_gusto_window: atGustoWindow,
      targets,
      quick: options.quick,
    };

    console.log('');
    printTable(
      ['run', 'employees', 'API calls', 'minimum calls', '429s', 'wall s', 'rate-limit minimum s', 'wall / minimum'],
      [
        ['no rate limit (baseline)', size, baseline.api_calls, minimumCalls, baseline.answers_429, baseline.wall_seconds, '-', '-'],
        [`Gusto's limit, ${windowMs} ms window`, size, limited.api_calls, minimumCalls, limited.answers_429, limited.wall_seconds, limited.minimum_seconds, limited.wall_over_minimum],
        [
          `  converted to Gusto's 60 s window`,
          size,
          limited.api_calls,
          minimumCalls,
          limited.answers_429,
          atGustoWindow.wall_seconds,
          atGustoWindow.minimum_seconds,
          atGustoWindow.wall_over_minimum,
        ],
      ],
    );
    console.log('');
    const operations = [...new Set([...Object.keys(baseline.calls_by_operation), ...Object.keys(limited.calls_by_operation)])].sort();
    printTable(
      ['operation', 'baseline', 'rate-limited'],
      operations.map((op) => [op, baseline.calls_by_operation[op] ?? 0, limited.calls_by_operation[op] ?? 0]),
    );
    console.log('');
    console.log(
      `minimum calls: ${minimumCalls} = ${size} creates (POST /v1/employees/{employee_id}/employee_benefits, one per employee) ` +
        `+ ${limited.provider_calls} × 1 page of ${LISTING} (one provider call of at most ${maxChanges} changes each, read before writing)`,
    );
    // Sent in whole windows (the first 200 at once, then 200 a window), the last call leaves after ⌊(calls − 1) ÷ limit⌋ windows.
    const windowsAt = (limit: number) => Math.floor((limited.api_calls - 1) / limit);
    console.log(
      `rate-limit minimum: calls ÷ ${GUSTO_RATE_LIMIT} per window × window. In whole windows, the last call can leave after ` +
        `⌊(calls − 1) ÷ ${GUSTO_RATE_LIMIT}⌋ = ${windowsAt(GUSTO_RATE_LIMIT)} windows at Gusto's limit, ${windowsAt(limiterLimit)} at the limiter's ${limiterLimit} ` +
        `(${round((windowsAt(GUSTO_RATE_LIMIT) * windowMs) / 1000, 2)} s and ${round((windowsAt(limiterLimit) * windowMs) / 1000, 2)} s as run)`,
    );
    console.log(
      `converted: ${limited.window_pauses} pauses of the request stream for the window (expected ⌈${limited.api_calls} ÷ ${limiterLimit}⌉ − 1 = ` +
        `${Math.ceil(limited.api_calls / limiterLimit) - 1}), each ${(GUSTO_RATE_WINDOW_MS - windowMs) / 1000} s longer at 60 s; the rest of the wall time as measured`,
    );
    printTargets(targets);
    console.log(`written to ${writeResult('gusto-enroll', options, result)}`);
    if (wrong > 0 || violations.length > 0) {
      throw new Error(`the enrollment is not what was asked at the fake: ${wrong} employees wrong; violations: ${violations.slice(0, 5).join(' | ') || 'none'}`);
    }
    return targets;
  });
}

if (require.main === module) runBenchmark(async () => void (await measureGustoEnroll()));
