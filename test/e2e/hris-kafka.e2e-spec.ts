import { randomBytes, randomUUID } from 'node:crypto';
import { Admin, AssignerProtocol, Consumer, Kafka, KafkaMessage, logLevel, Partitioners, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source';
import { describeWithKafka, testEnv } from '../setup/test-env';
import { expectEventually } from '../utils/expect-eventually';
import { OPS_BASIC, ServiceProcess, startServiceProcess } from '../utils/service-process';
import { json } from '../utils/test-app';
import { createTestDatabase, TestDatabase } from '../utils/test-database';

/**
 * HRIS events on the real broker, applied by the service running as child processes on real
 * PostgreSQL: a mixed stream with duplicates and poison gives exactly the expected sagas, jobs,
 * enrollments (at the service and at the provider) and dead letters; a process killed with -9
 * mid-stream and a consumer group losing a member lose and double nothing.
 */

const CONSUMER = 'hris-sagas';
const TOPIC = 'hris.events';
const DLQ_TOPIC = 'hris.events.dlq';
const PARTITIONS = 6;
const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }] };
const POLICY_AMOUNT = 300;
const ENROLLMENT_JOB_TYPES = ['benefit_enroll', 'benefit_unenroll', 'benefit_enrollment_group'];

const percent = (amount: number) => ({ type: 'percent', amount });
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'service-api-version': '2020-09-17' });
const DAY_MS = 86_400_000;
const dateOf = (time: number) => new Date(time).toISOString().slice(0, 10);

/** Deterministic randomness, so a failing stream can be produced again. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Employer {
  token: string;
  connectionId: string;
  entityId: string;
  benefitId: string;
  /** Directory ids, sorted. */
  people: string[];
  policy: boolean;
}

interface Outgoing {
  key: string;
  value: string;
  headers: Record<string, string>;
}

interface ValidEvent {
  id: string;
  type: string;
  /** Enrollment jobs its saga must start: more is a doubled job. */
  jobs: number;
}

interface PoisonEvent {
  id: string;
  reason: string;
  message: Outgoing;
}

/** What one (benefit, individual) must end as, at the service and at the provider. */
interface ExpectedEnrollment {
  benefitId: string;
  individualId: string;
  /** The `enrollments` row's status, or null for no row. */
  status: 'enrolled' | 'unenrolled' | null;
  /** The employee deduction in force at the provider today, or null when not enrolled. */
  amount: number | null;
}

interface StreamPlan {
  messages: Outgoing[];
  valid: ValidEvent[];
  poison: PoisonEvent[];
  duplicates: number;
  expected: ExpectedEnrollment[];
}

interface PlanOptions {
  /** Individuals per employer that get events (taken from `firstPerson` on). */
  perEmployer: number;
  firstPerson?: number;
  /** Distinct valid events in all: a hire each, a termination for some, contribution changes for the rest. */
  valid: number;
  duplicates: number;
  poison: number;
  terminatedShare: number;
  seed: number;
}

/**
 * A stream of HRIS events over the employers' people, and what it must lead to. Each person is
 * hired (enrolled by the policy where the employer has one), then changes contribution a few
 * times with increasing `occurred_at` (the last one stays), and is sometimes terminated (every
 * enrollment ends). People are interleaved at random, each in order. Duplicates (the same id
 * again, some with other transport headers or the id in capitals) follow their original on
 * its partition; poison is spread over the stream.
 */
