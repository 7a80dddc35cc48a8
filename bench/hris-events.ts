/**
 * Benchmark: HRIS events end to end on the real broker and PostgreSQL. N events (10,000 with
 * --quick, else 10,000 and then 100,000 more on the same database, so the cost per event can be
 * seen to stay flat as the data grows) are produced to `hris.events` as fast as the producer
 * goes: new hires under a 3 % auto-enrollment policy and contribution changes, over sandbox
 * employers of a few hundred employees in all, each employer's events in order on its
 * partition. Measured: events applied per second by the consumer (inbox row, saga, enrollment
 * job committed), the time until every resulting job is complete (the provider calls, made by
 * the job workers), the CPU of the service and of PostgreSQL per event, and per event the
 * latency from its produce to its saga row's `created_at` (the consumer path) and to its job's
 * `completed_at`. Then a paced run (500 events/s for 60 s, contribution changes): there the
 * consumer-path latency is also taken to the moment the saga is visible (committed), told by a
 * notification sent on commit, since a saga's `created_at` is taken before its transaction
 * commits; then the same pace with every job dated ahead (the consumer path's latency without the
 * job workers beside it). Then the consumer path alone (every job dated ahead), and the SQL
 * statements it runs per event, counted by pg_stat_statements in a PostgreSQL cluster of the
 * benchmark's own (started with the module loaded, so the machine's server is left as it is).
 *
 * Baseline in the same run, on the same topic: a raw kafkajs consumer (same group settings)
 * doing one idempotent `INSERT … ON CONFLICT DO NOTHING` per event into a scratch table, in its
 * own transaction: the limit of a consumer that commits each event alone.
 *
 *   npx ts-node --transpile-only bench/hris-events.ts [--quick] [--events=N] [--volume-events=N]
 *     [--paced-rate=R] [--paced-seconds=S] [--consumer-only-events=N] [--statements-events=N]
 *     [--result=NAME] [--keep-database] [--instances=N] [--warm-up-events=N] [--inbox-history-days=N]
 *
 * --volume-events (default 100,000; 0 with --quick) is the second, larger throughput run;
 * --statements-events (default 5,000; 0 skips it) sizes the statement count, --consumer-only-events
 * (default --events; 0 skips it) the consumer path alone; --result names the
 * result file (default hris-events), so a run of another size keeps the committed figures.
 *
 * KAFKA_BATCH_MAX=<n> is passed to the service; --keep-database leaves the database for EXPLAIN.
 * --instances=N runs N services in one consumer group, their CPU added (default 1);
 * --warm-up-events=0 makes the first round a cold start; with it, --cold-starts=N (at most the
 * five rounds) starts a new service process before each of the first N rounds, so that N cold
 * starts are set against the raw rounds of the same minutes (one first round alone is one sample
 * on a shared host: 50–80 % of the raw median from run to run within an hour).
 * --inbox-history-days=N (at most 6, inside the inbox's 7 days of retention) first fills N past
 * days' inbox partitions with --inbox-history-keys-per-day (default 200,000) keys each, as a
 * service running for a while has them: every claim of a new key searches the days kept.
 *
 * The service runs compiled in a child process (bench-service.ts) with production settings
 * (pool of 10, 4 job workers, 3 partitions consumed at once). BENCH_CPU_PROF=<dir> profiles it.
 * Prints a table and writes bench/results/hris-events.json (.tmp.json with --quick).
 *
 * Targets (issue): ≥ 1,000 events/s end to end and ≥ 50 % of the raw pipeline over 10,000
 * events; the larger run within 20 % of that rate; at 500 events/s, p99 event → saga committed
 * < 500 ms and event → job complete < 1 s; ≤ 3 SQL statements per event on the consumer path.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Producer } from 'kafkajs';
import { Client, Pool } from 'pg';
import { DataSource } from 'typeorm';
import { addTableActivity, hotShare, runBenchmark, TABLE_STATS_FLUSH_MS, TableActivity, tableActivity, tableActivityBetween } from './bench-database';
import {
  argValue,
  BENCH_APPLICATION,
  BenchOptions,
  benchOptions,
  BenchService,
  DatabaseCpu,
  describeMachine,
  machineInfo,
  median,
  printTable,
  printTargets,
  round,
  startBenchService,
  TargetCheck,
  writeResult,
} from './bench-service';
import {
  brokerCpuSeconds,
  ensureKafka,
  kafkaClusterBrokers,
  startStatementsPostgres,
  basic,
  BENCHMARK_BACKENDS,
  createScratchDatabase,
  ScratchDatabase,
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
  /** End to end: events over the time until every job is complete (the consumer path alone: until consumed). */
  end_to_end_events_per_second: number;
  jobs: number;
  /** Produce → saga created_at. */
  event_to_saga: Latencies;
  /** Produce → its job's completed_at. */
  event_to_job_complete: Latencies;
  service_cpu_seconds: number;
  /** Of it, the service's main thread's (the JavaScript); the rest ran on its other threads (V8's compiler and collector, libuv's pool). */
  service_main_thread_cpu_seconds?: number;
  /**
   * The share of the consumer phase (first produce until every event is consumed) that the
   * service's event loop was busy (`nodejs_eventloop_busy_seconds_total`), in percent: near 100,
   * its main thread is the limit. The first instance's with --instances.
   */
  service_event_loop_busy_percent?: number;
  /**
   * The share of the same phase the service's main thread was runnable but waiting for a core,
   * in percent (the scheduler's run delay): with the event loop's busy share, how much of its
   * busy time the serial path lost to the other threads and processes on the same cores.
   */
  service_main_thread_wait_percent?: number;
  /**
   * The machine's busy share (every process, all CPUs, from /proc/stat) over the consumer phase,
   * in percent: what it falls short of 100 (with the stolen share) is CPU the run left idle.
   */
  machine_busy_percent: number;
  /** The share the hypervisor gave other tenants while this guest had work (steal), in percent: above a few, the run was disturbed. */
  machine_steal_percent: number;
  /**
   * The mean size of what the service batched until every job was complete, over every
   * instance: HRIS events per consumer transaction (`messages_applied_per_transaction`) and
   * messages per outbox relay round (`outbox_messages_per_round`). Larger is cheaper per event.
   */
  batch_means?: { events_per_transaction: number | null; messages_per_relay_round: number | null };
  database_cpu_seconds: number;
  /**
   * The local brokers' CPU from the first produce until every job is complete: the HRIS stream
   * in, and what the service publishes (its outbox, dead letters) and commits (offsets).
   */
  broker_cpu_seconds?: number;
  /** PostgreSQL's CPU from the first produce until every job is complete (the job workers' statements too). */
  database_cpu_seconds_end_to_end?: number;
  /**
   * PostgreSQL's CPU over the same span in the benchmark's own backends (its progress counts),
   * left out of the two figures above: not the service's work, and growing with a run's size.
   */
  benchmark_database_cpu_seconds_end_to_end?: number;
  /** Backends of the service that started within the run (their CPU is in the figures above, whole). */
  database_backends_started?: { count: number; cpu_seconds: number };
  /** Each round's end-to-end events/s, in order, where the figures above are the median round's. */
  repetitions?: number[];
  /** Rows inserted, updated (HOT among them) and deleted per table, from before the first produce until every job is complete. */
  table_activity?: Record<string, TableActivity>;
  /**
   * WAL the whole server wrote over the same span: bytes by its insert position (exact), full
   * page images by pg_stat_wal (as its backends have reported them).
   */
  wal?: { bytes: number; full_page_images: number };
}

export interface PacedRun {
  target_events_per_second: number;
  events: number;
  produce_seconds: number;
  achieved_events_per_second: number;
  event_to_saga: Latencies;
  /** Produce → the saga's commit, notified to a listener. */
  event_to_saga_committed: Latencies;
  event_to_job_complete: Latencies;
  jobs_complete_seconds: number;
  /** CPU per event of the service and of PostgreSQL, and the machine's busy share, from the first produce until every job is complete. */
  service_cpu_ms_per_event: number;
  database_cpu_ms_per_event: number;
  machine_busy_percent: number;
  /** Mean events per consumer transaction and messages per relay round over the run. */
  batch_means?: { events_per_transaction: number | null; messages_per_relay_round: number | null };
  /**
   * The seconds of the run (by when their events were produced) with the slowest events to a
   * committed saga, slowest first, each with the machine's busy share then and the server's
   * background work seen around it: where a p99 comes from.
   */
  worst_seconds?: SlowSecond[];
}

export interface SlowSecond {
  /** Seconds since the first produce. */
  second: number;
  events: number;
  p99_committed_ms: number;
  max_committed_ms: number;
  machine_busy_percent: number;
  /** Background work on the server from a second before to two after (autovacuum, VACUUM, ANALYZE), and lock waits. */
  background: string[];
}

export interface RawRun {
  events: number;
  seconds: number;
  events_per_second: number;
  cpu_seconds: number;
  /** The share of the machine the hypervisor gave other tenants over the timed span (as ThroughputRun's). */
  machine_steal_percent: number;
  /** The local brokers' CPU over the timed span (the stream produced, when produced as it is consumed). */
  broker_cpu_seconds?: number;
  /** Each repetition's events/s, in order; the figures above are the median repetition's. */
  repetitions?: number[];
}

