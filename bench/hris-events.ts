/**
 * Benchmark: HRIS events end to end on the real broker and PostgreSQL. N events (10,000 with
 * --quick, else 100,000) are produced to `hris.events` as fast as the producer goes: new hires
 * under a 3 % auto-enrollment policy and contribution changes, over sandbox employers of a few
 * hundred employees in all, each employer's events in order on its partition. Measured: events
 * applied per second by the consumer (inbox row, saga, enrollment job committed), the time until
 * every resulting job is complete (the provider calls, made by the job workers), and per event
 * the latency from its produce to its saga row's `created_at` (the consumer path) and to its
 * job's `completed_at`. Then a paced run at 1,000 events/s (contribution changes) for the p99:
 * there, the consumer-path latency is also taken to the moment the saga is visible (committed),
 * polled every 50 ms, since a saga's `created_at` is taken before its transaction commits; and
 * a second paced run at a rate the service sustains (--sustainable-rate, default 40 events/s),
 * for its latency when it is not behind.
 *
 * Baseline in the same run, on the same topic: a raw kafkajs consumer (same group settings)
 * doing one idempotent `INSERT … ON CONFLICT DO NOTHING` per event into a scratch table, in its
 * own transaction: the limit of a consumer that commits each event alone.
 *
 *   npx ts-node --transpile-only bench/hris-events.ts [--quick] [--events=N] [--paced-seconds=S]
 *     [--sustainable-rate=R] [--consumer-only-events=N] [--result=NAME] [--keep-database]
 *
 * --consumer-only-events sizes the consumer-path run apart (default: --events); --result names
 * the result file (default hris-events), so a run of another size keeps the committed figures.
 *
 * KAFKA_BATCH_MAX=<n> is passed to the service (1: one transaction per event, as before
 * batching); --keep-database leaves the database for EXPLAIN.
 *
 * The service runs compiled in a child process (bench-service.ts) with production settings
 * (pool of 10, 4 job workers, 3 partitions consumed at once). BENCH_CPU_PROF=<dir> profiles it.
 * Prints a table and writes bench/results/hris-events.json (.tmp.json with --quick).
 *
 * Targets (issue): ≥ 2,000 events/s and ≥ 50 % of the raw pipeline; p99 < 500 ms at 1,000 events/s.
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { runBenchmark } from './bench-database';
import {
  BENCH_APPLICATION,
  BenchOptions,
  benchOptions,
  BenchService,
  DatabaseCpu,
  describeMachine,
  machineInfo,
  printTable,
  printTargets,
  round,
  startBenchService,
  TargetCheck,
  writeResult,
} from './bench-service';
import {
  ensureKafka,
  basic,
  createScratchDatabase,
  Employer,
  employersCoveringPartitions,
  HRIS_CONSUMER,
  HRIS_TOPIC,
  KafkaScope,
  kafkaBrokers,
  Outgoing,
  PARTITIONS,
  partitionOf,
  percent,
  percentile,
  planStream,
  progressOf,
  sleep,
} from './hris-kit';

const OPS_PASSWORD = 'ops-password-for-bench';
/** Partitions a service process consumes at once (messaging.module.ts). */
const PARTITIONS_CONCURRENTLY = 3;

interface Latencies {
  count: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
}

export interface ThroughputRun {
  events: number;
  produce_seconds: number;
  /** First produce until every event's inbox row, saga and job are committed. */
  consumed_seconds: number;
  consumed_events_per_second: number;
  /** First produce until every resulting job is complete. */
  jobs_complete_seconds: number;
  jobs: number;
  /** Produce → saga created_at. */
  event_to_saga: Latencies;
  /** Produce → its job's completed_at. */
  event_to_job_complete: Latencies;
  service_cpu_seconds: number;
  database_cpu_seconds: number;
}

export interface PacedRun {
  target_events_per_second: number;
  events: number;
  produce_seconds: number;
  achieved_events_per_second: number;
  event_to_saga: Latencies;
  /** Produce → the saga seen committed by a 50 ms poller. */
  event_to_saga_committed: Latencies;
  event_to_job_complete: Latencies;
  jobs_complete_seconds: number;
}

