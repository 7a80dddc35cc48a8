import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ManualClock } from '../../src/domain/shared/clock';
import { employerRefOf, PROVIDER_PORT, ProviderPort } from '../../src/domain/providers/provider-port';
import { ConnectionsRepository } from '../../src/infrastructure/database/repositories/connections.repository';
import { SandboxEmployerStore } from '../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const basicOf = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const OPS = basicOf('ops', 'ops-password-for-tests');
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface SandboxEmployer {
  token: string;
  connectionId: string;
  entityId: string;
}

/**
 * Assisted providers over HTTP: benefit writes on a `sandbox_assisted` connection open ops tasks
 * and manual jobs (GET /jobs/manual/{id}); the ops API (HTTP Basic, its own credentials)
 * completes or fails them; completion reaches the sandbox payroll system and its pay runs.
 */
describeWithPostgres('Assisted providers', () => {
  const clock = new ManualClock('2026-07-02T15:00:00Z');
  let service: TestService;
  let app: IssuedCredentials;
  let employer: SandboxEmployer;

  beforeAll(async () => {
    service = await startTestService({
      clock,
      // Wrong credentials are tried on every route here; the limit on failed sign-ins has its own suite.
      env: { OPS_SIGN_IN_MAX_FAILURES: '1000' },
    });
    app = await createApplication(service);
    employer = await sandboxEmployer('sandbox_assisted');
  });
  afterAll(() => service?.close());
  beforeEach(() => clock.set('2026-07-02T15:00:00Z'));

  async function sandboxEmployer(providerId: string): Promise<SandboxEmployer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: providerId, employee_size: 8 }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  const api = (path: string, body?: unknown, token = employer.token) =>
    body === undefined ? service.request(path, { headers: bearer(token) }) : service.request(path, json(body, bearer(token)));
  const ops = (path: string, body?: unknown, headers: Record<string, string> = OPS) =>
    body === undefined ? service.request(path, { headers }) : service.request(path, json(body, headers));
  const manualJob = (jobId: string, token = employer.token) => api(`/jobs/manual/${jobId}`, undefined, token);
  const settled = (jobId: string) =>
    expectEventually(async () => {
      const res = await manualJob(jobId);
      expect(res.status).toBe(200);
      expect(['complete', 'error']).toContain(res.body.status);
      return res.body;
    });
  async function taskOfJob(jobId: string) {
    const res = await ops(`/ops/api/tasks?status=open&connection_id=${employer.connectionId}`);
    expect(res.status).toBe(200);
    const task = res.body.data.find((t: { job_id: string }) => t.job_id === jobId);
    expect(task).toBeDefined();
    return task;
  }
  /** A task opened through the seam the benefit commands use, for the ops API's own tests. */
  async function openTask(description = `Task ${randomUUID().slice(0, 8)}`) {
    const res = await api('/employer/benefits', { type: '401k', description, frequency: 'every_paycheck' });
    expect(res.status).toBe(200);
    return taskOfJob(res.body.job_id);
  }
  /** Outbox rows on benefits.events whose data names this job or benefit, oldest first. */
  async function eventsAbout(field: 'job_id' | 'benefit_id', id: string) {
    const rows: { topic: string; type: string; payload: { type: string; version: number; data: Record<string, unknown> } }[] = await service.app
      .get(DataSource)
      .query(`SELECT topic, type, payload FROM outbox_messages WHERE payload->'data'->>$1 = $2 ORDER BY id`, [field, id]);
    for (const row of rows) expect(row).toMatchObject({ topic: 'benefits.events', type: `${row.payload.type}.v1`, payload: { version: 1 } });
    return rows.map((r) => ({ type: r.type, data: r.payload.data }));
  }
  const typesAbout = async (field: 'job_id' | 'benefit_id', id: string) => (await eventsAbout(field, id)).map((e) => e.type);

  function expectError(res: TestResponse, status: number, name: string, serviceCode?: string) {
    expect({ status: res.status, body: res.body }).toMatchObject({
      status,
      body: { code: status, name, ...(serviceCode ? { service_code: serviceCode } : {}), message: expect.any(String) },
    });
  }

  describe('end to end on a sandbox_assisted connection', () => {
    it('create → pending manual job → ops completes → the benefit exists in the sandbox; enroll → pay run deducts', async () => {
      const description = `Assisted 401(k) ${randomUUID().slice(0, 8)}`;
      const created = await api('/employer/benefits', { type: '401k', description, frequency: 'every_paycheck' });
      expect(created.status).toBe(200);
      expect(created.body).toEqual({ benefit_id: expect.stringMatching(UUID_V4), job_id: expect.stringMatching(UUID_V4) });
      const { benefit_id: benefitId, job_id: jobId } = created.body;

      expect(await manualJob(jobId)).toMatchObject({ status: 200, body: { job_id: jobId, status: 'pending', body: null } });
      // Not an automated job.
      expectError(await api(`/jobs/automated/${jobId}`), 404, 'not_found_error', 'job_not_found');

      const task = await taskOfJob(jobId);
      expect(task).toMatchObject({
        type: 'benefit_create',
        status: 'open',
        due_date: '2026-07-07', // Thu + 2 business days over the Jul 3 holiday and the weekend
        due_state: 'on_time',
        payload: { benefit_id: benefitId, type: '401k', description, frequency: 'every_paycheck', company_contribution: null },
        connection_id: employer.connectionId,
        entity_id: employer.entityId,
      });

      clock.set('2026-07-06T14:00:00Z');
      const completed = await ops(`/ops/api/tasks/${task.task_id}/complete`, { note: 'Done in the portal' });
      expect(completed.status).toBe(200);
      expect(completed.body).toMatchObject({ status: 'completed', resolved_by: 'ops', resolved_at: '2026-07-06T14:00:00.000Z' });
      expect(await settled(jobId)).toEqual({ job_id: jobId, status: 'complete', body: [{ benefit_id: benefitId, note: 'Done in the portal', error: null }] });
      // BenefitCreated came with the request, as on the Automated path; applying the task adds its completion only.
      expect(await typesAbout('job_id', jobId)).toEqual(['OpsTaskOpened.v1', 'BenefitCreated.v1', 'OpsTaskCompleted.v1']);

      const connection = (await service.app.get(ConnectionsRepository).find(employer.connectionId))!;
      const ref = employerRefOf(connection, connection.entities[0]);
      const provider = service.app.get<ProviderPort>(PROVIDER_PORT);
      expect(await provider.benefit(ref, benefitId)).toMatchObject({ benefit_id: benefitId, description });
      const list = await api('/employer/benefits');
      expect(list.status).toBe(200);
      expect(list.body).toContainEqual(expect.objectContaining({ benefit_id: benefitId, description }));

      // Enroll two employees at 5 %.
      const store = service.app.get(SandboxEmployerStore);
      const directory = await provider.directory(ref, { limit: 100, offset: 0 });
      const employees = (await store.employments(ref, directory.items.map((p) => p.id)))
        .filter((e) => e.employment.type === 'employee' && e.end_date === null && e.is_active && e.start_date < '2026-06-01')
        .map((e) => e.id)
        .slice(0, 2);
      expect(employees).toHaveLength(2);
      const configuration = { employee_deduction: { type: 'percent', amount: 500 }, effective_date: '2026-07-06' };
      const enrolled = await api(`/employer/benefits/${benefitId}/individuals`, employees.map((id) => ({ individual_id: id, configuration })));
      expect(enrolled.status).toBe(200);
      const enrollJob = enrolled.body.job_id;
      expect(await manualJob(enrollJob)).toMatchObject({ status: 200, body: { status: 'pending', body: null } });
      const enrollTask = await taskOfJob(enrollJob);
      expect(enrollTask).toMatchObject({ type: 'benefit_enroll', due_date: '2026-07-08' });
      expect((await ops(`/ops/api/tasks/${enrollTask.task_id}/complete`, {})).status).toBe(200);
      const enrollOutcome = await settled(enrollJob);
      // One element per individual, each with the job's outcome.
      expect(enrollOutcome).toMatchObject({
        status: 'complete',
        body: employees.map((id) => ({ benefit_id: benefitId, error: null, individual_id: id, code: 200 })),
      });
      const enrollEvents = await eventsAbout('job_id', enrollJob);
      // The job and its group first; the group's task; the group applied and the job ended (the same
      // events an Automated provider's job gives), then the task's completion with the job's status.
      expect(enrollEvents.map((e) => e.type)).toEqual([
        'EnrollmentJobCreated.v1',
        'OpsTaskOpened.v1',
        'EnrollmentGroupProcessed.v1',
        'EnrollmentJobCompleted.v1',
        'OpsTaskCompleted.v1',
      ]);
      expect(enrollEvents[4].data).toMatchObject({ task_id: enrollTask.task_id, job_status: 'complete' });
      const enrollment = { job_id: enrollJob, benefit_id: benefitId, operation: 'enroll' };
      expect(enrollEvents.slice(2, 4).map((e) => e.data)).toEqual([
        { ...enrollment, effective_date: '2026-07-06', succeeded: 2, failed: 0, results: employees.map((id) => ({ individual_id: id, code: 200 })) },
        { ...enrollment, status: 'complete', succeeded: 2, failed: 0 },
      ]);

      const inForce = await provider.enrollments(ref, benefitId, '2026-07-17');
      expect(inForce.map((e) => e.individual_id).sort()).toEqual([...employees].sort());
      const enrolledIds = await api(`/employer/benefits/${benefitId}/enrolled`);
      expect(enrolledIds.status).toBe(200);
      expect([...enrolledIds.body.individual_ids].sort()).toEqual([...employees].sort());

      const run = await service.request('/sandbox/payment', json({ pay_date: '2026-07-17' }, { authorization: `Bearer ${employer.token}` }));
      expect(run.status).toBe(200);
      const statements = (await store.payStatements(ref, run.body.payment_id, { limit: 100, offset: 0 }))!;
      for (const id of employees) {
        const statement = statements.items.find((s) => s.individual_id === id)!;
        const deduction = statement.employee_deductions.find((d) => d.name === description);
        expect(Math.abs(deduction!.amount - statement.gross_pay.amount * 0.05)).toBeLessThanOrEqual(1);
      }

      // Unenroll one: another task; completing it ends the enrollment.
      const removed = await service.request(`/employer/benefits/${benefitId}/individuals`, {
        ...json({ individual_ids: [employees[0]] }, bearer(employer.token)),
        method: 'DELETE',
      });
      expect(removed.status).toBe(200);
      const unenrollTask = await taskOfJob(removed.body.job_id);
      expect(unenrollTask.type).toBe('benefit_unenroll');
      expect((await ops(`/ops/api/tasks/${unenrollTask.task_id}/complete`, {})).status).toBe(200);
      expect(await settled(removed.body.job_id)).toMatchObject({ status: 'complete', body: [{ individual_id: employees[0], code: 200 }] });
      expect((await eventsAbout('job_id', removed.body.job_id)).filter((e) => e.type !== 'EnrollmentJobCreated.v1' && e.type.startsWith('Enrollment'))).toEqual([
        {
          type: 'EnrollmentGroupProcessed.v1',
          data: {
            job_id: removed.body.job_id,
            benefit_id: benefitId,
            operation: 'unenroll',
            effective_date: '2026-07-06', // the request's date, on the service clock
            succeeded: 1,
            failed: 0,
            results: [{ individual_id: employees[0], code: 200 }],
          },
        },
        {
          type: 'EnrollmentJobCompleted.v1',
          data: { job_id: removed.body.job_id, benefit_id: benefitId, operation: 'unenroll', status: 'complete', succeeded: 1, failed: 0 },
        },
      ]);
      // One BenefitCreated for the benefit, however much work followed.
      expect((await typesAbout('benefit_id', benefitId)).filter((t) => t.startsWith('Benefit'))).toEqual(['BenefitCreated.v1']);
      expect((await provider.enrollments(ref, benefitId, '2026-07-17')).map((e) => e.individual_id)).toEqual([employees[1]]);
    });

    it('update: the description changes once ops complete the task', async () => {
      const created = await api('/employer/benefits', { type: 'hsa_pre', description: `HSA ${randomUUID().slice(0, 8)}`, frequency: 'every_paycheck' });
      expect(created.status).toBe(200);
      await ops(`/ops/api/tasks/${(await taskOfJob(created.body.job_id)).task_id}/complete`, {});
      await settled(created.body.job_id);
      const renamed = `Renamed ${randomUUID().slice(0, 8)}`;
      const update = await api(`/employer/benefits/${created.body.benefit_id}`, { description: renamed });
      expect(update.status).toBe(200);
      expect(update.body).toEqual({ benefit_id: created.body.benefit_id, job_id: expect.stringMatching(UUID_V4) });
      const task = await taskOfJob(update.body.job_id);
      expect(task).toMatchObject({ type: 'benefit_update', payload: { benefit_id: created.body.benefit_id, description: renamed } });
      await ops(`/ops/api/tasks/${task.task_id}/complete`, {});
      expect((await settled(update.body.job_id)).status).toBe('complete');
      const read = await api(`/employer/benefits/${created.body.benefit_id}`);
      expect(read.body).toMatchObject({ benefit_id: created.body.benefit_id, description: renamed });
      expect(await typesAbout('job_id', update.body.job_id)).toEqual(['OpsTaskOpened.v1', 'BenefitUpdated.v1', 'OpsTaskCompleted.v1']);
    });

    it('register: an Assisted-only operation, done like a create', async () => {
      const registered = await api('/employer/benefits/register', { type: 'fsa_medical', description: `FSA ${randomUUID().slice(0, 8)}`, frequency: 'every_paycheck' });
      expect(registered.status).toBe(200);
      const task = await taskOfJob(registered.body.job_id);
      expect(task.type).toBe('benefit_register');
      await ops(`/ops/api/tasks/${task.task_id}/complete`, {});
      expect((await settled(registered.body.job_id)).status).toBe('complete');
      expect(await typesAbout('job_id', registered.body.job_id)).toEqual(['OpsTaskOpened.v1', 'BenefitRegistered.v1', 'OpsTaskCompleted.v1']);
    });

    it('fail: the manual job ends in error with the note, at once', async () => {
      const created = await api('/employer/benefits', { type: '401k', description: `Doomed ${randomUUID().slice(0, 8)}`, frequency: 'every_paycheck' });
      const task = await taskOfJob(created.body.job_id);
      const failed = await ops(`/ops/api/tasks/${task.task_id}/fail`, { note: '  Provider needs a signed plan document  ' });
      expect(failed.status).toBe(200);
      expect(failed.body).toMatchObject({ status: 'failed', note: 'Provider needs a signed plan document', resolved_by: 'ops' });
      expect((await manualJob(created.body.job_id)).body).toEqual({
        job_id: created.body.job_id,
        status: 'error',
        body: [{ benefit_id: created.body.benefit_id, note: 'Provider needs a signed plan document', error: 'Provider needs a signed plan document' }],
      });
      expect(await typesAbout('job_id', created.body.job_id)).toEqual(['OpsTaskOpened.v1', 'BenefitCreated.v1', 'OpsTaskFailed.v1']);
    });

    it('an enrollment ops complete before its benefit sleeps, and is applied once the benefit is set up', async () => {
      const created = await api('/employer/benefits', { type: '401k', description: `Early ${randomUUID().slice(0, 8)}`, frequency: 'every_paycheck' });
      const connection = (await service.app.get(ConnectionsRepository).find(employer.connectionId))!;
      const ref = employerRefOf(connection, connection.entities[0]);
      const directory = await service.app.get<ProviderPort>(PROVIDER_PORT).directory(ref, { limit: 100, offset: 0 });
      const [person] = (await service.app.get(SandboxEmployerStore).employments(ref, directory.items.map((p) => p.id))).filter(
        (e) => e.employment.type === 'employee' && e.end_date === null && e.is_active,
      );
      const enrolled = await api(`/employer/benefits/${created.body.benefit_id}/individuals`, [
        { individual_id: person.id, configuration: { employee_deduction: { type: 'percent', amount: 300 } } },
      ]);
      expect(enrolled.status).toBe(200);
      const enrollmentTask = await taskOfJob(enrolled.body.job_id);
      const benefitTask = await taskOfJob(created.body.job_id);
      expect((await ops(`/ops/api/tasks/${enrollmentTask.task_id}/complete`, {})).status).toBe(200);
      const db = service.app.get(DataSource);
      const applyJob = async (): Promise<{ status: string; scheduled_at: Date }> =>
        (await db.query(`SELECT status, scheduled_at FROM jobs WHERE type = 'assisted_apply' AND params->>'task_id' = $1`, [enrollmentTask.task_id]))[0];
      // Asleep while the benefit's task is open, not leased again at every poll (the clock stands still).
      await expectEventually(async () => {
        const job = await applyJob();
        expect(job.status).toBe('pending');
        expect(new Date(job.scheduled_at).getTime()).toBeGreaterThanOrEqual(clock.now().getTime() + 5_000);
      });
      expect((await ops(`/ops/api/tasks/${benefitTask.task_id}/complete`, {})).status).toBe(200);
      // Its wait outlasts the test under the standing clock: the setup's end wakes it.
      await expectEventually(async () => expect((await applyJob()).status).toBe('complete'), { timeoutMs: 15_000 });
      expect(await settled(enrolled.body.job_id)).toMatchObject({ status: 'complete', body: [expect.objectContaining({ error: null })] });
    });

    it('fail on enrollment work: the enrollment job is reported failed for everyone it asked for', async () => {
      const created = await api('/employer/benefits', { type: '401k', description: `Closed ${randomUUID().slice(0, 8)}`, frequency: 'every_paycheck' });
      await ops(`/ops/api/tasks/${(await taskOfJob(created.body.job_id)).task_id}/complete`, {});
      expect((await settled(created.body.job_id)).status).toBe('complete');
      const people = [randomUUID(), randomUUID()];
      const enrolled = await api(
        `/employer/benefits/${created.body.benefit_id}/individuals`,
        people.map((id) => ({ individual_id: id, configuration: { employee_deduction: { type: 'percent', amount: 300 } } })),
      );
      expect(enrolled.status).toBe(200);
      const failed = await ops(`/ops/api/tasks/${(await taskOfJob(enrolled.body.job_id)).task_id}/fail`, { note: 'Plan is closed' });
      expect(failed.status).toBe(200);
      const events = await eventsAbout('job_id', enrolled.body.job_id);
      expect(events.map((e) => e.type)).toEqual([
        'EnrollmentJobCreated.v1',
        'OpsTaskOpened.v1',
        'EnrollmentGroupProcessed.v1',
        'EnrollmentJobFailed.v1',
        'OpsTaskFailed.v1',
      ]);
      expect(events[2].data).toMatchObject({ succeeded: 0, failed: 2, results: people.map((id) => ({ individual_id: id, code: 422, message: 'Plan is closed' })) });
      expect(events[3].data).toEqual({
        job_id: enrolled.body.job_id,
        benefit_id: created.body.benefit_id,
        operation: 'enroll',
        status: 'error',
        succeeded: 0,
        failed: 2,
      });
    });
  });

  describe('GET /jobs/manual/{job_id}', () => {
    it('is scoped to the connection, checks the id and the version header', async () => {
      const task = await openTask();
      const other = await sandboxEmployer('sandbox_assisted');
      expectError(await manualJob(task.job_id, other.token), 404, 'not_found_error', 'job_not_found');
      expectError(await manualJob(randomUUID()), 404, 'not_found_error', 'job_not_found');
      expectError(await manualJob('not-a-uuid'), 400, 'invalid_request_error');
      const noVersion = await service.request(`/jobs/manual/${task.job_id}`, { headers: { authorization: `Bearer ${employer.token}` } });
      expectError(noVersion, 400, 'invalid_request_error', 'missing_version_header');
      // The ops credentials are not an employer's.
      const asOps = await service.request(`/jobs/manual/${task.job_id}`, { headers: { ...OPS, 'service-api-version': '2020-09-17' } });
      expectError(asOps, 401, 'authentication_error');
    });
  });

  describe('ops API', () => {
    it('needs the ops credentials: none, wrong ones and an employer token are 401 with WWW-Authenticate', async () => {
      const task = await openTask();
      const attempts: [string, Record<string, string>][] = [
        ['none', {}],
        ['wrong password', basicOf('ops', 'wrong-password-123')],
        ['wrong user', basicOf('root', 'ops-password-for-tests')],
        ['no colon', { authorization: `Basic ${Buffer.from('ops').toString('base64')}` }],
        ['not base64', { authorization: 'Basic %%%' }],
        ['employer token', bearer(employer.token)],
        ['employer token as basic', basicOf(employer.token, '')],
        ['application credentials', basic(app)],
      ];
      for (const [name, headers] of attempts) {
        for (const res of [
          await ops('/ops/api/tasks', undefined, headers),
          await ops(`/ops/api/tasks/${task.task_id}`, undefined, headers),
          await ops(`/ops/api/tasks/${task.task_id}/complete`, {}, headers),
          await ops(`/ops/api/tasks/${task.task_id}/fail`, { note: 'x' }, headers),
        ]) {
          expect({ name, status: res.status }).toEqual({ name, status: 401 });
          expect(res.body).toMatchObject({ code: 401, name: 'authentication_error' });
          expect(res.headers.get('www-authenticate')).toBe('Basic realm="ops", charset="UTF-8"');
        }
      }
      expect((await ops(`/ops/api/tasks/${task.task_id}`)).body.status).toBe('open');
    });

    it('lists with filters and paging; refuses bad filters', async () => {
      const tasks = [await openTask(), await openTask(), await openTask()];
      const page = await ops(`/ops/api/tasks?connection_id=${employer.connectionId}&status=open&limit=2&offset=1`);
      expect(page.status).toBe(200);
      expect(page.body.paging).toEqual({ count: expect.any(Number), offset: 1 });
      expect(page.body.paging.count).toBeGreaterThanOrEqual(3);
      expect(page.body.data).toHaveLength(2);
      const all = await ops(`/ops/api/tasks?connection_id=${employer.connectionId}&type=benefit_create&due_state=on_time`);
      expect(all.body.data.map((t: { task_id: string }) => t.task_id)).toEqual(expect.arrayContaining(tasks.map((t) => t.task_id)));
      const dueDates = all.body.data.map((t: { due_date: string }) => t.due_date);
      expect(dueDates).toEqual([...dueDates].sort());
      expect((await ops(`/ops/api/tasks?due_state=overdue&connection_id=${employer.connectionId}`)).body.data).toEqual([]);

      for (const query of ['status=done', 'due_state=late', 'type=benefit_delete', 'connection_id=abc', 'limit=0', 'limit=101', 'limit=x', 'offset=-1', 'sort=due']) {
        const res = await ops(`/ops/api/tasks?${query}`);
        expectError(res, 400, 'invalid_request_error', 'invalid_request');
        expect(res.body.message).toContain(query.split('=')[0]);
      }
    });

    it('answers 404 for an unknown task and 400 for a malformed id', async () => {
      const unknown = randomUUID();
      expectError(await ops(`/ops/api/tasks/${unknown}`), 404, 'not_found_error', 'task_not_found');
      expectError(await ops(`/ops/api/tasks/${unknown}/complete`, {}), 404, 'not_found_error', 'task_not_found');
      expectError(await ops(`/ops/api/tasks/${unknown}/fail`, { note: 'x' }), 404, 'not_found_error', 'task_not_found');
      for (const res of [await ops('/ops/api/tasks/nope'), await ops('/ops/api/tasks/nope/complete', {}), await ops('/ops/api/tasks/nope/fail', { note: 'x' })]) {
        expectError(res, 400, 'invalid_request_error', 'invalid_request');
        expect(res.body.message).toContain('task_id');
      }
    });

    it('fail needs a note; bad bodies change nothing', async () => {
      const task = await openTask();
      for (const body of [{}, { note: '' }, { note: '   ' }, { note: 42 }, { note: 'x'.repeat(2_001) }]) {
        const res = await ops(`/ops/api/tasks/${task.task_id}/fail`, body);
        expectError(res, 400, 'invalid_request_error', 'invalid_request');
        expect(res.body.message).toContain('note');
      }
      expectError(await ops(`/ops/api/tasks/${task.task_id}/complete`, { note: 7 }), 400, 'invalid_request_error');
      expectError(await ops(`/ops/api/tasks/${task.task_id}/complete`, { status: 'completed' }), 400, 'invalid_request_error');
      expectError(await ops(`/ops/api/tasks/${task.task_id}/complete`, '[]'), 400, 'invalid_request_error');
      expectError(await ops(`/ops/api/tasks/${task.task_id}/complete`, '{'), 400, 'bad_request_error', 'malformed_request');
      expect((await ops(`/ops/api/tasks/${task.task_id}`)).body).toMatchObject({ status: 'open', note: null, resolved_by: null });
      expect((await manualJob(task.job_id)).body.status).toBe('pending');
    });

    it('a resolved task cannot be resolved again: 409, the first resolution stands', async () => {
      const task = await openTask();
      expect((await ops(`/ops/api/tasks/${task.task_id}/fail`, { note: 'no' })).status).toBe(200);
      expectError(await ops(`/ops/api/tasks/${task.task_id}/complete`, {}), 409, 'conflict_error', 'task_already_resolved');
      expectError(await ops(`/ops/api/tasks/${task.task_id}/fail`, { note: 'again' }), 409, 'conflict_error', 'task_already_resolved');
      expect((await ops(`/ops/api/tasks/${task.task_id}`)).body).toMatchObject({ status: 'failed', note: 'no' });
    });

    it('concurrent resolutions: exactly one wins, the other is 409', async () => {
      const task = await openTask();
      const results = await Promise.all([
        ops(`/ops/api/tasks/${task.task_id}/complete`, {}),
        ops(`/ops/api/tasks/${task.task_id}/complete`, { note: 'me too' }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(await settled(task.job_id)).toMatchObject({ status: 'complete' });
      const applies = await service.app
        .get(DataSource)
        .query(`SELECT count(*)::int AS n FROM jobs WHERE type = 'assisted_apply' AND params->>'task_id' = $1`, [task.task_id]);
      expect(applies[0].n).toBe(1);

      const raced = await openTask();
      const mixed = await Promise.all([ops(`/ops/api/tasks/${raced.task_id}/complete`, {}), ops(`/ops/api/tasks/${raced.task_id}/fail`, { note: 'x' })]);
      expect(mixed.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = (await ops(`/ops/api/tasks/${raced.task_id}`)).body.status;
      expect((await settled(raced.job_id)).status).toBe(winner === 'completed' ? 'complete' : 'error');
    });

    it('records who resolved a task and when (the service clock)', async () => {
      const task = await openTask();
      clock.set('2026-07-07T18:30:00Z');
      expect((await ops(`/ops/api/tasks/${task.task_id}`)).body.due_state).toBe('due_today');
      const res = await ops(`/ops/api/tasks/${task.task_id}/complete`, {});
      expect(res.body).toMatchObject({ status: 'completed', note: null, resolved_by: 'ops', resolved_at: '2026-07-07T18:30:00.000Z', due_state: null });
      const [row] = await service.app.get(DataSource).query(`SELECT resolved_by, resolved_at FROM ops_tasks WHERE id = $1`, [task.task_id]);
      expect(row).toEqual({ resolved_by: 'ops', resolved_at: new Date('2026-07-07T18:30:00Z') });
    });
  });
});