/**
 * Rounds of the measured comparison: in each, the service over `events`, then the raw pipeline
 * over as many, consumed after they were produced and as they are produced, each on a settled
 * server (settle). Each side's figure is its median round. The raw pipeline is bound by round
 * trips, not CPU, and one run of it varied by up to 40 % from the next on this machine (two in
 * one benchmark run: about 4,500 and 6,200 events/s); the service's runs varied by 10–15 %.
 */
const ROUNDS = 5;

/** Seed of the service's measured run in round `n` (from 1): each round's events are new to the inbox. */
const throughputSeed = (n: number): number => 2016 + 10 * n;

/** The longest a round waits for the server's background work to end before it starts. */
const SETTLE_LIMIT_MS = 30_000;

/**
 * Waits until the server does no background work on the tables: a checkpoint, then no
 * autovacuum worker and no VACUUM or ANALYZE running (the service's table upkeep), for at most
 * SETTLE_LIMIT_MS. Each side of a round then starts on a quiet server: otherwise the cleanup of
 * one side's writes (the service's queue tables) runs during, and is charged to, the other side.
 * Answers the milliseconds waited.
 */
/** A server session doing background work on the tables: an autovacuum worker, or a VACUUM or ANALYZE (the service's table upkeep). */
const BACKGROUND_WORK = `(backend_type = 'autovacuum worker' OR query ~* '^\\s*(VACUUM|ANALYZE)\\y')`;

