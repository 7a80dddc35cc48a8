/**
 * The HRIS-events fault suite, on the real broker and PostgreSQL: the service runs as child
 * processes consuming `hris.events` while something goes wrong, and each scenario counts what
 * the stream led to (`events sent / applied / lost / doubled / dead-lettered`, bench/hris-kit.ts)
 * and passes with 0 lost, 0 doubled and every poison event dead-lettered (with its reason).
 *
 *   1. sigkill-restart      SIGKILL the service mid-stream, start a new process on the same group
 *   2. postgres-restart     restart PostgreSQL mid-stream (a private cluster, never the shared one)
 *   3. provider-faults      provider calls fail: 20 % server errors and 10 % timeouts
 *   4. triple-delivery      every event delivered three times
 *   5. poison               1 % poison events (five kinds); the .dlq topic is read back too
 *   6. group-kill           three instances in one group; one killed with SIGKILL mid-stream
 *
 * On a three-broker cluster (replication factor 3, min.insync.replicas 2; started with
 * `scripts/kafka/run up --brokers 3` when it is not running), two service instances unless said:
 *   7. broker-kill          SIGKILL the broker leading most partitions, restarted 20 s later
 *   8. rolling-restart      every broker restarted in turn (SIGTERM), each back in sync before the next
 *   9. scale-out            one instance, then three, then one again (SIGTERM)
 *  10. broker-pause         one broker paused (SIGSTOP) past the session timeout, then resumed
 * Half of each cluster scenario's stream is produced before its fault and half during it (the rolling
 * restart: a quarter before, then a quarter while each broker is down). Scenarios 7, 8 and 10 then
 * read their topics back from the brokers and fail on any acknowledged message that is not there:
 * produced into the service, or marked published by its outbox relay (auditTopics).
 *
 *   npm run faults                     the short version (a few thousand events per scenario)
 *   npm run faults -- --long           the long version (tens of thousands per scenario), by hand
 *   npm run faults -- poison group-kill   only those
 *   npm run faults -- --cluster        the cluster scenarios (7–10); in the test run too (test/e2e/kafka-cluster.e2e-spec.ts)
 *
 * Everything runs on loopback (127.0.0.1): the broker of TEST_KAFKA_BROKERS / KAFKA_BROKERS
 * (default 127.0.0.1:9092, `scripts/kafka/run up`) and fresh databases on TEST_DATABASE_URL /
 * DATABASE_URL's server, except scenario 2, which initdb's a PostgreSQL cluster of its own in a
 * temporary folder (run as the `postgres` user when this runs as root) and restarts that. Each
 * scenario is bounded in time; the exit code is 1 when any scenario fails.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { KafkaMessage } from 'kafkajs';
import {
  ensureKafka,
  ensureKafkaCluster,
  basic,
  countOutcome,
  createScratchDatabase,
  deliveredTimes,
  Employer,
  employersCoveringPartitions,
  freePort,
  HRIS_DLQ_TOPIC,
  HRIS_TOPIC,
  inboxCount,
  KafkaScope,
  kafkaBrokers,
  kafkaClusterBrokers,
  kafkaNode,
  OPS_CREDENTIALS,
  openJobsReport,
  Outgoing,
  Outcome,
  outcomeLine,
  PARTITIONS,
  partitionOf,
  planStream,
  postgresServerUrl,
  PrivatePostgres,
  ScratchDatabase,
  ServiceAuth,
  ServiceChild,
  sleep,
  startPrivatePostgres,
  startServiceChild,
  StreamPlan,
  tail,
  waitInbox,
  waitSettled,
} from './hris-kit';
import { missingCopies, missingIds, readTopics } from './topic-audit';
import { PrivatePooler, poolerInUse, startPrivatePooler } from './database-pooler';

export interface FaultOptions {
  /** The long version: ten times the events, longer bounds, more faults per scenario. */
  long: boolean;
  /** Without scenario names: the cluster scenarios instead of the single-broker ones. */
  cluster?: boolean;
  /** Progress lines; default console.log. */
  log?: (line: string) => void;
}

export interface ScenarioResult {
  name: string;
  title: string;
  passed: boolean;
  seconds: number;
  outcome?: Outcome;
  /** What the fault did (when it struck, how long it lasted). */
  notes: string[];
  /** Why it failed, when it did. */
  failures: string[];
  /** The last lines each service process printed, when it failed: apart, so the causes stay short. */
  outputs: string[];
}

interface Sizes {
  /** Distinct valid events per scenario. */
  valid: number;
  employees: number;
  /** How long the stream may take to settle after the fault. */
  settleMs: number;
}

const sizesOf = (options: FaultOptions): Sizes =>
  options.long ? { valid: 20_000, employees: 60, settleMs: 900_000 } : { valid: 3_000, employees: 20, settleMs: 150_000 };

/** A killed member's partitions move after this long; the broker's minimum is 6 s. */
const SESSION_TIMEOUT_MS = 10_000;

