/**
 * What the HRIS-events benchmark and the fault suite share: sandbox employers set up through the
 * API, streams of HRIS events (valid, duplicated, poison) with what they must lead to, producing
 * them to `hris.events`, waiting until the service has applied them, counting the outcome
 * (`events sent / applied / lost / doubled / dead-lettered`) from the inbox, sagas, jobs, dead
 * letters and the provider, and a private PostgreSQL cluster that can be restarted. The HRIS
 * e2e test (test/e2e/hris-kafka.e2e-spec.ts) builds on the same helpers; nothing here depends on
 * jest: `npm run faults` and `npm run bench` run it under plain ts-node.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { Admin, AssignerProtocol, Kafka, logLevel, Message, PartitionMetadata, Partitioners, Producer } from 'kafkajs';
import { Client } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { dataSourceOptions } from '../src/infrastructure/database/data-source';
import { ServiceChild, startHeapFlags, startServiceChild as startChild, ServiceKafka } from './service-child';
import { sendAcknowledged } from '../src/infrastructure/messaging/kafka/acknowledged-send';
// The raw pipeline and the producer run on the same fixed kafkajs request queue as the service
// (see the file): a baseline not slowed by the library's timer loop.
import '../src/infrastructure/messaging/kafka/kafkajs-request-queue-timer';

export type { ServiceChild, ServiceExit } from './service-child';
import { freePort } from './service-child';
export { freePort, tail } from './service-child';

export const HRIS_CONSUMER = 'hris-sagas';
export const HRIS_TOPIC = 'hris.events';
export const HRIS_DLQ_TOPIC = 'hris.events.dlq';
export const PARTITIONS = 6;

/** How long a new topic may take to have a leader for every partition. */
const TOPIC_LEADERS_MS = 30_000;
const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }] };
export const POLICY_AMOUNT = 300;
const ENROLLMENT_JOB_TYPES = ['benefit_enroll', 'benefit_unenroll', 'benefit_enrollment_group'];
const DAY_MS = 86_400_000;

export const percent = (amount: number) => ({ type: 'percent', amount });
export const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'service-api-version': '2020-09-17' });
export const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const dateOf = (time: number) => new Date(time).toISOString().slice(0, 10);
export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Deterministic randomness, so a stream can be produced again. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

// --- HTTP -----------------------------------------------------------------------------------

/** JSON over HTTP; throws with the answer when the status is not one of `expected`. */
export async function api<T = any>( // eslint-disable-line @typescript-eslint/no-explicit-any
  baseUrl: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
  expected: number[] = [200],
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { ...(init.body !== undefined && { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  if (!expected.includes(response.status)) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Retries `work` while it throws, up to `attempts` times (provider fault drills fail reads too). */
async function withRetries<T>(work: () => Promise<T>, attempts = 20, delayMs = 200): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts) throw error;
      await sleep(delayMs);
    }
  }
}

// --- service processes ------------------------------------------------------------------------

/** The ops credentials every service process here is started with. */
export const OPS_CREDENTIALS = { username: 'ops', password: 'ops-password-for-drills' } as const;

export interface ServiceChildOptions {
  name: string;
  databaseUrl: string;
  /** A pooler in front of the database's server for the pool (bench/database-pooler.ts); default as the run has it. */
  poolerUrl?: string;
  kafka: ServiceKafka;
  /** More settings; they win over the defaults here. */
  env?: Record<string, string>;
  /** Default 120 s. */
  readyTimeoutMs?: number;
}

/**
 * The service as a child process on loopback (bench/service-child.ts), resolved once
 * /health/ready answers 200 (its Kafka consumer has joined the group), with the drill settings:
 * the ops credentials above, a pool of 6, LOG_LEVEL from FAULTS_LOG_LEVEL (default warn), and
 * the V8 heap flags `npm start` runs with.
 */
export function startServiceChild(options: ServiceChildOptions): Promise<ServiceChild> {
  // The heap `npm start` gives (a drill must find what a deployment's heap would not hold);
  // BENCH_SERVICE_NODE_OPTIONS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/profiles`) adds to it.
  const nodeOptions = [...startHeapFlags(), ...(process.env.BENCH_SERVICE_NODE_OPTIONS ?? '').split(' ').filter(Boolean)];
  return startChild({
    nodeOptions,
    ...options,
    kafka: { partitions: PARTITIONS, ...options.kafka },
    env: {
      DATABASE_POOL_SIZE: '6',
      OPS_USERNAME: OPS_CREDENTIALS.username,
      OPS_PASSWORD: OPS_CREDENTIALS.password,
      LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'warn',
      ...options.env,
    },
  });
}

// --- employers --------------------------------------------------------------------------------

export interface Employer {
  token: string;
  connectionId: string;
  entityId: string;
  benefitId: string;
  /** Directory ids, sorted. */
  people: string[];
  policy: boolean;
}

export interface ServiceAuth {
  /** Basic header of the application the service was started with. */
  app: Record<string, string>;
  /** Basic header of the ops credentials. */
  ops: Record<string, string>;
}

