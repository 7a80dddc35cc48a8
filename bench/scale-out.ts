/**
 * Scale-out on the three-broker cluster: the same HRIS stream applied end to end by one, two
 * and three service instances in one consumer group, in the same run, on one database. Prints
 * events/s, the CPU per event of all instances together and of PostgreSQL, and which
 * partitions each instance held (the partition spread). On one small machine no speed-up is
 * expected (the instances, PostgreSQL and the brokers share its cores): the CPU per event is
 * what predicts a machine per instance.
 *
 *   npx ts-node --transpile-only bench/scale-out.ts [--quick] [--events=30000] [--warm-up-events=10000] [--alternations=3] [--employees=50] [--statements] [--tables] [--lock-waits] [--no-settle] [--result=NAME]
 *
 * Two instances against one is measured alternately, --alternations times (default 3): one, two,
 * one, two, …, then three. Going back to one stops the newest instance; going to two starts a
 * new one. Each two-instance run is set against the mean of the one-instance runs just before
 * and after it (the host's drift within the run cancels), and the median of those ratios is the
 * figure.
 *
 * Each configuration is measured warm: before it, every instance (the newly started one too) has
 * applied at least --warm-up-events of its own (default 10,000; 2,000 with --quick). Each
 * instance's CPU per event of the partitions it held is printed beside the total (its job work
 * counted too, which any instance may do), so an instance still compiling its paths shows.
 *
 * With `--statements`, the database is a PostgreSQL cluster of the benchmark's own with
 * pg_stat_statements loaded, and each run also reports PostgreSQL's statements per event by who
 * runs them (the work of applying events and groups, the relay, the job queue) and the statements whose time per event
 * grew most from one instance to three: what each added instance costs the database, told
 * apart into more calls (polling, smaller rounds) and dearer calls (contention).
 *
 * With `--lock-waits`, each run also samples PostgreSQL's backends waiting for a lock (every
 * 25 ms): which statement waits, on which statement of which transaction, and how often.
 *
 * With `--tables`, each run also counts the rows written per event by table (pg_stat_user_tables;
 * 11 s before and after each run for the counters to arrive), printed by instance count.
 *
 * Every measured run starts from settled tables: the benchmark vacuums and analyzes the database
 * itself just before it, so that no run pays for the upkeep its warm-up made due (only the runs
 * after a warm-up would: the two- and three-instance ones). The upkeep the run's own events make
 * due is still done during it, by whichever instance's turn it is, and counted
 * (`ANALYZE / VACUUM`). `--no-settle` measures without it.
 *
 * Starts the local cluster (`scripts/kafka/run up --brokers 3`) when it is not running.
 */
import { addTableActivity, runBenchmark, TableActivity, tableActivity, tableActivityBetween } from './bench-database';
import { argValue, BenchOptions, benchOptions, BenchService, describeMachine, ensureBuild, machineInfo, median, printTable, round, TargetCheck, writeResult } from './bench-service';
import { DataSource } from 'typeorm';
import { backgroundKind, benchEmployers, startHrisService, ThroughputRun, throughputRun, together, waitForMembers } from './hris-events';
import { createScratchDatabase, ensureKafkaCluster, HRIS_TOPIC, KafkaScope, kafkaClusterBrokers, partitionOf, PARTITIONS, PrivatePostgres, startStatementsPostgres } from './hris-kit';
import { LockWaits, sampleLockWaits } from './lock-waits';

/** PostgreSQL's statements of one run, per event, by who runs them. */
interface StatementsByRole {
  /** Per role: statements and execution (and planning) time per event. */
  roles: Record<string, { calls_per_event: number; exec_ms_per_event: number; plan_ms_per_event: number }>;
  /** Every statement's calls and execution time per event, by its text (shortened). */
  statements: Record<string, { calls_per_event: number; exec_ms_per_event: number }>;
}