/** The suite talks to nothing but this machine. */
function assertLoopback(what: string, hosts: string[]): void {
  const remote = hosts.filter((h) => !['127.0.0.1', 'localhost', '::1', '[::1]'].includes(h));
  if (remote.length > 0) throw new Error(`the fault suite runs on loopback only; ${what} points at ${remote.join(', ')}`);
}

/** A service process, and whether this suite killed (or stopped) it. */
interface Tracked extends ServiceChild {
  killed?: boolean;
}

/** One database, topic prefix and consumer group, shared by the service processes started on it. */
class Deployment {
  readonly processes: Tracked[] = [];
  readonly scope: KafkaScope;
  private readonly clientId = randomUUID();
  private readonly clientSecret = `secret-${randomBytes(16).toString('hex')}`;

  private constructor(
    readonly database: ScratchDatabase,
    label: string,
    brokers: string,
    /** A pooler in front of the database's server that the services' pools go through (serviceDatabaseEnv). */
    private readonly poolerUrl?: string,
  ) {
    this.scope = new KafkaScope(label, brokers);
  }

  static async create(label: string, server = postgresServerUrl(), brokers = kafkaBrokers(), poolerUrl?: string): Promise<Deployment> {
    return new Deployment(await createScratchDatabase(`faults_${label.replace(/[^a-z0-9]/g, '_')}`, server), `faults-${label}`, brokers, poolerUrl);
  }

  /** A deployment on the three-broker cluster: its topics replicated three times, two in sync. */
  static onCluster(label: string): Promise<Deployment> {
    return Deployment.create(label, postgresServerUrl(), kafkaClusterBrokers());
  }

  get db() {
    return this.database.db;
  }

  get auth(): ServiceAuth {
    return { app: basic(this.clientId, this.clientSecret), ops: basic(OPS_CREDENTIALS.username, OPS_CREDENTIALS.password) };
  }

  async start(name: string, env: Record<string, string> = {}): Promise<Tracked> {
    const service: Tracked = await startServiceChild({
      name,
      databaseUrl: this.database.url,
      poolerUrl: this.poolerUrl,
      kafka: { brokers: this.scope.brokers, topicPrefix: this.scope.prefix, groupId: this.scope.groupId, partitions: PARTITIONS },
      env: {
        APP_CLIENT_ID: this.clientId,
        APP_CLIENT_SECRET: this.clientSecret,
        KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
        ...env,
      },
      readyTimeoutMs: 120_000,
    });
    this.processes.push(service);
    return service;
  }

  /** A running process to read the API through. */
  get live(): ServiceChild {
    const alive = this.processes.filter((p) => !p.killed);
    if (alive.length === 0) throw new Error('no service process is running');
    return alive[alive.length - 1];
  }

  async close(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop(15_000)));
    await this.scope.close([`${this.scope.prefix}dlq-reader`]);
    await this.database.drop();
  }
}

/** The members of the group and the partitions each holds, by client id (= process name). */
const assignments = (deployment: Deployment): Promise<Map<string, number[]>> => deployment.scope.assignments();

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}

interface Context {
  options: FaultOptions;
  sizes: Sizes;
  log: (line: string) => void;
  notes: string[];
  /** Deployments to close at the end, whatever happens. */
  deployments: Deployment[];
  /** Private clusters to stop at the end. */
  clusters: PrivatePostgres[];
  /** Poolers in front of them, to stop before them. */
  poolers: PrivatePooler[];
}


const planFor = (employers: Employer[], sizes: Sizes, seed: number, { duplicates = 0.05, poison = 0.01 } = {}): StreamPlan => {
  const perEmployer = Math.min(sizes.employees, ...employers.map((e) => e.people.length));
  const valid = sizes.valid;
  // Messages in all = valid + duplicates + poison; poison is `poison` of them.
  const poisonCount = Math.max(5, Math.round((valid * poison) / (1 - poison)));
  return planStream(employers, { perEmployer, valid, duplicates: Math.round(valid * duplicates), poison: poisonCount, terminatedShare: 0.2, seed });
};

const distinctOf = (plan: StreamPlan) => plan.valid.length + plan.poison.length;

/** Employers over the partitions, half with a new-hire policy. */
const employersFor = (deployment: Deployment, service: ServiceChild, sizes: Sizes, partitions = 3) =>
  employersCoveringPartitions(service.url, deployment.auth, deployment.scope.physical(HRIS_TOPIC), {
    employees: sizes.employees,
    policy: (i) => i % 2 === 0,
    min: 3,
    max: 8,
    partitions,
  });

/** Per partition of the HRIS topic: the group's committed offset, the end of the log, and the member holding it. */
async function partitionProgress(deployment: Deployment): Promise<string> {
  const admin = await deployment.scope.admin();
  const topic = deployment.scope.physical(HRIS_TOPIC);
  const [committed] = await admin.fetchOffsets({ groupId: deployment.scope.groupId, topics: [topic] });
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p.high]));
  const holders = new Map<number, string>();
  for (const [member, partitions] of await assignments(deployment)) for (const p of partitions) holders.set(p, member);
  return (committed?.partitions ?? [])
    .sort((a, b) => a.partition - b.partition)
    .map((p) => `${p.partition}: ${p.offset}/${ends.get(p.partition)} ${holders.get(p.partition) ?? 'unassigned'}`)
    .join('; ');
}

