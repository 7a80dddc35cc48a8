import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ManualClock } from '../../src/domain/shared/clock';
import { EmployerDataRepository } from '../../src/infrastructure/database/repositories/employer-data.repository';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const WHOLE_HISTORY = 'start_date=2000-01-01&end_date=2100-12-31';

interface SandboxEmployer {
  token: string;
  connectionId: string;
  entityId: string;
}

interface JobRow {
  id: string;
  status: string;
  params: Record<string, unknown> | null;
  after_job_id: string | null;
}

/** The helpers of one running service; the suites below differ by how long an edit waits for its sync. */
function harness(service: () => TestService, app: () => IssuedCredentials) {
  const db = () => service().app.get(DataSource);
  /** Sandbox edits take the token alone, without a version header. */
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const h = {
    db,
    async sandboxEmployer(employeeSize = 6, providerId = 'sandbox_automated'): Promise<SandboxEmployer> {
      const res = await service().request('/sandbox/connections', json({ provider_id: providerId, employee_size: employeeSize }, basic(app())));
      if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
      return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
    },
    read: (path: string, token: string, body?: unknown) =>
      body === undefined ? service().request(path, { headers: bearer(token) }) : service().request(path, json(body, bearer(token))),
    post: (path: string, body: unknown, token: string) => service().request(path, json(body, auth(token))),
    put: (path: string, body: unknown, token: string) => service().request(path, { ...json(body, auth(token)), method: 'PUT' }),
    async syncNow(token: string): Promise<string> {
      const started = await service().request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
      expect(started.status).toBe(201);
      await h.untilComplete(token, started.body.job_id);
      return started.body.job_id;
    },
    untilComplete: (token: string, jobId: string) =>
      expectEventually(async () => expect((await h.read(`/jobs/automated/${jobId}`, token)).body.status).toBe('complete')),
    jobsOf: (connectionId: string): Promise<JobRow[]> =>
      db().query(`SELECT id, status, params, after_job_id FROM jobs WHERE connection_id = $1 AND type = 'data_sync_all' ORDER BY seq`, [connectionId]),
    quotaOf: async (token: string) => (await h.read('/jobs/automated', token)).body.meta.quotas.data_sync_all,
    paymentIds: async (token: string): Promise<string[]> =>
      (await h.read(`/employer/payment?${WHOLE_HISTORY}`, token)).body.map((p: { id: string }) => p.id),
    payStatements: async (token: string, paymentId: string) =>
      (await h.read('/employer/pay-statement', token, { requests: [{ payment_id: paymentId }] })).body.responses[0],
    /**
     * Holds the entity's synced-generation row: a sync reaching its switch waits there, its copy
     * of the employer already read. Answers the release.
     */
    async holdSwitch(entityId: string): Promise<() => Promise<void>> {
      const runner = db().createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      await runner.query(`SELECT 1 FROM employer_syncs WHERE entity_id = $1 FOR UPDATE`, [entityId]);
      return async () => {
        await runner.commitTransaction();
        await runner.release();
      };
    },
    /** A sync of the entity that has read the employer and waits at its switch (holdSwitch). */
    async heldSync(employer: SandboxEmployer): Promise<{ jobId: string; release: () => Promise<void> }> {
      const release = await h.holdSwitch(employer.entityId);
      const started = await service().request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(employer.token)));
      expect(started.status).toBe(201);
      await expectEventually(async () => {
        const [{ waiting }] = await db().query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%employer_syncs%'`,
        );
        expect(waiting).toBe(1);
      });
      return { jobId: started.body.job_id, release };
    },
  };
  return h;
}

