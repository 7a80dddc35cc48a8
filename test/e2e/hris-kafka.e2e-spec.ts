import { randomBytes, randomUUID } from 'node:crypto';
import { Admin, AssignerProtocol, Consumer, Kafka, KafkaMessage, logLevel, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import {
  basic,
  bearer,
  createEmployer,
  Employer,
  enrollmentKey,
  HRIS_CONSUMER,
  HRIS_DLQ_TOPIC,
  HRIS_TOPIC,
  inboxCount,
  openJobsReport,
  Outgoing,
  PARTITIONS,
  partitionOf,
  percent,
  PlanOptions,
  planStream,
  serviceEnrollments,
  ServiceAuth,
  StreamPlan,
  waitSettled,
} from '../../bench/hris-kit';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source';
import { describeWithKafka, testEnv } from '../setup/test-env';
import { expectEventually } from '../utils/expect-eventually';
import { OPS_BASIC, ServiceProcess, startServiceProcess } from '../utils/service-process';
import { createTestDatabase, TestDatabase } from '../utils/test-database';

/**
 * HRIS events on the real broker, applied by the service running as child processes on real
 * PostgreSQL: a mixed stream with duplicates and poison gives exactly the expected sagas, jobs,
 * enrollments (at the service and at the provider) and dead letters; a process killed with -9
 * mid-stream and a consumer group losing a member lose and double nothing. The streams, the
 * sandbox employers and the settle wait are those of the fault suite (bench/hris-kit.ts).
 */

/**
 * A stream of the fault suite's kind (bench/hris-kit.ts planStream), with one person's events
 * a second apart, all about two hours ago: the out-of-order changes below are later than
 * anything in it.
 */
const hrisStream = (employers: Employer[], options: PlanOptions): StreamPlan => planStream(employers, { secondsApart: 1, ...options });

/** One database, topic prefix and consumer group, shared by the service processes started on it. */
class Deployment {
  readonly processes: ServiceProcess[] = [];
  readonly prefix = `t-${testEnv.runId}-${randomBytes(3).toString('hex')}.`;
  readonly groupId = `${this.prefix}group`;
  readonly dlqReaderGroupId = `${this.prefix}dlq-reader`;
  readonly clientId = randomUUID();
  readonly clientSecret = `secret-${randomBytes(16).toString('hex')}`;
  private constructor(
    readonly database: TestDatabase,
    readonly db: DataSource,
    private readonly env: Record<string, string>,
  ) {}

  static async create(env: Record<string, string> = {}): Promise<Deployment> {
    const database = await createTestDatabase();
    const db = new DataSource(dataSourceOptions({ url: database.url, poolSize: 3 }));
    await db.initialize();
    return new Deployment(database, db, env);
  }

  physical(topic: string): string {
    return `${this.prefix}${topic}`;
  }

  async start(name: string): Promise<ServiceProcess> {
    const service = await startServiceProcess({
      name,
      databaseUrl: this.database.url,
      kafka: { brokers: testEnv.kafkaBrokers!, topicPrefix: this.prefix, groupId: this.groupId, partitions: PARTITIONS },
      env: { APP_CLIENT_ID: this.clientId, APP_CLIENT_SECRET: this.clientSecret, ...this.env },
    });
    this.processes.push(service);
    return service;
  }

  /** The application the processes are started with, and the tests' ops credentials. */
  get auth(): ServiceAuth {
    return { app: basic(this.clientId, this.clientSecret), ops: OPS_BASIC };
  }

  async close(admin: Admin | undefined): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop(15_000)));
    await this.db.destroy().catch(() => undefined);
    await this.database.drop();
    await admin?.deleteTopics({ topics: [HRIS_TOPIC, HRIS_DLQ_TOPIC, 'benefits.events'].map((t) => this.physical(t)) }).catch(() => undefined);
    await admin?.deleteGroups([this.groupId, this.dlqReaderGroupId]).catch(() => undefined);
  }
}

/** `messages_consumed_total` of the HRIS consumer in one process, by outcome. */
async function consumedBy(service: ServiceProcess): Promise<{ applied: number; duplicate: number; dead_lettered: number }> {
  const text = (await service.request('/metrics')).text;
  const count = (outcome: string) => {
    const match = new RegExp(`^messages_consumed_total\\{consumer="${HRIS_CONSUMER}",outcome="${outcome}"\\} (\\d+)`, 'm').exec(text);
    return match ? Number(match[1]) : 0;
  };
  return { applied: count('applied'), duplicate: count('duplicate'), dead_lettered: count('dead_lettered') };
}