/** A sandbox employer with a 401(k) (created at the provider), and a 3 % new-hire policy (30 days' wait) when asked. */
export async function createEmployer(
  baseUrl: string,
  auth: ServiceAuth,
  { employees, policy }: { employees: number; policy: boolean },
): Promise<Employer> {
  const { body: connection } = await api(baseUrl, '/sandbox/connections', {
    headers: auth.app,
    body: { provider_id: 'sandbox_automated', employee_size: employees },
  });
  const { access_token: token, connection_id: connectionId, entity_id: entityId } = connection;
  const { body: directory } = await api(baseUrl, '/employer/directory?limit=10000', { headers: bearer(token) });
  const people: string[] = directory.individuals.map((i: { id: string }) => i.id).sort();
  const { body: created } = await api(baseUrl, '/employer/benefits', {
    headers: bearer(token),
    body: { type: '401k', description: '401(k)', frequency: 'every_paycheck', company_contribution: MATCH },
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { body: job } = await api(baseUrl, `/jobs/automated/${created.job_id}`, { headers: bearer(token) });
    if (job.status === 'complete') break;
    if (job.status !== 'pending' && job.status !== 'in_progress') throw new Error(`benefit creation job ended ${job.status}`);
    if (Date.now() > deadline) throw new Error(`benefit creation job still ${job.status} after 60 s`);
    await sleep(50);
  }
  if (policy) {
    await api(baseUrl, '/ops/api/policies', {
      headers: auth.ops,
      body: {
        connection_id: connectionId,
        entity_id: entityId,
        benefit_id: created.benefit_id,
        configuration: { employee_deduction: percent(POLICY_AMOUNT) },
        waiting_period_days: 30,
      },
    });
  }
  return { token, connectionId, entityId, benefitId: created.benefit_id, people, policy };
}

/**
 * Employers until their connection ids (the partition keys) cover `partitions` partitions of the
 * topic, or `max` employers: a stream over them keeps every partition of the group busy.
 * `onePerPartition`: only the first employer of each partition is returned (the others stay in
 * the service, unused), so every run streams over as many employers, people and partitions,
 * not 7 to 12 employers on 3 to 6 partitions as random keys fall.
 */
export async function employersCoveringPartitions(
  baseUrl: string,
  auth: ServiceAuth,
  topic: string,
  options: { employees: number; policy: (index: number) => boolean; min: number; max: number; partitions?: number; onePerPartition?: boolean },
): Promise<Employer[]> {
  const wanted = Math.min(options.partitions ?? PARTITIONS, PARTITIONS);
  const employers = await Promise.all(
    Array.from({ length: options.min }, (_, i) => createEmployer(baseUrl, auth, { employees: options.employees, policy: options.policy(i) })),
  );
  // The first employer made on each partition, kept as they are made.
  const firstOf = new Map<number, Employer>();
  const note = (employer: Employer) => {
    const partition = partitionOf(employer.connectionId, topic);
    if (!firstOf.has(partition)) firstOf.set(partition, employer);
  };
  employers.forEach(note);
  while (firstOf.size < wanted && employers.length < options.max) {
    const employer = await createEmployer(baseUrl, auth, { employees: options.employees, policy: options.policy(employers.length) });
    employers.push(employer);
    note(employer);
  }
  return options.onePerPartition ? [...firstOf.values()] : employers;
}

/** The partition a key goes to (the producer's default partitioner). */
export function partitionOf(key: string, topic: string): number {
  const partitionMetadata = Array.from({ length: PARTITIONS }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));
  return Partitioners.DefaultPartitioner()({ topic, partitionMetadata, message: { key, value: null } });
}

// --- streams ----------------------------------------------------------------------------------

export interface Outgoing {
  key: string;
  value: string;
  headers: Record<string, string>;
}

export interface ValidEvent {
  id: string;
  type: string;
  /** Enrollment jobs its saga must start: more is a doubled job, fewer a lost one. */
  jobs: number;
}

export interface PoisonEvent {
  id: string;
  reason: string;
  message: Outgoing;
}

/** What one (benefit, individual) must end as, at the service and at the provider. */
export interface ExpectedEnrollment {
  benefitId: string;
  individualId: string;
  /** The `enrollments` row's status, or null for no row. */
  status: 'enrolled' | 'unenrolled' | null;
  /** The employee deduction in force at the provider today, or null when not enrolled. */
  amount: number | null;
}

export interface StreamPlan {
  messages: Outgoing[];
  valid: ValidEvent[];
  poison: PoisonEvent[];
  duplicates: number;
  expected: ExpectedEnrollment[];
}

export interface PlanOptions {
  /** Individuals per employer that get events (taken from `firstPerson` on). */
  perEmployer: number;
  firstPerson?: number;
  /** Distinct valid events in all: a hire each, a termination for some, contribution changes for the rest. */
  valid: number;
  duplicates: number;
  poison: number;
  terminatedShare: number;
  seed: number;
  /**
   * Seconds between one person's consecutive events. Default: spread, so that each person's
   * events fit between two hours ago and now.
   */
  secondsApart?: number;
}

/**
 * A stream of HRIS events over the employers' people, and what it must lead to. Each person is
 * hired (enrolled by the policy where the employer has one), then changes contribution a few
 * times with increasing `occurred_at` (the last one stays), and is sometimes terminated (every
 * enrollment ends). People are interleaved at random, each in order. Duplicates (the same id
 * again, some with other transport headers or the id in capitals) follow their original on its
 * partition; poison of five kinds is spread over the stream.
 */
