import { randomUUID } from 'node:crypto';
import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ManualClock } from '../../src/domain/shared/clock';
import { MessageProcessor } from '../../src/infrastructure/messaging/inbox/message-processor';
import { InboundMessage, MessageHandler, PoisonMessageError } from '../../src/infrastructure/messaging/message';
import { MessageHandlerRegistry } from '../../src/infrastructure/messaging/message-handler-registry';
import { OutboxWriter } from '../../src/infrastructure/messaging/outbox/outbox-writer';
import { TOPICS } from '../../src/infrastructure/messaging/topics';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const basicOf = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const OPS = basicOf('ops', 'ops-password-for-tests');
const T0 = '2026-07-02T15:00:00Z';
const PROBE_TOPIC = 'ops.probe';
const PROBE_CONSUMER = 'ops-replay-probe';

/**
 * A consumer the tests steer: it refuses messages as poison, fails as if the database blinked,
 * or applies them (one row in ops_probe_effects, in the inbox transaction).
 */
@Injectable()
class ProbeConsumer implements MessageHandler {
  readonly consumer = PROBE_CONSUMER;
  readonly topic = PROBE_TOPIC;
  mode: 'poison' | 'transient' | 'apply' = 'poison';

  async handle(message: InboundMessage, manager: EntityManager): Promise<void> {
    if (this.mode === 'poison') throw new PoisonMessageError('amount must be a number');
    if (this.mode === 'transient') throw new Error('connection reset by peer');
    const body = JSON.parse(message.value) as { id: string };
    await manager.query(`INSERT INTO ops_probe_effects (message_id, key) VALUES ($1, $2)`, [body.id, message.key]);
  }
}

@Module({ providers: [ProbeConsumer] })
class ProbeConsumerModule implements OnModuleInit {
  constructor(
    private readonly registry: MessageHandlerRegistry,
    private readonly probe: ProbeConsumer,
  ) {}

  onModuleInit(): void {
    this.registry.register(this.probe);
  }
}

interface SandboxEmployer {
  token: string;
  connectionId: string;
  entityId: string;
}

/**
 * The ops API over HTTP (/ops/api, HTTP Basic with the ops credentials): overview, sagas, jobs
 * (retry), ops tasks (SLA state, audited resolution), dead letters (replay, discard),
 * connections and the audit trail; bad credentials and bad filters on every route.
 */
/** The HRIS event behind the new-hire saga the saga tests list. */
const NEW_HIRE_EVENT = `evt-${randomUUID()}`;

