/**
 * Ops reads over a long history: the ops overview (`GET /ops/api/overview`, which the dashboard
 * refreshes every 5 s) and the saga lists with their paging count, on a database holding
 * `--history` sagas and as many jobs (both kept for good: about 4,000 of each a year per 1,000
 * employees), against the same reads on an empty history in the same run, and against the
 * queries the overview ran before its counts were kept (a count over each whole table), timed
 * on the same database. Prints the median time and PostgreSQL's CPU per read.
 *
 *   npx ts-node --transpile-only bench/ops-reads.ts [--quick] [--history=1000000]
 */
import { runBenchmark } from './bench-database';
import { argValue, BenchOptions, benchOptions, BenchService, DatabaseCpu, describeMachine, ensureBuild, machineInfo, printTable, round, startBenchService, writeResult } from './bench-service';
import { basic, createScratchDatabase, ScratchDatabase } from './hris-kit';

const OPS = basic('ops', 'ops-password-for-bench');
const READS_EACH = 15;

/** The ops reads measured, through the service. */
const ENDPOINTS = [
  { name: 'overview', path: '/ops/api/overview?minutes=15' },
  { name: 'sagas, newest 50 (count of all)', path: '/ops/api/sagas?limit=50' },
  { name: 'sagas failed, newest 50 (count of failed)', path: '/ops/api/sagas?state=failed&limit=50' },
  { name: 'jobs, newest 50 (count of all)', path: '/ops/api/jobs?limit=50' },
  { name: 'jobs failed, newest 50 (count of failed)', path: '/ops/api/jobs?status=error&limit=50' },
  { name: 'manual jobs pending, oldest 50 (count of those)', path: '/ops/api/jobs?kind=manual&status=pending&limit=50' },
] as const;

/** What the overview counted before (migration 1798800000000 and 1798810000000): each whole table. */
const FORMER_QUERIES = [
  { name: 'former overview: sagas by type and state', sql: `SELECT type, state, count(*)::int AS n FROM sagas GROUP BY type, state` },
  {
    name: 'former overview: open and failed jobs',
    sql: `SELECT count(*) FILTER (WHERE status = 'pending')::int, count(*) FILTER (WHERE status = 'in_progress')::int, count(*) FILTER (WHERE status = 'error')::int
          FROM jobs WHERE status IN ('pending', 'in_progress', 'error')`,
  },
] as const;

interface Timed {
  read: string;
  history: number;
  median_ms: number;
  database_cpu_ms_per_read: number;
}

async function timed(database: ScratchDatabase, name: string, history: number, read: () => Promise<void>): Promise<Timed> {
  const cpu = new DatabaseCpu(database.db);
  for (let i = 0; i < 3; i++) await read();
  const before = await cpu.snapshot();
  const times: number[] = [];
  for (let i = 0; i < READS_EACH; i++) {
    const started = performance.now();
    await read();
    times.push(performance.now() - started);
  }
  const used = DatabaseCpu.between(before, await cpu.snapshot());
  times.sort((a, b) => a - b);
  return { read: name, history, median_ms: round(times[Math.floor(times.length / 2)], 1), database_cpu_ms_per_read: round((used * 1000) / READS_EACH, 2) };
}