export interface RawRun {
  events: number;
  seconds: number;
  events_per_second: number;
  cpu_seconds: number;
}

export interface HrisEventsResult {
  machine: Awaited<ReturnType<typeof machineInfo>>;
  employers: number;
  employees: number;
  partitions_covered: number;
  batch_max: string;
  throughput: ThroughputRun;
  raw_baseline: RawRun;
  service_vs_raw_percent: number;
  paced: PacedRun;
  /** The same at a rate the service sustains: its latency when it is not behind. */
  paced_sustainable: PacedRun;
  /** The throughput run's shape with every job dated 30 days ahead: the consumer path alone. */
  consumer_only: ThroughputRun;
  targets: TargetCheck[];
}

const seconds = (since: number) => (Date.now() - since) / 1000;

function latencies(values: number[]): Latencies {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50_ms: round(percentile(sorted, 50)),
    p90_ms: round(percentile(sorted, 90)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted[sorted.length - 1] ?? NaN),
  };
}

function argValue(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
}

/** Per event id (lower case): its saga's created_at and its job's completed_at, in ms since epoch. */
async function eventTimes(db: DataSource, ids: string[]): Promise<Map<string, { saga: number; job: number | null }>> {
  const rows: { id: string; saga: Date; job: Date | null }[] = await db.query(
    `SELECT lower(s.source_event_id) AS id, s.created_at AS saga, max(j.completed_at) AS job
     FROM sagas s LEFT JOIN saga_jobs sj ON sj.saga_id = s.id LEFT JOIN jobs j ON j.id = sj.job_id
     WHERE lower(s.source_event_id) = ANY($1::text[])
     GROUP BY s.id`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, { saga: r.saga.getTime(), job: r.job?.getTime() ?? null }]));
}

const sagaCount = async (db: DataSource): Promise<number> => (await db.query(`SELECT count(*)::int AS n FROM sagas`))[0].n;

/**
 * Waits for `test`, returning when it first held. Polled every 100 ms at first, then every
 * hundredth of the time waited so far, up to a second: the progress counts scan the inbox and
 * jobs, so polling a long run as often as a short one would make the benchmark itself a
 * growing share of the database's work (at 25,000 events a count took 14 ms). The finish time
 * is off by at most 1 % of the wait.
 */
async function until(test: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  for (;;) {
    if (await test().catch(() => false)) return Date.now();
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(Math.min(1_000, Math.max(100, (Date.now() - started) / 100)));
  }
}

/**
 * The same events with every enrollment dated ahead (30 days, and a day later for each further
 * change of a person, so no change takes over another's waiting group): their jobs are not due,
 * the job workers stay idle, and what is measured is the consumer path alone.
 */
function deferred(messages: Outgoing[]): Outgoing[] {
  const today = new Date().toISOString().slice(0, 10);
  const changes = new Map<string, number>();
  return messages.map((m) => {
    const event = JSON.parse(m.value);
    // Newer than everything applied before (the runs share people): no change is stale.
    event.occurred_at = new Date(Date.parse(event.occurred_at) + 3 * 3_600_000).toISOString();
    if (event.type === 'EmployeeHired') event.data.start_date = today;
    if (event.type === 'ContributionChanged') {
      const n = (changes.get(event.data.individual_id) ?? 0) + 1;
      changes.set(event.data.individual_id, n);
      delete event.data.configuration.effective_date;
      event.data.effective_date = new Date(Date.now() + (30 + Math.min(n, 300)) * 86_400_000).toISOString().slice(0, 10);
    }
    return { ...m, value: JSON.stringify(event) };
  });
}