async function settle(db: DataSource): Promise<number> {
  const started = Date.now();
  await db.query(`CHECKPOINT`);
  while (Date.now() - started < SETTLE_LIMIT_MS) {
    const [{ n }] = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE pid <> pg_backend_pid() AND ${BACKGROUND_WORK} AND state <> 'idle'`,
    );
    if (n === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return Date.now() - started;
}

/** The run of the median rate, with every round's rate in order. */
function medianOf<T>(runs: readonly T[], rate: (run: T) => number): T & { repetitions: number[] } {
  const middle = [...runs].sort((a, b) => rate(a) - rate(b))[Math.floor(runs.length / 2)];
  return { ...middle, repetitions: runs.map(rate) };
}

/** The consumer groups the raw runs leave behind, for the scope to delete. */
const rawGroups = (scope: KafkaScope): string[] =>
  Array.from({ length: ROUNDS }, (_, i) => [`${scope.prefix}raw-${i + 1}`, `${scope.prefix}raw-produced-${i + 1}`]).flat();

/** SQL statements counted by pg_stat_statements while the consumer path alone applied `events`. */
export interface StatementsRun {
  events: number;
  /** Every statement of the consumer path (transaction control included), per event. */
  consumer_path_per_event: number;
  /** The same without BEGIN / COMMIT / SAVEPOINT. */
  consumer_path_per_event_without_transaction_control: number;
  /** Statements of the service that are not the consumer path (outbox relay, job worker polls, upkeep), per event. */
  background_per_event: number;
  /** The consumer path's statements, most called first: calls per event and the statement's start. */
  top: { calls_per_event: number; rows_per_call: number; query: string }[];
  /**
   * Then the whole path (the same number of events again, jobs due now, until every job is
   * complete): PostgreSQL execution time per event, and the statements that take most of it.
   */
  whole_path: {
    exec_ms_per_event: number;
    plan_ms_per_event: number;
    most_planned: { plan_ms_per_event: number; plans_per_call: number; calls_per_event: number; query: string }[];
    statements_per_event: number;
    top: { ms_per_event: number; share_percent: number; calls_per_event: number; rows_per_call: number; query: string }[];
    /** Statements PostgreSQL compiled with LLVM (its JIT, above `jit_above_cost`): compiled again on every execution. */
    jit_compiled: { calls_per_event: number; jit_ms_per_event: number; functions_per_call: number; query: string }[];
  };
}

export interface ColdStarts {
  rounds: { end_to_end_events_per_second: number; percent_of_raw_median: number; service_cpu_ms_per_event: number }[];
  median_percent_of_raw_median: number;
}

/** The cold rounds' rates as shares of the raw pipeline's median (null when no round was cold). */
function coldStartsAgainst(coldRounds: readonly ThroughputRun[], rawMedian: number): ColdStarts | null {
  if (coldRounds.length === 0) return null;
  const rounds = coldRounds.map((r) => ({
    end_to_end_events_per_second: r.end_to_end_events_per_second,
    percent_of_raw_median: round((r.end_to_end_events_per_second / rawMedian) * 100),
    service_cpu_ms_per_event: round((r.service_cpu_seconds * 1000) / r.events, 3),
  }));
  return { rounds, median_percent_of_raw_median: median(rounds.map((r) => r.percent_of_raw_median)) };
}

export interface HrisEventsResult {
  machine: Awaited<ReturnType<typeof machineInfo>>;
  employers: number;
  employees: number;
  partitions_covered: number;
  batch_max: string;
  /** Service instances in one consumer group (--instances), measured together. */
  instances: number;
  throughput: ThroughputRun;
  raw_baseline: RawRun;
  service_vs_raw_percent: number;
  /** The raw pipeline timed as the service is: its consumer joined first, the stream produced while it consumes. */
  raw_as_produced: RawRun;
  service_vs_raw_as_produced_percent: number;
  /** A larger run on the same database after every other run: the cost as the data grows. */
  volume: ThroughputRun | null;
  /** Null when --paced-seconds=0 left the paced runs out. */
  paced: PacedRun | null;
  /** The same pace with every job dated ahead: the consumer path's latency without the job workers beside it. */
  paced_consumer_only: PacedRun | null;
  /** The throughput run's shape with every job dated 30 days ahead: the consumer path alone (null with --consumer-only-events=0). */
  consumer_only: ThroughputRun | null;
  statements: StatementsRun | null;
  rounds: {
    end_to_end_events_per_second: number;
    service_cpu_ms_per_event: number;
    service_event_loop_busy_percent: number | null;
    service_main_thread_wait_percent: number | null;
    batch_means: ThroughputRun['batch_means'] | null;
    database_cpu_ms_per_event: number;
    database_cpu_ms_per_event_end_to_end: number;
  }[];
  /** With --warm-up-events=0: the rounds run by a service just started, against the raw median. */
  cold_starts?: ColdStarts | null;
  /** Row counters of every table over the measured rounds together (ROUNDS × events), and the HOT share of the queue tables' updates. */
  table_activity: { events: number; tables: Record<string, TableActivity>; queue_tables: readonly string[]; queue_hot_percent: number | null };
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

const openJobsSince = async (db: DataSource, since: Date): Promise<number> =>
  (await db.query(`SELECT count(*)::int AS n FROM jobs WHERE created_at >= $1 AND status IN ('pending', 'in_progress')`, [since]))[0].n;

/**
 * Inbox rows of the HRIS consumer received since `since`: read by the received-at index, so a
 * poll costs what this run added, not what the whole stream did (a count of the whole inbox
 * was 8 % of PostgreSQL's time after 40,000 events, and growing).
 */
const inboxSince = async (db: DataSource, since: Date): Promise<number> =>
  (await db.query(`SELECT count(*)::int AS n FROM inbox_messages WHERE received_at >= $1 AND consumer = $2`, [since, HRIS_CONSUMER]))[0].n;

const sagaCount = async (db: DataSource): Promise<number> => (await db.query(`SELECT count(*)::int AS n FROM sagas`))[0].n;

/**
 * Waits for `test`, returning when it first held. Polled every `minPollMs` (100 ms unless told)
 * at first, then every hundredth of the time waited so far, up to a second: the progress counts
 * scan the inbox and jobs, so polling a long run as often as a short one would make the
 * benchmark itself a growing share of the database's work (at 25,000 events a count took
 * 14 ms). The finish time is off by at most 1 % of the wait, or `minPollMs`.
 */
async function until(test: () => Promise<boolean>, timeoutMs: number, what: string, minPollMs = 100): Promise<number> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  for (;;) {
    if (await test().catch(() => false)) return Date.now();
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(pollAfterMs(started, minPollMs));
  }
}

/** How long a wait begun at `started` sleeps before its next poll: a hundredth of the wait so far, from `minPollMs` up to a second. */
const pollAfterMs = (started: number, minPollMs: number) => Math.min(1_000, Math.max(minPollMs, (Date.now() - started) / 100));

/** How finely the end of a timed run is looked for: a run of 5,000 events lasts about a second. */
const FINISH_POLL_MS = 5;

/**
 * Waits until `count()` reaches `target`, counting since `since` (the run's start), and returns
 * when it first did. Polled after half the time the rate so far says is left (at least
 * FINISH_POLL_MS, at most what `until` would wait): a handful of counts find the end within a
 * few milliseconds, where a fixed 100 ms poll made a one-second run look up to a tenth slower
 * than it was, beside a raw baseline whose end is seen exactly.
 */
async function untilCount(count: () => Promise<number>, target: number, since: number, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  for (;;) {
    const n = await count().catch(() => 0);
    const now = Date.now();
    if (n >= target) return now;
    if (now > deadline) throw new Error(`${what}: ${n} of ${target} after ${timeoutMs / 1000} s`);
    const left = n > 0 ? ((now - since) * (target - n)) / n : Infinity;
    await sleep(Math.min(pollAfterMs(started, 100), Math.max(FINISH_POLL_MS, left / 2)));
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

const WARM_UP_EVENTS = 2_000;

/**
 * The runs share people, and an event older than one already applied to its person is stale:
 * dropped, not applied. Every run's events are made newer than all sent before, so each run
 * measures real work.
 */
class EventClock {
  private latest = 0;

  /** A planned stream, shifted (in order) to start after the latest event sent so far. */
  after(messages: Outgoing[]): Outgoing[] {
    const times = messages.map((m) => Date.parse(JSON.parse(m.value).occurred_at));
    const first = times.reduce((a, b) => Math.min(a, b), Infinity);
    const last = times.reduce((a, b) => Math.max(a, b), -Infinity);
    const shift = Math.max(0, this.latest + 1_000 - first);
    this.latest = Math.max(this.latest, last + shift);
    if (shift === 0) return messages;
    return messages.map((m, i) => ({ ...m, value: JSON.stringify({ ...JSON.parse(m.value), occurred_at: new Date(times[i] + shift).toISOString() }) }));
  }

  /** A paced event's time: when it is sent, or after the latest event sent so far. */
  at(sentAt: number): number {
    this.latest = Math.max(sentAt, this.latest + 1);
    return this.latest;
  }
}

const eventClock = new EventClock();
/** Messages per producer request in the runs as fast as produced. */
const THROUGHPUT_CHUNK = 1_000;
/** The raw pipeline's table: one idempotent insert per event. */
const RAW_INBOX_TABLE = 'bench_raw_inbox';

/** The raw pipeline's own topics (one per repetition) for its run as fast as produced. */
const RAW_TOPIC = 'bench.raw-events';

/** A run's stream as fast as produced: valid events only, every person's in order (`seed` picks them). */
function throughputStream(employers: Employer[], events: number, seed: number): ReturnType<typeof planStream> {
  const perEmployer = Math.min(...employers.map((e) => e.people.length));
  return planStream(employers, { perEmployer, valid: events, duplicates: 0, poison: 0, terminatedShare: 0, seed });
}

/** Sends `messages` to `topic` THROUGHPUT_CHUNK at a time, in order; `beforeEach` sees each chunk just before it goes. */
async function sendInChunks(producer: Producer, topic: string, messages: Outgoing[], beforeEach?: (chunk: Outgoing[]) => void): Promise<void> {
  for (let at = 0; at < messages.length; at += THROUGHPUT_CHUNK) {
    const chunk = messages.slice(at, at + THROUGHPUT_CHUNK);
    beforeEach?.(chunk);
    await producer.send({ topic, messages: chunk });
  }
}

export async function throughputRun(
  scope: KafkaScope,
  db: DataSource,
  service: BenchService,
  employers: Employer[],
  events: number,
  { consumerOnly = false, seed = 2026, tableStats = false }: { consumerOnly?: boolean; seed?: number; tableStats?: boolean } = {},
): Promise<ThroughputRun> {
  const plan = throughputStream(employers, events, seed);
  if (consumerOnly) plan.messages = deferred(plan.messages);
  plan.messages = eventClock.after(plan.messages);
  // This run's jobs: those of an earlier run stay open (the consumer-path-alone run's are dated
  // ahead), or end when this run's changes take their individuals over.
  const [{ now: runStart }] = await db.query(`SELECT now()`);
  const jobs = plan.valid.reduce((n, e) => n + e.jobs, 0);
  const producedAt = new Map<string, number>();
  // Table counters reach pg_stat_user_tables when each backend flushes them: waited for on both sides, outside the timed span.
  const tablesBefore = tableStats ? await sleep(TABLE_STATS_FLUSH_MS).then(() => tableActivity(db)) : undefined;
  const dbCpu = new DatabaseCpu(db, { excluding: BENCHMARK_BACKENDS });
  const benchmarkCpu = new DatabaseCpu(db, { only: BENCHMARK_BACKENDS });
  const walBefore = await walPosition(db);
  const cpuBefore = service.stats.cpuSeconds();
  const mainThreadBefore = service.stats.mainThreadCpuSeconds();
  const mainThreadWaitBefore = service.stats.mainThreadWaitSeconds();
  const benchmarkBefore = await benchmarkCpu.snapshot();
  const dbBefore = await dbCpu.snapshot();
  const busyBefore = await eventLoopBusySeconds(service.url);
  const batchesBefore = await batchTotals(service.urls ?? [service.url]);
  const onCluster = scope.brokers === kafkaClusterBrokers();
  const brokerBefore = brokerCpuSeconds(onCluster);
  const machineBefore = machineTicks();

  const started = Date.now();
  const producer = await scope.producer();
  await sendInChunks(producer, scope.physical(HRIS_TOPIC), plan.messages, (messages) => {
    const sentAt = Date.now();
    for (const m of messages) producedAt.set(JSON.parse(m.value).id, sentAt);
  });
  const produceSeconds = seconds(started);
  const timeoutMs = Math.max(600_000, events * 40);
  const consumedAt = await untilCount(() => inboxSince(db, runStart), events, started, timeoutMs, `consuming ${events} events`);
  const dbMid = await dbCpu.snapshot();
  const cpuMid = service.stats.cpuSeconds();
  const mainThreadMid = service.stats.mainThreadCpuSeconds();
  const mainThreadWaitMid = service.stats.mainThreadWaitSeconds();
  const machineMid = machineTicks();
  const busyMid = await eventLoopBusySeconds(service.url);
  // Deferred jobs are not due: nothing to wait for.
  const completeAt = consumerOnly
    ? consumedAt
    : await until(async () => (await openJobsSince(db, runStart)) === 0, timeoutMs, `completing the jobs of ${events} events`, FINISH_POLL_MS);
  const dbEnd = await dbCpu.snapshot();
  const benchmarkEnd = await benchmarkCpu.snapshot();
  const brokerAfter = brokerCpuSeconds(onCluster);
  const batchesAfter = await batchTotals(service.urls ?? [service.url]);
  const walAfter = await walPosition(db);
  const tables = tablesBefore && tableActivityBetween(tablesBefore, await sleep(TABLE_STATS_FLUSH_MS).then(() => tableActivity(db)));

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
    end_to_end_events_per_second: Math.round(events / ((completeAt - started) / 1000)),
    jobs,
    event_to_saga: latencies(toSaga),
    event_to_job_complete: latencies(toJob),
    // Consumer-phase CPU: until every event is consumed (the jobs' work goes on after).
    service_cpu_seconds: round(cpuMid - cpuBefore, 2),
    service_main_thread_cpu_seconds: round(mainThreadMid - mainThreadBefore, 2),
    ...(busyBefore !== null && busyMid !== null && { service_event_loop_busy_percent: round(((busyMid - busyBefore) / consumedSeconds) * 100, 1) }),
    ...(Number.isFinite(mainThreadWaitMid - mainThreadWaitBefore) && {
      service_main_thread_wait_percent: round(((mainThreadWaitMid - mainThreadWaitBefore) / consumedSeconds) * 100, 1),
    }),
    machine_busy_percent: tickShare(machineMid.busy - machineBefore.busy, machineBefore, machineMid),
    machine_steal_percent: tickShare(machineMid.steal - machineBefore.steal, machineBefore, machineMid),
    batch_means: batchMeans(batchesBefore, batchesAfter),
    database_cpu_seconds: round(DatabaseCpu.between(dbBefore, dbMid), 2),
    database_cpu_seconds_end_to_end: round(DatabaseCpu.between(dbBefore, dbEnd), 2),
    // Backends the run's pools opened (counted whole above): a connection's first statements are parsed and planned anew.
    database_backends_started: DatabaseCpu.started(dbBefore, dbEnd),
    benchmark_database_cpu_seconds_end_to_end: round(DatabaseCpu.between(benchmarkBefore, benchmarkEnd), 2),
    ...(Number.isFinite(brokerAfter - brokerBefore) && { broker_cpu_seconds: round(brokerAfter - brokerBefore, 2) }),
    ...(tables && { table_activity: tables }),
    wal: { bytes: Number(BigInt(walAfter.lsn_bytes) - BigInt(walBefore.lsn_bytes)), full_page_images: Number(walAfter.fpi) - Number(walBefore.fpi) },
  };
}

/** The service's event loop busy time so far (its /metrics), or null when it reports none. */
async function eventLoopBusySeconds(url: string): Promise<number | null> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text());
  const value = /^nodejs_eventloop_busy_seconds_total (\S+)$/m.exec(text)?.[1];
  return value === undefined ? null : Number(value);
}

/**
 * The inbox of a service that has run for `days` days: each past day's partition (named and
 * bounded as PartitionUpkeep makes them) holding `keysPerDay` HRIS keys spread over the day and
 * over the employers' connections (the scope of an HRIS event's id).
 */
async function fillInboxHistory(db: DataSource, scopes: string[], days: number, keysPerDay: number): Promise<void> {
  const dayOf = (at: Date) => at.toISOString().slice(0, 10);
  for (let d = 1; d <= days; d++) {
    const day = dayOf(new Date(Date.now() - d * 86_400_000));
    const next = dayOf(new Date(Date.now() - (d - 1) * 86_400_000));
    const name = `inbox_messages_p${day.replace(/-/g, '')}`;
    await db.query(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF inbox_messages FOR VALUES FROM ('${day} 00:00:00+00') TO ('${next} 00:00:00+00')`);
    await db.query(
      `INSERT INTO ${name} (consumer, scope, message_id, topic, received_at)
       SELECT $1, ($2::text[])[1 + n % cardinality($2::text[])], gen_random_uuid()::text, $3, $4::timestamptz + (n % 86000) * interval '1 second'
       FROM generate_series(1, $5::int) AS n`,
      [HRIS_CONSUMER, scopes, HRIS_TOPIC, `${day}T00:00:00Z`, keysPerDay],
    );
  }
  await db.query(`VACUUM ANALYZE inbox_messages`);
}