interface InstancesRun {
  instances: number;
  events: number;
  end_to_end_events_per_second: number;
  consumed_events_per_second: number;
  /** The machine's busy share while consuming: what it falls short of 100 (with the stolen share) was left idle. */
  machine_busy_percent: number;
  /** The share stolen by the hypervisor for other tenants meanwhile: a run with more than a few percent was disturbed. */
  machine_steal_percent: number;
  /** Every instance's CPU, added, until every event was consumed. */
  service_cpu_ms_per_event: number;
  database_cpu_ms_per_event: number;
  /** The three brokers' CPU, added, until every job was complete. */
  broker_cpu_ms_per_event: number | null;
  /** Mean HRIS events per consumer transaction and messages per relay round, over every instance. */
  batch_means: ThroughputRun['batch_means'] | null;
  /** Partitions held by each instance during the run, by its client id. */
  partitions: Record<string, number[]>;
  /** Events of the run on each instance's partitions. */
  events_by_instance: Record<string, number>;
  /** Each instance's CPU until every event was consumed (its job work too), per event of the partitions it held, by its client id. */
  instance_cpu_ms_per_own_event: Record<string, number>;
  /** Of it, on each instance's main thread (the JavaScript; the rest is V8's compiler and collector, and libuv's pool). */
  instance_main_thread_cpu_ms_per_own_event: Record<string, number>;
  /** PostgreSQL backends the instances' pools started during the run (each loads its caches and plans its statements anew), and their CPU. */
  database_backends_started: ThroughputRun['database_backends_started'] | null;
  /** ANALYZEs and VACUUMs of the service's tables during the run (pg_stat_user_tables), by whichever instance ran them. */
  upkeep: { analyzes: number; vacuums: number; by_table: Record<string, string> };
  /** Events each instance applied before this measured run (every earlier run and warm-up), by its client id. */
  events_before_by_instance: Record<string, number>;
  /** With --statements: PostgreSQL's statements per event, by role and by statement. */
  statements?: StatementsByRole;
  /** With --tables: each table's row counters over the run (pg_stat_user_tables). */
  tables?: Record<string, TableActivity>;
  /** With --lock-waits: the backends waiting for a lock over the run, by what they wait for. */
  lock_waits?: LockWaits;
}

/**
 * Rows written per event (inserted + updated + deleted) by table, over every run of each instance
 * count together: which tables more instances write more of, for the same events.
 */
function printRowsByInstances(runs: readonly InstancesRun[]): void {
  const counts = [...new Set(runs.map((r) => r.instances))].sort((a, b) => a - b);
  const rowsPerEvent = new Map(
    counts.map((n) => {
      const of = runs.filter((r) => r.instances === n && r.tables);
      const events = of.reduce((sum, r) => sum + r.events, 0);
      const tables = addTableActivity(of.map((r) => r.tables!));
      return [n, new Map(Object.entries(tables).map(([table, t]) => [table, (t.inserted + t.updated + t.deleted) / Math.max(1, events)]))];
    }),
  );
  const tables = [...new Set([...rowsPerEvent.values()].flatMap((m) => [...m.keys()]))].sort();
  const cell = (n: number, table: string) => round(rowsPerEvent.get(n)!.get(table) ?? 0, 3);
  console.log('rows written per event (inserted + updated + deleted), by table and instance count:');
  printTable(
    ['table', ...counts.map((n) => `${n} instance(s)`)],
    tables.filter((table) => counts.some((n) => cell(n, table) > 0)).map((table) => [table, ...counts.map((n) => cell(n, table))]),
  );
}

const STATEMENTS = 'pg_stat_statements';
const ROLES = ['applying', 'relay', 'worker'] as const;

/**
 * A statement's role: the relay's; the job queue's (leases, renewals, finishes, table upkeep);
 * else the work itself (`applying`): the consumers' batches and the enrollment groups' work,
 * which share the ledger's statements (its locks among them).
 */
const roleOf = (query: string) => backgroundKind(query) ?? 'applying';