/** Waits until the stream settles within the bound, then counts; a stream that did not settle fails. */
async function settleAndCount(ctx: Context, deployment: Deployment, employers: Employer[], plans: StreamPlan[], failures: string[]): Promise<Outcome> {
  const distinct = plans.reduce((n, p) => n + distinctOf(p), 0);
  const { settled, progress } = await waitSettled(deployment.db, distinct, ctx.sizes.settleMs);
  if (!settled) {
    const partitions = await partitionProgress(deployment).catch((e: Error) => `unknown (${e.message})`);
    const open = await openJobsReport(deployment.db).catch((e: Error) => `unknown (${e.message})`);
    failures.push(
      `not settled within ${ctx.sizes.settleMs / 1000} s: ${JSON.stringify(progress)} (distinct ids ${distinct}); partitions (committed/end, holder): ${partitions}` +
        (open ? `; open jobs:\n${open}` : ''),
    );
  }
  return countOutcome(deployment.db, deployment.live.url, employers, plans);
}

interface Scenario {
  name: string;
  title: string;
  /** Runs on the three-broker cluster (`scripts/kafka/run up --brokers 3`). */
  cluster?: boolean;
  run(ctx: Context, failures: string[]): Promise<Outcome>;
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'sigkill-restart',
    title: 'SIGKILL the service mid-stream, restart',
    async run(ctx, failures) {
      const deployment = await Deployment.create('kill');
      ctx.deployments.push(deployment);
      const first = await deployment.start('consumer-killed');
      const employers = await employersFor(deployment, first, ctx.sizes);
      const plan = planFor(employers, ctx.sizes, 101);
      const distinct = distinctOf(plan);
      await deployment.scope.produce(plan.messages);
      const kills = ctx.options.long ? 2 : 1;
      let current = first;
      for (let k = 1; k <= kills; k++) {
        await waitInbox(deployment.db, Math.ceil((distinct * k) / (kills + 2)), 120_000);
        const exit = await current.kill('SIGKILL');
        current.killed = true;
        const atKill = await inboxCount(deployment.db);
        ctx.notes.push(`killed (${exit.signal}) at ${atKill}/${distinct} ids applied`);
        if (atKill >= distinct) failures.push('the kill came after the whole stream was applied');
        current = await deployment.start(`consumer-restarted-${k}`);
      }
      return settleAndCount(ctx, deployment, employers, [plan], failures);
    },
  },
  {
    name: 'postgres-restart',
    title: 'restart PostgreSQL mid-stream (private cluster)',
    async run(ctx, failures) {
      const cluster = await startPrivatePostgres(await freePort());
      ctx.clusters.push(cluster);
      assertLoopback('the private cluster', [new URL(cluster.url).hostname]);
      // When the run goes through PgBouncer, so does this: the pooler outlives the restart and
      // must hand the service fresh server connections after it.
      const pooler = poolerInUse() ? await startPrivatePooler(cluster.port, await freePort(), mkdtempSync(join(tmpdir(), 'hris-faults-pgbouncer-'))) : undefined;
      if (pooler) {
        ctx.poolers.push(pooler);
        ctx.notes.push(`the service's pool through PgBouncer (transaction mode) at ${new URL(pooler.url).port}, its sessions direct`);
      }
      const deployment = await Deployment.create('pg', cluster.url, kafkaBrokers(), pooler?.url);
      ctx.deployments.push(deployment);
      const service = await deployment.start('consumer-pg');
      const employers = await employersFor(deployment, service, ctx.sizes);
      const plan = planFor(employers, ctx.sizes, 202);
      const distinct = distinctOf(plan);
      await deployment.scope.produce(plan.messages);
      const modes: ('fast' | 'immediate')[] = ctx.options.long ? ['fast', 'immediate'] : ['immediate'];
      for (const [i, mode] of modes.entries()) {
        await waitInbox(deployment.db, Math.ceil((distinct * (i + 1)) / (modes.length + 2)), 120_000);
        const started = Date.now();
        cluster.restart(mode);
        const atRestart = await waitFor('the inbox after the restart', 60_000, () => inboxCount(deployment.db));
        ctx.notes.push(`PostgreSQL restarted (-m ${mode}, ${((Date.now() - started) / 1000).toFixed(1)} s) at ${atRestart}/${distinct} ids applied`);
        if (atRestart >= distinct) failures.push(`the restart (-m ${mode}) came after the whole stream was applied`);
      }
      const outcome = await settleAndCount(ctx, deployment, employers, [plan], failures);
      // The same process went on through the restarts: it never exited.
      if (service.hasExited()) failures.push(`the service exited during the restart:\n${tail(service.output(), 30)}`);
      return outcome;
    },
  },
  {
    name: 'provider-faults',
    title: 'provider failure injection: 20 % server errors + 10 % timeouts',
    async run(ctx, failures) {
      const deployment = await Deployment.create('provider');
      ctx.deployments.push(deployment);
      // Set-up (sandbox employers, benefits created at the provider) without faults; then the drill.
      const setup = await deployment.start('setup');
      const employers = await employersFor(deployment, setup, ctx.sizes);
      await setup.stop(15_000);
      setup.killed = true;
      await deployment.start('consumer-faulty-provider', {
        PROVIDER_FAILURE_RATE: '0.2',
        PROVIDER_TIMEOUT_RATE: '0.1',
        PROVIDER_TIMEOUT_MS: '1000',
        // Many small calls, so the faults meet many of them: folded whole, the due groups of a
        // benefit went in so few calls that a 30 % fault rate sometimes struck none.
        PROVIDER_CALL_MAX_CHANGES: '4',
        // A job the faults strike eight times running waits 1 + 2 + … + 128 s under the default
        // cap: past the settle window while nothing is lost. Capped at 8 s, it takes some twenty
        // failures in a row (0.3^20) to outlast the window; retries and backoff still run.
        PROVIDER_RETRY_MAX_DELAY_MS: '8000',
      });
      const plan = planFor(employers, ctx.sizes, 303);
      await deployment.scope.produce(plan.messages);
      const outcome = await settleAndCount(ctx, deployment, employers, [plan], failures);
      const [calls] = await deployment.db.query(
        `SELECT count(*) FILTER (WHERE attempts > 0)::int AS ran, coalesce(sum(attempts), 0)::int AS runs,
                count(*) FILTER (WHERE attempts > 1)::int AS retried, coalesce(max(attempts), 0)::int AS most
         FROM jobs WHERE type = 'benefit_enrollment_group'`,
      );
      // Groups taken over by a later change before their call never run: not counted.
      ctx.notes.push(`${calls.ran} provider-call jobs ran ${calls.runs} times: ${calls.retried} needed more than one run, one needed ${calls.most}`);
      if (calls.retried === 0) failures.push('no provider call was retried: the faults did not strike');
      return outcome;
    },
  },
  {
    name: 'triple-delivery',
    title: 'every event delivered three times',
    async run(ctx, failures) {
      const deployment = await Deployment.create('triple');
      ctx.deployments.push(deployment);
      const service = await deployment.start('consumer-triple');
      const employers = await employersFor(deployment, service, ctx.sizes);
      const plan = deliveredTimes(planFor(employers, ctx.sizes, 404, { duplicates: 0 }), 3, 405);
      if (plan.messages.length !== 3 * distinctOf(plan)) failures.push(`sent ${plan.messages.length}, not three times ${distinctOf(plan)}`);
      await deployment.scope.produce(plan.messages);
      return settleAndCount(ctx, deployment, employers, [plan], failures);
    },
  },
  {
    name: 'poison',
    title: '1 % poison events, read back from the .dlq topic',
    async run(ctx, failures) {
      const deployment = await Deployment.create('poison');
      ctx.deployments.push(deployment);
      const service = await deployment.start('consumer-poison');
      const employers = await employersFor(deployment, service, ctx.sizes);
      const plan = planFor(employers, ctx.sizes, 505, { duplicates: 0, poison: 0.01 });
      ctx.notes.push(`${plan.poison.length} poison of ${plan.messages.length} messages`);
      const dlq: KafkaMessage[] = [];
      const reader = deployment.scope.kafka.consumer({ groupId: `${deployment.scope.prefix}dlq-reader`, maxWaitTimeInMs: 100 });
      await reader.connect();
      try {
        await reader.subscribe({ topic: deployment.scope.physical(HRIS_DLQ_TOPIC), fromBeginning: true });
        await reader.run({ eachMessage: async ({ message }) => void dlq.push(message) });
        await deployment.scope.produce(plan.messages);
        const outcome = await settleAndCount(ctx, deployment, employers, [plan], failures);
        // The dead letters' outbox is drained (settled): each is on the topic, the reader may lag a little.
        await waitFor('the .dlq topic', 30_000, async () => (dlq.length >= plan.poison.length ? true : undefined)).catch(() => undefined);
        const rows: { id: string; message_id: string }[] = await deployment.db.query(`SELECT id, message_id FROM dead_letters`);
        const byId = new Map(rows.map((r) => [r.id, r.message_id.toLowerCase()]));
        const onTopic = dlq.map((m) => byId.get(JSON.parse(m.value!.toString()).dead_letter_id)).sort();
        const expected = plan.poison.map((p) => p.id).sort();
        if (JSON.stringify(onTopic) !== JSON.stringify(expected)) {
          failures.push(`the .dlq topic holds ${onTopic.length} dead letters, ${expected.length} poison events were sent`);
        }
        ctx.notes.push(`.dlq topic: ${onTopic.length} messages`);
        return outcome;
      } finally {
        await reader.disconnect().catch(() => undefined);
      }
    },
  },
  {
    name: 'group-kill',
    title: 'three instances in one group; one killed (SIGKILL) mid-stream',
    async run(ctx, failures) {
      const deployment = await Deployment.create('group');
      ctx.deployments.push(deployment);
      const names = ['consumer-a', 'consumer-b', 'consumer-c'];
      const members = await Promise.all(names.map((n) => deployment.start(n)));
      const held = await waitFor('three members holding every partition', 60_000, async () => {
        const a = await assignments(deployment);
        const all = [...a.values()].flat().sort((x, y) => x - y);
        return a.size === 3 && all.length === PARTITIONS && [...a.values()].every((p) => p.length > 0) ? a : undefined;
      });
      const employers = await employersFor(deployment, members[0], ctx.sizes, PARTITIONS);
      const topic = deployment.scope.physical(HRIS_TOPIC);
      // The victim: a member with work of the stream on its partitions.
      const busy = names.filter((n) => employers.some((e) => held.get(n)!.includes(partitionOf(e.connectionId, topic))));
      if (busy.length < 2) failures.push(`only ${busy.length} of 3 members hold partitions with work`);
      const victim = members[names.indexOf(busy[busy.length - 1] ?? names[2])];
      ctx.notes.push(`partitions: ${[...held].map(([n, p]) => `${n} ${p.join(',')}`).join('; ')}; killing ${victim.name}`);
      const plan = planFor(employers, ctx.sizes, 606);
      const distinct = distinctOf(plan);
      await deployment.scope.produce(plan.messages);
      await waitInbox(deployment.db, Math.ceil(distinct * 0.3), 120_000);
      await victim.kill('SIGKILL');
      victim.killed = true;
      const atKill = await inboxCount(deployment.db);
      ctx.notes.push(`killed at ${atKill}/${distinct} ids applied`);
      if (atKill >= distinct) failures.push('the kill came after the whole stream was applied');
      const outcome = await settleAndCount(ctx, deployment, employers, [plan], failures);
      const after = await waitFor('the survivors holding every partition', 60_000, async () => {
        const a = await assignments(deployment);
        return a.size === 2 && [...a.values()].flat().length === PARTITIONS ? a : undefined;
      }).catch(() => undefined);
      if (!after) failures.push('the two survivors do not hold every partition');
      else ctx.notes.push(`after: ${[...after].map(([n, p]) => `${n} ${p.join(',')}`).join('; ')}`);
      return outcome;
    },
  },
];