export async function throughputRun(
  scope: KafkaScope,
  db: DataSource,
  service: BenchService,
  employers: Employer[],
  events: number,
  { consumerOnly = false, seed = 2026 }: { consumerOnly?: boolean; seed?: number } = {},
): Promise<ThroughputRun> {
  const perEmployer = Math.min(...employers.map((e) => e.people.length));
  const plan = planStream(employers, { perEmployer, valid: events, duplicates: 0, poison: 0, terminatedShare: 0, seed });
  if (consumerOnly) plan.messages = deferred(plan.messages);
  const inboxBefore = (await progressOf(db)).inbox;
  const jobs = plan.valid.reduce((n, e) => n + e.jobs, 0);
  const producedAt = new Map<string, number>();
  const dbCpu = new DatabaseCpu(db);
  const cpuBefore = service.stats.cpuSeconds();
  const dbBefore = await dbCpu.snapshot();

  const started = Date.now();
  const producer = await scope.producer();
  const chunk = 1_000;
  for (let at = 0; at < plan.messages.length; at += chunk) {
    const messages = plan.messages.slice(at, at + chunk);
    const sentAt = Date.now();
    for (const m of messages) producedAt.set(JSON.parse(m.value).id, sentAt);
    await producer.send({ topic: scope.physical(HRIS_TOPIC), messages });
  }
  const produceSeconds = seconds(started);
  const timeoutMs = Math.max(600_000, events * 40);
  const consumedAt = await until(async () => (await progressOf(db)).inbox >= inboxBefore + events, timeoutMs, `consuming ${events} events`);
  const dbMid = await dbCpu.snapshot();
  const cpuMid = service.stats.cpuSeconds();
  // Deferred jobs are not due: nothing to wait for.
  const completeAt = consumerOnly
    ? consumedAt
    : await until(async () => (await progressOf(db)).openJobs === 0, timeoutMs, `completing the jobs of ${events} events`);

  const times = await eventTimes(db, [...producedAt.keys()]);
  const toSaga: number[] = [];
  const toJob: number[] = [];
  for (const [id, at] of producedAt) {
    const t = times.get(id);
    if (!t) continue;
    toSaga.push(t.saga - at);
    if (t.job !== null) toJob.push(t.job - at);
  }
  const consumedSeconds = (consumedAt - started) / 1000;
  return {
    events,
    produce_seconds: round(produceSeconds, 2),
    consumed_seconds: round(consumedSeconds, 2),
    consumed_events_per_second: Math.round(events / consumedSeconds),
    jobs_complete_seconds: round((completeAt - started) / 1000, 2),
    jobs,
    event_to_saga: latencies(toSaga),
    event_to_job_complete: latencies(toJob),
    // Consumer-phase CPU: until every event is consumed (the jobs' work goes on after).
    service_cpu_seconds: round(cpuMid - cpuBefore, 2),
    database_cpu_seconds: round(DatabaseCpu.between(dbBefore, dbMid), 2),
  };
}

/**
 * Sagas as they become visible: every `intervalMs`, the rows written by transactions that were
 * not yet finished at the previous poll (xmin at or above that poll's snapshot xmin), among
 * those created in the last `windowSeconds` (the created_at index keeps the poll cheap).
 */
class CommitWatcher {
  readonly seenAt = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private safeXid = 0;

  constructor(
    private readonly db: DataSource,
    private readonly intervalMs = 50,
    private readonly windowSeconds = 10,
  ) {}