function planStream(employers: Employer[], options: PlanOptions): StreamPlan {
  const rand = seededRandom(options.seed);
  const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)];
  const now = Date.now();
  const today = dateOf(now);
  const t0 = now - 2 * 3_600_000;

  const people = employers.flatMap((employer) =>
    employer.people.slice(options.firstPerson ?? 0, (options.firstPerson ?? 0) + options.perEmployer).map((individualId) => ({ employer, individualId })),
  );
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
  const queues = new Map<(typeof people)[number], Outgoing[]>();
  let amountSeq = 0;
  for (const person of people) {
    const { employer, individualId } = person;
    const envelope = (type: string, seq: number, data: Record<string, unknown>) => ({
      id: randomUUID(),
      type,
      version: 1,
      occurred_at: new Date(t0 + seq * 1_000).toISOString(),
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
    const count = changes.get(person)!;
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
    queues.set(person, queue);
  }

  // Interleave people at random, each one's events in order.
  const messages: Outgoing[] = [];
  const pending = [...queues.values()].filter((q) => q.length > 0);
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
  const validMessages = messages.filter((m) => !poison.some((p) => p.message === m));
  while (chosen.size < options.duplicates) chosen.add(pick(validMessages));
  let variant = 0;
  for (const original of chosen) {
    const copy: Outgoing = { ...original, headers: { ...original.headers } };
    const body = safeParse(original.value);
    switch (variant++ % 4) {
      case 1:
        // Another transport id: the envelope id decides, not the header.
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
    const at = messages.indexOf(original);
    messages.splice(at + 1 + Math.floor(rand() * (messages.length - at)), 0, copy);
  }
  return { messages, valid, poison, duplicates: chosen.size, expected };
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
  ) {}

  static async create(): Promise<Deployment> {
    const database = await createTestDatabase();
    const db = new DataSource(dataSourceOptions({ url: database.url, poolSize: 3 }));
    await db.initialize();
    return new Deployment(database, db);
  }

  physical(topic: string): string {
    return `${this.prefix}${topic}`;
  }

  async start(name: string): Promise<ServiceProcess> {
    const service = await startServiceProcess({
      name,
      databaseUrl: this.database.url,
      kafka: { brokers: testEnv.kafkaBrokers!, topicPrefix: this.prefix, groupId: this.groupId, partitions: PARTITIONS },
      env: { APP_CLIENT_ID: this.clientId, APP_CLIENT_SECRET: this.clientSecret },
    });
    this.processes.push(service);
    return service;
  }

  get appBasic() {
    return { authorization: `Basic ${Buffer.from(`${this.clientId}:${this.clientSecret}`).toString('base64')}` };
  }

  async close(admin: Admin | undefined): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop(15_000)));
    await this.db.destroy().catch(() => undefined);
    await this.database.drop();
    await admin?.deleteTopics({ topics: [TOPIC, DLQ_TOPIC, 'benefits.events'].map((t) => this.physical(t)) }).catch(() => undefined);
    await admin?.deleteGroups([this.groupId, this.dlqReaderGroupId]).catch(() => undefined);
  }
}

/** A sandbox employer with a 401(k) (created at the provider), and a 3 % new-hire policy when asked. */
async function createEmployer(deployment: Deployment, service: ServiceProcess, { employees, policy }: { employees: number; policy: boolean }): Promise<Employer> {
  const connection = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: employees }, deployment.appBasic));
  if (connection.status !== 200) throw new Error(`sandbox connection: ${connection.status} ${connection.text}`);
  const { access_token: token, connection_id: connectionId, entity_id: entityId } = connection.body;
  const directory = await service.request('/employer/directory?limit=10000', { headers: bearer(token) });
  const people: string[] = directory.body.individuals.map((i: { id: string }) => i.id).sort();
  const created = await service.request(
    '/employer/benefits',
    json({ type: '401k', description: '401(k)', frequency: 'every_paycheck', company_contribution: MATCH }, bearer(token)),
  );
  if (created.status !== 200) throw new Error(`benefit: ${created.status} ${created.text}`);
  await expectEventually(async () => expect((await service.request(`/jobs/automated/${created.body.job_id}`, { headers: bearer(token) })).body.status).toBe('complete'));
  if (policy) {
    const res = await service.request(
      '/ops/api/policies',
      json(
        { connection_id: connectionId, entity_id: entityId, benefit_id: created.body.benefit_id, configuration: { employee_deduction: percent(POLICY_AMOUNT) }, waiting_period_days: 30 },
        OPS_BASIC,
      ),
    );
    if (res.status !== 200) throw new Error(`policy: ${res.status} ${res.text}`);
  }
  return { token, connectionId, entityId, benefitId: created.body.benefit_id, people, policy };
}

/** `messages_consumed_total` of the HRIS consumer in one process, by outcome. */
async function consumedBy(service: ServiceProcess): Promise<{ applied: number; duplicate: number; dead_lettered: number }> {
  const text = (await service.request('/metrics')).text;
  const count = (outcome: string) => {
    const match = new RegExp(`^messages_consumed_total\\{consumer="${CONSUMER}",outcome="${outcome}"\\} (\\d+)`, 'm').exec(text);
    return match ? Number(match[1]) : 0;
  };
  return { applied: count('applied'), duplicate: count('duplicate'), dead_lettered: count('dead_lettered') };
}

const inboxCount = async (db: DataSource): Promise<number> =>
  (await db.query(`SELECT count(*)::int AS n FROM inbox_messages WHERE consumer = $1`, [CONSUMER]))[0].n;