/** Each partition of the HRIS topic: its leader's node id and how many replicas are in sync. */
async function partitionLeaders(deployment: Deployment): Promise<{ partition: number; leader: number; isr: number }[]> {
  const admin = await deployment.scope.admin();
  const { topics } = await admin.fetchTopicMetadata({ topics: [deployment.scope.physical(HRIS_TOPIC)] });
  return (topics[0]?.partitions ?? []).map((p) => ({ partition: p.partitionId, leader: p.leader, isr: p.isr.length }));
}

/** The node leading most partitions of the HRIS topic (the lowest id on a tie). */
async function busiestLeader(deployment: Deployment): Promise<{ node: number; partitions: number[] }> {
  const byNode = new Map<number, number[]>();
  for (const p of await partitionLeaders(deployment)) byNode.set(p.leader, [...(byNode.get(p.leader) ?? []), p.partition]);
  const [node, partitions] = [...byNode].sort((a, b) => b[1].length - a[1].length || a[0] - b[0])[0];
  return { node, partitions };
}

/** Waits until every partition has a leader and all three replicas in sync again. */
const fullyReplicated = (deployment: Deployment, timeoutMs: number) =>
  waitFor('every partition back in sync on three replicas', timeoutMs, async () => {
    const partitions = await partitionLeaders(deployment);
    return partitions.length === PARTITIONS && partitions.every((p) => p.leader >= 0 && p.isr === 3) ? true : undefined;
  });