describeWithPostgres('sandbox edits on a synced connection start a sync and wait for it', () => {
  let service: TestService;
  let app: IssuedCredentials;
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  const h = harness(
    () => service,
    () => app,
  );

  beforeAll(async () => {
    service = await startTestService({ clock, env: { SANDBOX_REFRESHES_PER_HOUR: '2' } });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  it('shows a payment made after the first sync, with its pay statements, as soon as POST /sandbox/payment answers', async () => {
    const employer = await h.sandboxEmployer(8);
    const first = await h.syncNow(employer.token);
    const quota = await h.quotaOf(employer.token);
    expect(quota).toEqual({ allowed_refreshes: 2, remaining_refreshes: 1 });

    const paid = await h.post('/sandbox/payment', { pay_date: '2026-06-12' }, employer.token);
    expect(paid.status).toBe(200);
    expect(paid.body).toEqual({ payment_id: expect.stringMatching(UUID_V4), pay_date: '2026-06-12', sync_job_id: expect.stringMatching(UUID_V4), sync_status: 'complete' });
    expect(paid.headers.get('sync-job-id')).toBe(paid.body.sync_job_id);
    expect(paid.headers.get('sync-status')).toBe('complete');

    expect(await h.paymentIds(employer.token)).toContain(paid.body.payment_id);
    const statements = await h.payStatements(employer.token, paid.body.payment_id);
    expect(statements.code).toBe(200);
    expect(statements.body.paging.count).toBeGreaterThan(0);
    expect(statements.body.pay_statements).toHaveLength(statements.body.paging.count);

    // An ordinary automated data sync, told apart by params.trigger, and no refresh spent.
    const job = await h.read(`/jobs/automated/${paid.body.sync_job_id}`, employer.token);
    expect(job.body).toMatchObject({ type: 'data_sync_all', status: 'complete', params: { trigger: 'sandbox_edit' } });
    const listed = await h.read('/jobs/automated', employer.token);
    expect(listed.body.data.map((j: { job_id: string; params: unknown }) => [j.job_id, j.params])).toEqual([
      [paid.body.sync_job_id, { trigger: 'sandbox_edit' }],
      [first, null],
    ]);
    expect(listed.body.meta.quotas.data_sync_all).toEqual(quota);
  });

  it('leaves the refresh quota alone: edits still sync once it is used up, and it still reads the same', async () => {
    const employer = await h.sandboxEmployer(4);
    await h.syncNow(employer.token);
    await h.syncNow(employer.token);
    const exhausted = await h.read('/jobs/automated', employer.token, { type: 'data_sync_all' });
    expect(exhausted.status).toBe(429);

    const renamed = await h.put('/sandbox/company', { legal_name: 'Quota Free LLC' }, employer.token);
    expect(renamed.body).toMatchObject({ legal_name: 'Quota Free LLC', sync_status: 'complete' });
    const paid = await h.post('/sandbox/payment', {}, employer.token);
    expect(paid.body.sync_status).toBe('complete');
    expect((await h.read('/employer/company', employer.token)).body.legal_name).toBe('Quota Free LLC');
    expect(await h.paymentIds(employer.token)).toContain(paid.body.payment_id);
    expect(await h.quotaOf(employer.token)).toEqual({ allowed_refreshes: 2, remaining_refreshes: 0 });
    expect((await h.post('/sandbox/jobs', { type: 'data_sync_all' }, employer.token)).status).toBe(429);
  });

  it('shows individuals and employments edited or added after a sync at once', async () => {
    const employer = await h.sandboxEmployer(5);
    await h.syncNow(employer.token);
    const [someone] = (await h.read('/employer/directory', employer.token)).body.individuals.map((i: { id: string }) => i.id);

    const renamed = await h.put(`/sandbox/individual/${someone}`, { preferred_name: 'Ace' }, employer.token);
    expect(renamed.body).toMatchObject({ id: someone, preferred_name: 'Ace', sync_status: 'complete' });
    const terminated = await h.put(`/sandbox/employment/${someone}`, { end_date: '2026-05-29', is_active: false }, employer.token);
    expect(terminated.body).toMatchObject({ id: someone, end_date: '2026-05-29', sync_status: 'complete' });
    const added = await h.post(
      '/sandbox/directory',
      [{ first_name: 'Grace', last_name: 'Hopper', dob: '1986-12-09', title: 'Engineer', income: { unit: 'yearly', amount: 12_000_000 } }],
      employer.token,
    );
    expect(added.headers.get('sync-status')).toBe('complete');
    const hired: string = added.body[0].id;

    const people = { requests: [{ individual_id: someone }, { individual_id: hired }] };
    const individuals = (await h.read('/employer/individual', employer.token, people)).body.responses;
    expect(individuals.map((r: { code: number; body: { preferred_name?: string } }) => [r.code, r.body.preferred_name])).toEqual([
      [200, 'Ace'],
      [200, null],
    ]);
    const employments = (await h.read('/employer/employment', employer.token, people)).body.responses;
    expect(employments.map((r: { code: number; body: { end_date: string | null } }) => [r.code, r.body.end_date])).toEqual([
      [200, '2026-05-29'],
      [200, null],
    ]);
  });

  it('starts nothing for a connection that never synced: its reads are live', async () => {
    const employer = await h.sandboxEmployer(3);
    const paid = await h.post('/sandbox/payment', {}, employer.token);
    expect(paid.status).toBe(200);
    expect(Object.keys(paid.body).sort()).toEqual(['pay_date', 'payment_id']);
    expect(paid.headers.get('sync-job-id')).toBeNull();
    expect(paid.headers.get('sync-status')).toBeNull();
    expect(await h.jobsOf(employer.connectionId)).toEqual([]);
    expect(await h.paymentIds(employer.token)).toContain(paid.body.payment_id);
  });

  it('starts nothing while the connection’s syncs are configured to fail', async () => {
    const employer = await h.sandboxEmployer(3);
    await h.syncNow(employer.token);
    expect((await h.put('/sandbox/jobs/configuration', { type: 'data_sync_all', completion_status: 'error' }, employer.token)).status).toBe(200);
    const renamed = await h.put('/sandbox/company', { legal_name: 'Not Synced Inc.' }, employer.token);
    expect(renamed.status).toBe(200);
    expect(renamed.body).not.toHaveProperty('sync_job_id');
    expect(await h.jobsOf(employer.connectionId)).toHaveLength(1);
    expect((await h.read('/employer/company', employer.token)).body.legal_name).not.toBe('Not Synced Inc.');
  });

  it('syncs an Assisted sandbox connection too, with no pollable job id', async () => {
    const employer = await h.sandboxEmployer(3, 'sandbox_assisted');
    const synced = await h.post('/sandbox/jobs', { type: 'data_sync_all' }, employer.token);
    expect(synced.body.job_id).toBeNull();
    await expectEventually(async () => expect(await service.app.get(EmployerDataRepository).currentGeneration(employer.entityId)).not.toBeNull());

    const renamed = await h.put('/sandbox/company', { legal_name: 'Assisted Edit Co' }, employer.token);
    expect(renamed.body).toMatchObject({ legal_name: 'Assisted Edit Co', sync_job_id: null, sync_status: 'complete' });
    expect(renamed.headers.get('sync-job-id')).toBeNull();
    expect((await h.read('/employer/company', employer.token)).body.legal_name).toBe('Assisted Edit Co');
    expect((await h.read('/jobs/automated', employer.token)).body.data).toEqual([]);
  });

  it('shows an edit made while a sync runs: one more sync runs after that one, and the edit waits for it', async () => {
    const employer = await h.sandboxEmployer(6);
    await h.syncNow(employer.token);
    const running = await h.heldSync(employer);

    const paying = h.post('/sandbox/payment', {}, employer.token);
    const followUp = await expectEventually(async () => {
      const [row] = (await h.jobsOf(employer.connectionId)).filter((j) => j.after_job_id === running.jobId);
      expect(row).toMatchObject({ status: 'pending', params: { trigger: 'sandbox_edit' } });
      return row;
    });
    await running.release();
    const paid = await paying;
    expect(paid.body).toMatchObject({ sync_job_id: followUp.id, sync_status: 'complete' });
    expect((await h.read(`/jobs/automated/${running.jobId}`, employer.token)).body.status).toBe('complete');

    expect(await h.paymentIds(employer.token)).toContain(paid.body.payment_id);
    expect((await h.payStatements(employer.token, paid.body.payment_id)).code).toBe(200);
  });

  it('words a per-item 404 of synced reads with the last sync and the next step', async () => {
    const employer = await h.sandboxEmployer(3);
    const sync = await h.syncNow(employer.token);
    const syncedAt = (await h.read(`/jobs/automated/${sync}`, employer.token)).body.completed_at;
    const [payment, person] = [randomUUID(), randomUUID()];
    const since = `in this entity's data as of its last sync (${syncedAt}).`;

    expect((await h.payStatements(employer.token, payment)).body).toEqual({
      code: 404,
      name: 'not_found_error',
      service_code: 'payment_not_found',
      message: `No payment ${payment} ${since} A pay run made since shows after the next sync (POST /jobs/automated).`,
    });
    const people = { requests: [{ individual_id: person }] };
    expect((await h.read('/employer/individual', employer.token, people)).body.responses[0].body.message).toBe(
      `No individual ${person} ${since} Someone added since shows after the next sync (POST /jobs/automated).`,
    );
    expect((await h.read('/employer/employment', employer.token, people)).body.responses[0].body.message).toBe(
      `No employment for individual ${person} ${since} Someone added since shows after the next sync (POST /jobs/automated).`,
    );
  });
});

describeWithPostgres('sandbox edits whose sync outlasts the wait', () => {
  let service: TestService;
  let app: IssuedCredentials;
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  const h = harness(
    () => service,
    () => app,
  );

  beforeAll(async () => {
    service = await startTestService({ clock, env: { SANDBOX_EDIT_SYNC_WAIT_MS: '300' } });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  it('shares one queued sync among ten edits made while a sync runs, answers with its status, and shows all of them after it', async () => {
    const employer = await h.sandboxEmployer(6);
    await h.syncNow(employer.token);
    const running = await h.heldSync(employer);
    const quota = await h.quotaOf(employer.token);

    const edits: Promise<TestResponse>[] = [
      h.put('/sandbox/company', { legal_name: 'Ten Edits LLC' }, employer.token),
      // Without a pay date, each runs the next regular one: they take their turns.
      ...Array.from({ length: 9 }, () => h.post('/sandbox/payment', {}, employer.token)),
    ];
    const answers = await Promise.all(edits);
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const [followUp] = (await h.jobsOf(employer.connectionId)).filter((j) => j.after_job_id === running.jobId);
    for (const answer of answers) expect(answer.body).toMatchObject({ sync_job_id: followUp.id, sync_status: 'pending' });
    // The first sync, the running one, and one follow-up for all ten edits.
    expect(await h.jobsOf(employer.connectionId)).toHaveLength(3);

    // Until the follow-up runs, a new payment is a 404 that says what to do and names the sync under way.
    const paymentIds = answers.slice(1).map((a) => a.body.payment_id as string);
    const syncedAt = (await h.db().query(`SELECT completed_at FROM employer_syncs WHERE entity_id = $1`, [employer.entityId]))[0].completed_at.toISOString();
    expect((await h.payStatements(employer.token, paymentIds[0])).body.message).toBe(
      `No payment ${paymentIds[0]} in this entity's data as of its last sync (${syncedAt}). ` +
        `A pay run made since shows after the next sync (POST /jobs/automated). Sync ${running.jobId} is running (GET /jobs/automated/${running.jobId}).`,
    );

    await running.release();
    await h.untilComplete(employer.token, followUp.id);
    expect((await h.read('/employer/company', employer.token)).body.legal_name).toBe('Ten Edits LLC');
    expect(await h.paymentIds(employer.token)).toEqual(expect.arrayContaining(paymentIds));
    for (const id of paymentIds) expect((await h.payStatements(employer.token, id)).code).toBe(200);
    expect(await h.quotaOf(employer.token)).toEqual(quota);
  });
});

describeWithPostgres('sandbox edits with SANDBOX_EDIT_SYNCS=false', () => {
  let service: TestService;
  let app: IssuedCredentials;
  const h = harness(
    () => service,
    () => app,
  );

  beforeAll(async () => {
    service = await startTestService({ clock: new ManualClock('2026-06-01T12:00:00Z'), env: { SANDBOX_EDIT_SYNCS: 'false' } });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  it('start no sync: the edit shows in synced reads after the next one, as a real provider’s change does', async () => {
    const employer = await h.sandboxEmployer(3);
    await h.syncNow(employer.token);
    const paid = await h.post('/sandbox/payment', {}, employer.token);
    expect(Object.keys(paid.body).sort()).toEqual(['pay_date', 'payment_id']);
    expect(await h.jobsOf(employer.connectionId)).toHaveLength(1);
    expect((await h.payStatements(employer.token, paid.body.payment_id)).code).toBe(404);
    await h.syncNow(employer.token);
    expect((await h.payStatements(employer.token, paid.body.payment_id)).code).toBe(200);
  });
});