describeWithPostgres('Ops API', () => {
  const clock = new ManualClock(T0);
  let service: TestService;
  let db: DataSource;
  let probe: ProbeConsumer;
  let app: IssuedCredentials;
  /** Synced and retried here. */
  let automated: SandboxEmployer;
  /** Opens ops tasks. */
  let assisted: SandboxEmployer;
  /** Holds only rows the tests insert (sagas, jobs): nothing runs on it. */
  let quiet: SandboxEmployer;

  beforeAll(async () => {
    service = await startTestService({
      clock,
      extraModules: [ProbeConsumerModule],
      // Every route is tried with wrong credentials here; the limit on failed sign-ins has its own suite.
      env: { OPS_SIGN_IN_MAX_FAILURES: '1000' },
    });
    db = service.app.get(DataSource);
    probe = service.app.get(ProbeConsumer);
    await db.query(`CREATE TABLE ops_probe_effects (id bigserial PRIMARY KEY, message_id text NOT NULL, key text)`);
    app = await createApplication(service);
    automated = await sandboxEmployer('sandbox_automated');
    assisted = await sandboxEmployer('sandbox_assisted');
    quiet = await sandboxEmployer('sandbox_automated');
  });
  afterAll(() => service?.close());
  afterEach(() => {
    clock.set(T0);
    probe.mode = 'poison';
  });

  async function sandboxEmployer(providerId: string): Promise<SandboxEmployer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: providerId, employee_size: 5 }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  const ops = (path: string, body?: unknown, headers: Record<string, string> = OPS) =>
    body === undefined ? service.request(path, { headers }) : service.request(path, json(body, headers));
  const employerApi = (employer: SandboxEmployer, path: string, init: { method?: string; body?: unknown } = {}) =>
    service.request(path, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { ...bearer(employer.token), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });

  function expectError(res: TestResponse, status: number, name: string, serviceCode?: string) {
    expect({ status: res.status, body: res.body }).toMatchObject({
      status,
      body: { code: status, name, ...(serviceCode ? { service_code: serviceCode } : {}), message: expect.any(String) },
    });
  }

  /** The audit trail of one target, oldest first. */
  async function auditOf(targetType: string, targetId: string) {
    const res = await ops(`/ops/api/audit?target_type=${targetType}&target_id=${targetId}`);
    expect(res.status).toBe(200);
    return [...res.body.data].reverse();
  }

  const minutesBefore = (minutes: number, from = T0) => new Date(new Date(from).getTime() - minutes * 60_000);

  async function insertSaga(saga: {
    type: string;
    state: string;
    createdAt: Date;
    connectionId?: string;
    steps?: { at: string; name: string; detail?: Record<string, unknown> }[];
    outcome?: string;
    lastError?: string;
    sourceEventId?: string;
    jobs?: { id: string; status: string | null }[];
  }): Promise<string> {
    const id = randomUUID();
    await db.query(
      `INSERT INTO sagas (id, type, state, outcome, connection_id, entity_id, steps, last_error, created_at, updated_at, source_event_id)
       VALUES ($1, $2, $3, $4, $5, NULL, $6::jsonb, $7, $8, $8, $9)`,
      [
        id,
        saga.type,
        saga.state,
        saga.outcome ?? null,
        saga.connectionId ?? quiet.connectionId,
        JSON.stringify(saga.steps ?? []),
        saga.lastError ?? null,
        saga.createdAt,
        saga.sourceEventId ?? null,
      ],
    );
    for (const job of saga.jobs ?? []) await db.query(`INSERT INTO saga_jobs (saga_id, job_id, status) VALUES ($1, $2, $3)`, [id, job.id, job.status]);
    return id;
  }

  /** A job row no worker will lease: manual jobs are done by people, and `quiet` has no ops task for it. */
  async function insertJob(job: {
    status: string;
    createdAt: Date;
    kind?: string;
    type?: string;
    scheduledAt?: Date;
    result?: Record<string, unknown>;
    connectionId?: string;
  }): Promise<string> {
    const id = randomUUID();
    await db.query(
      `INSERT INTO jobs (id, connection_id, entity_id, kind, type, status, params, result, created_at, scheduled_at, completed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11)`,
      [
        id,
        job.connectionId ?? quiet.connectionId,
        quiet.entityId,
        job.kind ?? 'manual',
        job.type ?? 'benefit_register',
        job.status,
        JSON.stringify({ benefit_id: randomUUID() }),
        job.result === undefined ? null : JSON.stringify(job.result),
        job.createdAt,
        job.scheduledAt ?? job.createdAt,
        ['complete', 'error'].includes(job.status) ? job.createdAt : null,
      ],
    );
    return id;
  }

  /** A message the probe refuses, recorded as a dead letter by the real processor. */
  async function deadLetter(value?: string): Promise<{ id: string; messageId: string }> {
    const messageId = randomUUID();
    probe.mode = 'poison';
    const outcome = await service.app
      .get(MessageProcessor)
      .process(probe, { topic: PROBE_TOPIC, key: `key-${messageId}`, value: value ?? JSON.stringify({ id: messageId, amount: 'ten' }), headers: { 'message-id': messageId } });
    expect(outcome).toBe('dead_lettered');
    const [row] = await db.query(`SELECT id FROM dead_letters WHERE message_id = $1`, [messageId]);
    return { id: row.id, messageId };
  }

  const effectsOf = async (messageId: string): Promise<number> =>
    (await db.query(`SELECT count(*)::int AS n FROM ops_probe_effects WHERE message_id = $1`, [messageId]))[0].n;

  async function openTask(): Promise<{ task_id: string; job_id: string }> {
    const res = await employerApi(assisted, '/employer/benefits', {
      body: { type: '401k', description: `Ops ${randomUUID().slice(0, 8)}`, frequency: 'every_paycheck' },
    });
    expect(res.status).toBe(200);
    const tasks = await ops(`/ops/api/tasks?status=open&connection_id=${assisted.connectionId}`);
    const task = tasks.body.data.find((t: { job_id: string }) => t.job_id === res.body.job_id);
    expect(task).toBeDefined();
    return task;
  }

  describe('credentials', () => {
    // Every row has a body (null for a GET): jest gives a test with more parameters than its row a done callback.
    const routes: [string, unknown][] = [
      ['/ops/api/overview', null],
      ['/ops/api/sagas', null],
      [`/ops/api/sagas/${randomUUID()}`, null],
      ['/ops/api/jobs', null],
      [`/ops/api/jobs/${randomUUID()}`, null],
      [`/ops/api/jobs/${randomUUID()}/retry`, {}],
      ['/ops/api/tasks', null],
      ['/ops/api/dead-letters', null],
      [`/ops/api/dead-letters/${randomUUID()}`, null],
      ['/ops/api/dead-letters/replay', { ids: [randomUUID()] }],
      [`/ops/api/dead-letters/${randomUUID()}/discard`, { note: 'x' }],
      ['/ops/api/connections', null],
      [`/ops/api/connections/${randomUUID()}`, null],
      ['/ops/api/audit', null],
    ];

    it.each(routes)('%s refuses no credentials, wrong ones and an employer token with 401', async (path, body) => {
      const cases: [Record<string, string>, string][] = [
        [{}, 'missing_ops_credentials'],
        [basicOf('ops', 'not-the-password'), 'invalid_ops_credentials'],
        [basicOf('someone', 'ops-password-for-tests'), 'invalid_ops_credentials'],
        [bearer(automated.token), 'missing_ops_credentials'],
        [basic(app), 'invalid_ops_credentials'],
      ];
      for (const [headers, serviceCode] of cases) {
        const res = await ops(path, body ?? undefined, headers);
        expectError(res, 401, 'authentication_error', serviceCode);
        expect(res.headers.get('www-authenticate')).toContain('Basic');
      }
    });

    it('a refused action changes nothing and is not audited', async () => {
      const { id } = await deadLetter();
      const task = await openTask();
      const wrong = basicOf('ops', 'wrong');
      expectError(await ops(`/ops/api/dead-letters/${id}/discard`, { note: 'drop it' }, wrong), 401, 'authentication_error');
      expectError(await ops('/ops/api/dead-letters/replay', { ids: [id] }, bearer(automated.token)), 401, 'authentication_error');
      expectError(await ops(`/ops/api/tasks/${task.task_id}/complete`, {}, wrong), 401, 'authentication_error');
      expect((await ops(`/ops/api/dead-letters/${id}`)).body.status).toBe('open');
      expect((await ops(`/ops/api/tasks/${task.task_id}`)).body.status).toBe('open');
      expect(await auditOf('dead_letter', id)).toEqual([]);
      expect(await auditOf('task', task.task_id)).toEqual([]);
    });
  });

  describe('overview', () => {
    it('counts sagas by state, pending jobs by age, open tasks by SLA state and open dead letters', async () => {
      const before = (await ops('/ops/api/overview')).body;
      for (const state of ['started', 'waiting', 'waiting', 'completed', 'failed']) {
        await insertSaga({ type: 'enrollment', state, createdAt: minutesBefore(5) });
      }
      await insertSaga({ type: 'termination', state: 'failed', createdAt: minutesBefore(5) });
      for (const minutes of [0.5, 10, 30, 120, 2 * 24 * 60]) await insertJob({ status: 'pending', createdAt: minutesBefore(minutes) });
      await insertJob({ status: 'pending', createdAt: minutesBefore(1), scheduledAt: new Date('2026-08-01T00:00:00Z') });
      await insertJob({ status: 'error', createdAt: minutesBefore(3), result: { error: 'nope' } });
      await deadLetter();

      const after = await ops('/ops/api/overview');
      expect(after.status).toBe(200);
      const o = after.body;
      expect(o.generated_at).toBe('2026-07-02T15:00:00.000Z');
      expect(o.sagas.total - before.sagas.total).toBe(6);
      const stateDelta = Object.fromEntries(Object.keys(o.sagas.by_state).map((s) => [s, o.sagas.by_state[s] - before.sagas.by_state[s]]));
      expect(stateDelta).toEqual({ started: 1, waiting: 2, completed: 1, failed: 2 });
      expect(o.sagas.by_type.enrollment.waiting - before.sagas.by_type.enrollment.waiting).toBe(2);
      expect(o.sagas.by_type.termination.failed - before.sagas.by_type.termination.failed).toBe(1);

      const ageDelta = Object.fromEntries(Object.keys(o.jobs.pending.by_age).map((b) => [b, o.jobs.pending.by_age[b] - before.jobs.pending.by_age[b]]));
      expect(ageDelta).toEqual({ under_1m: 1, '1m_to_15m': 2, '15m_to_1h': 1, '1h_to_24h': 1, over_24h: 1 });
      expect(o.jobs.pending.total - before.jobs.pending.total).toBe(6);
      expect(o.jobs.pending.scheduled_later - before.jobs.pending.scheduled_later).toBe(1);
      expect(o.jobs.error - before.jobs.error).toBe(1);
      expect(o.dead_letters.open - before.dead_letters.open).toBe(1);
      expect(o.tasks).toEqual({ open: expect.any(Number), on_time: expect.any(Number), due_today: expect.any(Number), overdue: expect.any(Number) });
    });

    it('counts messages received (inbox) and benefits events written (outbox) per minute', async () => {
      const before = (await ops('/ops/api/overview?minutes=5')).body.events;
      probe.mode = 'apply';
      const processor = service.app.get(MessageProcessor);
      for (let i = 0; i < 3; i++) {
        const id = randomUUID();
        expect(await processor.process(probe, { topic: PROBE_TOPIC, key: 'k', value: JSON.stringify({ id }), headers: {} })).toBe('applied');
      }
      await db.transaction((manager) =>
        service.app.get(OutboxWriter).append(
          manager,
          [1, 2].map(() => ({ topic: TOPICS.benefitsEvents, key: quiet.connectionId, type: 'OpsProbe.v1', payload: { probe: true } })),
        ),
      );
      const res = await ops('/ops/api/overview?minutes=5');
      expect(res.status).toBe(200);
      const { events } = res.body;
      expect(events.window_minutes).toBe(5);
      expect(events.per_minute).toHaveLength(5);
      const minutes = events.per_minute.map((m: { minute: string }) => Date.parse(m.minute));
      expect(minutes.every((m: number, i: number) => i === 0 || m - minutes[i - 1] === 60_000)).toBe(true);
      expect(events.received_total - before.received_total).toBeGreaterThanOrEqual(3);
      expect(events.emitted_total - before.emitted_total).toBeGreaterThanOrEqual(2);
      expect(events.received_total).toBe(events.per_minute.reduce((n: number, m: { received: number }) => n + m.received, 0));
      expect((await ops('/ops/api/overview')).body.events.per_minute).toHaveLength(15);
    });

    it.each(['minutes=0', 'minutes=1441', 'minutes=abc', 'minutes=1.5', 'since=1h'])('refuses %s with 400', async (query) => {
      const res = await ops(`/ops/api/overview?${query}`);
      expectError(res, 400, 'invalid_request_error');
      expect(res.body.message).toContain(query.split('=')[0]);
    });
  });

  describe('sagas', () => {
    let ids: { enrollment: string; newHire: string; termination: string };
    let jobs: { done: string; waiting: string };

    beforeAll(async () => {
      jobs = {
        done: await insertJob({ status: 'complete', createdAt: minutesBefore(170), kind: 'internal', type: 'ops_probe_work', result: {} }),
        waiting: await insertJob({ status: 'pending', createdAt: minutesBefore(160), kind: 'internal', type: 'ops_probe_work' }),
      };
      ids = {
        enrollment: await insertSaga({
          type: 'enrollment',
          state: 'waiting',
          createdAt: minutesBefore(180),
          steps: [
            { at: minutesBefore(180).toISOString(), name: 'requested', detail: { individuals: 2 } },
            { at: minutesBefore(170).toISOString(), name: 'job_complete', detail: { job_id: jobs.done } },
            { at: minutesBefore(160).toISOString(), name: 'group_scheduled' },
          ],
          jobs: [
            { id: jobs.done, status: 'complete' },
            { id: jobs.waiting, status: null },
          ],
        }),
        newHire: await insertSaga({ type: 'new_hire', state: 'completed', outcome: 'enrolled', createdAt: minutesBefore(30), sourceEventId: NEW_HIRE_EVENT }),
        termination: await insertSaga({
          type: 'termination',
          state: 'failed',
          outcome: 'job_failed',
          lastError: 'provider refused',
          createdAt: minutesBefore(2 * 24 * 60),
        }),
      };
    });

    const listed = async (query: string) => {
      const res = await ops(`/ops/api/sagas?connection_id=${quiet.connectionId}&${query}`);
      expect(res.status).toBe(200);
      const mine = new Set(Object.values(ids));
      return res.body.data.filter((s: { saga_id: string }) => mine.has(s.saga_id)).map((s: { saga_id: string }) => s.saga_id);
    };

    it('lists newest first with paging and a summary of each', async () => {
      const res = await ops(`/ops/api/sagas?connection_id=${quiet.connectionId}&type=enrollment&state=waiting`);
      expect(res.status).toBe(200);
      expect(res.body.paging).toEqual({ count: expect.any(Number), offset: 0 });
      expect(res.body.data.find((s: { saga_id: string }) => s.saga_id === ids.enrollment)).toEqual({
        saga_id: ids.enrollment,
        type: 'enrollment',
        state: 'waiting',
        outcome: null,
        connection_id: quiet.connectionId,
        entity_id: null,
        source_event_id: null,
        attempts: 1,
        last_error: null,
        last_step: { at: minutesBefore(160).toISOString(), name: 'group_scheduled' },
        step_count: 3,
        age_seconds: 180 * 60,
        created_at: minutesBefore(180).toISOString(),
        updated_at: minutesBefore(180).toISOString(),
      });
      expect(await listed('')).toEqual([ids.newHire, ids.enrollment, ids.termination]);
      const page = await ops(`/ops/api/sagas?connection_id=${quiet.connectionId}&limit=1&offset=1`);
      expect(page.body.paging.offset).toBe(1);
      expect(page.body.data).toHaveLength(1);
    });

    it('filters by type, state, connection and age', async () => {
      expect(await listed('type=enrollment')).toEqual([ids.enrollment]);
      expect(await listed('state=failed')).toEqual([ids.termination]);
      expect(await listed('type=new_hire&state=completed')).toEqual([ids.newHire]);
      expect(await listed('type=new_hire&state=failed')).toEqual([]);
      expect(await listed('older_than=1h')).toEqual([ids.enrollment, ids.termination]);
      expect(await listed('newer_than=1d')).toEqual([ids.newHire, ids.enrollment]);
      expect(await listed('older_than=1h&newer_than=1d')).toEqual([ids.enrollment]);
      expect(await listed('older_than=180m')).toEqual([ids.enrollment, ids.termination]);
      expect(await listed('older_than=181m')).toEqual([ids.termination]);
      const other = await ops(`/ops/api/sagas?connection_id=${automated.connectionId}`);
      expect(other.body.data.map((s: { saga_id: string }) => s.saga_id)).not.toContain(ids.enrollment);
    });

    it('counts every saga of a type and state for paging without a connection, as the table holds them', async () => {
      for (const query of ['', 'state=failed', 'type=new_hire&state=completed', 'type=enrollment']) {
        const where = new URLSearchParams(query);
        const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM sagas WHERE ($1::text IS NULL OR type = $1) AND ($2::text IS NULL OR state = $2)`, [
          where.get('type'),
          where.get('state'),
        ]);
        const res = await ops(`/ops/api/sagas?${query}&limit=1`);
        expect([query, res.status, res.body.paging.count]).toEqual([query, 200, n]);
      }
      // A saga whose state moves is counted in its new state at once.
      const moving = await insertSaga({ type: 'enrollment', state: 'waiting', createdAt: minutesBefore(1) });
      const failedBefore = (await ops(`/ops/api/sagas?type=enrollment&state=failed&limit=1`)).body.paging.count;
      await db.query(`UPDATE sagas SET state = 'failed' WHERE id = $1`, [moving]);
      expect((await ops(`/ops/api/sagas?type=enrollment&state=failed&limit=1`)).body.paging.count).toBe(failedBefore + 1);
    });

    it('finds the saga an HRIS event started by the event id alone, whatever its case', async () => {
      const bySource = async (id: string) => {
        const res = await ops(`/ops/api/sagas?source_event_id=${encodeURIComponent(id)}`);
        expect(res.status).toBe(200);
        return res.body.data.map((s: { saga_id: string; source_event_id: string }) => [s.saga_id, s.source_event_id]);
      };
      expect(await bySource(NEW_HIRE_EVENT)).toEqual([[ids.newHire, NEW_HIRE_EVENT]]);
      expect(await bySource(NEW_HIRE_EVENT.toUpperCase())).toEqual([[ids.newHire, NEW_HIRE_EVENT]]);
      expect(await bySource(randomUUID())).toEqual([]);
      const tooLong = await ops(`/ops/api/sagas?source_event_id=${'x'.repeat(201)}`);
      expectError(tooLong, 400, 'invalid_request_error');
      expect(tooLong.body.message).toContain('source_event_id must be an event id of 1 to 200 characters');
    });

    it('shows one saga with its step timeline and the jobs it started, with their status now', async () => {
      await db.query(`UPDATE jobs SET status = 'error', result = '{"error":"boom"}', completed_at = $2 WHERE id = $1`, [jobs.waiting, new Date(T0)]);
      const res = await ops(`/ops/api/sagas/${ids.enrollment}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ saga_id: ids.enrollment, type: 'enrollment', state: 'waiting', step_count: 3 });
      expect(res.body.steps.map((s: { name: string }) => s.name)).toEqual(['requested', 'job_complete', 'group_scheduled']);
      expect(res.body.steps[0]).toEqual({ at: minutesBefore(180).toISOString(), name: 'requested', detail: { individuals: 2 } });
      expect(res.body.jobs).toEqual([
        {
          job_id: jobs.done,
          kind: 'internal',
          type: 'ops_probe_work',
          status: 'complete',
          saga_status: 'complete',
          error: null,
          created_at: minutesBefore(170).toISOString(),
          completed_at: minutesBefore(170).toISOString(),
        },
        {
          job_id: jobs.waiting,
          kind: 'internal',
          type: 'ops_probe_work',
          status: 'error',
          saga_status: null,
          error: 'boom',
          created_at: minutesBefore(160).toISOString(),
          completed_at: '2026-07-02T15:00:00.000Z',
        },
      ]);
      expect((await ops(`/ops/api/sagas/${ids.termination}`)).body).toMatchObject({ state: 'failed', last_error: 'provider refused', jobs: [], steps: [] });
    });

    it('answers 404 for an unknown saga and 400 for a malformed id', async () => {
      expectError(await ops(`/ops/api/sagas/${randomUUID()}`), 404, 'not_found_error', 'saga_not_found');
      const res = await ops('/ops/api/sagas/not-a-uuid');
      expectError(res, 400, 'invalid_request_error');
      expect(res.body.message).toContain('saga_id must be a UUID');
    });

    it('refuses bad filters with 400, naming the allowed values', async () => {
      const type = await ops('/ops/api/sagas?type=payroll_run');
      expectError(type, 400, 'invalid_request_error', 'invalid_request');
      expect(type.body.message).toContain('type must be one of: enrollment, new_hire, contribution_change, termination, assisted_fulfilment');
      const state = await ops('/ops/api/sagas?state=done');
      expectError(state, 400, 'invalid_request_error');
      expect(state.body.message).toContain('state must be one of: started, waiting, completed, failed');
      const cases: [string, string][] = [
        ['connection_id=42', 'connection_id must be a UUID'],
        ['older_than=2 hours', 'older_than must be a duration like 90s, 15m, 2h or 3d'],
        ['older_than=2026-07-01T00:00:00Z', 'older_than must be a duration'],
        ['newer_than=-1d', 'newer_than must be a duration'],
        ['newer_than=0m', 'newer_than must be a duration'],
        ['older_than=2h&newer_than=1h', 'older_than (2h) must be shorter than newer_than (1h)'],
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['offset=-1', 'offset'],
        ['sort=age', 'sort: unknown field'],
      ];
      for (const [query, message] of cases) {
        const res = await ops(`/ops/api/sagas?${query}`);
        expectError(res, 400, 'invalid_request_error');
        expect(res.body.message).toContain(message);
      }
    });

    it('refuses an offset past PostgreSQL\'s bigint on every listing with 400, naming the bound', async () => {
      for (const path of ['sagas', 'jobs', 'tasks', 'dead-letters', 'connections', 'audit', 'policies']) {
        for (const offset of ['1e20', '99999999999999999999999']) {
          const res = await ops(`/ops/api/${path}?offset=${offset}`);
          expectError(res, 400, 'invalid_request_error', 'invalid_request');
          expect(res.body.message).toContain('offset must be at most 2147483647');
        }
        // The bound itself is a page past the end, not an error.
        expect((await ops(`/ops/api/${path}?offset=2147483647`)).status).toBe(200);
      }
    });
  });

  describe('jobs', () => {
    it('lists pending jobs oldest first with their age, and the others newest first', async () => {
      const old = await insertJob({ status: 'pending', createdAt: minutesBefore(90) });
      const young = await insertJob({ status: 'pending', createdAt: minutesBefore(2) });
      const failed = [
        await insertJob({ status: 'error', createdAt: minutesBefore(50), result: { error: 'first' } }),
        await insertJob({ status: 'error', createdAt: minutesBefore(40), result: { error: 'second' } }),
      ];
      const pending = await ops(`/ops/api/jobs?status=pending&connection_id=${quiet.connectionId}`);
      expect(pending.status).toBe(200);
      const ids = pending.body.data.map((j: { job_id: string }) => j.job_id);
      expect(ids.indexOf(old)).toBeGreaterThanOrEqual(0);
      expect(ids.indexOf(old)).toBeLessThan(ids.indexOf(young));
      const ages = pending.body.data.map((j: { age_seconds: number }) => j.age_seconds);
      expect([...ages].sort((a, b) => b - a)).toEqual(ages);
      expect(pending.body.data.find((j: { job_id: string }) => j.job_id === old)).toEqual({
        job_id: old,
        job_url: expect.stringMatching(new RegExp(`/jobs/manual/${old}$`)),
        kind: 'manual',
        type: 'benefit_register',
        status: 'pending',
        connection_id: quiet.connectionId,
        entity_id: quiet.entityId,
        attempts: 0,
        age_seconds: 90 * 60,
        error: null,
        retriable: false,
        created_at: minutesBefore(90).toISOString(),
        scheduled_at: minutesBefore(90).toISOString(),
        started_at: null,
        completed_at: null,
      });
      const errors = await ops(`/ops/api/jobs?status=error&connection_id=${quiet.connectionId}&type=benefit_register&kind=manual`);
      const errorIds = errors.body.data.map((j: { job_id: string }) => j.job_id);
      expect(errorIds.indexOf(failed[1])).toBeLessThan(errorIds.indexOf(failed[0]));
      expect(errors.body.data.find((j: { job_id: string }) => j.job_id === failed[0])).toMatchObject({ status: 'error', error: 'first' });
      expect(errors.body.data.every((j: { status: string; kind: string }) => j.status === 'error' && j.kind === 'manual')).toBe(true);
    });

    it('shows an enrollment job with every individual’s result and the failures apart; no retry for it (409)', async () => {
      const [ok, refused] = [randomUUID(), randomUUID()];
      const id = await insertJob({
        status: 'error',
        kind: 'automated',
        type: 'benefit_enroll',
        createdAt: minutesBefore(20),
        result: { body: [{ individual_id: ok, code: 200 }, { individual_id: refused, code: 422, message: 'HSA enrollment is not available' }] },
      });
      const res = await ops(`/ops/api/jobs/${id}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        job_id: id,
        kind: 'automated',
        type: 'benefit_enroll',
        status: 'error',
        retriable: false,
        individual_error_count: 1,
        job_url: expect.stringMatching(new RegExp(`/jobs/automated/${id}$`)),
        body: [{ individual_id: ok, code: 200 }, { individual_id: refused, code: 422, message: 'HSA enrollment is not available' }],
        individual_errors: [{ individual_id: refused, code: 422, message: 'HSA enrollment is not available' }],
      });
      const retry = await ops(`/ops/api/jobs/${id}/retry`, {});
      expectError(retry, 409, 'conflict_error', 'job_not_retriable');
      expect(retry.body.message).toContain('benefit_enroll');
      expect((await ops(`/ops/api/jobs/${id}`)).body.status).toBe('error');
      expect(await auditOf('job', id)).toEqual([]);
    });

    it('retries a failed data sync: pending again with fresh attempts, run by a worker, audited', async () => {
      const configure = (status: string) =>
        employerApi(automated, '/sandbox/jobs/configuration', { method: 'PUT', body: { type: 'data_sync_all', completion_status: status } });
      expect((await configure('error')).status).toBe(200);
      const enqueued = await employerApi(automated, '/jobs/automated', { body: { type: 'data_sync_all' } });
      expect(enqueued.status).toBe(201);
      const jobId = enqueued.body.job_id;
      const failed = await expectEventually(async () => {
        const res = await ops(`/ops/api/jobs/${jobId}`);
        expect(res.body.status).toBe('error');
        return res.body;
      });
      expect(failed).toMatchObject({ type: 'data_sync_all', kind: 'automated', attempts: 1, retriable: true, error: expect.stringContaining('error') });
      const listed = await ops(`/ops/api/jobs?status=error&type=data_sync_all&connection_id=${automated.connectionId}`);
      expect(listed.body.data.map((j: { job_id: string }) => j.job_id)).toContain(jobId);

      // A saga that failed on the job waits for it again, and ends with it.
      const sagaId = randomUUID();
      await service.app.get(DataSource).query(
        `INSERT INTO sagas (id, type, state, outcome, connection_id, entity_id, steps, created_at, updated_at)
         VALUES ($1, 'enrollment', 'failed', 'job_failed', $2, NULL, '[]', now(), now())`,
        [sagaId, automated.connectionId],
      );
      await service.app.get(DataSource).query(`INSERT INTO saga_jobs (saga_id, job_id, status) VALUES ($1, $2, 'error')`, [sagaId, jobId]);

      expect((await configure('complete')).status).toBe(200);
      clock.set('2026-07-02T15:05:00Z');
      const retried = await ops(`/ops/api/jobs/${jobId}/retry`, {});
      expect(retried.status).toBe(200);
      expect(retried.body).toMatchObject({ job_id: jobId, retriable: false, result: null, error: null });
      expect(['pending', 'in_progress', 'complete']).toContain(retried.body.status);
      const done = await expectEventually(async () => {
        const res = await ops(`/ops/api/jobs/${jobId}`);
        expect(res.body.status).toBe('complete');
        return res.body;
      });
      expect(done).toMatchObject({ attempts: 1, error: null, scheduled_at: '2026-07-02T15:05:00.000Z', completed_at: '2026-07-02T15:05:00.000Z' });
      const saga = await ops(`/ops/api/sagas/${sagaId}`);
      expect(saga.body).toMatchObject({ state: 'completed', outcome: 'jobs_complete' });
      expect(saga.body.steps.map((step: { name: string }) => step.name)).toEqual(['job_retried', 'job_complete']);

      const audit = await auditOf('job', jobId);
      expect(audit).toEqual([
        {
          audit_id: expect.any(String),
          actor: 'ops',
          action: 'job.retry',
          target_type: 'job',
          target_id: jobId,
          detail: { type: 'data_sync_all', previous_error: failed.error, previous_attempts: 1 },
          at: '2026-07-02T15:05:00.000Z',
        },
      ]);
      // Done now: not in error.
      expectError(await ops(`/ops/api/jobs/${jobId}/retry`, {}), 409, 'conflict_error', 'job_not_in_error');
      expect(await auditOf('job', jobId)).toHaveLength(1);

      const connection = await ops(`/ops/api/connections/${automated.connectionId}`);
      expect(connection.body.last_sync).toMatchObject({ job_id: jobId, status: 'complete', kind: 'automated', error: null });
      expect(connection.body.entities).toEqual([
        { entity_id: automated.entityId, name: expect.any(String), status: 'active', last_synced_at: '2026-07-02T15:05:00.000Z' },
      ]);
    });

    it('a retry of a sync while another sync of the connection is open is 409', async () => {
      const failed = await insertJob({ status: 'error', kind: 'automated', type: 'data_sync_all', createdAt: minutesBefore(10), result: { error: 'x' } });
      await insertJob({ status: 'pending', kind: 'internal', type: 'data_sync_all', createdAt: new Date('2026-07-09T00:00:00Z') });
      const res = await ops(`/ops/api/jobs/${failed}/retry`, {});
      expectError(res, 409, 'conflict_error', 'sync_already_open');
      expect((await ops(`/ops/api/jobs/${failed}`)).body).toMatchObject({ status: 'error', result: { error: 'x' } });
    });

    it('a manual job is not retried (its ops task decides); a job not in error is 409', async () => {
      const manual = await insertJob({ status: 'error', createdAt: minutesBefore(5), result: { error: 'failed by ops' } });
      const res = await ops(`/ops/api/jobs/${manual}/retry`, {});
      expectError(res, 409, 'conflict_error', 'job_not_retriable');
      expect(res.body.message).toContain('manual');
      const pending = await insertJob({ status: 'pending', createdAt: minutesBefore(5) });
      const notInError = await ops(`/ops/api/jobs/${pending}/retry`, {});
      expectError(notInError, 409, 'conflict_error', 'job_not_in_error');
      expect(notInError.body.message).toContain('pending');
    });

    it('answers 404 for an unknown job, 400 for a malformed id and for bad filters', async () => {
      expectError(await ops(`/ops/api/jobs/${randomUUID()}`), 404, 'not_found_error', 'job_not_found');
      expectError(await ops(`/ops/api/jobs/${randomUUID()}/retry`, {}), 404, 'not_found_error', 'job_not_found');
      expectError(await ops('/ops/api/jobs/123'), 400, 'invalid_request_error');
      expectError(await ops('/ops/api/jobs/123/retry', {}), 400, 'invalid_request_error');
      const status = await ops('/ops/api/jobs?status=failed');
      expectError(status, 400, 'invalid_request_error');
      expect(status.body.message).toContain('status must be one of: pending, in_progress, complete, error, reauth_error, permissions_error');
      const type = await ops('/ops/api/jobs?type=payroll_run');
      expectError(type, 400, 'invalid_request_error');
      expect(type.body.message).toMatch(/type must be one of: .*benefit_enroll.*data_sync_all/);
      for (const query of ['type=DROP%20TABLE', 'kind=robot', 'connection_id=abc', 'limit=1000', 'page=2']) {
        const res = await ops(`/ops/api/jobs?${query}`);
        expectError(res, 400, 'invalid_request_error');
        expect(res.body.message).toContain(query.split('=')[0]);
      }
    });
  });

  describe('ops tasks', () => {
    it('carries the SLA state from the service clock and filters by it (sla, or due_state)', async () => {
      const task = await openTask();
      const ofTask = async (query: string) => {
        const res = await ops(`/ops/api/tasks?connection_id=${assisted.connectionId}&${query}`);
        expect(res.status).toBe(200);
        return res.body.data.filter((t: { task_id: string }) => t.task_id === task.task_id);
      };
      expect((await ops(`/ops/api/tasks/${task.task_id}`)).body).toMatchObject({ due_date: '2026-07-07', due_state: 'on_time' });
      expect(await ofTask('sla=on_time')).toHaveLength(1);
      expect(await ofTask('sla=overdue')).toHaveLength(0);

      const overviewBefore = (await ops('/ops/api/overview')).body.tasks;
      clock.set('2026-07-07T23:59:00Z');
      expect((await ops(`/ops/api/tasks/${task.task_id}`)).body.due_state).toBe('due_today');
      expect(await ofTask('sla=due_today')).toHaveLength(1);
      expect(await ofTask('due_state=due_today&sla=due_today')).toHaveLength(1);

      clock.set('2026-07-08T00:00:00Z');
      expect((await ops(`/ops/api/tasks/${task.task_id}`)).body.due_state).toBe('overdue');
      expect(await ofTask('sla=overdue')).toHaveLength(1);
      expect(await ofTask('sla=on_time')).toHaveLength(0);
      const overviewAfter = (await ops('/ops/api/overview')).body.tasks;
      expect(overviewAfter.overdue).toBeGreaterThanOrEqual(1);
      expect(overviewAfter.overdue).toBe(overviewBefore.overdue + overviewBefore.on_time + overviewBefore.due_today);
      expect(overviewAfter.open).toBe(overviewBefore.open);
    });

    it('refuses a bad sla filter with 400 naming the allowed values', async () => {
      const res = await ops('/ops/api/tasks?sla=late');
      expectError(res, 400, 'invalid_request_error');
      expect(res.body.message).toContain('sla must be one of: on_time, due_today, overdue');
      const both = await ops('/ops/api/tasks?sla=overdue&due_state=on_time');
      expectError(both, 400, 'invalid_request_error');
      expect(both.body.message).toContain('sla and due_state');
    });

    it('audits completing and failing a task: who, when, what', async () => {
      const done = await openTask();
      clock.set('2026-07-03T09:00:00Z');
      expect((await ops(`/ops/api/tasks/${done.task_id}/complete`, { note: 'Set up in the portal' })).status).toBe(200);
      expect(await auditOf('task', done.task_id)).toEqual([
        {
          audit_id: expect.any(String),
          actor: 'ops',
          action: 'task.complete',
          target_type: 'task',
          target_id: done.task_id,
          detail: { job_id: done.job_id, note: 'Set up in the portal' },
          at: '2026-07-03T09:00:00.000Z',
        },
      ]);
      const refused = await openTask();
      expectError(await ops(`/ops/api/tasks/${refused.task_id}/fail`, {}), 400, 'invalid_request_error');
      expect(await auditOf('task', refused.task_id)).toEqual([]);
      expect((await ops(`/ops/api/tasks/${refused.task_id}/fail`, { note: 'Plan closed' })).status).toBe(200);
      expect(await auditOf('task', refused.task_id)).toMatchObject([
        { actor: 'ops', action: 'task.fail', target_id: refused.task_id, detail: { job_id: refused.job_id, note: 'Plan closed' } },
      ]);
      // A manual job's failure is the task's: not retried here.
      expectError(await ops(`/ops/api/jobs/${refused.job_id}/retry`, {}), 409, 'conflict_error', 'job_not_retriable');
    });

    it('concurrent completion: exactly one request wins (200), the other is 409, one audit row', async () => {
      for (let round = 0; round < 3; round++) {
        const task = await openTask();
        const results = await Promise.all([
          ops(`/ops/api/tasks/${task.task_id}/complete`, { note: 'first' }),
          ops(`/ops/api/tasks/${task.task_id}/complete`, { note: 'second' }),
        ]);
        expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
        const loser = results.find((r) => r.status === 409)!;
        expectError(loser, 409, 'conflict_error', 'task_already_resolved');
        const winner = results.find((r) => r.status === 200)!;
        const audit = await auditOf('task', task.task_id);
        expect(audit).toHaveLength(1);
        expect(audit[0]).toMatchObject({ action: 'task.complete', detail: { note: winner.body.note } });
        expect((await ops(`/ops/api/tasks/${task.task_id}`)).body).toMatchObject({ status: 'completed', note: winner.body.note });
      }
    });
  });

  describe('dead letters', () => {
    it('lists and shows a dead letter: payload, headers and reason', async () => {
      const { id, messageId } = await deadLetter();
      const list = await ops(`/ops/api/dead-letters?status=open&topic=${PROBE_TOPIC}&consumer=${PROBE_CONSUMER}`);
      expect(list.status).toBe(200);
      const summary = list.body.data.find((d: { dead_letter_id: string }) => d.dead_letter_id === id);
      expect(summary).toEqual({
        dead_letter_id: id,
        consumer: PROBE_CONSUMER,
        topic: PROBE_TOPIC,
        partition: null,
        offset: null,
        message_key: `key-${messageId}`,
        message_id: messageId,
        reason: 'amount must be a number',
        status: 'open',
        created_at: expect.any(String),
        resolved_at: null,
        resolved_by: null,
        note: null,
      });
      const detail = await ops(`/ops/api/dead-letters/${id}`);
      expect(detail.status).toBe(200);
      expect(detail.body).toEqual({
        ...summary,
        payload: JSON.stringify({ id: messageId, amount: 'ten' }),
        payload_json: { id: messageId, amount: 'ten' },
        headers: { 'message-id': messageId },
      });
      const elsewhere = await ops(`/ops/api/dead-letters?topic=hris.events`);
      expect(elsewhere.body.data.map((d: { dead_letter_id: string }) => d.dead_letter_id)).not.toContain(id);
      const replayed = await ops(`/ops/api/dead-letters?status=replayed&topic=${PROBE_TOPIC}`);
      expect(replayed.body.data.map((d: { dead_letter_id: string }) => d.dead_letter_id)).not.toContain(id);
    });

    it('replays a dead letter once its cause is fixed: poison stays open and says why, a transient failure changes nothing, then it applies once', async () => {
      const { id, messageId } = await deadLetter();

      const still = await ops('/ops/api/dead-letters/replay', { ids: [id] });
      expect(still.status).toBe(200);
      expect(still.body.responses).toEqual([
        {
          dead_letter_id: id,
          code: 422,
          body: { code: 422, name: 'unprocessable_request_error', service_code: 'still_poison', message: expect.stringContaining('amount must be a number') },
        },
      ]);
      expect((await ops(`/ops/api/dead-letters/${id}`)).body).toMatchObject({ status: 'open', resolved_by: null });

      probe.mode = 'transient';
      const later = await ops('/ops/api/dead-letters/replay', { ids: [id] });
      expect(later.body.responses).toEqual([
        { dead_letter_id: id, code: 503, body: { code: 503, name: 'server_error', service_code: 'replay_unavailable', message: expect.any(String) } },
      ]);
      expect(later.body.responses[0].body.message).not.toContain('connection reset');
      expect((await ops(`/ops/api/dead-letters/${id}`)).body.status).toBe('open');
      expect(await effectsOf(messageId)).toBe(0);

      probe.mode = 'apply';
      clock.set('2026-07-02T16:00:00Z');
      const applied = await ops('/ops/api/dead-letters/replay', { ids: [id], note: '  amount parsing fixed  ' });
      expect(applied.status).toBe(200);
      expect(applied.body.responses).toEqual([
        {
          dead_letter_id: id,
          code: 200,
          body: expect.objectContaining({ dead_letter_id: id, status: 'replayed', resolved_by: 'ops', resolved_at: '2026-07-02T16:00:00.000Z', note: 'amount parsing fixed' }),
        },
      ]);
      expect(await effectsOf(messageId)).toBe(1);
      // The original message's inbox claim still stands: a redelivery is a duplicate.
      const redelivered = await service.app
        .get(MessageProcessor)
        .process(probe, { topic: PROBE_TOPIC, key: 'k', value: JSON.stringify({ id: messageId }), headers: { 'message-id': messageId } });
      expect(redelivered).toBe('duplicate');

      const again = await ops('/ops/api/dead-letters/replay', { ids: [id] });
      expect(again.body.responses[0]).toMatchObject({ code: 409, body: { name: 'conflict_error', service_code: 'dead_letter_not_open' } });
      expect(await effectsOf(messageId)).toBe(1);

      expect(await auditOf('dead_letter', id)).toEqual([
        expect.objectContaining({ action: 'dead_letter.replay', actor: 'ops', detail: { outcome: 'refused', reason: 'amount must be a number', note: null } }),
        expect.objectContaining({ action: 'dead_letter.replay', detail: { outcome: 'error', note: null } }),
        expect.objectContaining({ action: 'dead_letter.replay', detail: { outcome: 'replayed', note: 'amount parsing fixed' }, at: '2026-07-02T16:00:00.000Z' }),
      ]);
    });

    it('replays many at once, each id with its own answer', async () => {
      const a = await deadLetter();
      const b = await deadLetter();
      const notJson = await deadLetter('{"id": "broken"');
      const [gone] = await db.query(
        `INSERT INTO dead_letters (id, consumer, topic, payload, reason) VALUES ($1, 'retired-consumer', $2, '{}', 'unknown type') RETURNING id`,
        [randomUUID(), PROBE_TOPIC],
      );
      const unknown = randomUUID();
      probe.mode = 'apply';
      const res = await ops('/ops/api/dead-letters/replay', { ids: [a.id, unknown, notJson.id, b.id, gone.id] });
      expect(res.status).toBe(200);
      expect(res.body.responses.map((r: { dead_letter_id: string; code: number }) => [r.dead_letter_id, r.code])).toEqual([
        [a.id, 200],
        [unknown, 404],
        [notJson.id, 422],
        [b.id, 200],
        [gone.id, 422],
      ]);
      expect(res.body.responses[1].body).toMatchObject({ name: 'not_found_error', service_code: 'dead_letter_not_found' });
      expect(res.body.responses[2].body).toMatchObject({ service_code: 'still_poison', message: expect.stringContaining('not valid JSON') });
      expect(res.body.responses[4].body).toMatchObject({ service_code: 'no_consumer', message: expect.stringContaining('retired-consumer') });
      expect([await effectsOf(a.messageId), await effectsOf(b.messageId)]).toEqual([1, 1]);
      expect((await ops(`/ops/api/dead-letters/${notJson.id}`)).body.status).toBe('open');
      expect((await ops(`/ops/api/dead-letters/${gone.id}`)).body.status).toBe('open');
    });

    it('two replays of one dead letter at once: it applies once, the other answer is 409', async () => {
      const { id, messageId } = await deadLetter();
      probe.mode = 'apply';
      const results = await Promise.all([ops('/ops/api/dead-letters/replay', { ids: [id] }), ops('/ops/api/dead-letters/replay', { ids: [id] })]);
      expect(results.map((r) => r.body.responses[0].code).sort()).toEqual([200, 409]);
      expect(await effectsOf(messageId)).toBe(1);
      expect((await auditOf('dead_letter', id)).filter((e: { detail: { outcome: string } }) => e.detail.outcome === 'replayed')).toHaveLength(1);
    });

    it('discards with a note (required); a resolved one is 409', async () => {
      const { id } = await deadLetter();
      for (const body of [{}, { note: '' }, { note: '   ' }, { note: 7 }, { note: 'x', extra: true }]) {
        const res = await ops(`/ops/api/dead-letters/${id}/discard`, body);
        expectError(res, 400, 'invalid_request_error');
        expect(res.body.message).toMatch(/note|extra/);
      }
      expect((await ops(`/ops/api/dead-letters/${id}/discard`, {})).body.message).toContain('note is required to discard a dead letter');
      expect((await ops(`/ops/api/dead-letters/${id}`)).body.status).toBe('open');
      expect(await auditOf('dead_letter', id)).toEqual([]);

      const res = await ops(`/ops/api/dead-letters/${id}/discard`, { note: 'Test traffic from a partner sandbox' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ dead_letter_id: id, status: 'discarded', resolved_by: 'ops', resolved_at: '2026-07-02T15:00:00.000Z', note: 'Test traffic from a partner sandbox' });
      expect(await auditOf('dead_letter', id)).toMatchObject([
        { actor: 'ops', action: 'dead_letter.discard', detail: { note: 'Test traffic from a partner sandbox' }, at: '2026-07-02T15:00:00.000Z' },
      ]);
      expectError(await ops(`/ops/api/dead-letters/${id}/discard`, { note: 'again' }), 409, 'conflict_error', 'dead_letter_not_open');
      probe.mode = 'apply';
      expect((await ops('/ops/api/dead-letters/replay', { ids: [id] })).body.responses[0].code).toBe(409);
      expect((await ops(`/ops/api/dead-letters?status=discarded&topic=${PROBE_TOPIC}`)).body.data.map((d: { dead_letter_id: string }) => d.dead_letter_id)).toContain(id);
    });

    it('answers 404 and 400 for unknown and malformed ids, and refuses bad bodies and filters', async () => {
      expectError(await ops(`/ops/api/dead-letters/${randomUUID()}`), 404, 'not_found_error', 'dead_letter_not_found');
      expectError(await ops(`/ops/api/dead-letters/${randomUUID()}/discard`, { note: 'x' }), 404, 'not_found_error', 'dead_letter_not_found');
      expectError(await ops('/ops/api/dead-letters/nope'), 400, 'invalid_request_error');
      expectError(await ops('/ops/api/dead-letters/nope/discard', { note: 'x' }), 400, 'invalid_request_error');
      const id = randomUUID();
      const bodies: [unknown, string][] = [
        [{}, 'ids'],
        [{ ids: [] }, 'at least one'],
        [{ ids: id }, 'ids must be an array'],
        [{ ids: ['nope'] }, 'each of ids must be a UUID'],
        [{ ids: [id, id] }, 'must not repeat'],
        [{ ids: Array.from({ length: 101 }, () => randomUUID()) }, 'at most 100'],
        [{ ids: [id], note: 5 }, 'note must be a string'],
        [{ ids: [id], force: true }, 'force: unknown field'],
      ];
      for (const [body, message] of bodies) {
        const res = await ops('/ops/api/dead-letters/replay', body);
        expectError(res, 400, 'invalid_request_error');
        expect(res.body.message).toContain(message);
      }
      expectError(await ops('/ops/api/dead-letters/replay', '[]'), 400, 'invalid_request_error');
      expectError(await ops('/ops/api/dead-letters/replay', '{'), 400, 'bad_request_error', 'malformed_request');
      const status = await ops('/ops/api/dead-letters?status=closed');
      expectError(status, 400, 'invalid_request_error');
      expect(status.body.message).toContain('status must be one of: open, replayed, discarded');
      expectError(await ops('/ops/api/dead-letters?topic='), 400, 'invalid_request_error');
      expectError(await ops('/ops/api/dead-letters?limit=0'), 400, 'invalid_request_error');
    });
  });

  describe('connections', () => {
    it('lists connections with their entities and latest sync; filters by status and provider', async () => {
      const res = await ops(`/ops/api/connections?status=connected&provider_id=sandbox_assisted`);
      expect(res.status).toBe(200);
      const mine = res.body.data.find((c: { connection_id: string }) => c.connection_id === assisted.connectionId);
      expect(mine).toEqual({
        connection_id: assisted.connectionId,
        customer_id: null,
        customer_name: expect.any(String),
        provider_id: 'sandbox_assisted',
        authentication_type: expect.any(String),
        status: 'connected',
        sandbox: true,
        manual: true,
        products: expect.any(Array),
        entities: [{ entity_id: assisted.entityId, name: expect.any(String), status: 'active', last_synced_at: null }],
        last_sync: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        disconnected_at: null,
      });
      expect(res.body.data.every((c: { provider_id: string; status: string }) => c.provider_id === 'sandbox_assisted' && c.status === 'connected')).toBe(true);
      const disconnected = await ops('/ops/api/connections?status=disconnected');
      expect(disconnected.body.data.map((c: { connection_id: string }) => c.connection_id)).not.toContain(assisted.connectionId);
    });

    it('shows one connection with its recent syncs and counts of unfinished work', async () => {
      await insertSaga({ type: 'new_hire', state: 'waiting', createdAt: minutesBefore(1) });
      const res = await ops(`/ops/api/connections/${quiet.connectionId}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ connection_id: quiet.connectionId, provider_id: 'sandbox_automated', recent_syncs: expect.any(Array) });
      const [counts] = await db.query(
        `SELECT (SELECT count(*)::int FROM jobs WHERE connection_id = $1 AND status IN ('pending', 'in_progress')) AS unfinished_jobs,
                (SELECT count(*)::int FROM sagas WHERE connection_id = $1 AND state IN ('started', 'waiting')) AS active_sagas`,
        [quiet.connectionId],
      );
      expect(res.body.counts).toMatchObject(counts);
      expect(res.body.counts.active_sagas).toBeGreaterThanOrEqual(1);
      expectError(await ops(`/ops/api/connections/${randomUUID()}`), 404, 'not_found_error', 'connection_not_found');
      expectError(await ops('/ops/api/connections/abc'), 400, 'invalid_request_error');
      const status = await ops('/ops/api/connections?status=live');
      expectError(status, 400, 'invalid_request_error');
      expect(status.body.message).toContain('status must be one of: connected, reauth, disconnected');
    });
  });

  describe('audit trail', () => {
    it('lists newest first and filters by target, actor and action; refuses bad filters', async () => {
      const { id } = await deadLetter();
      await ops(`/ops/api/dead-letters/${id}/discard`, { note: 'audit probe' });
      const all = await ops('/ops/api/audit?actor=ops');
      expect(all.status).toBe(200);
      expect(all.body.paging.count).toBeGreaterThanOrEqual(1);
      const ids = all.body.data.map((e: { audit_id: string }) => BigInt(e.audit_id));
      const ats = all.body.data.map((e: { at: string }) => e.at);
      expect([...ats].sort().reverse()).toEqual(ats);
      expect(ids.length).toBeGreaterThan(0);
      const discards = await ops('/ops/api/audit?action=dead_letter.discard');
      expect(discards.body.data.every((e: { action: string }) => e.action === 'dead_letter.discard')).toBe(true);
      expect(discards.body.data.map((e: { target_id: string }) => e.target_id)).toContain(id);
      expect((await ops('/ops/api/audit?actor=somebody-else')).body).toEqual({ paging: { count: 0, offset: 0 }, data: [] });
      for (const query of ['target_type=Dead%20Letter', 'action=DROP', 'actor=', 'limit=101', 'target=x']) {
        const res = await ops(`/ops/api/audit?${query}`);
        expectError(res, 400, 'invalid_request_error');
      }
    });
  });
});