/**
 * A cluster scenario's stream: two service instances in one group, employers over every
 * partition, `upFront` of the stream (half by default) produced before the fault; `next(share)`
 * produces the next share of it and `rest()` all that is left, while the fault lasts.
 */
async function clusterStream(ctx: Context, label: string, seed: number, instances = 2, upFront = 0.5) {
  const deployment = await Deployment.onCluster(label);
  ctx.deployments.push(deployment);
  const members: Tracked[] = [];
  for (let i = 0; i < instances; i++) members.push(await deployment.start(`consumer-${String.fromCharCode(97 + i)}`));
  const employers = await employersFor(deployment, members[0], ctx.sizes, PARTITIONS);
  const plan = planFor(employers, ctx.sizes, seed);
  let produced = 0;
  /** Messages the producer was told are written: the first `acknowledged` of the plan. */
  let acknowledged = 0;
  const upTo = async (end: number) => {
    const from = produced;
    produced = Math.max(produced, Math.min(plan.messages.length, end));
    const to = produced;
    await deployment.scope.produce(plan.messages.slice(from, to));
    acknowledged = Math.max(acknowledged, to);
  };
  await upTo(Math.ceil(plan.messages.length * upFront));
  return {
    deployment,
    members,
    employers,
    plan,
    distinct: distinctOf(plan),
    next: (share: number) => upTo(produced + Math.ceil(plan.messages.length * share)),
    rest: () => upTo(plan.messages.length),
    /** Counts the topics against what was acknowledged (auditTopics); once the stream has settled. */
    audit: (failures: string[]) => auditTopics(ctx, deployment, plan.messages.slice(0, acknowledged), failures),
  };
}