/** Sums and counts of the two batch-size histograms, added over the instances' /metrics. */
interface BatchTotals {
  transactions: { sum: number; count: number };
  relayRounds: { sum: number; count: number };
}

async function batchTotals(urls: readonly string[]): Promise<BatchTotals> {
  const totals: BatchTotals = { transactions: { sum: 0, count: 0 }, relayRounds: { sum: 0, count: 0 } };
  for (const url of urls) {
    const text = await fetch(`${url}/metrics`).then((r) => r.text());
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
    totals.transactions.sum += value(new RegExp(`^messages_applied_per_transaction_sum\\{consumer="${HRIS_CONSUMER}"\\} (\\S+)$`, 'm'));
    totals.transactions.count += value(new RegExp(`^messages_applied_per_transaction_count\\{consumer="${HRIS_CONSUMER}"\\} (\\S+)$`, 'm'));
    totals.relayRounds.sum += value(/^outbox_messages_per_round_sum (\S+)$/m);
    totals.relayRounds.count += value(/^outbox_messages_per_round_count (\S+)$/m);
  }
  return totals;
}

function batchMeans(before: BatchTotals, after: BatchTotals): NonNullable<ThroughputRun['batch_means']> {
  const mean = (b: { sum: number; count: number }, a: { sum: number; count: number }) =>
    a.count > b.count ? round((a.sum - b.sum) / (a.count - b.count), 1) : null;
  return { events_per_transaction: mean(before.transactions, after.transactions), messages_per_relay_round: mean(before.relayRounds, after.relayRounds) };
}

/** The server's WAL insert position (bytes since its start) and the full page images reported so far. */
async function walPosition(db: DataSource): Promise<{ lsn_bytes: string; fpi: string }> {
  const [row] = await db.query(`SELECT (pg_current_wal_insert_lsn() - '0/0')::text AS lsn_bytes, (SELECT wal_fpi FROM pg_stat_wal)::text AS fpi`);
  return row;
}

/**
 * Sagas as they become visible: a trigger on `sagas` (installed for the run, in the bench's
 * database) notifies each new saga's source event, and PostgreSQL delivers a notification only
 * when its transaction commits; a listening connection takes the time it arrives. Costs the
 * service a `pg_notify` per saga, far less than polling the table would.
 */
class CommitWatcher {
  readonly seenAt = new Map<string, number>();
  private client?: Client;

  constructor(private readonly db: DataSource) {}

  async start(): Promise<void> {
    await this.db.query(`CREATE OR REPLACE FUNCTION bench_saga_committed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.source_event_id IS NOT NULL THEN PERFORM pg_notify('bench_saga_committed', lower(NEW.source_event_id)); END IF;
        RETURN NULL;
      END $$`);
    await this.db.query(`CREATE OR REPLACE TRIGGER bench_saga_committed AFTER INSERT ON sagas FOR EACH ROW EXECUTE FUNCTION bench_saga_committed()`);
    this.client = new Client({ connectionString: (this.db.options as { url?: string }).url });
    await this.client.connect();
    this.client.on('notification', ({ payload }) => {
      if (payload && !this.seenAt.has(payload)) this.seenAt.set(payload, Date.now());
    });
    await this.client.query('LISTEN bench_saga_committed');
  }

  async stop(): Promise<void> {
    await this.db.query(`DROP TRIGGER IF EXISTS bench_saga_committed ON sagas`);
    await this.client?.end();
  }
}

/** Contribution changes at `rate` events/s for `durationSeconds`, each newer than anything before. */
export async function pacedRun(
  scope: KafkaScope,
  db: DataSource,
  service: BenchService,
  employers: Employer[],
  rate: number,
  durationSeconds: number,
  { consumerOnly = false }: { consumerOnly?: boolean } = {},
): Promise<PacedRun> {
  const people = employers.flatMap((employer) => employer.people.map((individualId) => ({ employer, individualId })));
  const producer = await scope.producer();
  const producedAt = new Map<string, number>();
  const sagasBefore = await sagaCount(db);
  const watcher = new CommitWatcher(db);
  await watcher.start();
  const tickMs = 10;
  const total = rate * durationSeconds;
  const dbCpu = new DatabaseCpu(db);
  const dbBefore = await dbCpu.snapshot();
  const cpuBefore = service.stats.cpuSeconds();
  const machineBefore = machineTicks();
  const batchesBefore = await batchTotals(service.urls ?? [service.url]);
  const started = Date.now();
  const samples = new ActivitySampler(db, started);
  samples.start();
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
        occurred_at: new Date(eventClock.at(at)).toISOString(),
        connection_id: employer.connectionId,
        entity_id: employer.entityId,
        data: {
          individual_id: individualId,
          benefit_id: employer.benefitId,
          configuration: { employee_deduction: percent(100 + (amount++ % 900)) },
          // Dated ahead, the jobs are not due: the consumer path without the job workers beside it.
          ...(consumerOnly && { effective_date: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10) }),
        },
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
  // The last notifications may still be on their way.
  for (let waited = 0; watcher.seenAt.size < ids.length && waited < 2_000; waited += 20) await sleep(20);
  await watcher.stop();
  samples.stop();
  const completeAt = consumerOnly ? Date.now() : await until(async () => (await progressOf(db)).openJobs === 0, 900_000, 'the paced run jobs');
  const serviceCpu = service.stats.cpuSeconds() - cpuBefore;
  const databaseCpu = DatabaseCpu.between(dbBefore, await dbCpu.snapshot());
  const machine = machineTicks();
  const batches = batchMeans(batchesBefore, await batchTotals(service.urls ?? [service.url]));
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
    service_cpu_ms_per_event: round((serviceCpu * 1000) / total, 2),
    database_cpu_ms_per_event: round((databaseCpu * 1000) / total, 2),
    machine_busy_percent: tickShare(machine.busy - machineBefore.busy, machineBefore, machine),
    batch_means: batches,
    worst_seconds: samples.worstSeconds(producedAt, watcher.seenAt, 5),
  };
}

/**
 * What the server and the machine did during a paced run, sampled every 200 ms: the machine's
 * busy ticks, the background work on the server (BACKGROUND_WORK) with its statement, and the
 * sessions waiting on a lock, by what they wait on.
 */
class ActivitySampler {
  private readonly seen: { at: number; what: string }[] = [];
  private readonly ticks: { at: number; busy: number; total: number }[] = [];
  private timer?: NodeJS.Timeout;
  private reading = false;

  constructor(
    private readonly db: DataSource,
    private readonly started: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), 200);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const at = Date.now() - this.started;
      this.ticks.push({ at, ...machineTicks() });
      const rows: { what: string }[] = await this.db.query(
        `SELECT CASE WHEN backend_type = 'autovacuum worker' THEN 'autovacuum: ' ELSE '' END || left(regexp_replace(query, '\\s+', ' ', 'g'), 80) AS what
         FROM pg_stat_activity
         WHERE state = 'active' AND pid <> pg_backend_pid()
           AND ${BACKGROUND_WORK}
         UNION ALL
         SELECT 'waiting on ' || wait_event_type || ' ' || wait_event || ' (' || count(*) || ')'
         FROM pg_stat_activity
         WHERE state = 'active' AND pid <> pg_backend_pid() AND wait_event_type IN ('Lock', 'LWLock', 'BufferPin')
         GROUP BY wait_event_type, wait_event`,
      );
      for (const row of rows) this.seen.push({ at, what: row.what });
    } catch {
      // A sample missed is a sample missed.
    } finally {
      this.reading = false;
    }
  }

  worstSeconds(producedAt: ReadonlyMap<string, number>, committedAt: ReadonlyMap<string, number>, count: number): SlowSecond[] {
    const bySecond = new Map<number, number[]>();
    for (const [id, at] of producedAt) {
      const seen = committedAt.get(id);
      if (seen === undefined) continue;
      const second = Math.floor((at - this.started) / 1000);
      const latencies = bySecond.get(second);
      if (latencies) latencies.push(seen - at);
      else bySecond.set(second, [seen - at]);
    }
    const busyIn = (from: number, to: number) => {
      const inside = this.ticks.filter((t) => t.at >= from && t.at <= to);
      if (inside.length < 2) return NaN;
      const first = inside[0];
      const last = inside[inside.length - 1];
      return tickShare(last.busy - first.busy, first, last);
    };
    return [...bySecond]
      .map(([second, values]) => {
        const sorted = values.sort((a, b) => a - b);
        return {
          second,
          events: sorted.length,
          p99_committed_ms: round(percentile(sorted, 99)),
          max_committed_ms: round(sorted[sorted.length - 1]),
          machine_busy_percent: busyIn(second * 1000, (second + 1) * 1000 + 200),
          background: [...new Set(this.seen.filter((s) => s.at >= (second - 1) * 1000 && s.at < (second + 3) * 1000).map((s) => s.what))],
        };
      })
      .sort((a, b) => b.max_committed_ms - a.max_committed_ms)
      .slice(0, count);
  }
}

/**
 * The machine's CPU time so far, all CPUs (clock ticks from /proc/stat): busy (this guest's
 * processes and kernel), stolen (the hypervisor ran another tenant while this guest had work),
 * and in all. Guest time is already counted in user time, so it is left out of the total.
 */