/** Every event has its inbox row, every enrollment job has ended and the outbox is drained. */
async function settled(db: DataSource, distinctIds: number, timeoutMs = 90_000): Promise<void> {
  await expectEventually(
    async () => {
      const [state] = await db.query(
        `SELECT (SELECT count(*) FROM inbox_messages WHERE consumer = $1)::int AS inbox,
                (SELECT count(*) FROM jobs WHERE type = ANY($2::text[]) AND status IN ('pending', 'in_progress'))::int AS open_jobs,
                (SELECT count(*) FROM outbox_messages WHERE published_at IS NULL)::int AS unpublished`,
        [CONSUMER, ENROLLMENT_JOB_TYPES],
      );
      expect(state.inbox).toBeGreaterThanOrEqual(distinctIds);
      expect(state).toMatchObject({ open_jobs: 0, unpublished: 0 });
    },
    { timeoutMs, intervalMs: 200 },
  );
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

  const inbox: string[] = (await db.query(`SELECT message_id FROM inbox_messages WHERE consumer = $1`, [CONSUMER])).map((r: { message_id: string }) => r.message_id);
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
  const [jobs] = await db.query(
    `SELECT (SELECT count(*) FROM jobs WHERE type IN ('benefit_enroll', 'benefit_unenroll'))::int AS parents,
            (SELECT count(*) FROM jobs WHERE type = 'benefit_enrollment_group')::int AS internal,
            (SELECT count(*) FROM enrollment_groups)::int AS groups`,
  );
  expect(jobs).toEqual({ parents: expectedJobs, internal: expectedJobs, groups: expectedJobs });

  const deadLetters: { message_id: string; reason: string }[] = await db.query(`SELECT message_id, reason FROM dead_letters WHERE consumer = $1`, [CONSUMER]);
  expect(deadLetters.map((d) => d.message_id).sort()).toEqual(poison.map((p) => p.id).sort());
  const reasons = new Map(deadLetters.map((d) => [d.message_id, d.reason]));
  for (const p of poison) expect({ id: p.id, reason: reasons.get(p.id) }).toEqual({ id: p.id, reason: expect.stringContaining(p.reason) });

  // At the service: one row per (benefit, individual) that had an enrollment, in its final status.
  const benefitIds = employers.map((e) => e.benefitId);
  const rows: { benefit_id: string; individual_id: string; status: string; amount: number | null }[] = await db.query(
    `SELECT benefit_id, individual_id, status, (configuration->'employee_deduction'->>'amount')::int AS amount
     FROM enrollments WHERE benefit_id = ANY($1::uuid[])`,
    [benefitIds],
  );
  const key = (benefitId: string, individualId: string) => `${benefitId}/${individualId.toLowerCase()}`;
  const expected = plans.flatMap((p) => p.expected);
  const serviceActual = new Map(rows.map((r) => [key(r.benefit_id, r.individual_id), r.status === 'enrolled' ? `enrolled ${r.amount}` : r.status]));
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
  const topic = deployment.physical(TOPIC);
  return new Map(
    groups[0].members.map((m) => {
      const decoded = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
      return [m.clientId, [...(decoded?.assignment[topic] ?? [])].sort((a, b) => a - b)];
    }),
  );
}