/** Every event has its inbox row, every enrollment job has ended and the outbox is drained. */
async function settled(db: DataSource, distinctIds: number, timeoutMs = 90_000): Promise<void> {
  const { settled, progress } = await waitSettled(db, distinctIds, timeoutMs);
  // A stream that did not settle says which jobs were still open, and what each was waiting for.
  const open = settled ? '' : await openJobsReport(db).catch((e: Error) => `unknown (${e.message})`);
  expect({ ...progress, open }).toMatchObject({ inbox: expect.any(Number), openJobs: 0, unpublished: 0, open: '' });
  expect(progress?.inbox).toBeGreaterThanOrEqual(distinctIds);
}

interface Outcome {
  applied: number;
  deadLettered: number;
  lost: number;
  doubled: number;
}

/**
 * Checks the database and the provider against the plans, once `settled`: one inbox row per
 * distinct id, one saga per valid event with exactly its jobs, one dead letter per poison id
 * with its reason, and the expected enrollment of each (benefit, individual) at both ends.
 */
async function verify(deployment: Deployment, service: ServiceProcess, employers: Employer[], plans: StreamPlan[]): Promise<Outcome> {
  const { db } = deployment;
  const valid = plans.flatMap((p) => p.valid);
  const poison = plans.flatMap((p) => p.poison);

  const inbox: string[] = (await db.query(`SELECT message_id FROM inbox_messages WHERE consumer = $1`, [HRIS_CONSUMER])).map((r: { message_id: string }) => r.message_id);
  expect(inbox.sort()).toEqual([...valid, ...poison].map((e) => e.id).sort());

  const sagas: { id: string; n: number; jobs: number }[] = await db.query(
    `SELECT s.source_event_id AS id, count(DISTINCT s.id)::int AS n, count(sj.job_id)::int AS jobs
     FROM sagas s LEFT JOIN saga_jobs sj ON sj.saga_id = s.id
     WHERE s.source_event_id IS NOT NULL GROUP BY s.source_event_id`,
  );
  const sagaById = new Map(sagas.map((s) => [s.id.toLowerCase(), s]));
  const lost = valid.filter((e) => !sagaById.has(e.id)).length;
  const doubledSagas = sagas.reduce((n, s) => n + s.n - 1, 0);
  const doubledJobs = valid.reduce((n, e) => n + Math.max(0, (sagaById.get(e.id)?.jobs ?? 0) - e.jobs), 0);
  expect(sagas.map((s) => s.id.toLowerCase()).sort()).toEqual(valid.map((e) => e.id).sort());
  expect(sagas.filter((s) => s.n !== 1)).toEqual([]);
  // Each saga started exactly the jobs its event calls for: none doubled, none missing.
  expect(valid.filter((e) => sagaById.get(e.id)?.jobs !== e.jobs).map((e) => ({ ...e, actual: sagaById.get(e.id)?.jobs }))).toEqual([]);
  const expectedJobs = valid.reduce((n, e) => n + e.jobs, 0);
  // The events of a batch share jobs (one per benefit and operation): each saga is linked to each
  // job it started, every job belongs to some saga and has its groups, and a group gets its work
  // job unless a later event of the same batch took every individual of it over before that job
  // was written: then there is nothing to work.
  const [jobs] = await db.query(
    `SELECT (SELECT count(*) FROM saga_jobs)::int AS links,
            (SELECT count(*) FROM saga_jobs sj WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = sj.job_id))::int AS missing,
            (SELECT count(*) FROM jobs j WHERE j.type IN ('benefit_enroll', 'benefit_unenroll')
             AND NOT EXISTS (SELECT 1 FROM saga_jobs sj WHERE sj.job_id = j.id))::int AS orphans,
            (SELECT count(*) FROM jobs j WHERE j.type IN ('benefit_enroll', 'benefit_unenroll')
             AND NOT EXISTS (SELECT 1 FROM enrollment_groups g WHERE g.job_id = j.id))::int AS empty,
            (SELECT count(*) FROM enrollment_groups g
             WHERE NOT EXISTS (SELECT 1 FROM jobs w WHERE w.type = 'benefit_enrollment_group' AND w.params->>'group_id' = g.id::text)
               AND NOT (g.state = 'processed' AND g.superseded > 0 AND g.succeeded + g.failed + g.waiting = 0))::int AS unworked,
            (SELECT count(*) FROM jobs w WHERE w.type = 'benefit_enrollment_group'
             AND NOT EXISTS (SELECT 1 FROM enrollment_groups g WHERE g.id::text = w.params->>'group_id'))::int AS stray`,
  );
  expect(jobs).toEqual({ links: expectedJobs, missing: 0, orphans: 0, empty: 0, unworked: 0, stray: 0 });

  const deadLetters: { message_id: string; reason: string }[] = await db.query(`SELECT message_id, reason FROM dead_letters WHERE consumer = $1`, [HRIS_CONSUMER]);
  expect(deadLetters.map((d) => d.message_id).sort()).toEqual(poison.map((p) => p.id).sort());
  const reasons = new Map(deadLetters.map((d) => [d.message_id, d.reason]));
  for (const p of poison) expect({ id: p.id, reason: reasons.get(p.id) }).toEqual({ id: p.id, reason: expect.stringContaining(p.reason) });

  // At the service: one row per (benefit, individual) that had an enrollment, in its final status.
  const key = enrollmentKey;
  const expected = plans.flatMap((p) => p.expected);
  const serviceActual = await serviceEnrollments(db, employers);
  const serviceExpected = new Map(
    expected.filter((e) => e.status !== null).map((e) => [key(e.benefitId, e.individualId), e.status === 'enrolled' ? `enrolled ${e.amount}` : e.status]),
  );
  expect(Object.fromEntries([...serviceActual].sort())).toEqual(Object.fromEntries([...serviceExpected].sort()));

  // At the provider: what is in force today, read through the API.
  const providerActual = new Map<string, number>();
  for (const employer of employers) {
    const res = await service.request(`/employer/benefits/${employer.benefitId}/individuals`, { headers: bearer(employer.token) });
    expect(res.status).toBe(200);
    for (const item of res.body as { individual_id: string; code: number; body: { employee_deduction: { amount: number } } }[]) {
      expect(item.code).toBe(200);
      providerActual.set(key(employer.benefitId, item.individual_id), item.body.employee_deduction.amount);
    }
  }
  const providerExpected = new Map(expected.filter((e) => e.amount !== null).map((e) => [key(e.benefitId, e.individualId), e.amount!]));
  // A mismatch comes with the provider calls made for that individual, in the order they were made.
  const mismatched = [...new Set([...providerActual.keys(), ...providerExpected.keys()])].filter((k) => providerActual.get(k) !== providerExpected.get(k));
  const details = await Promise.all(
    mismatched.sort().map(async (k) => ({
      enrollment: k,
      expected: providerExpected.get(k) ?? 'not enrolled',
      atProvider: providerActual.get(k) ?? 'not enrolled',
      providerCalls: await providerCallsFor(db, k.split('/')[0], k.split('/')[1]),
    })),
  );
  expect(details).toEqual([]);

  return { applied: sagas.length, deadLettered: deadLetters.length, lost, doubled: doubledSagas + doubledJobs };
}