async function statementsOfRun(db: DataSource, events: number): Promise<StatementsByRole> {
  const rows: { query: string; calls: string; ms: number; plan_ms: number }[] = await db.query(
    `SELECT query, calls, total_exec_time AS ms, total_plan_time AS plan_ms FROM ${STATEMENTS}
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  const per = (n: number) => round(n / events, 4);
  const roles: StatementsByRole['roles'] = {};
  const statements: StatementsByRole['statements'] = {};
  for (const row of rows) {
    const role = roleOf(row.query);
    if (role === 'bench') continue;
    const r = (roles[role] ??= { calls_per_event: 0, exec_ms_per_event: 0, plan_ms_per_event: 0 });
    r.calls_per_event += Number(row.calls);
    r.exec_ms_per_event += row.ms;
    r.plan_ms_per_event += row.plan_ms;
    const text = `${role}: ${row.query.replace(/\s+/g, ' ').slice(0, 100)}`;
    const s = (statements[text] ??= { calls_per_event: 0, exec_ms_per_event: 0 });
    s.calls_per_event += Number(row.calls);
    s.exec_ms_per_event += row.ms;
  }
  for (const r of Object.values(roles)) Object.assign(r, { calls_per_event: per(r.calls_per_event), exec_ms_per_event: per(r.exec_ms_per_event), plan_ms_per_event: per(r.plan_ms_per_event) });
  for (const s of Object.values(statements)) Object.assign(s, { calls_per_event: per(s.calls_per_event), exec_ms_per_event: per(s.exec_ms_per_event) });
  return { roles, statements };
}

/** The statements whose execution time per event grew most from the first run to the last. */
function printStatementGrowth(first: InstancesRun, last: InstancesRun, top = 10): void {
  const a = first.statements!.statements;
  const b = last.statements!.statements;
  const texts = new Set([...Object.keys(a), ...Object.keys(b)]);
  const none = { calls_per_event: 0, exec_ms_per_event: 0 };
  const growth = [...texts]
    .map((text) => ({ text, before: a[text] ?? none, after: b[text] ?? none }))
    .sort((x, y) => y.after.exec_ms_per_event - y.before.exec_ms_per_event - (x.after.exec_ms_per_event - x.before.exec_ms_per_event))
    .slice(0, top);
  console.log(`statements whose execution time per event grew most, ${first.instances} → ${last.instances} instances:`);
  printTable(
    ['ms/event', 'calls/event', 'statement'],
    growth.map((g) => [`${g.before.exec_ms_per_event} → ${g.after.exec_ms_per_event}`, `${g.before.calls_per_event} → ${g.after.calls_per_event}`, g.text]),
  );
}

/** Each run's lock waits: how many backends waited on average, and the commonest waits. */
function printLockWaits(runs: readonly InstancesRun[]): void {
  for (const r of runs) {
    const w = r.lock_waits!;
    console.log(`lock waits, ${r.instances} instance(s): ${w.mean_waiting} backends waiting on average over ${w.samples} samples`);
    for (const p of w.pairs) console.log(`  ${p.share} %  ${p.waiting}\n         waits for ${p.blocked_by}`);
  }
}

/** What the upkeep (or anyone) analyzed and vacuumed between two snapshots of the tables' counters: in all, and by table (those it touched). */
function upkeepBetween(before: Map<string, TableActivity>, after: Map<string, TableActivity>): InstancesRun['upkeep'] {
  const byTable: Record<string, string> = {};
  let analyzes = 0;
  let vacuums = 0;
  for (const [table, { analyzed, vacuumed }] of Object.entries(tableActivityBetween(before, after))) {
    analyzes += analyzed;
    vacuums += vacuumed;
    if (analyzed > 0 || vacuumed > 0) byTable[table] = `${analyzed} / ${vacuumed}`;
  }
  return { analyzes, vacuums, by_table: byTable };
}

/**
 * Each two-instance run's events/s against the mean of the one-instance runs just before and
 * after it (only the one before, for a run with none after).
 */
function bracketedRatios(runs: InstancesRun[]): number[] {
  return runs.flatMap((run, i) => {
    if (run.instances !== 2) return [];
    const around = [runs.slice(0, i).reverse(), runs.slice(i + 1)].map((side) => side.find((r) => r.instances === 1)).filter((r): r is InstancesRun => r !== undefined);
    const baseline = around.reduce((sum, r) => sum + r.end_to_end_events_per_second, 0) / around.length;
    return [round(run.end_to_end_events_per_second / baseline, 2)];
  });
}

export async function measureScaleOut(options: BenchOptions): Promise<TargetCheck[]> {
  // 30,000 events a run: on a fast host 10,000 took under two seconds, and the two-instance
  // ratios of such runs spread 0.82–1.17, against 0.93–1.06 over 30,000 (bench/README.md, 2026-12-04).
  const events = Number(argValue('events') ?? (options.quick ? 5_000 : 30_000));
  // A started service spends about a third more CPU per event over its first ~10,000 events
  // (V8 compiling its paths; "The database at scale"): each configuration is measured once every
  // instance in it, the newest too, has applied this many events of its own.
  const warmUpPerInstance = Number(argValue('warm-up-events') ?? (options.quick ? 2_000 : 10_000));
  const withStatements = process.argv.includes('--statements');
  // Each run's rows written by table (11 s before and after it for the counters to arrive, outside the timed span).
  const withTables = process.argv.includes('--tables');
  const withLockWaits = process.argv.includes('--lock-waits');
  // The events' people: 6 employers of this many (300 by default, every batch then touches most of them).
  const employeesPerEmployer = Number(argValue('employees') ?? 50);
  const settle = !process.argv.includes('--no-settle');
  await ensureKafkaCluster();
  const brokers = kafkaClusterBrokers();
  const scope = new KafkaScope('bench-scale', brokers);
  let cluster: PrivatePostgres | undefined;
  if (withStatements) {
    cluster = await startStatementsPostgres();
  }
  const database = await createScratchDatabase('bench_scale', cluster?.url, 4);
  const services: BenchService[] = [];
  /** The client id of each running service, in the same order. */
  const clientIds: string[] = [];
  try {
    const machine = await machineInfo(database.db);
    console.log(`machine: ${describeMachine(machine)}; three brokers at ${brokers}`);
    if (withStatements) await database.db.query(`CREATE EXTENSION IF NOT EXISTS ${STATEMENTS}`);
    await scope.createTopics();
    let started = 0;
    const start = async () => {
      const clientId = `instance-${++started}`;
      services.push(await startHrisService(database.url, scope, { KAFKA_BROKERS: brokers, KAFKA_CLIENT_ID: clientId }));
      clientIds.push(clientId);
    };
    // The newest leaves (SIGTERM: it commits and leaves the group); the first, which made the employers, stays.
    const stopNewest = async () => {
      clientIds.pop();
      await services.pop()!.stop();
    };
    await start();
    const employers = await benchEmployers(services[0], scope, employeesPerEmployer);
    const topic = scope.physical(HRIS_TOPIC);
    const partitionOfEmployer = new Map(employers.map((e) => [e.connectionId, partitionOf(e.connectionId, topic)]));
    console.log(`${employers.length} employers of ${employeesPerEmployer} employees on ${new Set(partitionOfEmployer.values()).size} of ${PARTITIONS} partitions`);

    const runs: InstancesRun[] = [];
    const appliedBy: Record<string, number> = {};
    // By client id, in its order: instance-1, instance-2, …
    const eventsOfEach = (held: Map<string, number[]>, total: number) =>
      Object.fromEntries(
        [...held]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([member, partitions]) => [member, Math.round(employers.filter((e) => partitions.includes(partitionOfEmployer.get(e.connectionId)!)).length * (total / employers.length))]),
      );
    const count = (byMember: Record<string, number>) => {
      for (const [member, n] of Object.entries(byMember)) appliedBy[member] = (appliedBy[member] ?? 0) + n;
    };
    const alternations = Math.max(1, Number(argValue('alternations') ?? (options.quick ? 1 : 3)));
    const sequence = [...Array.from({ length: alternations }, () => [1, 2]).flat(), 1, 3];
    for (const instances of sequence) {
      while (services.length > instances) await stopNewest();
      while (services.length < instances) await start();
      const held = await waitForMembers(scope, instances);
      // Every configuration runs warm: its newest instance's first events are not measured.
      const warmUp = Math.max(...[...held].map(([member]) => warmUpPerInstance - (appliedBy[member] ?? 0)), 0) * instances;
      if (warmUp > 0) {
        console.log(`${instances} instance(s): warming up on ${warmUp} events ...`);
        await throughputRun(scope, database.db, together(services), employers, warmUp, { seed: 3000 + instances });
        count(eventsOfEach(held, warmUp));
      }
      const eventsBefore = { ...appliedBy };
      console.log(`${instances} instance(s): ${events} events ...`);
      if (settle) await database.db.query('VACUUM (ANALYZE)');
      if (withStatements) await database.db.query(`SELECT ${STATEMENTS}_reset()`);
      const upkeepBefore = await tableActivity(database.db);
      // Each instance's CPU read whenever the run reads theirs together (its timed span: from the
      // first events sent until every one was consumed), not over the table counters' waits around it.
      const readings: number[][] = [];
      const mainThreadReadings: number[][] = [];
      const lockSampler = withLockWaits ? sampleLockWaits(database.db) : undefined;
      const measured = together(services, (each, mainThreads) => {
        readings.push(each);
        mainThreadReadings.push(mainThreads);
      });
      const run = await throughputRun(scope, database.db, measured, employers, events, { seed: 3100 + instances, tableStats: withTables });
      const lockWaits = await lockSampler?.stop();
      const [cpuBefore, cpuAfter] = [readings[0], readings[readings.length - 1]];
      const upkeepAfter = await tableActivity(database.db);
      const eventsBy = eventsOfEach(held, events);
      count(eventsBy);
      const perOwnEvent = (before: number[], after: number[]) =>
        Object.fromEntries(
          Object.entries(eventsBy).map(([member, n]) => {
            const i = clientIds.indexOf(member);
            return [member, round(((after[i] - before[i]) * 1000) / Math.max(1, n), 2)];
          }),
        );
      const instanceCpu = perOwnEvent(cpuBefore, cpuAfter);
      const instanceMainThreadCpu = perOwnEvent(mainThreadReadings[0], mainThreadReadings[mainThreadReadings.length - 1]);
      runs.push({
        instances,
        events,
        end_to_end_events_per_second: run.end_to_end_events_per_second,
        consumed_events_per_second: run.consumed_events_per_second,
        machine_busy_percent: run.machine_busy_percent,
        machine_steal_percent: run.machine_steal_percent,
        service_cpu_ms_per_event: round((run.service_cpu_seconds * 1000) / events, 2),
        database_cpu_ms_per_event: round((run.database_cpu_seconds * 1000) / events, 2),
        broker_cpu_ms_per_event: run.broker_cpu_seconds === undefined ? null : round((run.broker_cpu_seconds * 1000) / events, 3),
        batch_means: run.batch_means ?? null,
        database_backends_started: run.database_backends_started ?? null,
        partitions: Object.fromEntries([...held].sort()),
        events_by_instance: eventsBy,
        instance_cpu_ms_per_own_event: instanceCpu,
        instance_main_thread_cpu_ms_per_own_event: instanceMainThreadCpu,
        upkeep: upkeepBetween(upkeepBefore, upkeepAfter),
        events_before_by_instance: Object.fromEntries(Object.keys(eventsBy).map((member) => [member, eventsBefore[member] ?? 0])),
        ...(withStatements && { statements: await statementsOfRun(database.db, events) }),
        ...(run.table_activity && { tables: run.table_activity }),
        ...(lockWaits && { lock_waits: lockWaits }),
      });
    }

    printTable(
      ['instances', 'events', 'events/s e2e', 'consumed/s', 'machine busy / stolen while consuming', 'CPU/event all instances', 'CPU/event PG', 'CPU/event brokers', 'events per transaction', 'messages per relay round', 'partitions per instance', 'events per instance (approx.)', 'CPU per own event, each instance (main thread)', 'events each had applied before', 'ANALYZE / VACUUM', 'PG backends started (CPU)'],
      runs.map((r) => [
        r.instances,
        r.events,
        r.end_to_end_events_per_second,
        r.consumed_events_per_second,
        `${r.machine_busy_percent} / ${r.machine_steal_percent} %`,
        `${r.service_cpu_ms_per_event} ms`,
        `${r.database_cpu_ms_per_event} ms`,
        r.broker_cpu_ms_per_event === null ? '-' : `${r.broker_cpu_ms_per_event} ms`,
        r.batch_means?.events_per_transaction ?? '-',
        r.batch_means?.messages_per_relay_round ?? '-',
        Object.entries(r.partitions).map(([m, p]) => `${m}: ${p.join(',')}`).join('; '),
        Object.values(r.events_by_instance).join(' / '),
        Object.entries(r.instance_cpu_ms_per_own_event).map(([member, ms]) => `${ms} (${r.instance_main_thread_cpu_ms_per_own_event[member]}) ms`).join(' / '),
        Object.values(r.events_before_by_instance).join(' / '),
        `${r.upkeep.analyzes} / ${r.upkeep.vacuums}`,
        r.database_backends_started ? `${r.database_backends_started.count} (${r.database_backends_started.cpu_seconds} s)` : '-',
      ]),
    );
    console.log('ANALYZE / VACUUM by table, per run:');
    for (const r of runs) console.log(`  ${r.instances}: ${Object.entries(r.upkeep.by_table).map(([t, n]) => `${t} ${n}`).join(', ')}`);
    const one = runs[0];
    const three = runs.find((r) => r.instances === 3)!;
    const twoAgainstOne = bracketedRatios(runs);
    console.log(
      `two instances against one, each two-instance run against the one-instance runs around it: ${twoAgainstOne.map((r) => `${r} ×`).join(', ')} (median ${median(twoAgainstOne, 2)} ×)`,
    );
    if (withStatements) {
      console.log('PostgreSQL statements per event, by role (execution time includes waits for locks):');
      printTable(
        ['instances', ...ROLES.flatMap((role) => [`${role} calls`, `${role} exec ms`])],
        runs.map((r) => [r.instances, ...ROLES.flatMap((role) => [r.statements!.roles[role]?.calls_per_event ?? 0, r.statements!.roles[role]?.exec_ms_per_event ?? 0])]),
      );
      printStatementGrowth(one, three);
    }
    if (withTables) printRowsByInstances(runs);
    if (withLockWaits) printLockWaits(runs);
    // A machine per instance: each instance's share of the service CPU, with PostgreSQL on its own machine.
    const perInstanceCeiling = Math.round(1000 / Math.max(0.01, three.service_cpu_ms_per_event));
    console.log(
      `service CPU per event with three instances ${three.service_cpu_ms_per_event} ms against ${one.service_cpu_ms_per_event} ms with one: ` +
        `one core per instance would apply about ${perInstanceCeiling} events/s each on the partitions it holds, until PostgreSQL (${three.database_cpu_ms_per_event} ms per event) is the limit`,
    );
    // `--result=NAME` keeps an experiment's run apart from the committed results/scale-out.json.
    const written = writeResult(argValue('result') ?? (withStatements ? 'scale-out-statements' : 'scale-out'), options, {
      measured_at: new Date().toISOString(),
      machine,
      brokers: 3,
      settled: settle,
      two_against_one: { ratios: twoAgainstOne, median: median(twoAgainstOne, 2) },
      runs,
    });
    console.log(`written: ${written}`);
    const overhead = round((three.service_cpu_ms_per_event / Math.max(0.01, one.service_cpu_ms_per_event) - 1) * 100);
    return [
      { target: 'two instances on three brokers not slower than one (median of the alternation)', measured: `${median(twoAgainstOne, 2)} × (${twoAgainstOne.join(', ')})`, met: median(twoAgainstOne, 2) >= 1 },
      { target: 'every partition held with 1, 2 and 3 instances', measured: runs.map((r) => `${r.instances}: ${Object.values(r.partitions).map((p) => p.length).join('+')}`).join('; '), met: true },
      { target: 'service CPU per event with three instances (reported; no target)', measured: `${three.service_cpu_ms_per_event} ms against ${one.service_cpu_ms_per_event} ms with one (${overhead >= 0 ? '+' : ''}${overhead} %)`, met: true },
    ];
  } finally {
    for (const s of services.reverse()) await s.stop().catch(() => undefined);
    await scope.close();
    await database.drop();
    cluster?.stop();
  }
}

if (require.main === module) {
  runBenchmark(async () => {
    ensureBuild();
    await measureScaleOut(benchOptions());
  });
}