export function planStream(employers: Employer[], options: PlanOptions): StreamPlan {
  const rand = seededRandom(options.seed);
  const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)];
  const now = Date.now();
  const today = dateOf(now);
  const t0 = now - 2 * 3_600_000;

  const first = options.firstPerson ?? 0;
  const people = employers.flatMap((employer) => employer.people.slice(first, first + options.perEmployer).map((individualId) => ({ employer, individualId })));
  if (people.length < employers.length * options.perEmployer) throw new Error('not enough people in the employers for this stream');
  const terminated = new Set(people.filter(() => rand() < options.terminatedShare));
  const changes = new Map(people.map((p) => [p, 0]));
  const changeCount = options.valid - people.length - terminated.size;
  if (changeCount < 0) throw new Error('valid is smaller than the hires and terminations');
  for (let i = 0; i < changeCount; i++) {
    const p = pick(people);
    changes.set(p, changes.get(p)! + 1);
  }

  const valid: ValidEvent[] = [];
  const expected: ExpectedEnrollment[] = [];
  const queues: Outgoing[][] = [];
  let amountSeq = 0;
  for (const person of people) {
    const { employer, individualId } = person;
    const count = changes.get(person)!;
    // Seconds between one person's events: all of them fit between t0 and now.
    const step = options.secondsApart ?? Math.max(1, Math.floor((now - t0) / 1_000 / (count + 2)));
    const envelope = (type: string, seq: number, data: Record<string, unknown>) => ({
      id: randomUUID(),
      type,
      version: 1,
      occurred_at: new Date(t0 + seq * step * 1_000).toISOString(),
      connection_id: employer.connectionId,
      entity_id: employer.entityId,
      data,
    });
    const queue: Outgoing[] = [];
    const push = (event: ReturnType<typeof envelope>, jobs: number) => {
      valid.push({ id: event.id, type: event.type, jobs });
      // Some publishers send their own transport headers with the original.
      const headers: Record<string, string> = rand() < 0.3 ? { 'message-id': event.id, 'message-type': event.type } : {};
      queue.push({ key: employer.connectionId, value: JSON.stringify(event), headers });
    };
    // Eligible 10 days ago: enrolled from today.
    push(envelope('EmployeeHired', 0, { individual_id: individualId, start_date: dateOf(now - 40 * DAY_MS) }), employer.policy ? 1 : 0);
    let amount: number | null = employer.policy ? POLICY_AMOUNT : null;
    for (let n = 1; n <= count; n++) {
      amount = 100 + (amountSeq++ % 900);
      const configuration: Record<string, unknown> = { employee_deduction: percent(amount) };
      const data: Record<string, unknown> = { individual_id: individualId, benefit_id: employer.benefitId, configuration };
      // The effective date in either place, or none; a past one means today.
      const where = rand();
      if (where < 0.2) data.effective_date = today;
      else if (where < 0.4) configuration.effective_date = dateOf(now - DAY_MS);
      push(envelope('ContributionChanged', n, data), 1);
    }
    const enrolling = amount !== null;
    if (terminated.has(person)) {
      const endDate = rand() < 0.5 ? today : dateOf(now - 3 * DAY_MS);
      push(envelope('EmployeeTerminated', count + 1, { individual_id: individualId, end_date: endDate }), enrolling ? 1 : 0);
      expected.push({ benefitId: employer.benefitId, individualId, status: enrolling ? 'unenrolled' : null, amount: null });
    } else {
      expected.push({ benefitId: employer.benefitId, individualId, status: enrolling ? 'enrolled' : null, amount });
    }
    queues.push(queue);
  }

  // Interleave people at random, each one's events in order.
  const messages: Outgoing[] = [];
  const pending = queues.filter((q) => q.length > 0);
  while (pending.length > 0) {
    const index = Math.floor(rand() * pending.length);
    messages.push(pending[index].shift()!);
    if (pending[index].length === 0) pending.splice(index, 1);
  }

  const poison = Array.from({ length: options.poison }, (_, i) => poisonEvent(i, pick(employers), pick, now));
  for (const p of poison) messages.splice(Math.floor(rand() * (messages.length + 1)), 0, p.message);

  // Duplicates: mostly of valid events, a few of poison (a dead letter is written once).
  const poisonCopies = Math.min(poison.length, Math.ceil(options.duplicates * 0.03));
  const chosen = new Set<Outgoing>(poison.slice(0, poisonCopies).map((p) => p.message));
  const poisonMessages = new Set(poison.map((p) => p.message));
  const validMessages = messages.filter((m) => !poisonMessages.has(m));
  if (options.duplicates > validMessages.length + poisonCopies) throw new Error('more duplicates than messages');
  while (chosen.size < options.duplicates) chosen.add(pick(validMessages));
  const copies = new Map<Outgoing, Outgoing[]>();
  let variant = 0;
  for (const original of chosen) copies.set(original, [duplicateOf(original, variant++)]);
  return { messages: withCopies(messages, copies, rand), valid, poison, duplicates: chosen.size, expected };
}

/**
 * The stream with every message delivered `times` times in all: the copies follow their
 * original, spread at random over the rest of the stream (the order of a key's originals holds).
 */
export function deliveredTimes(plan: StreamPlan, times: number, seed: number): StreamPlan {
  const rand = seededRandom(seed);
  const copies = new Map<Outgoing, Outgoing[]>();
  let variant = 0;
  for (const message of plan.messages) copies.set(message, Array.from({ length: times - 1 }, () => duplicateOf(message, variant++)));
  return { ...plan, messages: withCopies(plan.messages, copies, rand), duplicates: plan.messages.length * (times - 1) };
}

/** Each message, then its copies at random later places. */
function withCopies(messages: Outgoing[], copies: Map<Outgoing, Outgoing[]>, rand: () => number): Outgoing[] {
  // Each copy gets a random slot after its original; sorting by slot keeps originals in order.
  const slotted: { slot: number; message: Outgoing }[] = [];
  messages.forEach((message, index) => {
    slotted.push({ slot: index, message });
    for (const copy of copies.get(message) ?? []) slotted.push({ slot: index + 0.5 + rand() * (messages.length - index), message: copy });
  });
  return slotted.sort((a, b) => a.slot - b.slot).map((s) => s.message);
}