/**
 * The groups submitted to the provider for one (benefit, individual), in the order their calls
 * ended: which request (parent job, in creation order), what, and in how many runs.
 */
async function providerCallsFor(db: DataSource, benefitId: string, individualId: string) {
  const rows: { request: number; operation: string; amount: number | null; runs: number; completed_at: Date | null }[] = await db.query(
    `SELECT p.seq::int AS request, g.operation, (item->'configuration'->'employee_deduction'->>'amount')::int AS amount, j.attempts AS runs, j.completed_at
     FROM enrollment_groups g
     CROSS JOIN jsonb_array_elements(g.items) item
     JOIN jobs p ON p.id = g.job_id
     JOIN jobs j ON j.type = 'benefit_enrollment_group' AND j.params->>'group_id' = g.id::text
     WHERE g.benefit_id = $1 AND item->>'individual_id' = $2
     ORDER BY j.completed_at NULLS LAST`,
    [benefitId, individualId],
  );
  return rows.map((r) => `request #${r.request}: ${r.operation}${r.amount === null ? '' : ` ${r.amount}`} (runs: ${r.runs}, ended ${r.completed_at?.toISOString() ?? 'never'})`);
}

function summary(label: string, plans: StreamPlan[], outcome: Outcome): string {
  const sent = plans.reduce((n, p) => n + p.messages.length, 0);
  const duplicates = plans.reduce((n, p) => n + p.duplicates, 0);
  return (
    `hris.events ${label}: sent ${sent} / applied ${outcome.applied} / duplicates ${duplicates} / ` +
    `dead-lettered ${outcome.deadLettered} / lost ${outcome.lost} / doubled ${outcome.doubled}`
  );
}