function machineTicks(): { busy: number; steal: number; total: number } {
  const [cpu] = readFileSync('/proc/stat', 'utf8').split('\n');
  const [user, nice, system, idle, iowait = 0, irq = 0, softirq = 0, steal = 0] = cpu.trim().split(/\s+/).slice(1).map(Number);
  const busy = user + nice + system + irq + softirq;
  return { busy, steal, total: busy + idle + iowait + steal };
}

/** A share of the machine's ticks between two readings, in percent. */
const tickShare = (part: number, before: { total: number }, after: { total: number }) => round((100 * part) / Math.max(1, after.total - before.total), 1);

/**
 * The raw pipeline: a kafkajs consumer with the service's group settings reading the same
 * topic from the beginning, one `INSERT … ON CONFLICT DO NOTHING` per event (its own
 * transaction), offsets resolved per message and committed as the service does.
 */
export function rawBaseline(scope: KafkaScope, databaseUrl: string, events: number, repetition = 1): Promise<RawRun> {
  return rawPipeline(scope, databaseUrl, events, { topic: scope.physical(HRIS_TOPIC), group: `${scope.prefix}raw-${repetition}`, consumer: `${HRIS_CONSUMER}-${repetition}` });
}

/**
 * The raw pipeline timed as the service's run is: its consumer joined to a topic of its own
 * first, then the same stream produced in the same chunks, timed from the first send to the last
 * insert. The producer shares the machine with the consumer and PostgreSQL here as it does in
 * the service's run; rawBaseline reads a topic already full, with the machine to itself.
 */
export async function rawAsProduced(scope: KafkaScope, databaseUrl: string, employers: Employer[], events: number, repetition = 1): Promise<RawRun> {
  const topic = scope.physical(`${RAW_TOPIC}-${repetition}`);
  await (await scope.admin()).createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: PARTITIONS }] });
  const messages = eventClock.after(throughputStream(employers, events, 2026).messages);
  return rawPipeline(scope, databaseUrl, events, { topic, group: `${scope.prefix}raw-produced-${repetition}`, consumer: `${HRIS_CONSUMER}-as-produced-${repetition}` }, async () =>
    sendInChunks(await scope.producer(), topic, messages),
  );
}

/**
 * A kafkajs consumer with the service's group settings, one `INSERT … ON CONFLICT DO NOTHING` per
 * event in its own transaction, until `events` are in. With `produce`, the clock starts once the
 * consumer has joined, and the stream is produced then; without, it starts before the join and
 * the topic is read from the beginning.
 */