  async start(): Promise<void> {
    this.safeXid = await this.snapshotXmin();
    this.timer = setInterval(() => {
      this.running ??= this.poll().finally(() => (this.running = undefined));
    }, this.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await this.poll();
  }

  private async snapshotXmin(): Promise<number> {
    const [{ x }] = await this.db.query(`SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::bigint % 4294967296) AS x`);
    return Number(x);
  }

  private async poll(): Promise<void> {
    const safe = await this.snapshotXmin();
    const rows: { id: string }[] = await this.db.query(
      `SELECT lower(source_event_id) AS id FROM sagas
       WHERE created_at > now() - make_interval(secs => $1) AND xmin::text::bigint >= $2 AND source_event_id IS NOT NULL`,
      [this.windowSeconds, this.safeXid],
    );
    const now = Date.now();
    for (const { id } of rows) if (!this.seenAt.has(id)) this.seenAt.set(id, now);
    this.safeXid = safe;
  }
}

/** Contribution changes at `rate` events/s for `durationSeconds`, each newer than anything before. */
export async function pacedRun(scope: KafkaScope, db: DataSource, employers: Employer[], rate: number, durationSeconds: number): Promise<PacedRun> {
  const people = employers.flatMap((employer) => employer.people.map((individualId) => ({ employer, individualId })));
  const producer = await scope.producer();
  const producedAt = new Map<string, number>();
  const sagasBefore = await sagaCount(db);
  const watcher = new CommitWatcher(db);
  await watcher.start();
  const tickMs = 10;
  const total = rate * durationSeconds;
  const started = Date.now();
  let sent = 0;
  let amount = 0;
  const sends: Promise<unknown>[] = [];
  while (sent < total) {
    // What is due by now, never more: a late tick catches up, an early one sends nothing.
    const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * rate));
    const messages: Outgoing[] = [];
    const at = Date.now();
    for (; sent < due; sent++) {
      const { employer, individualId } = people[(sent * 7919) % people.length];
      const event = {
        id: randomUUID(),
        type: 'ContributionChanged',
        version: 1,
        occurred_at: new Date(at).toISOString(),
        connection_id: employer.connectionId,
        entity_id: employer.entityId,
        data: { individual_id: individualId, benefit_id: employer.benefitId, configuration: { employee_deduction: percent(100 + (amount++ % 900)) } },
      };
      producedAt.set(event.id, at);
      messages.push({ key: employer.connectionId, value: JSON.stringify(event), headers: {} });
    }
    if (messages.length > 0) sends.push(producer.send({ topic: scope.physical(HRIS_TOPIC), messages }));
    await sleep(tickMs);
  }
  await Promise.all(sends);
  const produceSeconds = seconds(started);
  const ids = [...producedAt.keys()];
  await until(async () => (await sagaCount(db)) >= sagasBefore + ids.length, 300_000, 'the paced events');
  await watcher.stop();
  const completeAt = await until(async () => (await progressOf(db)).openJobs === 0, 900_000, 'the paced run jobs');
  const times = await eventTimes(db, ids);
  const toSaga: number[] = [];
  const toCommitted: number[] = [];
  const toJob: number[] = [];
  for (const [id, at] of producedAt) {
    const t = times.get(id);
    if (t) toSaga.push(t.saga - at);
    if (t?.job != null) toJob.push(t.job - at);
    const seen = watcher.seenAt.get(id);
    if (seen !== undefined) toCommitted.push(seen - at);
  }
  return {
    target_events_per_second: rate,
    events: total,
    produce_seconds: round(produceSeconds, 2),
    achieved_events_per_second: Math.round(total / produceSeconds),
    event_to_saga: latencies(toSaga),
    event_to_saga_committed: latencies(toCommitted),
    event_to_job_complete: latencies(toJob),
    jobs_complete_seconds: round((completeAt - started) / 1000, 2),
  };
}

/**
 * The raw pipeline: a kafkajs consumer with the service's group settings reading the same
 * topic from the beginning, one `INSERT … ON CONFLICT DO NOTHING` per event (its own
 * transaction), offsets resolved per message and committed as the service does.
 */