async function throughService(service: BenchService, database: ScratchDatabase, history: number): Promise<Timed[]> {
  const results: Timed[] = [];
  for (const endpoint of ENDPOINTS) {
    results.push(
      await timed(database, endpoint.name, history, async () => {
        const res = await fetch(`${service.url}${endpoint.path}`, { headers: OPS });
        if (res.status !== 200) throw new Error(`${endpoint.path}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }),
    );
  }
  return results;
}

/**
 * `count` sagas and as many jobs, in statements of 250,000, as a long-running service has them:
 * nearly all finished, one saga in a thousand failed and one in 5,000 waiting, one job in 2,000
 * failed and one in 10,000 pending, created over the past `count` × 15 seconds.
 */
async function fillHistory(database: ScratchDatabase, count: number): Promise<void> {
  const chunk = 250_000;
  for (let from = 0; from < count; from += chunk) {
    const params = [from + 1, Math.min(count, from + chunk)];
    await database.db.query(
      `INSERT INTO sagas (id, type, state, outcome, connection_id, entity_id, source_event_id, steps, created_at, updated_at)
       SELECT gen_random_uuid(), (ARRAY['enrollment', 'new_hire', 'contribution_change', 'termination'])[1 + n % 4],
         CASE WHEN n % 1000 = 0 THEN 'failed' WHEN n % 5000 = 1 THEN 'waiting' ELSE 'completed' END, 'jobs_complete',
         ('00000000-0000-4000-8000-' || lpad(to_hex(n % 200), 12, '0'))::uuid, gen_random_uuid(), 'evt-' || n,
         jsonb_build_array(
           jsonb_build_object('at', now(), 'name', 'contribution_changed', 'detail', jsonb_build_object('event_id', 'evt-' || n, 'individual_id', gen_random_uuid(), 'benefit_id', gen_random_uuid())),
           jsonb_build_object('at', now(), 'name', 'enroll_requested', 'detail', jsonb_build_object('job_id', gen_random_uuid(), 'job_kind', 'automated'))),
         now() - n * interval '15 seconds', now()
       FROM generate_series($1::int, $2::int) AS n`,
      params,
    );
    await database.db.query(
      `INSERT INTO jobs (id, connection_id, entity_id, kind, type, status, params, created_at, scheduled_at, completed_at)
       SELECT gen_random_uuid(), ('00000000-0000-4000-8000-' || lpad(to_hex(n % 200), 12, '0'))::uuid, gen_random_uuid(),
         -- One in 500 a manual job (ops' own work), a tenth of those still waiting on ops.
         CASE WHEN n % 500 = 7 THEN 'manual' ELSE 'automated' END, CASE WHEN n % 500 = 7 THEN 'benefit_register' ELSE 'benefit_enroll' END,
         CASE WHEN n % 2000 = 0 THEN 'error' WHEN n % 10000 = 1 OR n % 5000 = 7 THEN 'pending' ELSE 'complete' END,
         jsonb_build_object('benefit_id', gen_random_uuid(), 'groups', jsonb_build_array(jsonb_build_object('effective_date', '2026-01-01',
           'items', jsonb_build_array(jsonb_build_object('individual_id', gen_random_uuid(), 'configuration', jsonb_build_object('employee_deduction', jsonb_build_object('type', 'percent', 'amount', 500))))))),
         now() - n * interval '15 seconds', now() - n * interval '15 seconds', now()
       FROM generate_series($1::int, $2::int) AS n`,
      params,
    );
  }
  await database.db.query(`VACUUM ANALYZE sagas`);
  await database.db.query(`VACUUM ANALYZE jobs`);
}

export async function measureOpsReads(options: BenchOptions): Promise<void> {
  const history = Number(argValue('history') ?? (options.quick ? 200_000 : 1_000_000));
  const database = await createScratchDatabase('bench_ops');
  let service: BenchService | undefined;
  try {
    const machine = await machineInfo(database.db);
    console.log(`machine: ${describeMachine(machine)}`);
    service = await startBenchService(database.url);
    const empty = await throughService(service, database, 0);
    console.log(`filling ${history} sagas and ${history} jobs ...`);
    await fillHistory(database, history);
    const full = await throughService(service, database, history);
    const former: Timed[] = [];
    // Without parallel workers, so that the CPU of each is counted whole (a worker's process ends before the next snapshot).
    for (const q of FORMER_QUERIES) {
      former.push(
        await timed(database, q.name, history, () =>
          database.db.transaction(async (manager) => {
            await manager.query(`SET LOCAL max_parallel_workers_per_gather = 0`);
            await manager.query(q.sql);
          }),
        ),
      );
    }

    printTable(
      ['read', 'empty: median ms', `${history} each: median ms`, 'ratio', 'PG CPU per read, empty / full'],
      [
        ...empty.map((e, i) => [e.read, e.median_ms, full[i].median_ms, `${round(full[i].median_ms / Math.max(0.1, e.median_ms), 2)} ×`, `${e.database_cpu_ms_per_read} / ${full[i].database_cpu_ms_per_read} ms`]),
        ...former.map((f) => [f.read, '-', f.median_ms, '-', `- / ${f.database_cpu_ms_per_read} ms`]),
      ],
    );
    const written = writeResult('ops-reads', options, { measured_at: new Date().toISOString(), machine, history, empty, full, former });
    console.log(`written: ${written}`);
  } finally {
    await service?.stop();
    await database.drop();
  }
}

if (require.main === module) {
  runBenchmark(async () => {
    ensureBuild();
    await measureOpsReads(benchOptions());
  });
}