async function rawPipeline(
  scope: KafkaScope,
  databaseUrl: string,
  events: number,
  { topic, group, consumer: consumerName }: { topic: string; group: string; consumer: string },
  produce?: () => Promise<void>,
): Promise<RawRun> {
  const pool = new Pool({ connectionString: databaseUrl, max: PARTITIONS_CONCURRENTLY });
  await pool.query(`CREATE TABLE IF NOT EXISTS ${RAW_INBOX_TABLE} (consumer text NOT NULL, message_id text NOT NULL, topic text NOT NULL, received_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (consumer, message_id))`);
  const consumer = scope.kafka.consumer({ groupId: group, sessionTimeout: 30_000, heartbeatInterval: 3_000, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  let applied = 0;
  let done: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  let cpuBefore = process.cpuUsage();
  const onCluster = scope.brokers === kafkaClusterBrokers();
  let brokerBefore = brokerCpuSeconds(onCluster);
  let machineBefore = machineTicks();
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let started = Date.now();
  await consumer.run({
    autoCommit: true,
    autoCommitInterval: 1_000,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: PARTITIONS_CONCURRENTLY,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      for (const message of batch.messages) {
        if (!isRunning() || isStale()) break;
        const id = (JSON.parse(message.value!.toString()) as { id: string }).id.toLowerCase();
        await pool.query(`INSERT INTO ${RAW_INBOX_TABLE} (consumer, message_id, topic) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [consumerName, id, topic]);
        resolveOffset(message.offset);
        await heartbeat();
        if (++applied === events) done();
      }
    },
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    if (produce) {
      // consumer.run resolves once the group is joined: from here the consumer waits on fetches.
      started = Date.now();
      cpuBefore = process.cpuUsage();
      brokerBefore = brokerCpuSeconds(onCluster);
      machineBefore = machineTicks();
      await produce();
    }
    await Promise.race([
      finished,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`raw baseline: ${applied} of ${events} after the timeout`)), Math.max(600_000, events * 20)))),
    ]);
  } finally {
    clearTimeout(timer);
  }
  const elapsed = seconds(started);
  const cpu = process.cpuUsage(cpuBefore);
  const broker = brokerCpuSeconds(onCluster) - brokerBefore;
  const machine = machineTicks();
  await consumer.disconnect();
  await pool.end();
  return {
    events,
    seconds: round(elapsed, 2),
    events_per_second: Math.round(events / elapsed),
    cpu_seconds: round((cpu.user + cpu.system) / 1e6, 2),
    machine_steal_percent: tickShare(machine.steal - machineBefore.steal, machineBefore, machine),
    ...(Number.isFinite(broker) && { broker_cpu_seconds: round(broker, 2) }),
  };
}

const latencyCells = (l: Latencies) => [l.p50_ms, l.p99_ms, l.max_ms];

/**
 * Tables whose rows carry work in flight and are updated as it moves on (jobs and their queue,
 * sagas and their jobs, enrollment groups, their items and the enrollments they move, the outbox's queue): an update is HOT (no index entry written, the old version pruned
 * on the page) only when it changes no indexed column and the page has room.
 */
const QUEUE_TABLES = ['jobs', 'job_queue', 'sagas', 'saga_jobs', 'enrollment_groups', 'enrollment_items', 'enrollments', 'outbox_pending', 'outbox_lanes'] as const;

/** Each table's row counters over the measured runs, per event, and the HOT share of the queue tables' updates. */
function printTableActivity(tables: Record<string, TableActivity>, events: number): void {
  const perEvent = (n: number) => round(n / events, 3);
  const share = (t: TableActivity) => (t.updated === 0 ? '-' : `${round((100 * t.hot_updated) / t.updated, 1)} %`);
  console.log(`table rows over the measured runs (${events} events), per event; times analyzed and vacuumed over them:`);
  printTable(
    ['table', 'inserted', 'updated', 'HOT', 'HOT share', 'deleted', 'analyzed', 'vacuumed'],
    Object.entries(tables).map(([table, t]) => [
      table,
      perEvent(t.inserted),
      perEvent(t.updated),
      perEvent(t.hot_updated),
      share(t),
      perEvent(t.deleted),
      t.analyzed,
      t.vacuumed,
    ]),
  );
  console.log(`HOT share of queue-table updates (${QUEUE_TABLES.join(', ')}): ${hotShare(tables, QUEUE_TABLES) ?? '-'} %`);
}

/** Statements of the service that are not the consumer path's (the bench's own reads are told apart too). */
export function backgroundKind(query: string): 'relay' | 'worker' | 'bench' | undefined {
  // The relay's lease, reads and deletes of the queue; not the writers' INSERT INTO outbox_pending (the consumer path's own).
  if (/outbox_lanes|FROM outbox_pending/.test(query)) return 'relay';
  // The job workers' lease, renewals, finish and purge (the queue of JobQueue1798300000000, and the columns of jobs before it).
  if (/lease_jobs\(|SET status = 'in_progress', leased_by|leased_until = now\(\)|DELETE FROM job_queue (WHERE job_id|q USING \(SELECT)|DELETE FROM jobs|kind = 'internal' AND (created_at < \$1 AND )?status NOT IN/.test(query)) return 'worker';
  // The table upkeep (where autovacuum is off) is background work too.
  if (/^\s*(VACUUM|ANALYZE)\b|FROM pg_stat_user_tables s JOIN pg_class c|current_setting\('autovacuum'\)|FROM pg_settings WHERE name = ANY/.test(query)) return 'worker';
  if (/pg_stat_|pg_database|current_database\(\)|count\(\*\)(::int AS n)? FROM (inbox_messages|jobs|sagas|outbox_messages|outbox_batches)|^SELECT 1$|pg_snapshot_xmin/i.test(query)) return 'bench';
  return undefined;
}
const TRANSACTION_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|START TRANSACTION|SET TRANSACTION)/i;

/** Instances measured as one: their CPU added; `onReading` sees each instance's share of every reading, and of it its main thread's. */
export const together = (services: BenchService[], onReading?: (eachCpuSeconds: number[], eachMainThreadCpuSeconds: number[]) => void): BenchService => ({
  ...services[0],
  urls: services.map((s) => s.url),
  stats: {
    cpuSeconds: () => {
      const each = services.map((s) => s.stats.cpuSeconds());
      onReading?.(each, services.map((s) => s.stats.mainThreadCpuSeconds()));
      return each.reduce((sum, cpu) => sum + cpu, 0);
    },
    mainThreadCpuSeconds: () => services.reduce((sum, s) => sum + s.stats.mainThreadCpuSeconds(), 0),
    // The first instance's, as for the event loop's busy share.
    mainThreadWaitSeconds: () => services[0].stats.mainThreadWaitSeconds(),
  } as BenchService['stats'],
});

export async function waitForMembers(scope: KafkaScope, count: number, timeoutMs = 120_000): Promise<Map<string, number[]>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const held = await scope.assignments().catch(() => new Map<string, number[]>());
    if (held.size === count && [...held.values()].flat().length === PARTITIONS && [...held.values()].every((p) => p.length > 0)) return held;
    if (Date.now() > deadline) throw new Error(`${count} members holding all ${PARTITIONS} partitions: not within ${timeoutMs / 1000} s (now ${JSON.stringify([...held])})`);
    await new Promise((done) => setTimeout(done, 500));
  }
}

/** The service under test, consuming the scope's topics (KAFKA_BATCH_MAX passed on). */
export function startHrisService(databaseUrl: string, scope: KafkaScope, env: Record<string, string> = {}): Promise<BenchService> {
  return startBenchService(databaseUrl, {
    env: {
      KAFKA_BROKERS: kafkaBrokers(),
      KAFKA_TOPIC_PREFIX: scope.prefix,
      KAFKA_GROUP_ID: scope.groupId,
      KAFKA_TOPIC_PARTITIONS: String(PARTITIONS),
      ...(process.env.KAFKA_BATCH_MAX && { KAFKA_BATCH_MAX: process.env.KAFKA_BATCH_MAX }),
      ...env,
    },
  });
}

/** Sandbox employers of `employees` employees, each with a policy: one on each partition (up to 40 made to find them). */
export function benchEmployers(service: BenchService, scope: KafkaScope, employees = 50): Promise<Employer[]> {
  const auth = { app: basic(BENCH_APPLICATION.clientId, BENCH_APPLICATION.clientSecret), ops: basic('ops', OPS_PASSWORD) };
  return employersCoveringPartitions(service.url, auth, scope.physical(HRIS_TOPIC), { employees, policy: () => true, min: 6, max: 40, onePerPartition: true });
}

/**
 * SQL statements counted by pg_stat_statements, in a PostgreSQL cluster of the benchmark's own
 * with the module loaded and a service on it: first `events` applied end to end (where the
 * database's time goes, the job path included), then `events` more with every job dated ahead
 * (the job workers stay idle): the consumer path's statements per event.
 */
export function statementsRun(events: number): Promise<StatementsRun> {
  return withStatementsBench('hris_stmt', async ({ scope, database, service, employers }) => {
    await database.db.query(`SELECT pg_stat_statements_reset()`);
    await throughputRun(scope, database.db, service(), employers, events, { seed: 2029 });
    const timed: { query: string; calls: string; rows: string; ms: number; plan_ms: number; plans: string; jit_functions: string; jit_ms: number }[] = await database.db.query(
      `SELECT query, calls, rows, total_exec_time AS ms, total_plan_time AS plan_ms, plans, jit_functions,
              jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time AS jit_ms
       FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time DESC`,
    );
    await database.db.query(`SELECT pg_stat_statements_reset()`);
    await throughputRun(scope, database.db, service(), employers, events, { consumerOnly: true, seed: 2028 });
    const rows: { query: string; calls: string; rows: string }[] = await database.db.query(
      `SELECT query, calls, rows FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY calls DESC`,
    );
    let consumer = 0;
    let control = 0;
    let background = 0;
    const top: StatementsRun['top'] = [];
    for (const row of rows) {
      const calls = Number(row.calls);
      const kind = backgroundKind(row.query);
      if (kind === 'bench') continue;
      if (kind !== undefined) {
        background += calls;
        continue;
      }
      consumer += calls;
      if (TRANSACTION_CONTROL.test(row.query)) control += calls;
      top.push({ calls_per_event: round(calls / events, 3), rows_per_call: round(Number(row.rows) / Math.max(1, calls), 1), query: row.query.replace(/\s+/g, ' ').slice(0, 110) });
    }
    const ofService = timed.filter((row) => backgroundKind(row.query) !== 'bench');
    const totalMs = ofService.reduce((sum, row) => sum + row.ms, 0);
    return {
      events,
      consumer_path_per_event: round(consumer / events, 2),
      consumer_path_per_event_without_transaction_control: round((consumer - control) / events, 2),
      background_per_event: round(background / events, 2),
      top: top.slice(0, 25),
      whole_path: {
        exec_ms_per_event: round(totalMs / events, 3),
        // Planning beside execution: a statement planned on every call (a custom plan each time) shows here.
        plan_ms_per_event: round(ofService.reduce((sum, row) => sum + row.plan_ms, 0) / events, 3),
        most_planned: [...ofService]
          .sort((a, b) => b.plan_ms - a.plan_ms)
          .slice(0, 10)
          .map((row) => ({
            plan_ms_per_event: round(row.plan_ms / events, 4),
            plans_per_call: round(Number(row.plans) / Math.max(1, Number(row.calls)), 2),
            calls_per_event: round(Number(row.calls) / events, 3),
            query: row.query.replace(/\s+/g, ' ').slice(0, 110),
          })),
        statements_per_event: round(ofService.reduce((sum, row) => sum + Number(row.calls), 0) / events, 2),
        jit_compiled: ofService
          .filter((row) => Number(row.jit_functions) > 0)
          .sort((a, b) => b.jit_ms - a.jit_ms)
          .map((row) => ({
            calls_per_event: round(Number(row.calls) / events, 4),
            jit_ms_per_event: round(row.jit_ms / events, 4),
            functions_per_call: round(Number(row.jit_functions) / Math.max(1, Number(row.calls)), 1),
            query: row.query.replace(/\s+/g, ' ').slice(0, 110),
          })),
        top: ofService.slice(0, 25).map((row) => ({
          ms_per_event: round(row.ms / events, 4),
          share_percent: round((100 * row.ms) / Math.max(totalMs, 1e-9), 1),
          calls_per_event: round(Number(row.calls) / events, 3),
          rows_per_call: round(Number(row.rows) / Math.max(1, Number(row.calls)), 1),
          query: row.query.replace(/\s+/g, ' ').slice(0, 110),
        })),
      },
    };
  });
}

/** What withStatementsBench hands its work: the service can be replaced by a new process (a cold start). */
export interface StatementsBench {
  scope: KafkaScope;
  database: ScratchDatabase;
  employers: Employer[];
  /** The service running now. */
  service(): BenchService;
  /** Stops the service and starts a new process on the same database and topics. */
  restart(): Promise<void>;
}

/**
 * A service on a scratch database in a PostgreSQL cluster of the benchmark's own with
 * pg_stat_statements loaded (the machine's server is left as it is), its topics and its
 * employers set up; runs `work` with them and takes everything down after.
 */
export async function withStatementsBench<T>(name: string, work: (bench: StatementsBench) => Promise<T>): Promise<T> {
  const cluster = await startStatementsPostgres();
  const scope = new KafkaScope(`bench-${name.replace(/_/g, '-')}`);
  const database = await createScratchDatabase(`bench_${name}`, cluster.url, 2);
  let service: BenchService | undefined;
  try {
    await database.db.query(`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`);
    await scope.createTopics();
    service = await startHrisService(database.url, scope);
    const employers = await benchEmployers(service, scope);
    return await work({
      scope,
      database,
      employers,
      service: () => service!,
      restart: async () => {
        await service!.stop();
        service = undefined;
        service = await startHrisService(database.url, scope);
      },
    });
  } finally {
    await service?.stop();
    await scope.close();
    await database.drop();
    cluster.stop();
  }
}

/** The paced run's latency targets: met only when the run kept (nearly) its rate. */
function pacedTargets(paced: PacedRun, pacedRate: number): TargetCheck[] {
  const pacedOk = paced.achieved_events_per_second >= pacedRate * 0.95;
  return [
    {
      target: `p99 event → saga committed < 500 ms at ${pacedRate} events/s`,
      measured: `p99 ${paced.event_to_saga_committed.p99_ms} ms committed (${paced.event_to_saga.p99_ms} ms to created_at), at ${paced.achieved_events_per_second} events/s`,
      met: paced.event_to_saga_committed.p99_ms < 500 && pacedOk,
    },
    { target: `p99 event → job complete < 1 s at ${pacedRate} events/s`, measured: `p99 ${paced.event_to_job_complete.p99_ms} ms`, met: paced.event_to_job_complete.p99_ms < 1_000 && pacedOk },
  ];
}

export async function measureHrisEvents(options: BenchOptions): Promise<TargetCheck[]> {
  const events = Number(argValue('events') ?? 10_000);
  const volumeEvents = Number(argValue('volume-events') ?? (options.quick ? 0 : 100_000));
  const pacedRate = Number(argValue('paced-rate') ?? 500);
  const pacedSeconds = Number(argValue('paced-seconds') ?? (options.quick ? 20 : 60));
  const consumerOnlyEvents = Number(argValue('consumer-only-events') ?? events);
  const statementsEvents = Number(argValue('statements-events') ?? 5_000);
  const resultName = argValue('result') ?? 'hris-events';
  const warmUpEvents = Number(argValue('warm-up-events') ?? WARM_UP_EVENTS);
  const keepDatabase = process.argv.includes('--keep-database');
  const instanceCount = Math.max(1, Number(argValue('instances') ?? 1));
  const coldStarts = warmUpEvents === 0 ? Math.min(ROUNDS, Math.max(1, Number(argValue('cold-starts') ?? 1))) : 0;
  if (coldStarts > 1 && instanceCount > 1) throw new Error('--cold-starts takes one instance');
  const historyDays = Math.min(6, Math.max(0, Number(argValue('inbox-history-days') ?? 0)));
  const historyKeysPerDay = Number(argValue('inbox-history-keys-per-day') ?? 200_000);
  await ensureKafka();
  const scope = new KafkaScope('bench-hris');
  let stopInstances: (() => Promise<void>) | undefined;
  const database = await createScratchDatabase('bench_hris', undefined, 4);
  let service: BenchService | undefined;
  try {
    const machine = await machineInfo(database.db);
    console.log(`machine: ${describeMachine(machine)}; batch ${process.env.KAFKA_BATCH_MAX ?? 'default'}; ${instanceCount} instance(s)`);
    await scope.createTopics();
    // --instances=N: N services in one consumer group, measured together (their CPU added).
    const instances: BenchService[] = [];
    for (let i = 1; i <= instanceCount; i++) instances.push(await startHrisService(database.url, scope, instanceCount > 1 ? { KAFKA_CLIENT_ID: `instance-${i}` } : {}));
    service = instanceCount > 1 ? together(instances) : instances[0];
    stopInstances = () => Promise.all(instances.map((s) => s.stop())).then(() => undefined);
    // A fresh process for a cold start: the one before leaves the group, the new one takes every partition.
    const restartService = async () => {
      await instances[0].stop();
      instances[0] = await startHrisService(database.url, scope);
      service = instances[0];
      await waitForMembers(scope, 1);
    };
    if (instanceCount > 1) await waitForMembers(scope, instanceCount);
    const employers = await benchEmployers(service, scope);
    const covered = new Set(employers.map((e) => partitionOf(e.connectionId, scope.physical(HRIS_TOPIC)))).size;
    console.log(`${employers.length} employers of 50 employees (every one with a policy), on ${covered} of ${PARTITIONS} partitions`);
    if (historyDays > 0) {
      const started = Date.now();
      await fillInboxHistory(database.db, employers.map((e) => e.connectionId.toLowerCase()), historyDays, historyKeysPerDay);
      console.log(`inbox history: ${historyDays} past days of ${historyKeysPerDay} keys each, made in ${round((Date.now() - started) / 1000, 1)} s`);
    }

    // A service just started runs its first batches cold (JIT, prepared statements, pools): a
    // short stream first, not measured, so the figures are those of a running service.
    // --warm-up-events=0: the first round is the service's first events (a cold start).
    if (warmUpEvents > 0) {
      console.log(`warm-up: ${warmUpEvents} events, not measured ...`);
      await throughputRun(scope, database.db, service, employers, warmUpEvents, { seed: 2025 });
    }
    // The service and the raw pipeline take turns, round by round: on a shared machine whose
    // speed drifts from one minute to the next, each side's median then comes from the same minutes.
    const services: ThroughputRun[] = [];
    const raws: RawRun[] = [];
    const rawsProduced: RawRun[] = [];
    let settled = 0;
    for (let n = 1; n <= ROUNDS; n++) {
      if (n > 1 && n <= coldStarts) await restartService();
      console.log(`round ${n} of ${ROUNDS}: the service${n <= coldStarts ? ' (just started)' : ''} over ${events} events, then the raw pipeline over as many, consumed after and as produced ...`);
      settled += await settle(database.db);
      services.push(await throughputRun(scope, database.db, service, employers, events, { seed: throughputSeed(n), tableStats: true }));
      settled += await settle(database.db);
      raws.push(await rawBaseline(scope, database.url, events, n));
      settled += await settle(database.db);
      rawsProduced.push(await rawAsProduced(scope, database.url, employers, events, n));
    }
    console.log(`(waited ${round(settled / 1000, 1)} s in all for the server's background work to end before each timed run)`);
    const throughput = medianOf(services, (r) => r.end_to_end_events_per_second);
    const raw = medianOf(raws, (r) => r.events_per_second);
    const rawProduced = medianOf(rawsProduced, (r) => r.events_per_second);
    const tables = addTableActivity(services.map((run) => run.table_activity ?? {}));
    // The raw pipeline's rows are counted: dropped, or the service's table upkeep (which keeps
    // every table of the schema) vacuums the bench's table during the paced run.
    await database.db.query(`DROP TABLE IF EXISTS ${RAW_INBOX_TABLE}`);
    // --paced-seconds=0 leaves the paced runs out (and their rows and targets with them).
    let paced: PacedRun | null = null;
    let pacedConsumerOnly: PacedRun | null = null;
    if (pacedSeconds > 0) {
      console.log(`paced: ${pacedRate} events/s for ${pacedSeconds} s ...`);
      await settle(database.db);
      paced = await pacedRun(scope, database.db, service, employers, pacedRate, pacedSeconds);
      console.log(`paced, consumer path alone: ${pacedRate} events/s for ${pacedSeconds} s, their jobs dated 30 days ahead ...`);
      await settle(database.db);
      pacedConsumerOnly = await pacedRun(scope, database.db, service, employers, pacedRate, pacedSeconds, { consumerOnly: true });
    }
    let consumerOnly: ThroughputRun | null = null;
    if (consumerOnlyEvents > 0) {
      console.log(`consumer path alone: ${consumerOnlyEvents} events with their jobs dated 30 days ahead ...`);
      consumerOnly = await throughputRun(scope, database.db, service, employers, consumerOnlyEvents, { consumerOnly: true, seed: 2027 });
    }
    let volume: ThroughputRun | null = null;
    if (volumeEvents > 0) {
      console.log(`volume: ${volumeEvents} more events on the same database ...`);
      volume = await throughputRun(scope, database.db, service, employers, volumeEvents, { seed: 2029 });
    }
    await stopInstances!();
    service = undefined;
    stopInstances = undefined;
    let statements: StatementsRun | null = null;
    if (statementsEvents > 0) {
      console.log(`SQL statements of the consumer path: ${statementsEvents} events on a cluster with pg_stat_statements ...`);
      statements = await statementsRun(statementsEvents);
    }

    const perEvent = (run: ThroughputRun) => `${round((run.service_cpu_seconds * 1000) / run.events, 2)} + ${round((run.database_cpu_seconds * 1000) / run.events, 2)} ms`;
    const pacedPerEvent = (run: PacedRun) => `${run.service_cpu_ms_per_event} + ${run.database_cpu_ms_per_event} ms`;
    printTable(
      ['run', 'events', 'events/s e2e', 'consumed/s', 'consumed s', 'jobs done s', 'CPU/event svc + PG', 'saga p50', 'saga p99', 'saga max', 'job p50', 'job p99', 'job max'],
      [
        ['service, as fast as produced', events, throughput.end_to_end_events_per_second, throughput.consumed_events_per_second, throughput.consumed_seconds, throughput.jobs_complete_seconds, perEvent(throughput), ...latencyCells(throughput.event_to_saga), ...latencyCells(throughput.event_to_job_complete)],
        ...(volume
          ? [['  the same, after all the others', volumeEvents, volume.end_to_end_events_per_second, volume.consumed_events_per_second, volume.consumed_seconds, volume.jobs_complete_seconds, perEvent(volume), ...latencyCells(volume.event_to_saga), ...latencyCells(volume.event_to_job_complete)]]
          : []),
        ...(consumerOnly
          ? [['service, consumer path alone', consumerOnlyEvents, '-', consumerOnly.consumed_events_per_second, consumerOnly.consumed_seconds, '-', perEvent(consumerOnly), ...latencyCells(consumerOnly.event_to_saga), '-', '-', '-']]
          : []),
        ['raw kafkajs + 1 INSERT/event', events, raw.events_per_second, raw.events_per_second, raw.seconds, '-', `${round((raw.cpu_seconds * 1000) / events, 2)} ms`, '-', '-', '-', '-', '-', '-'],
        ['  the same, as fast as produced', events, rawProduced.events_per_second, rawProduced.events_per_second, rawProduced.seconds, '-', `${round((rawProduced.cpu_seconds * 1000) / events, 2)} ms`, '-', '-', '-', '-', '-', '-'],
        ...(paced && pacedConsumerOnly
          ? [
              [`service, paced ${pacedRate}/s`, paced.events, paced.achieved_events_per_second, '-', '-', paced.jobs_complete_seconds, pacedPerEvent(paced), ...latencyCells(paced.event_to_saga), ...latencyCells(paced.event_to_job_complete)],
              ['  (paced: saga committed)', paced.event_to_saga_committed.count, '-', '-', '-', '-', '-', ...latencyCells(paced.event_to_saga_committed), '-', '-', '-'],
              [`paced ${pacedRate}/s, consumer path alone`, pacedConsumerOnly.events, pacedConsumerOnly.achieved_events_per_second, '-', '-', '-', pacedPerEvent(pacedConsumerOnly), ...latencyCells(pacedConsumerOnly.event_to_saga), '-', '-', '-'],
              ['  (its saga committed)', pacedConsumerOnly.event_to_saga_committed.count, '-', '-', '-', '-', '-', ...latencyCells(pacedConsumerOnly.event_to_saga_committed), '-', '-', '-'],
            ]
          : []),
      ],
    );
    printTableActivity(tables, events * ROUNDS);
    const msPerEvent = (seconds: number | undefined) => round(((seconds ?? NaN) * 1000) / events, 3);
    console.log(
      `CPU per event by round (service / PostgreSQL until consumed / PostgreSQL until every job is complete): ` +
        services.map((r) => `${msPerEvent(r.service_cpu_seconds)} / ${msPerEvent(r.database_cpu_seconds)} / ${msPerEvent(r.database_cpu_seconds_end_to_end)} ms`).join('; '),
    );
    console.log(
      `the service's CPU per event by round, on its main thread / on its other threads (V8's optimizing compiler and collector, libuv's pool): ` +
        services.map((r) => `${msPerEvent(r.service_main_thread_cpu_seconds)} / ${msPerEvent(r.service_cpu_seconds - (r.service_main_thread_cpu_seconds ?? NaN))} ms`).join('; '),
    );
    console.log(
      `PostgreSQL CPU per event of the benchmark's own progress counts (left out above), by round: ` +
        services.map((r) => `${msPerEvent(r.benchmark_database_cpu_seconds_end_to_end)} ms`).join('; ') +
        (volume ? `; over the ${volumeEvents} more: ${round(((volume.benchmark_database_cpu_seconds_end_to_end ?? NaN) * 1000) / volumeEvents, 3)} ms` : ''),
    );
    console.log(
      `PostgreSQL backends the service opened within each round (their CPU counted above), by round: ` +
        services.map((r) => `${r.database_backends_started?.count ?? '-'} (${r.database_backends_started?.cpu_seconds ?? '-'} s)`).join('; ') +
        (volume ? `; over the ${volumeEvents} more: ${volume.database_backends_started?.count ?? '-'} (${volume.database_backends_started?.cpu_seconds ?? '-'} s)` : ''),
    );
    console.log(
      `the local brokers' CPU per event by round (service until every job is complete / raw pipeline / raw as produced): ` +
        services.map((r, i) => `${msPerEvent(r.broker_cpu_seconds)} / ${msPerEvent(raws[i].broker_cpu_seconds)} / ${msPerEvent(rawsProduced[i].broker_cpu_seconds)} ms`).join('; '),
    );
    console.log(
      `the machine stolen by the hypervisor, by round (service while consuming / raw pipeline / raw as produced; above a few percent a round was disturbed): ` +
        services.map((r, i) => `${r.machine_steal_percent} / ${raws[i].machine_steal_percent} / ${rawsProduced[i].machine_steal_percent} %`).join('; '),
    );
    console.log(
      `the service's event loop busy / its main thread waiting for a core, while consuming, by round: ` +
        services.map((r) => `${r.service_event_loop_busy_percent ?? '-'} / ${r.service_main_thread_wait_percent ?? '-'} %`).join(', '),
    );
    console.log(`mean events per consumer transaction / messages per relay round, by round: ${services.map((r) => `${r.batch_means?.events_per_transaction ?? '-'} / ${r.batch_means?.messages_per_relay_round ?? '-'}`).join('; ')}`);
    const pacedBatches = (run: PacedRun) => `${run.batch_means?.events_per_transaction ?? '-'} / ${run.batch_means?.messages_per_relay_round ?? '-'}`;
    if (paced && pacedConsumerOnly) console.log(`the same, paced: ${pacedBatches(paced)}; paced, consumer path alone: ${pacedBatches(pacedConsumerOnly)}`);
    if (statements) {
      console.log(
        `SQL statements per event on the consumer path: ${statements.consumer_path_per_event} (${statements.consumer_path_per_event_without_transaction_control} without BEGIN/COMMIT); ` +
          `the relay, job worker polls and upkeep: ${statements.background_per_event} more per event`,
      );
      printTable(['calls/event', 'rows/call', 'statement'], statements.top.slice(0, 15).map((t) => [t.calls_per_event, t.rows_per_call, t.query]));
      const whole = statements.whole_path;
      console.log(`the whole path (jobs complete): ${whole.statements_per_event} statements and ${whole.exec_ms_per_event} ms of PostgreSQL execution per event; most of that time:`);
      printTable(['ms/event', 'share %', 'calls/event', 'rows/call', 'statement'], whole.top.slice(0, 15).map((t) => [t.ms_per_event, t.share_percent, t.calls_per_event, t.rows_per_call, t.query]));
      console.log(`statements PostgreSQL compiled with its JIT on that path: ${whole.jit_compiled.length}`);
      if (whole.jit_compiled.length > 0) {
        printTable(['JIT ms/event', 'calls/event', 'functions/call', 'statement'], whole.jit_compiled.slice(0, 10).map((t) => [t.jit_ms_per_event, t.calls_per_event, t.functions_per_call, t.query]));
      }
    }
    for (const [name, run] of [['paced', paced], ['paced, consumer path alone', pacedConsumerOnly]] as const) {
      if (!run) continue;
      console.log(`the slowest seconds of the run ${name} (by when their events were produced):`);
      printTable(
        ['second', 'events', 'p99 committed', 'max committed', 'machine busy %', 'background work on the server around it'],
        (run.worst_seconds ?? []).map((w) => [w.second, w.events, w.p99_committed_ms, w.max_committed_ms, w.machine_busy_percent, w.background.join('; ') || '-']),
      );
    }
    const coldStartRuns = coldStartsAgainst(services.slice(0, coldStarts), raw.events_per_second);
    if (coldStartRuns) {
      console.log(
        `cold starts (the first round after the employers' set-up over HTTP, the others right after a start): ` +
          coldStartRuns.rounds.map((r) => `${r.end_to_end_events_per_second} events/s = ${r.percent_of_raw_median} % (service ${r.service_cpu_ms_per_event} ms/event)`).join('; ') +
          `; median ${coldStartRuns.median_percent_of_raw_median} % of the raw median ${raw.events_per_second}`,
      );
    }
    // End to end means every provider job complete, not only every event consumed.
    const share = round((throughput.end_to_end_events_per_second / raw.events_per_second) * 100);
    const shareAsProduced = round((throughput.end_to_end_events_per_second / rawProduced.events_per_second) * 100);
    const targets: TargetCheck[] = [
      {
        target: `≥ 1,000 events/s end to end (${events} events)`,
        measured: `${throughput.end_to_end_events_per_second} events/s, the median of ${throughput.repetitions!.join(' / ')} (consumed at ${throughput.consumed_events_per_second})`,
        met: throughput.end_to_end_events_per_second >= 1_000,
      },
      { target: '≥ 50 % of the raw kafkajs + INSERT pipeline', measured: `${share} % (raw ${raw.events_per_second} events/s, the median of ${raw.repetitions!.join(' / ')})`, met: share >= 50 },
      {
        target: '≥ 50 % of the raw pipeline timed alike (both as fast as produced)',
        measured: `${shareAsProduced} % (raw ${rawProduced.events_per_second} events/s, the median of ${rawProduced.repetitions!.join(' / ')})`,
        met: shareAsProduced >= 50,
      },
      ...(volume
        ? [
            {
              target: `${volumeEvents} events: events/s within 20 % of the ${events}-event figure`,
              measured: `${volume.end_to_end_events_per_second} vs ${throughput.end_to_end_events_per_second} events/s end to end; PostgreSQL CPU ${perEvent(volume).split(' + ')[1]} vs ${perEvent(throughput).split(' + ')[1]} per event`,
              met: volume.end_to_end_events_per_second >= throughput.end_to_end_events_per_second * 0.8,
            },
          ]
        : []),
      ...(paced ? pacedTargets(paced, pacedRate) : []),
      ...(statements
        ? [{ target: '≤ 3 SQL statements per event on the consumer path', measured: `${statements.consumer_path_per_event} (transaction control included)`, met: statements.consumer_path_per_event <= 3 }]
        : []),
    ];
    printTargets(targets);
    const result: HrisEventsResult = {
      machine,
      employers: employers.length,
      employees: employers.reduce((n, e) => n + e.people.length, 0),
      partitions_covered: covered,
      batch_max: process.env.KAFKA_BATCH_MAX ?? 'default',
      instances: instanceCount,
      throughput,
      raw_baseline: raw,
      service_vs_raw_percent: share,
      raw_as_produced: rawProduced,
      service_vs_raw_as_produced_percent: shareAsProduced,
      volume,
      paced,
      paced_consumer_only: pacedConsumerOnly,
      consumer_only: consumerOnly,
      statements,
      cold_starts: coldStartRuns,
      // Every round's figures: the machine is shared, and a median round's CPU is one sample.
      rounds: services.map((r, i) => ({
        end_to_end_events_per_second: r.end_to_end_events_per_second,
        service_cpu_ms_per_event: round((r.service_cpu_seconds * 1000) / r.events, 3),
        service_main_thread_cpu_ms_per_event: r.service_main_thread_cpu_seconds === undefined ? null : round((r.service_main_thread_cpu_seconds * 1000) / r.events, 3),
        service_event_loop_busy_percent: r.service_event_loop_busy_percent ?? null,
        service_main_thread_wait_percent: r.service_main_thread_wait_percent ?? null,
        batch_means: r.batch_means ?? null,
        database_cpu_ms_per_event: round((r.database_cpu_seconds * 1000) / r.events, 3),
        database_cpu_ms_per_event_end_to_end: round(((r.database_cpu_seconds_end_to_end ?? NaN) * 1000) / r.events, 3),
        broker_cpu_ms_per_event: round(((r.broker_cpu_seconds ?? NaN) * 1000) / r.events, 3),
        raw_broker_cpu_ms_per_event: round(((raws[i].broker_cpu_seconds ?? NaN) * 1000) / r.events, 3),
        raw_as_produced_broker_cpu_ms_per_event: round(((rawsProduced[i].broker_cpu_seconds ?? NaN) * 1000) / r.events, 3),
        wal_bytes_per_event: Math.round((r.wal?.bytes ?? NaN) / r.events),
        wal_full_page_images_per_event: round((r.wal?.full_page_images ?? NaN) / r.events, 3),
      })),
      table_activity: { events: events * ROUNDS, tables, queue_tables: QUEUE_TABLES, queue_hot_percent: hotShare(tables, QUEUE_TABLES) },
      targets,
    };
    console.log(`written: ${writeResult(resultName, options, result)}`);
    return targets;
  } finally {
    await stopInstances?.();
    await scope.close(rawGroups(scope));
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