/** A redelivery: the same body (the envelope id decides), with other transport headers or the id in capitals. */
function duplicateOf(original: Outgoing, variant: number): Outgoing {
  const copy: Outgoing = { ...original, headers: { ...original.headers } };
  const body = safeParse(original.value);
  switch (variant % 4) {
    case 1:
      if (body) copy.headers['message-id'] = randomUUID();
      copy.headers['x-redelivery'] = 'true';
      break;
    case 2:
      copy.headers = { traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` };
      if (!body) copy.headers['message-id'] = original.headers['message-id'];
      break;
    case 3:
      if (body && typeof body.id === 'string') copy.value = JSON.stringify({ ...body, id: body.id.toUpperCase() });
      break;
  }
  return copy;
}

function safeParse(value: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** Poison of five kinds, in turn: bad JSON, an unknown type, version 9, invalid dates, an unknown connection. */
function poisonEvent(i: number, employer: Employer, pick: <T>(items: T[]) => T, now: number): PoisonEvent {
  const id = randomUUID();
  const individualId = pick(employer.people);
  const base = {
    id,
    type: 'EmployeeHired',
    version: 1,
    occurred_at: new Date(now).toISOString(),
    connection_id: employer.connectionId,
    entity_id: employer.entityId,
    data: { individual_id: individualId, start_date: dateOf(now) } as Record<string, unknown>,
  };
  const event = (value: unknown, reason: string, key = employer.connectionId): PoisonEvent => ({
    id,
    reason,
    message: { key, value: JSON.stringify(value), headers: {} },
  });
  switch (i % 5) {
    case 0:
      return {
        id,
        reason: 'body is not valid JSON',
        message: { key: employer.connectionId, value: JSON.stringify(base).slice(0, 60), headers: { 'message-id': id } },
      };
    case 1:
      return event({ ...base, type: 'EmployeePromoted' }, 'Unknown HRIS event type "EmployeePromoted"');
    case 2:
      return event({ ...base, version: 9 }, 'Unsupported version 9 of EmployeeHired');
    case 3: {
      const kinds = [
        () => event({ ...base, data: { ...base.data, start_date: '2026-02-30' } }, 'data.start_date:'),
        () => event({ ...base, occurred_at: '2026-13-01T00:00:00Z' }, 'occurred_at:'),
        () => event({ ...base, type: 'EmployeeTerminated', data: { individual_id: individualId, end_date: '31/12/2026' } }, 'data.end_date:'),
        () =>
          event(
            {
              ...base,
              type: 'ContributionChanged',
              data: { individual_id: individualId, benefit_id: employer.benefitId, configuration: { employee_deduction: percent(200) }, effective_date: 'next tuesday' },
            },
            'data.effective_date:',
          ),
      ];
      return kinds[Math.floor(i / 5) % kinds.length]();
    }
    default: {
      const connectionId = randomUUID();
      return event({ ...base, connection_id: connectionId }, `Unknown connection ${connectionId}`, connectionId);
    }
  }
}

// --- Kafka ------------------------------------------------------------------------------------

export function kafkaBrokers(): string {
  return process.env.TEST_KAFKA_BROKERS || process.env.KAFKA_BROKERS || '127.0.0.1:9092';
}

/**
 * The broker must answer; the local default one is started when it does not (as `npm test`
 * does: `scripts/kafka/run up`, idempotent), so the benchmark and the fault suite run from a
 * fresh clone. Any other broker list is the caller's to run.
 */
/** The local three-broker cluster (`scripts/kafka/run up --brokers 3`), or KAFKA_CLUSTER_BROKERS. */
export function kafkaClusterBrokers(): string {
  return process.env.KAFKA_CLUSTER_BROKERS || '127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094';
}

/**
 * CPU seconds used so far by the local brokers that scripts/kafka/run started (its pid files):
 * the single broker's, or the three-broker cluster's nodes added. NaN when none is found (a
 * broker list of the caller's own), so a figure is never made up.
 */
export function brokerCpuSeconds(cluster: boolean): number {
  const home = process.env.KAFKA_HOME_DIR || join(homedir(), '.cache', 'benefits-kafka');
  const files = cluster ? [1, 2, 3].map((n) => join(home, 'cluster3', `node-${n}`, 'kafka.pid')) : [join(home, 'kafka.pid')];
  const ticks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  let total = 0;
  let found = 0;
  for (const file of files) {
    try {
      const pid = readFileSync(file, 'utf8').trim();
      // utime and stime: fields 14 and 15 of /proc/<pid>/stat, counted after the command's closing parenthesis.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / ticks;
      found++;
    } catch {
      // not running, or not ours
    }
  }
  return found === 0 ? NaN : total;
}

/** Whether every node of the three-broker cluster answers. */
export async function clusterAnswers(): Promise<boolean> {
  const nodes = kafkaClusterBrokers().split(',').map((b) => b.split(':'));
  return (await Promise.all(nodes.map(([host, port]) => answers(host, Number(port))))).every(Boolean);
}

/** Starts the local three-broker cluster when not all of its nodes answer; every node must then answer. */
export async function ensureKafkaCluster(): Promise<void> {
  if (await clusterAnswers()) return;
  console.log('the three-broker Kafka cluster is not running; starting it (scripts/kafka/run up --brokers 3) ...');
  const started = spawnSync('bash', [resolve(__dirname, '../scripts/kafka/run'), 'up', '--brokers', '3'], { stdio: 'inherit' });
  // Ready by the script's own check; on a busy machine a node's listener may answer a little later.
  const deadline = Date.now() + 30_000;
  while (started.status === 0 && !(await clusterAnswers()) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 500));
  if (started.status !== 0 || !(await clusterAnswers())) throw new Error(`could not start the three-broker Kafka cluster at ${kafkaClusterBrokers()}`);
}

/** Signals one node of the local cluster (KILL, TERM, STOP, CONT) or starts it again and waits until it serves. */
export function kafkaNode(command: 'stop-node' | 'start-node', node: number, signal?: 'KILL' | 'TERM' | 'STOP' | 'CONT'): void {
  const args = [resolve(__dirname, '../scripts/kafka/run'), command, String(node), ...(signal ? ['--signal', signal] : [])];
  const run = spawnSync('bash', args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`scripts/kafka/run ${args.slice(1).join(' ')} failed (${run.status}): ${run.stderr || run.stdout}`);
}

export async function ensureKafka(): Promise<void> {
  const brokers = kafkaBrokers();
  const [host, port] = brokers.split(',')[0].split(':');
  if (await answers(host, Number(port))) return;
  if (brokers !== '127.0.0.1:9092' && brokers !== 'localhost:9092') throw new Error(`Kafka is not reachable at ${brokers}`);
  console.log('Kafka is not running; starting the local broker (scripts/kafka/run up) ...');
  const up = spawnSync('bash', [resolve(__dirname, '../scripts/kafka/run'), 'up'], { stdio: 'inherit' });
  if (up.status !== 0 || !(await answers(host, Number(port)))) throw new Error(`could not start the local Kafka broker at ${brokers}`);
}

function answers(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(1_500, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** A topic prefix and consumer group of their own, on the shared broker. */
export class KafkaScope {
  readonly prefix: string;
  readonly groupId: string;
  readonly kafka: Kafka;
  private producerConnection?: Promise<Producer>;
  private adminConnection?: Promise<Admin>;

  constructor(
    label: string,
    readonly brokers: string = kafkaBrokers(),
  ) {
    this.prefix = `${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}.`;
    this.groupId = `${this.prefix}group`;
    // Retries that outlast a broker's failover (a killed leader is fenced after ~9 s), as the service's own do.
    this.kafka = new Kafka({
      clientId: `${label}-${randomBytes(3).toString('hex')}`,
      brokers: brokers.split(','),
      retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 10_000 },
      // As the service's client: a paused broker holds a request 5 s, and the retry reads fresh metadata.
      requestTimeout: 5_000,
      logLevel: logLevel.NOTHING,
    });
  }

  physical(topic: string): string {
    return `${this.prefix}${topic}`;
  }

  producer(): Promise<Producer> {
    this.producerConnection ??= (async () => {
      const producer = this.kafka.producer({ allowAutoTopicCreation: false, metadataMaxAge: 5_000 });
      await producer.connect();
      return producer;
    })();
    return this.producerConnection;
  }

  private readonly partitions = new Map<string, Promise<PartitionMetadata[]>>();

  /** A topic's partitions (this scope's topics keep theirs for its life). */
  partitionsOf(topic: string): Promise<PartitionMetadata[]> {
    let partitions = this.partitions.get(topic);
    if (!partitions) {
      partitions = this.admin().then(async (admin) => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions ?? []);
      partitions.catch(() => this.partitions.delete(topic));
      this.partitions.set(topic, partitions);
    }
    return partitions;
  }

  admin(): Promise<Admin> {
    this.adminConnection ??= (async () => {
      const admin = this.kafka.admin();
      await admin.connect();
      return admin;
    })();
    return this.adminConnection;
  }

  /** Which partitions of the HRIS topic each member of this scope's group holds, by client id. */
  async assignments(): Promise<Map<string, number[]>> {
    const admin = await this.admin();
    const { groups } = await admin.describeGroups([this.groupId]);
    const topic = this.physical(HRIS_TOPIC);
    return new Map(
      (groups[0]?.members ?? []).map((m) => {
        const decoded = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
        return [m.clientId, [...(decoded?.assignment[topic] ?? [])].sort((a, b) => a - b)];
      }),
    );
  }

  /**
   * The HRIS topic with PARTITIONS partitions (the service would create it the same way), once
   * every partition has a leader. kafkajs's own wait for leaders (`waitForLeaders`) gives up on the
   * first UNKNOWN_TOPIC_OR_PARTITION, which a cluster started a moment before answers while its
   * brokers learn of the new topic (seen failing `scale-out.ts` when it started the cluster
   * itself): the metadata is read again here every 200 ms until it shows them, for up to TOPIC_LEADERS_MS.
   */
  async createTopics(): Promise<void> {
    const admin = await this.admin();
    const topics = [HRIS_TOPIC, HRIS_DLQ_TOPIC].map((t) => this.physical(t));
    await admin.createTopics({ waitForLeaders: false, topics: topics.map((topic) => ({ topic, numPartitions: PARTITIONS })) });
    await withRetries(async () => {
      const metadata = await admin.fetchTopicMetadata({ topics });
      const led = topics.every((topic) => {
        const partitions = metadata.topics.find((t) => t.name === topic)?.partitions ?? [];
        return partitions.length === PARTITIONS && partitions.every((p) => p.leader >= 0);
      });
      if (!led) throw new Error(`the topics ${topics.join(', ')} have no leader for every partition after ${TOPIC_LEADERS_MS} ms`);
    }, TOPIC_LEADERS_MS / 200);
  }

  /**
   * Produces in order, `chunk` at a time: one key's messages keep their order on its partition.
   * A chunk whose send fails (a leader gone or paused longer than the client's retries) is sent
   * again, up to five times: what reached the log twice is a redelivery, which the stream allows.
   * Sent as the service's relay sends (acknowledged-send.ts), by a producer that is not
   * idempotent: a chunk counts as produced only once a broker answered for each of its partitions,
   * as kafkajs's own resolution can leave a partition unwritten when its leader moves mid-send.
   */
  async produce(messages: Outgoing[], chunk = 500): Promise<void> {
    const producer = await this.producer();
    for (let at = 0; at < messages.length; at += chunk) {
      for (let attempt = 1; ; attempt++) {
        try {
          await sendAcknowledged(producer, (topic) => this.partitionsOf(topic), [{ topic: this.physical(HRIS_TOPIC), messages: messages.slice(at, at + chunk) as Message[] }]);
          break;
        } catch (error) {
          if (attempt >= 5) throw error;
          await sleep(1_000 * attempt);
        }
      }
    }
  }

  /** Deletes this scope's topics and groups and disconnects. */
  async close(groups: string[] = []): Promise<void> {
    const admin = await this.adminConnection?.catch(() => undefined);
    if (admin) {
      const topics = (await admin.listTopics().catch(() => [] as string[])).filter((t) => t.startsWith(this.prefix));
      if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => undefined);
      await admin.deleteGroups([this.groupId, ...groups]).catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
    }
    const producer = await this.producerConnection?.catch(() => undefined);
    await producer?.disconnect().catch(() => undefined);
  }
}

// --- databases --------------------------------------------------------------------------------

export function postgresServerUrl(): string {
  return process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
}

export interface ScratchDatabase {
  name: string;
  url: string;
  /** A migrated connection to it, for counting. */
  db: DataSource;
  drop(): Promise<void>;
}

/** The application_name of a scratch database's own connection (`db`): its backends are the benchmark's, not the service's. */
export const BENCHMARK_BACKENDS = 'benchmark';

/** A fresh, migrated database on `server` (dropped by `drop`). */
export async function createScratchDatabase(prefix: string, server = postgresServerUrl(), poolSize = 3): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await withServer(server, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(server);
  url.pathname = `/${name}`;
  const options = dataSourceOptions({ url: url.toString(), poolSize });
  // Quiet: a drill that restarts the server makes queries fail on purpose, and they are retried.
  const db = new DataSource({ ...options, extra: { ...(options as { extra?: object }).extra, application_name: BENCHMARK_BACKENDS }, logging: false } as DataSourceOptions);
  await db.initialize();
  return {
    name,
    url: url.toString(),
    db,
    drop: async () => {
      if (db.isInitialized) await db.destroy().catch(() => undefined);
      await withServer(server, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => undefined);
    },
  };
}

async function withServer<T>(server: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: server });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface PrivatePostgres {
  /** Admin URL, e.g. postgres://postgres@127.0.0.1:55432/postgres */
  url: string;
  port: number;
  /** `fast` ends sessions cleanly; `immediate` is a crash (recovery on start). */
  restart(mode: 'fast' | 'immediate'): void;
  stop(): void;
}

/** The PostgreSQL server programs (initdb, pg_ctl): `pg_config --bindir`, else the newest under /usr/lib/postgresql. */
function postgresBinDir(): string {
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    if (existsSync(join(dir, 'pg_ctl'))) return dir;
  } catch {
    // no pg_config on PATH
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('PostgreSQL server programs (initdb, pg_ctl) not found: install them or put pg_config on PATH');
  return join(root, versions[0], 'bin');
}

/**
 * A PostgreSQL cluster of its own with pg_stat_statements loaded (top-level statements, their
 * planning too), on a free port: statement counts and times without touching the machine's server.
 */
export async function startStatementsPostgres(): Promise<PrivatePostgres> {
  return startPrivatePostgres(await freePort(), [
    'shared_preload_libraries=pg_stat_statements',
    'pg_stat_statements.track=top',
    'pg_stat_statements.track_utility=on',
    'pg_stat_statements.track_planning=on',
    'pg_stat_statements.max=10000',
  ]);
}

/**
 * A PostgreSQL cluster of its own (initdb into a temporary folder, loopback only, trust auth)
 * that a fault drill may restart without touching the machine's shared server. PostgreSQL
 * refuses to run as root: as root, the programs run as the `postgres` user (runuser).
 */
export async function startPrivatePostgres(port: number, settings: string[] = []): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'hris-faults-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const ids = execFileSync('id', ['-u', 'postgres']).toString().trim();
    const gid = execFileSync('id', ['-g', 'postgres']).toString().trim();
    chownSync(dir, Number(ids), Number(gid));
    chmodSync(dir, 0o700);
  }
  const run = (program: string, args: string[]) => {
    const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, program), ...args]] : [join(bin, program), args];
    const result = spawnSync(command, argv, { stdio: 'pipe', timeout: 120_000 });
    if (result.status !== 0) throw new Error(`${program} ${args.join(' ')} failed (${result.status}): ${result.stderr?.toString()}${result.stdout?.toString()}`);
  };
  const data = join(dir, 'data');
  const options = [`-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100 -c fsync=on -c shared_buffers=64MB`, ...settings.map((s) => `-c ${s}`)].join(' ');
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const ctl = (args: string[]) => run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', options, ...args]);
  ctl(['start']);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  process.once('exit', () => {
    try {
      stop();
    } catch {
      // best effort when the process is going anyway
    }
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    restart: (mode) => ctl(['-m', mode, 'restart']),
    stop,
  };
}

// --- outcomes ---------------------------------------------------------------------------------

export const inboxCount = async (db: DataSource): Promise<number> =>
  (await db.query(`SELECT count(*)::int AS n FROM inbox_messages WHERE consumer = $1`, [HRIS_CONSUMER]))[0].n;

export interface Progress {
  inbox: number;
  openJobs: number;
  unpublished: number;
}

export async function progressOf(db: DataSource): Promise<Progress> {
  const [state] = await db.query(
    `SELECT (SELECT count(*) FROM inbox_messages WHERE consumer = $1)::int AS inbox,
            (SELECT count(*) FROM jobs WHERE type = ANY($2::text[]) AND status IN ('pending', 'in_progress'))::int AS open_jobs,
            (SELECT count(*) FROM outbox_pending)::int AS unpublished`,
    [HRIS_CONSUMER, ENROLLMENT_JOB_TYPES],
  );
  return { inbox: state.inbox, openJobs: state.open_jobs, unpublished: state.unpublished };
}

/**
 * The enrollment jobs still open, each with its queue row (due time, lease, the job it runs
 * after) and, for a group's job, its group's state: what a settle that timed out was waiting for.
 */
export async function openJobsReport(db: DataSource, limit = 10): Promise<string> {
  const rows: Record<string, unknown>[] = await db.query(
    `SELECT j.id, j.type, j.status, j.attempts, j.result, j.created_at, j.started_at,
            q.scheduled_at AS due, q.leased_by, q.leased_until, q.after_job_id, a.status AS after_status,
            g.state AS group_state, g.effective_date AS group_date, g.waiting, g.succeeded, g.failed, g.superseded,
            now() AS at
     FROM jobs j
     LEFT JOIN job_queue q ON q.job_id = j.id
     LEFT JOIN jobs a ON a.id = q.after_job_id
     LEFT JOIN enrollment_groups g ON g.id::text = j.params->>'group_id'
     WHERE j.type = ANY($1::text[]) AND j.status IN ('pending', 'in_progress')
     ORDER BY j.created_at LIMIT $2`,
    [ENROLLMENT_JOB_TYPES, limit],
  );
  return rows.map((r) => JSON.stringify(r)).join('\n');
}

/**
 * Waits until every distinct id has its inbox row, every enrollment job has ended and the
 * outbox is drained; false (with the last progress) when `timeoutMs` passes first. A query that
 * fails (the database restarting) is tried again.
 */
export async function waitSettled(db: DataSource, distinctIds: number, timeoutMs: number): Promise<{ settled: boolean; progress?: Progress }> {
  const deadline = Date.now() + timeoutMs;
  let progress: Progress | undefined;
  for (;;) {
    progress = await progressOf(db).catch(() => progress);
    if (progress && progress.inbox >= distinctIds && progress.openJobs === 0 && progress.unpublished === 0) return { settled: true, progress };
    if (Date.now() > deadline) return { settled: false, progress };
    await sleep(200);
  }
}

/** Waits until `inbox_messages` holds at least `count` rows of the HRIS consumer. */
export async function waitInbox(db: DataSource, count: number, timeoutMs: number, intervalMs = 10): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = await inboxCount(db).catch(() => 0);
    if (n >= count) return n;
    if (Date.now() > deadline) throw new Error(`the inbox holds ${n} of ${count} after ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

export interface Outcome {
  /** Messages produced (duplicates and poison included). */
  sent: number;
  /** Distinct valid events that started their saga. */
  applied: number;
  /**
   * Valid events with no saga, fewer jobs than they call for, dead-lettered, or whose final
   * enrollment is wrong at the service or the provider without a recorded provider failure.
   */
  lost: number;
  /** Sagas beyond one per event and jobs beyond what an event calls for. */
  doubled: number;
  deadLettered: number;
  /** Poison ids without a dead letter (with the expected reason). */
  poisonMissing: number;
  /** Individuals whose last provider call failed after every attempt: recorded on the job, not lost. */
  failedAtProvider: number;
  /** Valid events the stream holds, and poison ids. */
  validEvents: number;
  poisonEvents: number;
  /** A few examples of what went wrong, for a failure message. */
  problems: string[];
}

/**
 * Counts the outcome of the plans once the service has settled: one inbox row per distinct id,
 * one saga per valid event with exactly its jobs, one dead letter per poison id with its reason,
 * and the expected enrollment of each (benefit, individual) at the service and, read through the
 * API, at the provider. A mismatch whose last provider call for that individual failed (after
 * every attempt, recorded on the job) is counted as `failedAtProvider`, anything else as lost.
 */
export async function countOutcome(db: DataSource, baseUrl: string, employers: Employer[], plans: StreamPlan[]): Promise<Outcome> {
  const valid = plans.flatMap((p) => p.valid);
  const poison = plans.flatMap((p) => p.poison);
  const problems: string[] = [];
  const note = (problem: string) => {
    if (problems.length < 20) problems.push(problem);
  };

  const sagas: { id: string; n: number; jobs: number }[] = await db.query(
    `SELECT lower(s.source_event_id) AS id, count(DISTINCT s.id)::int AS n, count(sj.job_id)::int AS jobs
     FROM sagas s LEFT JOIN saga_jobs sj ON sj.saga_id = s.id
     WHERE s.source_event_id IS NOT NULL GROUP BY lower(s.source_event_id)`,
  );
  const sagaById = new Map(sagas.map((s) => [s.id, s]));
  const lostIds = new Set<string>();
  let doubled = 0;
  for (const e of valid) {
    const saga = sagaById.get(e.id);
    if (!saga) {
      lostIds.add(e.id);
      note(`event ${e.id} (${e.type}) has no saga`);
      continue;
    }
    if (saga.n > 1) {
      doubled += saga.n - 1;
      note(`event ${e.id} has ${saga.n} sagas`);
    }
    // A saga's job count is summed over its rows: per saga, more than the event calls for is doubled.
    const perSaga = saga.jobs / saga.n;
    if (perSaga > e.jobs) {
      doubled += saga.jobs - e.jobs * saga.n;
      note(`event ${e.id} started ${perSaga} jobs, ${e.jobs} expected`);
    } else if (perSaga < e.jobs) {
      lostIds.add(e.id);
      note(`event ${e.id} started ${perSaga} jobs, ${e.jobs} expected`);
    }
  }
  const knownIds = new Set(valid.map((e) => e.id));
  for (const s of sagas) if (!knownIds.has(s.id)) note(`a saga for an event never sent: ${s.id}`);

  const deadLetters: { message_id: string; reason: string }[] = await db.query(`SELECT message_id, reason FROM dead_letters WHERE consumer = $1`, [HRIS_CONSUMER]);
  const deadLettersById = new Map<string, string[]>();
  for (const d of deadLetters) deadLettersById.set(d.message_id.toLowerCase(), [...(deadLettersById.get(d.message_id.toLowerCase()) ?? []), d.reason]);
  let poisonMissing = 0;
  for (const p of poison) {
    const reasons = deadLettersById.get(p.id) ?? [];
    if (reasons.length === 0 || !reasons.some((r) => r.includes(p.reason))) {
      poisonMissing++;
      note(`poison ${p.id} not dead-lettered with "${p.reason}" (got ${JSON.stringify(reasons)})`);
    }
    if (reasons.length > 1) {
      doubled += reasons.length - 1;
      note(`poison ${p.id} dead-lettered ${reasons.length} times`);
    }
  }
  for (const e of valid) {
    if (deadLettersById.has(e.id)) {
      lostIds.add(e.id);
      note(`valid event ${e.id} was dead-lettered: ${deadLettersById.get(e.id)!.join('; ')}`);
    }
  }

  // Final enrollments: at the service, and at the provider read through the API.
  const key = enrollmentKey;
  const expected = plans.flatMap((p) => p.expected);
  const serviceActual = await serviceEnrollments(db, employers);
  const providerActual = new Map<string, number>();
  for (const employer of employers) {
    const { body } = await withRetries(() => api(baseUrl, `/employer/benefits/${employer.benefitId}/individuals`, { headers: bearer(employer.token) }));
    for (const item of body as { individual_id: string; code: number; body: { employee_deduction: { amount: number } } }[]) {
      if (item.code === 200) providerActual.set(key(employer.benefitId, item.individual_id), item.body.employee_deduction.amount);
    }
  }
  const failed = await lastCallFailed(db);
  let failedAtProvider = 0;
  let wrongEnrollments = 0;
  for (const e of expected) {
    const k = key(e.benefitId, e.individualId);
    const serviceWanted = e.status === null ? undefined : e.status === 'enrolled' ? `enrolled ${e.amount}` : e.status;
    const serviceOk = serviceActual.get(k) === serviceWanted;
    const providerOk = providerActual.get(k) === (e.amount ?? undefined);
    if (serviceOk && providerOk) continue;
    if (failed.has(k)) {
      failedAtProvider++;
      continue;
    }
    wrongEnrollments++;
    note(`${k}: expected ${serviceWanted ?? 'no enrollment'} / provider ${e.amount ?? 'none'}, got ${serviceActual.get(k) ?? 'no enrollment'} / provider ${providerActual.get(k) ?? 'none'}`);
  }

  return {
    sent: plans.reduce((n, p) => n + p.messages.length, 0),
    applied: valid.filter((e) => sagaById.has(e.id)).length,
    lost: lostIds.size + wrongEnrollments,
    doubled,
    deadLettered: deadLetters.length,
    poisonMissing,
    failedAtProvider,
    validEvents: valid.length,
    poisonEvents: poison.length,
    problems,
  };
}

/** `benefit/individual` (lower case), the key of one enrollment in the maps here. */
export const enrollmentKey = (benefitId: string, individualId: string) => `${benefitId}/${individualId.toLowerCase()}`;

/** The employers' `enrollments` rows by enrollmentKey: `enrolled <amount>`, or the status (`unenrolled`). */
export async function serviceEnrollments(db: DataSource, employers: Employer[]): Promise<Map<string, string>> {
  const rows: { benefit_id: string; individual_id: string; status: string; amount: number | null }[] = await db.query(
    `SELECT benefit_id, individual_id, status, (configuration->'employee_deduction'->>'amount')::int AS amount
     FROM enrollments WHERE benefit_id = ANY($1::uuid[])`,
    [employers.map((e) => e.benefitId)],
  );
  return new Map(rows.map((r) => [enrollmentKey(r.benefit_id, r.individual_id), r.status === 'enrolled' ? `enrolled ${r.amount}` : r.status]));
}

/** (benefit, individual) keys whose latest processed group answered a failure for them. */
async function lastCallFailed(db: DataSource): Promise<Set<string>> {
  const rows: { benefit_id: string; individual_id: string; code: number }[] = await db.query(
    `SELECT DISTINCT ON (g.benefit_id, i.individual_id) g.benefit_id, i.individual_id::text AS individual_id, i.code
     FROM enrollment_items i
     JOIN enrollment_groups g ON g.id = i.group_id
     WHERE i.status IN ('done', 'failed')
     ORDER BY g.benefit_id, i.individual_id, g.job_seq DESC, g.effective_date DESC`,
  );
  return new Set(rows.filter((r) => r.code >= 300).map((r) => `${r.benefit_id}/${r.individual_id}`));
}

/** `events sent / applied / lost / doubled / dead-lettered`, as the issue asks. */
export function outcomeLine(label: string, outcome: Outcome): string {
  return (
    `${label}: events sent ${outcome.sent} / applied ${outcome.applied} / lost ${outcome.lost} / doubled ${outcome.doubled} / ` +
    `dead-lettered ${outcome.deadLettered}` +
    (outcome.failedAtProvider > 0 ? ` (failed at the provider after every attempt, recorded: ${outcome.failedAtProvider})` : '')
  );
}

// --- figures ----------------------------------------------------------------------------------

/** The p-th percentile (0–100) of already sorted values (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}