/**
 * Counts every message in the deployment's topics, read back from the brokers, against what was
 * acknowledged: each message produced into the service (`hris.events`, copy by copy: a duplicate
 * the stream sends is a message of its own) and each outbox row the service marked published
 * (`benefits.events`, `hris.events.dlq`, by message id). A gap fails the scenario: a producer was
 * told a write happened that no consumer will ever see.
 */
async function auditTopics(ctx: Context, deployment: Deployment, produced: Outgoing[], failures: string[]): Promise<void> {
  const published: { id: string; topic: string }[] = await deployment.db.query(
    `SELECT m.message_id::text AS id, m.topic FROM outbox_messages m
     WHERE NOT EXISTS (SELECT 1 FROM outbox_pending p WHERE p.lane = m.lane AND p.id = m.batch_id)`,
  );
  const topics = [...new Set([HRIS_TOPIC, ...published.map((p) => p.topic)])];
  const logged = await readTopics(deployment.scope.kafka, topics.map((t) => deployment.scope.physical(t)));
  const inTopic = (topic: string) => logged.filter((m) => m.topic === deployment.scope.physical(topic));
  const lines: string[] = [];
  const lost = missingCopies(produced, inTopic(HRIS_TOPIC));
  lines.push(`${HRIS_TOPIC} produced ${produced.length - lost.length}/${produced.length}`);
  if (lost.length > 0) failures.push(`${lost.length} of ${produced.length} messages acknowledged to the producer are not in ${HRIS_TOPIC}`);
  for (const topic of topics.filter((t) => t !== HRIS_TOPIC)) {
    const ids = published.filter((p) => p.topic === topic).map((p) => p.id);
    const missing = missingIds(ids, inTopic(topic));
    lines.push(`${topic} published ${ids.length - missing.length}/${ids.length}`);
    if (missing.length > 0) failures.push(`${missing.length} of ${ids.length} outbox rows marked published are not in ${topic} (e.g. ${missing.slice(0, 3).join(', ')})`);
  }
  ctx.notes.push(`in the topics, of what was acknowledged: ${lines.join('; ')}`);
}

const struckMidStream = (ctx: Context, failures: string[], what: string, at: number, distinct: number) => {
  ctx.notes.push(`${what} at ${at}/${distinct} ids applied`);
  if (at >= distinct) failures.push(`${what} came after the whole stream was applied`);
};

/** Once a quarter of the stream is applied, signals the broker leading most partitions; answers it and when. */
async function strikeBusiestLeader(ctx: Context, failures: string[], deployment: Deployment, distinct: number, signal: 'KILL' | 'STOP') {
  await waitInbox(deployment.db, Math.ceil(distinct / 4), 120_000);
  const victim = await busiestLeader(deployment);
  kafkaNode('stop-node', victim.node, signal);
  const at = Date.now();
  const what = `broker ${victim.node} (leader of partitions ${victim.partitions.join(',')}) ${signal === 'KILL' ? 'killed' : 'paused'}`;
  struckMidStream(ctx, failures, what, await inboxCount(deployment.db), distinct);
  return { victim, at };
}