/** The partition a key goes to (the producer's default partitioner). */
function partitionOf(key: string, topic: string): number {
  const partitionMetadata = Array.from({ length: PARTITIONS }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));
  return Partitioners.DefaultPartitioner()({ topic, partitionMetadata, message: { key, value: null } });
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

  const deploy = async () => {
    const deployment = await Deployment.create();
    deployments.push(deployment);
    return deployment;
  };

  /** Produces in order, a batch at a time: one key's messages keep their order on its partition. */
  async function produce(deployment: Deployment, messages: Outgoing[]): Promise<void> {
    for (let at = 0; at < messages.length; at += 100) {
      await producer.send({ topic: deployment.physical(TOPIC), messages: messages.slice(at, at + 100) });
    }
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
      employers = await Promise.all([true, true, false, false].map((policy) => createEmployer(deployment, service, { employees: 30, policy })));
    }, 150_000);

    it('applies each distinct event once: sagas, jobs, enrollments at the service and the provider, dead letters and the .dlq topic', async () => {
      plan = planStream(employers, { perEmployer: 25, valid: 880, duplicates: 100, poison: 20, terminatedShare: 0.3, seed: 20261 });
      expect(plan.messages).toHaveLength(1_000);
      const metadata = await admin.fetchTopicMetadata({ topics: [deployment.physical(TOPIC)] });
      expect(metadata.topics[0].partitions).toHaveLength(PARTITIONS);

      const dlq: KafkaMessage[] = [];
      const reader = kafka.consumer({ groupId: deployment.dlqReaderGroupId, maxWaitTimeInMs: 100 });
      consumers.push(reader);
      await reader.connect();
      await reader.subscribe({ topic: deployment.physical(DLQ_TOPIC), fromBeginning: true });
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
        [CONSUMER],
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
          original: { topic: TOPIC, partition: partitionOf(p.message.key, deployment.physical(TOPIC)), offset: expect.any(String), key: p.message.key, headers: p.message.headers, value: p.message.value },
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
      const deployment = await deploy();
      const first = await deployment.start('consumer-killed');
      const employers = await Promise.all([true, false, true, false].map((policy) => createEmployer(deployment, first, { employees: 20, policy })));
      const plan = planStream(employers, { perEmployer: 15, valid: 540, duplicates: 50, poison: 10, terminatedShare: 0.3, seed: 4242 });
      const distinct = plan.valid.length + plan.poison.length;

      await produce(deployment, plan.messages);
      await expectEventually(async () => expect(await inboxCount(deployment.db)).toBeGreaterThanOrEqual(distinct * 0.2), { timeoutMs: 30_000, intervalMs: 10 });
      const killed = await first.kill('SIGKILL');
      expect(killed.signal).toBe('SIGKILL');
      const atKill = await inboxCount(deployment.db);
      expect(atKill).toBeLessThan(distinct); // really mid-stream

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
      const topic = deployment.physical(TOPIC);
      const covered = () => [...held.values()].every((partitions) => employers.some((e) => partitions.includes(partitionOf(e.connectionId, topic))));
      if (employers.length === 0) {
        employers.push(...(await Promise.all([true, false, true, false].map((policy) => createEmployer(deployment, service, { employees: 30, policy })))));
      }
      while (!covered() && employers.length < 12) {
        employers.push(await createEmployer(deployment, service, { employees: 30, policy: employers.length % 2 === 0 }));
      }
      expect(covered()).toBe(true);
    }

    const survivorHoldsAll = () =>
      expectEventually(async () => expect(await assignments(admin, deployment)).toEqual(new Map([[survivor.name, [0, 1, 2, 3, 4, 5]]])), {
        timeoutMs: 45_000,
        intervalMs: 200,
      });

    it('split the partitions; when one stops (SIGTERM) the other takes over without loss', async () => {
      deployment = await deploy();
      const [one, two] = await Promise.all([deployment.start('consumer-one'), deployment.start('consumer-two')]);
      survivor = two;
      await employersCovering(await splitBetween(['consumer-one', 'consumer-two']), one);

      const plan = planStream(employers, { perEmployer: Math.min(15, Math.floor(60 / employers.length)), valid: 420, duplicates: 40, poison: 10, terminatedShare: 0.3, seed: 777 });
      plans.push(plan);
      const distinct = plan.valid.length + plan.poison.length;
      await produce(deployment, plan.messages);
      await expectEventually(async () => expect(await inboxCount(deployment.db)).toBeGreaterThanOrEqual(distinct * 0.3), { timeoutMs: 30_000, intervalMs: 10 });
      const before = { one: await consumedBy(one), two: await consumedBy(two) };
      const stopped = await one.kill('SIGTERM');
      expect(stopped).toEqual({ code: 0, signal: null });
      expect(await inboxCount(deployment.db)).toBeLessThan(distinct); // stopped mid-stream

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
      await employersCovering(await splitBetween(['consumer-two', 'consumer-three']), survivor);

      // People who had no events yet.
      const plan = planStream(employers, { perEmployer: 10, firstPerson: 15, valid: 240, duplicates: 24, poison: 6, terminatedShare: 0.3, seed: 778 });
      plans.push(plan);
      const distinctBefore = await inboxCount(deployment.db);
      const distinct = plan.valid.length + plan.poison.length;
      await produce(deployment, plan.messages);
      await expectEventually(async () => expect(await inboxCount(deployment.db)).toBeGreaterThanOrEqual(distinctBefore + distinct * 0.3), { timeoutMs: 30_000, intervalMs: 10 });
      const byThree = await consumedBy(three);
      expect((await three.kill('SIGKILL')).signal).toBe('SIGKILL');
      expect(byThree.applied).toBeGreaterThan(0);
      expect(await inboxCount(deployment.db)).toBeLessThan(distinctBefore + distinct); // killed mid-stream

      await settled(deployment.db, distinctBefore + distinct);
      const outcome = await verify(deployment, survivor, employers, plans);
      await survivorHoldsAll();
      console.log(`${summary('two instances, one killed (SIGKILL), both streams', plans, outcome)} (applied by the killed one: ${byThree.applied})`);
      expect(outcome).toMatchObject({ lost: 0, doubled: 0 });
    }, 150_000);
  });
});