export async function rawBaseline(scope: KafkaScope, databaseUrl: string, events: number): Promise<RawRun> {
  const pool = new Pool({ connectionString: databaseUrl, max: PARTITIONS_CONCURRENTLY });
  await pool.query(`CREATE TABLE IF NOT EXISTS bench_raw_inbox (consumer text NOT NULL, message_id text NOT NULL, topic text NOT NULL, received_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (consumer, message_id))`);
  const consumer = scope.kafka.consumer({ groupId: `${scope.prefix}raw`, sessionTimeout: 30_000, heartbeatInterval: 3_000, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  let applied = 0;
  let done: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const cpuBefore = process.cpuUsage();
  await consumer.connect();
  await consumer.subscribe({ topics: [scope.physical(HRIS_TOPIC)], fromBeginning: true });
  const started = Date.now();
  await consumer.run({
    autoCommit: true,
    autoCommitInterval: 1_000,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: PARTITIONS_CONCURRENTLY,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      for (const message of batch.messages) {
        if (!isRunning() || isStale()) break;
        const id = (JSON.parse(message.value!.toString()) as { id: string }).id.toLowerCase();
        await pool.query(`INSERT INTO bench_raw_inbox (consumer, message_id, topic) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [HRIS_CONSUMER, id, HRIS_TOPIC]);
        resolveOffset(message.offset);
        await heartbeat();
        if (++applied === events) done();
      }
    },
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      finished,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`raw baseline: ${applied} of ${events} after the timeout`)), Math.max(600_000, events * 20)))),
    ]);
  } finally {
    clearTimeout(timer);
  }
  const elapsed = seconds(started);
  const cpu = process.cpuUsage(cpuBefore);
  await consumer.disconnect();
  await pool.end();
  return { events, seconds: round(elapsed, 2), events_per_second: Math.round(events / elapsed), cpu_seconds: round((cpu.user + cpu.system) / 1e6, 2) };
}

const latencyCells = (l: Latencies) => [l.p50_ms, l.p99_ms, l.max_ms];

export async function measureHrisEvents(options: BenchOptions): Promise<TargetCheck[]> {
  const events = Number(argValue('events') ?? (options.quick ? 10_000 : 100_000));
  const pacedSeconds = Number(argValue('paced-seconds') ?? (options.quick ? 5 : 30));
  const sustainableRate = Number(argValue('sustainable-rate') ?? 40);
  const consumerOnlyEvents = Number(argValue('consumer-only-events') ?? events);
  const resultName = argValue('result') ?? 'hris-events';
  const keepDatabase = process.argv.includes('--keep-database');
  await ensureKafka();
  const scope = new KafkaScope('bench-hris');
  const database = await createScratchDatabase('bench_hris', undefined, 4);
  let service: BenchService | undefined;
  try {
    const machine = await machineInfo(database.db);
    console.log(`machine: ${describeMachine(machine)}; batch ${process.env.KAFKA_BATCH_MAX ?? 'default'}`);
    await scope.createTopics();
    service = await startBenchService(database.url, {
      env: {
        KAFKA_BROKERS: kafkaBrokers(),
        KAFKA_TOPIC_PREFIX: scope.prefix,
        KAFKA_GROUP_ID: scope.groupId,
        KAFKA_TOPIC_PARTITIONS: String(PARTITIONS),
        ...(process.env.KAFKA_BATCH_MAX && { KAFKA_BATCH_MAX: process.env.KAFKA_BATCH_MAX }),
      },
    });
    const auth = { app: basic(BENCH_APPLICATION.clientId, BENCH_APPLICATION.clientSecret), ops: basic('ops', OPS_PASSWORD) };
    const employers = await employersCoveringPartitions(service.url, auth, scope.physical(HRIS_TOPIC), { employees: 50, policy: () => true, min: 6, max: 12 });
    const covered = new Set(employers.map((e) => partitionOf(e.connectionId, scope.physical(HRIS_TOPIC)))).size;
    console.log(`${employers.length} employers of 50 employees (every one with a policy), on ${covered} of ${PARTITIONS} partitions`);

    console.log(`throughput: ${events} events ...`);
    const throughput = await throughputRun(scope, database.db, service, employers, events);
    console.log(`raw baseline over the same ${events} events ...`);
    const raw = await rawBaseline(scope, database.url, events);
    console.log(`paced: 1,000 events/s for ${pacedSeconds} s ...`);
    const paced = await pacedRun(scope, database.db, employers, 1_000, pacedSeconds);
    console.log(`paced: ${sustainableRate} events/s for 10 s (a rate it sustains) ...`);
    const pacedLow = await pacedRun(scope, database.db, employers, sustainableRate, 10);
    console.log(`consumer path alone: ${consumerOnlyEvents} events with their jobs dated 30 days ahead ...`);
    const consumerOnly = await throughputRun(scope, database.db, service, employers, consumerOnlyEvents, { consumerOnly: true, seed: 2027 });

    printTable(
      ['run', 'events', 'events/s', 'consumed s', 'jobs done s', 'saga p50', 'saga p99', 'saga max', 'job p50', 'job p99', 'job max'],
      [
        ['service, as fast as produced', events, throughput.consumed_events_per_second, throughput.consumed_seconds, throughput.jobs_complete_seconds, ...latencyCells(throughput.event_to_saga), ...latencyCells(throughput.event_to_job_complete)],
        ['service, consumer path alone', consumerOnlyEvents, consumerOnly.consumed_events_per_second, consumerOnly.consumed_seconds, '-', ...latencyCells(consumerOnly.event_to_saga), '-', '-', '-'],
        ['raw kafkajs + 1 INSERT/event', events, raw.events_per_second, raw.seconds, '-', '-', '-', '-', '-', '-', '-'],
        ['service, paced 1,000/s', paced.events, paced.achieved_events_per_second, '-', paced.jobs_complete_seconds, ...latencyCells(paced.event_to_saga), ...latencyCells(paced.event_to_job_complete)],
        ['  (paced: saga committed)', paced.event_to_saga_committed.count, '-', '-', '-', ...latencyCells(paced.event_to_saga_committed), '-', '-', '-'],
        [`service, paced ${sustainableRate}/s`, pacedLow.events, pacedLow.achieved_events_per_second, '-', pacedLow.jobs_complete_seconds, ...latencyCells(pacedLow.event_to_saga), ...latencyCells(pacedLow.event_to_job_complete)],
        [`  (paced ${sustainableRate}/s: saga committed)`, pacedLow.event_to_saga_committed.count, '-', '-', '-', ...latencyCells(pacedLow.event_to_saga_committed), '-', '-', '-'],
      ],
    );
    const share = round((throughput.consumed_events_per_second / raw.events_per_second) * 100);
    console.log(
      `service CPU ${throughput.service_cpu_seconds} s, database CPU ${throughput.database_cpu_seconds} s while consuming ${events} events ` +
        `(${round((throughput.service_cpu_seconds * 1000) / events, 2)} + ${round((throughput.database_cpu_seconds * 1000) / events, 2)} ms per event, job workers included); ` +
        `consumer path alone ${consumerOnly.service_cpu_seconds} s + ${consumerOnly.database_cpu_seconds} s ` +
        `(${round((consumerOnly.service_cpu_seconds * 1000) / consumerOnlyEvents, 2)} + ${round((consumerOnly.database_cpu_seconds * 1000) / consumerOnlyEvents, 2)} ms per event); raw consumer CPU ${raw.cpu_seconds} s`,
    );
    const targets: TargetCheck[] = [
      {
        target: '≥ 2,000 events/s consumed',
        measured: `${throughput.consumed_events_per_second} events/s (consumer path alone: ${consumerOnly.consumed_events_per_second} events/s)`,
        met: throughput.consumed_events_per_second >= 2_000,
      },
      { target: '≥ 50 % of the raw pipeline', measured: `${share} % (raw ${raw.events_per_second} events/s)`, met: share >= 50 },
      {
        target: 'p99 < 500 ms at 1,000 events/s (event → saga and job committed)',
        measured: `p99 ${paced.event_to_saga_committed.p99_ms} ms committed (${paced.event_to_saga.p99_ms} ms to created_at), at ${paced.achieved_events_per_second} events/s`,
        met: paced.event_to_saga_committed.p99_ms < 500 && paced.achieved_events_per_second >= 950,
      },
      {
        target: 'p99 < 500 ms at 1,000 events/s (event → job complete, provider call included)',
        measured: `p99 ${paced.event_to_job_complete.p99_ms} ms`,
        met: paced.event_to_job_complete.p99_ms < 500,
      },
    ];
    printTargets(targets);
    const result: HrisEventsResult = {
      machine,
      employers: employers.length,
      employees: employers.reduce((n, e) => n + e.people.length, 0),
      partitions_covered: covered,
      batch_max: process.env.KAFKA_BATCH_MAX ?? 'default',
      throughput,
      raw_baseline: raw,
      service_vs_raw_percent: share,
      paced,
      paced_sustainable: pacedLow,
      consumer_only: consumerOnly,
      targets,
    };
    console.log(`written: ${writeResult(resultName, options, result)}`);
    return targets;
  } finally {
    await service?.stop();
    await scope.close([`${scope.prefix}raw`]);
    if (keepDatabase) {
      await database.db.destroy();
      console.log(`kept: ${database.url}`);
    } else {
      await database.drop();
    }
  }
}

if (require.main === module) {
  // A client left open by a failure must not keep the benchmark alive once it has reported.
  runBenchmark(async () => {
    await measureHrisEvents(benchOptions());
    setTimeout(() => process.exit(process.exitCode ?? 0), 1_000).unref();
  });
}