/** Scenarios on a three-broker cluster (replication factor 3, min.insync.replicas 2). */
export const CLUSTER_SCENARIOS: Scenario[] = [
  {
    name: 'broker-kill',
    title: 'SIGKILL the broker leading most partitions mid-stream, restart it 20 s later (3 brokers, 2 instances)',
    cluster: true,
    async run(ctx, failures) {
      const { deployment, employers, plan, distinct, rest, audit } = await clusterStream(ctx, 'brokerkill', 701);
      const { victim, at: killedAt } = await strikeBusiestLeader(ctx, failures, deployment, distinct, 'KILL');
      await rest();
      const moved = await waitFor('leaders moved off the killed broker', 60_000, async () => {
        const leaders = await partitionLeaders(deployment);
        return leaders.length === PARTITIONS && leaders.every((p) => p.leader >= 0 && p.leader !== victim.node) ? leaders : undefined;
      }).catch(() => undefined);
      if (!moved) failures.push(`partitions still led by broker ${victim.node} or leaderless a minute after the kill`);
      else ctx.notes.push(`leaders after ${((Date.now() - killedAt) / 1000).toFixed(1)} s: ${moved.map((p) => `${p.partition}→${p.leader}`).join(' ')}`);
      await sleep(Math.max(0, killedAt + 20_000 - Date.now()));
      kafkaNode('start-node', victim.node);
      ctx.notes.push(`broker ${victim.node} back after ${((Date.now() - killedAt) / 1000).toFixed(1)} s, at ${await inboxCount(deployment.db)}/${distinct} ids applied`);
      const outcome = await settleAndCount(ctx, deployment, employers, [plan], failures);
      await audit(failures);
      await fullyReplicated(deployment, 120_000).catch((e: Error) => failures.push(e.message));
      return outcome;
    },
  },
  {
    name: 'rolling-restart',
    title: 'rolling restart of all three brokers mid-stream (SIGTERM, one at a time)',
    cluster: true,
    async run(ctx, failures) {
      // A quarter of the stream before the first restart and a quarter while each broker is down,
      // so every restart strikes while events are still arriving.
      const { deployment, employers, plan, distinct, next, rest, audit } = await clusterStream(ctx, 'rolling', 702, 2, 0.25);
      await waitInbox(deployment.db, Math.ceil(distinct / 8), 120_000);
      for (const node of [1, 2, 3]) {
        const started = Date.now();
        kafkaNode('stop-node', node, 'TERM');
        const at = await inboxCount(deployment.db);
        if (node < 3) await next(0.25);
        else await rest();
        kafkaNode('start-node', node);
        await fullyReplicated(deployment, 120_000);
        struckMidStream(ctx, failures, `broker ${node} restarted (${((Date.now() - started) / 1000).toFixed(1)} s until back in sync)`, at, distinct);
      }
      const outcome = await settleAndCount(ctx, deployment, employers, [plan], failures);
      await audit(failures);
      return outcome;
    },
  },
  {
    name: 'scale-out',
    title: 'one instance to three mid-stream, then back to one (SIGTERM)',
    cluster: true,
    async run(ctx, failures) {
      const { deployment, members, employers, plan, distinct, rest } = await clusterStream(ctx, 'scale', 703, 1);
      await waitInbox(deployment.db, Math.ceil(distinct / 5), 120_000);
      struckMidStream(ctx, failures, 'two instances added', await inboxCount(deployment.db), distinct);
      const added = [await deployment.start('consumer-b'), await deployment.start('consumer-c')];
      await rest();
      const three = await waitFor('three members holding the partitions', 90_000, async () => {
        const a = await assignments(deployment);
        return a.size === 3 && [...a.values()].flat().length === PARTITIONS && [...a.values()].every((p) => p.length > 0) ? a : undefined;
      }).catch(() => undefined);
      if (!three) failures.push('the three instances never shared the partitions');
      else ctx.notes.push(`three: ${[...three].map(([n, p]) => `${n} ${p.join(',')}`).join('; ')}`);
      await waitInbox(deployment.db, Math.ceil((distinct * 3) / 5), 120_000).catch(() => undefined);
      const atStop = await inboxCount(deployment.db);
      for (const member of added) {
        await member.stop(30_000);
        member.killed = true;
      }
      struckMidStream(ctx, failures, 'back to one instance (SIGTERM)', atStop, distinct);
      const outcome = await settleAndCount(ctx, deployment, employers, [plan], failures);
      const one = await waitFor('the first instance holding every partition', 60_000, async () => {
        const a = await assignments(deployment);
        return a.size === 1 && (a.get(members[0].name) ?? []).length === PARTITIONS ? a : undefined;
      }).catch(() => undefined);
      if (!one) failures.push('the remaining instance does not hold every partition');
      return outcome;
    },
  },
  {
    name: 'broker-pause',
    title: 'SIGSTOP one broker for longer than the session timeout, then SIGCONT',
    cluster: true,
    async run(ctx, failures) {
      const { deployment, employers, plan, distinct, rest, audit } = await clusterStream(ctx, 'pause', 704);
      const { victim, at: pausedAt } = await strikeBusiestLeader(ctx, failures, deployment, distinct, 'STOP');
      try {
        await rest();
        await sleep(Math.max(0, pausedAt + SESSION_TIMEOUT_MS + 5_000 - Date.now()));
      } finally {
        kafkaNode('stop-node', victim.node, 'CONT');
      }
      ctx.notes.push(`broker ${victim.node} resumed after ${((Date.now() - pausedAt) / 1000).toFixed(1)} s, at ${await inboxCount(deployment.db)}/${distinct} ids applied`);
      const outcome = await settleAndCount(ctx, deployment, employers, [plan], failures);
      await audit(failures);
      await fullyReplicated(deployment, 120_000).catch((e: Error) => failures.push(e.message));
      return outcome;
    },
  },
];

const ALL_SCENARIOS = [...SCENARIOS, ...CLUSTER_SCENARIOS];