/** The topic partitions each member of the group holds, by client id. */
async function assignments(admin: Admin, deployment: Deployment): Promise<Map<string, number[]>> {
  const { groups } = await admin.describeGroups([deployment.groupId]);
  const topic = deployment.physical(HRIS_TOPIC);
  return new Map(
    groups[0].members.map((m) => {
      const decoded = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
      return [m.clientId, [...(decoded?.assignment[topic] ?? [])].sort((a, b) => a - b)];
    }),
  );
}

describeWithKafka('HRIS events from Kafka, applied by service processes', () => {
  const kafka = new Kafka({ clientId: `hris-kafka-e2e-${randomBytes(3).toString('hex')}`, brokers: testEnv.kafkaBrokers?.split(',') ?? [], logLevel: logLevel.NOTHING });
  let producer: Producer;
  let admin: Admin;
  const deployments: Deployment[] = [];
  const consumers: Consumer[] = [];

  beforeAll(async () => {
    producer = kafka.producer({ allowAutoTopicCreation: false });
    admin = kafka.admin();
    await Promise.all([producer.connect(), admin.connect()]);
  });

  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
    await Promise.all(deployments.map((d) => d.close(admin)));
    await producer?.disconnect();
    await admin?.disconnect();
  });

  const deploy = async (env: Record<string, string> = {}) => {
    const deployment = await Deployment.create(env);
    deployments.push(deployment);
    return deployment;
  };

  /** Produces in order, a batch at a time: one key's messages keep their order on its partition. */
  async function produce(deployment: Deployment, messages: Outgoing[]): Promise<void> {
    for (let at = 0; at < messages.length; at += 100) {
      await producer.send({ topic: deployment.physical(HRIS_TOPIC), messages: messages.slice(at, at + 100) });
    }
  }

  /**
   * The stream's first half, then `stop` once that half is under way, then the rest. The rest goes
   * out only after the stop, so a stopped process always leaves work on its partitions for the
   * next one to take over, however fast the first half is applied.
   */
  async function produceAcrossStop(deployment: Deployment, messages: Outgoing[], stopped: number[], stop: () => Promise<void>): Promise<void> {
    const topic = deployment.physical(HRIS_TOPIC);
    const rest = messages.slice(Math.ceil(messages.length / 2));
    expect(rest.some((m) => stopped.includes(partitionOf(m.key, topic)))).toBe(true);
    await produce(deployment, messages.slice(0, messages.length - rest.length));
    await stop();
    await produce(deployment, rest);
  }

  describe('a mixed stream of 1,000 messages, then changes out of order', () => {
    let deployment: Deployment;
    let service: ServiceProcess;
    let employers: Employer[];
    let plan: StreamPlan;

    beforeAll(async () => {
      deployment = await deploy();
      service = await deployment.start('consumer-a');
      // Two employers with a new-hire policy, two without.
      employers = await Promise.all([true, true, false, false].map((policy) => createEmployer(service.url, deployment.auth, { employees: 30, policy })));
    }, 150_000);

    it('applies each distinct event once: sagas, jobs, enrollments at the service and the provider, dead letters and the .dlq topic', async () => {
      plan = hrisStream(employers, { perEmployer: 25, valid: 880, duplicates: 100, poison: 20, terminatedShare: 0.3, seed: 20261 });
      expect(plan.messages).toHaveLength(1_000);
      const metadata = await admin.fetchTopicMetadata({ topics: [deployment.physical(HRIS_TOPIC)] });
      expect(metadata.topics[0].partitions).toHaveLength(PARTITIONS);

      const dlq: KafkaMessage[] = [];
      const reader = kafka.consumer({ groupId: deployment.dlqReaderGroupId, maxWaitTimeInMs: 100 });
      consumers.push(reader);
      await reader.connect();
      await reader.subscribe({ topic: deployment.physical(HRIS_DLQ_TOPIC), fromBeginning: true });
      await reader.run({ eachMessage: async ({ message }) => void dlq.push(message) });

      await produce(deployment, plan.messages);
      await settled(deployment.db, plan.valid.length + plan.poison.length);
      const outcome = await verify(deployment, service, employers, [plan]);
      // One process consumed everything once: its counts are exact.
      expect(await consumedBy(service)).toEqual({ applied: plan.valid.length, duplicate: plan.duplicates, dead_lettered: plan.poison.length });

      // The dead-letter topic: exactly the poison, each with its reason and the original value and headers.
      await expectEventually(() => expect(dlq.length).toBeGreaterThanOrEqual(plan.poison.length), { timeoutMs: 30_000 });
      const deadLetters: { id: string; message_id: string; reason: string }[] = await deployment.db.query(
        `SELECT id, message_id, reason FROM dead_letters WHERE consumer = $1`,
        [HRIS_CONSUMER],
      );
      const byDeadLetterId = new Map(deadLetters.map((d) => [d.id, d]));
      const sent = new Map(plan.poison.map((p) => [p.id, p]));
      const received = dlq.map((m) => {
        const body = JSON.parse(m.value!.toString());
        const row = byDeadLetterId.get(body.dead_letter_id);
        return { messageId: row?.message_id, reason: body.reason, rowReason: row?.reason, original: body.original, header: m.headers?.['dead-letter-reason']?.toString() };
      });
      expect(received.map((r) => r.messageId).sort()).toEqual(plan.poison.map((p) => p.id).sort());
      for (const r of received) {
        const p = sent.get(r.messageId!)!;
        expect(r).toEqual({
          messageId: p.id,
          reason: r.rowReason,
          rowReason: expect.stringContaining(p.reason),
          header: r.rowReason!.slice(0, 500),
          original: { topic: HRIS_TOPIC, partition: partitionOf(p.message.key, deployment.physical(HRIS_TOPIC)), offset: expect.any(String), key: p.message.key, headers: p.message.headers, value: p.message.value },
        });
      }

      console.log(summary('mixed stream', [plan], outcome));
      expect(outcome).toMatchObject({ lost: 0, doubled: 0 });
    }, 150_000);

    it('an older ContributionChanged produced after a newer one is left alone: the newer configuration stays', async () => {
      const employer = employers[2];
      const target = plan.expected.find((e) => e.benefitId === employer.benefitId && e.status === 'enrolled')!;
      expect(target).toBeDefined();
      const change = (amount: number, occurredAt: Date) => ({
        id: randomUUID(),
        type: 'ContributionChanged',
        version: 1,
        occurred_at: occurredAt.toISOString(),
        connection_id: employer.connectionId,
        entity_id: employer.entityId,
        data: { individual_id: target.individualId, benefit_id: employer.benefitId, configuration: { employee_deduction: percent(amount) } },
      });
      // Both later than anything of the stream; the older one arrives second.
      const newer = change(777, new Date(Date.now() - 60_000));
      const older = change(111, new Date(Date.now() - 30 * 60_000));
      await produce(deployment, [newer, older].map((e) => ({ key: employer.connectionId, value: JSON.stringify(e), headers: {} })));

      const sagaOf = async (id: string) =>
        (
          await deployment.db.query(
            `SELECT s.state, s.outcome, coalesce((SELECT array_agg(job_id::text) FROM saga_jobs WHERE saga_id = s.id), '{}') AS job_ids
             FROM sagas s WHERE s.source_event_id = $1`,
            [id],
          )
        )[0];
      await expectEventually(async () => expect(await sagaOf(older.id)).toEqual({ state: 'completed', outcome: 'stale', job_ids: [] }), { timeoutMs: 30_000 });
      const applied = await sagaOf(newer.id);
      expect(applied.job_ids).toHaveLength(1);
      await expectEventually(async () => expect((await sagaOf(newer.id)).state).toBe('completed'), { timeoutMs: 30_000 });

      const [row] = await deployment.db.query(
        `SELECT status, (configuration->'employee_deduction'->>'amount')::int AS amount, occurred_at FROM enrollments WHERE benefit_id = $1 AND individual_id = $2`,
        [employer.benefitId, target.individualId],
      );
      expect(row).toEqual({ status: 'enrolled', amount: 777, occurred_at: new Date(newer.occurred_at) });
      const res = await service.request(`/employer/benefits/${employer.benefitId}/individuals?individual_ids=${target.individualId}`, { headers: bearer(employer.token) });
      expect(res.body).toEqual([{ individual_id: target.individualId, code: 200, body: expect.objectContaining({ employee_deduction: percent(777) }) }]);
    }, 60_000);
  });

  describe('a process killed with -9 mid-stream', () => {
    it('is replaced by a new process on the same database and group, and every event is applied once', async () => {
      // Small batches, so the kill lands between commits of this short stream (see the SIGTERM case).
      const deployment = await deploy({ KAFKA_BATCH_MAX: '20' });
      const first = await deployment.start('consumer-killed');
      const employers = await Promise.all([true, false, true, false].map((policy) => createEmployer(first.url, deployment.auth, { employees: 20, policy })));
      const plan = hrisStream(employers, { perEmployer: 15, valid: 540, duplicates: 50, poison: 10, terminatedShare: 0.3, seed: 4242 });
      const distinct = plan.valid.length + plan.poison.length;

      let atKill = 0;
      await produceAcrossStop(deployment, plan.messages, [...Array(PARTITIONS).keys()], async () => {
        await expectEventually(async () => expect(await inboxCount(deployment.db)).toBeGreaterThanOrEqual(distinct * 0.2), { timeoutMs: 30_000, intervalMs: 10 });
        expect((await first.kill('SIGKILL')).signal).toBe('SIGKILL');
        atKill = await inboxCount(deployment.db);
        expect(atKill).toBeLessThan(distinct); // really mid-stream
      });

      // The dead member holds its partitions until its session times out; then the new one gets them.
      const second = await deployment.start('consumer-restarted');
      await settled(deployment.db, distinct);
      const outcome = await verify(deployment, second, employers, [plan]);
      const restarted = await consumedBy(second);
      // The new process applied the rest (redeliveries of what the first one committed are duplicates).
      expect(restarted.applied + restarted.dead_lettered).toBeGreaterThan(0);
      expect(restarted.applied + restarted.dead_lettered).toBeLessThanOrEqual(distinct - atKill);
      console.log(`${summary('SIGKILL mid-stream', [plan], outcome)} (killed at ${atKill}/${distinct} applied)`);
      expect(outcome).toMatchObject({ lost: 0, doubled: 0 });
    }, 150_000);
  });

  describe('two processes in one consumer group', () => {
    let deployment: Deployment;
    let survivor: ServiceProcess;
    const employers: Employer[] = [];
    const plans: StreamPlan[] = [];

    /** The two members of the group and the partitions each holds, once both hold some. */
    const splitBetween = (names: string[]) =>
      expectEventually(
        async () => {
          const held = await assignments(admin, deployment);
          expect([...held.keys()].sort()).toEqual([...names].sort());
          expect([...held.values()].flat().sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5]);
          for (const partitions of held.values()) expect(partitions.length).toBeGreaterThan(0);
          return held;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );

    /** Employers until every member holds partitions of some of their connections (keys hash at random). */
    async function employersCovering(held: Map<string, number[]>, service: ServiceProcess): Promise<void> {
      const topic = deployment.physical(HRIS_TOPIC);
      const covered = () => [...held.values()].every((partitions) => employers.some((e) => partitions.includes(partitionOf(e.connectionId, topic))));
      if (employers.length === 0) {
        employers.push(...(await Promise.all([true, false, true, false].map((policy) => createEmployer(service.url, deployment.auth, { employees: 30, policy })))));
      }
      while (!covered() && employers.length < 12) {
        employers.push(await createEmployer(service.url, deployment.auth, { employees: 30, policy: employers.length % 2 === 0 }));
      }
      expect(covered()).toBe(true);
    }

    const survivorHoldsAll = () =>
      expectEventually(async () => expect(await assignments(admin, deployment)).toEqual(new Map([[survivor.name, [0, 1, 2, 3, 4, 5]]])), {
        timeoutMs: 45_000,
        intervalMs: 200,
      });

    it('split the partitions; when one stops (SIGTERM) the other takes over without loss', async () => {
      // Small batches: with the default (500) a member takes its whole share of this stream in
      // one batch, which a graceful stop finishes, and there would be nothing left to take over.
      deployment = await deploy({ KAFKA_BATCH_MAX: '20' });
      const [one, two] = await Promise.all([deployment.start('consumer-one'), deployment.start('consumer-two')]);
      survivor = two;
      const held = await splitBetween(['consumer-one', 'consumer-two']);
      await employersCovering(held, one);

      const plan = hrisStream(employers, { perEmployer: Math.min(15, Math.floor(60 / employers.length)), valid: 420, duplicates: 40, poison: 10, terminatedShare: 0.3, seed: 777 });
      plans.push(plan);
      const distinct = plan.valid.length + plan.poison.length;
      let before = { one: { applied: 0 }, two: { applied: 0 } };
      await produceAcrossStop(deployment, plan.messages, held.get('consumer-one') ?? [], async () => {
        await expectEventually(async () => expect(await inboxCount(deployment.db)).toBeGreaterThanOrEqual(distinct * 0.3), { timeoutMs: 30_000, intervalMs: 10 });
        before = { one: await consumedBy(one), two: await consumedBy(two) };
        expect(await one.kill('SIGTERM')).toEqual({ code: 0, signal: null });
        expect(await inboxCount(deployment.db)).toBeLessThan(distinct); // stopped mid-stream
      });

      await settled(deployment.db, distinct);
      const outcome = await verify(deployment, two, employers, plans);
      const after = await consumedBy(two);
      // Both had work of their own before the stop; the survivor did the rest.
      expect(before.one.applied).toBeGreaterThan(0);
      expect(before.two.applied).toBeGreaterThan(0);
      expect(after.applied).toBeGreaterThan(before.two.applied);
      await survivorHoldsAll();
      console.log(`${summary('two instances, one stopped (SIGTERM)', [plan], outcome)} (applied before the stop: ${before.one.applied} + ${before.two.applied})`);
      expect(outcome).toMatchObject({ lost: 0, doubled: 0 });
    }, 150_000);

    it('when a member is killed with -9, the other takes over once its session times out, without loss', async () => {
      expect(plans).toHaveLength(1);
      const three = await deployment.start('consumer-three');
      const held = await splitBetween(['consumer-two', 'consumer-three']);
      await employersCovering(held, survivor);

      // People who had no events yet.
      const plan = hrisStream(employers, { perEmployer: 10, firstPerson: 15, valid: 240, duplicates: 24, poison: 6, terminatedShare: 0.3, seed: 778 });
      plans.push(plan);
      const distinctBefore = await inboxCount(deployment.db);
      const distinct = plan.valid.length + plan.poison.length;
      let byThree = { applied: 0 };
      await produceAcrossStop(deployment, plan.messages, held.get('consumer-three') ?? [], async () => {
        // Killed once it has applied some of the stream itself (its first batch can commit after
        // the other member's have passed 30 % of the stream) and while the stream is still going.
        await expectEventually(
          async () => {
            expect(await inboxCount(deployment.db)).toBeGreaterThanOrEqual(distinctBefore + distinct * 0.3);
            expect((await consumedBy(three)).applied).toBeGreaterThan(0);
          },
          { timeoutMs: 30_000, intervalMs: 10 },
        );
        byThree = await consumedBy(three);
        expect((await three.kill('SIGKILL')).signal).toBe('SIGKILL');
        expect(await inboxCount(deployment.db)).toBeLessThan(distinctBefore + distinct); // killed mid-stream
      });
      expect(byThree.applied).toBeGreaterThan(0);

      await settled(deployment.db, distinctBefore + distinct);
      const outcome = await verify(deployment, survivor, employers, plans);
      await survivorHoldsAll();
      console.log(`${summary('two instances, one killed (SIGKILL), both streams', plans, outcome)} (applied by the killed one: ${byThree.applied})`);
      expect(outcome).toMatchObject({ lost: 0, doubled: 0 });
    }, 150_000);
  });
});