/** Runs one scenario, bounded in time; its deployments are torn down whatever happens. */
export async function runScenario(scenario: Scenario, options: FaultOptions): Promise<ScenarioResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const ctx: Context = { options, sizes: sizesOf(options), log, notes: [], deployments: [], clusters: [], poolers: [] };
  const failures: string[] = [];
  const outputs: string[] = [];
  const started = Date.now();
  const boundMs = ctx.sizes.settleMs + 300_000;
  let outcome: Outcome | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    outcome = await Promise.race([
      scenario.run(ctx, failures),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`scenario over its bound of ${boundMs / 1000} s`)), boundMs))),
    ]);
  } catch (error) {
    failures.push(`${(error as Error).message}`);
  } finally {
    // What the service processes said is the first thing to read when a scenario fails.
    if (failures.length > 0) for (const d of ctx.deployments) for (const p of d.processes) outputs.push(`${p.name} output:\n${tail(p.output(), 30)}`);
    clearTimeout(timer);
    for (const d of ctx.deployments) await d.close().catch((e) => log(`  (teardown: ${(e as Error).message})`));
    for (const p of ctx.poolers) await p.stop().catch((e) => log(`  (stopping the pooler: ${(e as Error).message})`));
    for (const c of ctx.clusters) {
      try {
        c.stop();
      } catch (e) {
        log(`  (stopping the private cluster: ${(e as Error).message})`);
      }
    }
  }
  if (outcome) {
    if (outcome.lost > 0) failures.push(`${outcome.lost} lost`);
    if (outcome.doubled > 0) failures.push(`${outcome.doubled} doubled`);
    if (outcome.poisonMissing > 0) failures.push(`${outcome.poisonMissing} of ${outcome.poisonEvents} poison events not dead-lettered`);
    if (outcome.problems.length > 0 && (outcome.lost > 0 || outcome.doubled > 0 || outcome.poisonMissing > 0)) failures.push(...outcome.problems.slice(0, 10));
  }
  return { name: scenario.name, title: scenario.title, passed: failures.length === 0, seconds: (Date.now() - started) / 1000, outcome, notes: ctx.notes, failures, outputs };
}

/** Runs the scenarios in order (all, or those named), printing each result as it ends. */
export async function runFaultSuite(options: FaultOptions, names: string[] = []): Promise<ScenarioResult[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  assertLoopback('the database server', [new URL(postgresServerUrl()).hostname]);
  const unknown = names.filter((n) => !ALL_SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${ALL_SCENARIOS.map((s) => s.name).join(', ')}`);
  // By default the six single-broker scenarios; the cluster ones when named (or --cluster).
  const selected = names.length === 0 ? (options.cluster ? CLUSTER_SCENARIOS : SCENARIOS) : ALL_SCENARIOS.filter((s) => names.includes(s.name));
  const brokersOf = (list: string) => list.split(',').map((b) => b.replace(/:\d+$/, ''));
  if (selected.some((s) => !s.cluster)) {
    assertLoopback('KAFKA_BROKERS', brokersOf(kafkaBrokers()));
    await ensureKafka();
  }
  if (selected.some((s) => s.cluster)) {
    assertLoopback('KAFKA_CLUSTER_BROKERS', brokersOf(kafkaClusterBrokers()));
    await ensureKafkaCluster();
  }
  const results: ScenarioResult[] = [];
  for (const [i, scenario] of selected.entries()) {
    log(`\n[${i + 1}/${selected.length}] ${scenario.name}: ${scenario.title}${options.long ? ' (long)' : ''}`);
    const result = await runScenario(scenario, options);
    results.push(result);
    for (const note of result.notes) log(`  ${note}`);
    if (result.outcome) log(`  ${outcomeLine('hris.events', result.outcome)}`);
    log(`  ${result.passed ? 'PASS' : 'FAIL'} (${result.seconds.toFixed(0)} s)`);
    for (const output of result.outputs) log(`    ${output.replace(/\n/g, '\n    ')}`);
    for (const failure of result.failures) log(`    - ${failure}`);
  }
  return results;
}

async function main(): Promise<void> {
  const long = process.argv.includes('--long');
  const cluster = process.argv.includes('--cluster');
  const names = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const started = Date.now();
  const results = await runFaultSuite({ long, cluster }, names);
  console.log(`\n=== fault suite${long ? ' (long)' : ''}: ${results.filter((r) => r.passed).length}/${results.length} passed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  for (const r of results) {
    const o = r.outcome;
    console.log(
      `${r.passed ? 'PASS' : 'FAIL'}  ${r.name.padEnd(16)} ` +
        (o ? `sent ${o.sent} / applied ${o.applied} / lost ${o.lost} / doubled ${o.doubled} / dead-lettered ${o.deadLettered}` : 'no outcome'),
    );
  }
  process.exitCode = results.every((r) => r.passed) ? 0 : 1;
}

if (require.main === module) {
  main()
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    })
    // Child processes and clients left by a failure must not keep the suite alive.
    .finally(() => setTimeout(() => process.exit(), 1_000).unref());
}
