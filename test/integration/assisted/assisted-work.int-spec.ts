import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { BenefitJobParams } from '../../../src/domain/benefits/benefit-job-params';
import { Connection } from '../../../src/domain/connections/connection';
import { Job, nextAttemptAt } from '../../../src/domain/jobs/job';
import { EmployerRef, employerRefOf, PROVIDER_PORT, ProviderPort } from '../../../src/domain/providers/provider-port';
import { ManualClock } from '../../../src/domain/shared/clock';
import { ConnectionsRepository } from '../../../src/infrastructure/database/repositories/connections.repository';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { SandboxEmployerStore } from '../../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { IssuedCredentials } from '../../../src/modules/applications/applications.service';
import { ASSISTED_APPLY } from '../../../src/modules/assisted/assisted-apply.handler';
import { AssistedProvider } from '../../../src/modules/assisted/assisted-provider';
import { OpsTasksRepository } from '../../../src/modules/assisted/ops-tasks.repository';
import { BenefitsRepository } from '../../../src/modules/benefits/benefits.repository';
import { EnrollmentLifecycle } from '../../../src/modules/enrollments/enrollment-lifecycle';
import { JobHandlerRegistry } from '../../../src/modules/jobs/job-handler';
import { JobSignal } from '../../../src/modules/jobs/job-signal';
import { JobWorker } from '../../../src/modules/jobs/job-worker';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { ProviderRetryPolicies } from '../../../src/modules/providers/provider-retry-policies';
import { describeWithPostgres } from '../../setup/test-env';
import { basic, bearer, createApplication } from '../../utils/connect';
import { expectEventually } from '../../utils/expect-eventually';
import { json, startTestService, TestService } from '../../utils/test-app';
import { holdJob } from '../../utils/job-queue';

const OPS = { authorization: `Basic ${Buffer.from('ops:ops-password-for-tests').toString('base64')}` };
const FIVE_PERCENT = { employee_deduction: { type: 'percent', amount: 500 } };

/**
 * Assisted work with the ops API and the apply job running for real: benefit work opened through
 * the Assisted provider behaviour (the seam the benefit commands use), enrollment work through
 * the enroll and unenroll commands; SLA arithmetic over a holiday weekend, each kind of work
 * applied to the sandbox payroll system, failures.
 */
describeWithPostgres('Assisted work', () => {
  // Thursday; Friday Jul 3 2026 is Independence Day observed (Jul 4 is a Saturday).
  const clock = new ManualClock('2026-07-02T15:00:00Z');
  let service: TestService;
  let app: IssuedCredentials;
  let dataSource: DataSource;
  let provider: ProviderPort;
  let connection: Connection;
  let ref: EmployerRef;
  let token: string;

  beforeAll(async () => {
    service = await startTestService({ clock });
    app = await createApplication(service);
    dataSource = service.app.get(DataSource);
    provider = service.app.get<ProviderPort>(PROVIDER_PORT);
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_assisted', employee_size: 8 }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    expect(res.body.authentication_type).toBe('assisted');
    token = res.body.access_token;
    connection = (await service.app.get(ConnectionsRepository).find(res.body.connection_id))!;
    ref = employerRefOf(connection, connection.entities[0]);
  });
  afterAll(() => service?.close());
  beforeEach(() => clock.set('2026-07-02T15:00:00Z'));

  const open = (work: BenefitJobParams): Promise<Job> =>
    service.app.get(UnitOfWork).transaction(() => service.app.get(AssistedProvider).openBenefitWork({ connectionId: connection.id, entityId: ref.entityId }, work));

  const api = (path: string, body?: unknown, method?: string) =>
    service.request(path, { ...json(body ?? {}, bearer(token)), ...(method ? { method } : {}) });
  const tasksOf = async (jobId: string) =>
    (await dataSource.query(`SELECT id FROM ops_tasks WHERE job_id = $1 ORDER BY created_at, id`, [jobId])).map((r: { id: string }) => r.id) as string[];
  const task = async (taskId: string) => {
    const res = await service.request(`/ops/api/tasks/${taskId}`, { headers: OPS });
    expect(res.status).toBe(200);
    return res.body;
  };
  const taskOf = async (jobId: string) => task((await tasksOf(jobId))[0]);
  const ops = (path: string, body: unknown = {}) => service.request(path, json(body, OPS));
  const manualJob = (jobId: string) =>
    service.request(`/jobs/manual/${jobId}`, { headers: { authorization: `Bearer ${token}`, 'service-api-version': '2020-09-17' } });
  const manualJobSettled = (jobId: string) =>
    expectEventually(async () => {
      const res = await manualJob(jobId);
      expect(['complete', 'error']).toContain(res.body.status);
      return res.body;
    });
  /** The per-individual results in a manual job's body (each element also carries the job's outcome). */
  const resultsOf = (body: { individual_id: string; code: number; message?: string }[]) =>
    body.map(({ individual_id, code, message }) => ({ individual_id, code, ...(message === undefined ? {} : { message }) }));
  const eventsOf = async (type: string) =>
    (await dataSource.query(`SELECT payload FROM outbox_messages WHERE type = $1 ORDER BY id`, [`${type}.v1`])).map(
      (r: { payload: { data: Record<string, unknown> } }) => r.payload,
    );
  /** The outbox rows about one job, oldest first: `type.v1` on benefits.events, keyed by connection. */
  const eventsOfJob = async (jobId: string) => {
    const rows: { topic: string; message_key: string; type: string; payload: { type: string; version: number; connection_id: string; entity_id: string; data: Record<string, unknown> } }[] =
      await dataSource.query(`SELECT topic, message_key, type, payload FROM outbox_messages WHERE payload->'data'->>'job_id' = $1 ORDER BY id`, [jobId]);
    for (const row of rows) {
      expect(row).toMatchObject({ topic: 'benefits.events', message_key: connection.id, type: `${row.payload.type}.v1` });
      expect(row.payload).toMatchObject({ version: 1, connection_id: connection.id, entity_id: ref.entityId });
    }
    return rows.map((r) => ({ type: r.payload.type, data: r.payload.data }));
  };
  const enrollmentEventsOfJob = async (jobId: string) => (await eventsOfJob(jobId)).filter((e) => e.type.startsWith('Enrollment') && e.type !== 'EnrollmentJobCreated');

  /** A benefit created through the API, its task completed: the provider holds it. */
  async function benefitAtProvider(description = `Plan ${randomUUID().slice(0, 8)}`) {
    const res = await api('/employer/benefits', { type: '401k', description, frequency: 'every_paycheck' });
    expect(res.status).toBe(200);
    expect((await ops(`/ops/api/tasks/${(await taskOf(res.body.job_id)).task_id}/complete`)).status).toBe(200);
    expect((await manualJobSettled(res.body.job_id)).status).toBe('complete');
    return res.body.benefit_id as string;
  }

  /** Employees in work since before the tests' dates, so a July pay run pays them. */
  async function people(n: number): Promise<string[]> {
    const directory = await provider.directory(ref, { limit: 100, offset: 0 });
    const employments = await service.app.get(SandboxEmployerStore).employments(ref, directory.items.map((p) => p.id));
    const paid = employments.filter((e) => e.employment.type === 'employee' && e.end_date === null && e.is_active && e.start_date < '2026-06-01');
    expect(paid.length).toBeGreaterThanOrEqual(n);
    return paid.slice(0, n).map((e) => e.id);
  }

  it('opens a manual job and a task due in 2 business days, skipping the observed holiday and the weekend', async () => {
    const benefitId = randomUUID();
    const params = { benefit_id: benefitId, type: '401k', description: 'SLA plan', frequency: 'every_paycheck' as const, company_contribution: null };
    const job = await open({ type: 'benefit_create', params });
    expect(job).toMatchObject({ kind: 'manual', type: 'benefit_create', status: 'pending', params, connectionId: connection.id });
    expect(job.createdAt).toEqual(clock.now());

    const opened = await taskOf(job.id);
    // Thu Jul 2 + 2 business days: Fri Jul 3 (holiday), Sat, Sun skipped → Mon Jul 6, Tue Jul 7.
    expect(opened).toMatchObject({
      job_id: job.id,
      type: 'benefit_create',
      payload: params,
      status: 'open',
      due_date: '2026-07-07',
      due_state: 'on_time',
      note: null,
      resolved_by: null,
      resolved_at: null,
      created_at: '2026-07-02T15:00:00.000Z',
    });
    expect(await eventsOf('OpsTaskOpened')).toContainEqual(
      expect.objectContaining({
        type: 'OpsTaskOpened',
        version: 1,
        connection_id: connection.id,
        data: { task_id: opened.task_id, job_id: job.id, type: 'benefit_create', benefit_id: benefitId, due_date: '2026-07-07' },
      }),
    );

    const dueStateOn = async (instant: string) => {
      clock.set(instant);
      return (await taskOf(job.id)).due_state;
    };
    expect(await dueStateOn('2026-07-06T23:59:59Z')).toBe('on_time');
    expect(await dueStateOn('2026-07-07T00:00:00Z')).toBe('due_today');
    expect(await dueStateOn('2026-07-07T23:59:59Z')).toBe('due_today');
    expect(await dueStateOn('2026-07-08T00:00:00Z')).toBe('overdue');
    const overdue = await service.request(`/ops/api/tasks?due_state=overdue&status=open`, { headers: OPS });
    expect(overdue.body.data.map((t: { task_id: string }) => t.task_id)).toContain(opened.task_id);
    const onTime = await service.request(`/ops/api/tasks?due_state=on_time`, { headers: OPS });
    expect(onTime.body.data.map((t: { task_id: string }) => t.task_id)).not.toContain(opened.task_id);
    expect((await manualJob(job.id)).body).toEqual({ job_id: job.id, status: 'pending', body: null });
  });

  it('counts the SLA from the UTC date: 23:30 on Friday in New York is Saturday, so due Tuesday', async () => {
    clock.set('2026-09-05T03:30:00Z'); // Fri Sep 4 23:30 EDT; Mon Sep 7 is Labor Day
    const job = await open({ type: 'benefit_update', params: { benefit_id: randomUUID(), description: 'x' } });
    expect((await taskOf(job.id)).due_date).toBe('2026-09-09');
  });

  it('leaves manual jobs to people: no worker leases them, though automated jobs share their types', async () => {
    const job = await open({ type: 'benefit_create', params: { benefit_id: randomUUID(), type: '401k', description: 'never leased', frequency: null, company_contribution: null } });
    expect(service.app.get(JobHandlerRegistry).types()).toContain('benefit_create');
    await service.app.get(JobWorker).leaseRound();
    expect((await manualJob(job.id)).body.status).toBe('pending');
  });

  it('completing a create task creates the benefit at the provider and completes the manual job', async () => {
    const benefitId = randomUUID();
    const params = { benefit_id: benefitId, type: '401k', description: 'Assisted 401k', frequency: 'every_paycheck' as const, company_contribution: { type: 'match' as const, tiers: [{ match: 10_000, threshold: 300 }] } };
    const job = await open({ type: 'benefit_create', params });
    const opened = await taskOf(job.id);
    expect(await provider.benefit(ref, benefitId)).toBeUndefined();

    clock.set('2026-07-06T10:00:00Z');
    const res = await ops(`/ops/api/tasks/${opened.task_id}/complete`, { note: 'Set up in the provider portal' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', due_state: null, note: 'Set up in the provider portal', resolved_by: 'ops', resolved_at: '2026-07-06T10:00:00.000Z' });

    expect(await manualJobSettled(job.id)).toEqual({
      job_id: job.id,
      status: 'complete',
      body: [{ benefit_id: benefitId, note: 'Set up in the provider portal', error: null }],
    });
    expect(await provider.benefit(ref, benefitId)).toEqual(params);
    expect(await eventsOf('OpsTaskCompleted')).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ task_id: opened.task_id, job_id: job.id, job_status: 'complete', resolved_by: 'ops' }) }),
    );
    // As on the Automated path, the benefit's own event belongs to the request; applying adds none.
    expect((await eventsOfJob(job.id)).map((e) => e.type)).toEqual(['OpsTaskOpened', 'OpsTaskCompleted']);
  });

  it('an enroll request: a task per effective date, each when its date comes; the manual job pending until the latest is applied', async () => {
    const description = `Assisted 401k ${randomUUID().slice(0, 8)}`;
    const benefitId = await benefitAtProvider(description);
    const [now1, now2, later] = await people(3);
    const stranger = randomUUID();
    const res = await api(`/employer/benefits/${benefitId}/individuals`, [
      { individual_id: now1, configuration: FIVE_PERCENT },
      { individual_id: now2, configuration: FIVE_PERCENT },
      { individual_id: stranger, configuration: FIVE_PERCENT },
      { individual_id: later, configuration: { ...FIVE_PERCENT, effective_date: '2026-08-01' } },
    ]);
    expect(res.status).toBe(200);
    const jobId: string = res.body.job_id;

    // Today's group is a task at once; August's is not a task before its date.
    const [first] = await tasksOf(jobId);
    expect(await tasksOf(jobId)).toHaveLength(1);
    expect(await task(first)).toMatchObject({
      type: 'benefit_enroll',
      status: 'open',
      due_date: '2026-07-07',
      payload: { benefit_id: benefitId, groups: [{ effective_date: '2026-07-02', items: [now1, now2, stranger].map((id) => ({ individual_id: id, configuration: expect.objectContaining(FIVE_PERCENT) })) }] },
    });
    expect((await ops(`/ops/api/tasks/${first}/complete`)).status).toBe(200);
    await expectEventually(async () => expect((await enrollmentEventsOfJob(jobId)).map((e) => e.type)).toEqual(['EnrollmentGroupProcessed']));
    expect((await manualJob(jobId)).body).toEqual({ job_id: jobId, status: 'pending', body: null });

    // August 1: the worker hands the second group to ops.
    clock.set('2026-08-01T09:00:00Z');
    service.app.get(JobSignal).nudge();
    const second = await expectEventually(async () => {
      const ids = await tasksOf(jobId);
      expect(ids).toHaveLength(2);
      return ids[1];
    });
    expect(await task(second)).toMatchObject({ status: 'open', due_date: '2026-08-04', payload: { groups: [{ effective_date: '2026-08-01', items: [{ individual_id: later }] }] } });
    expect((await ops(`/ops/api/tasks/${second}/complete`)).status).toBe(200);

    const settled = await manualJobSettled(jobId);
    expect(settled).toEqual({
      job_id: jobId,
      status: 'complete',
      // One element per individual, each with the job's outcome.
      body: [
        { benefit_id: benefitId, note: null, error: null, individual_id: now1, code: 200 },
        { benefit_id: benefitId, note: null, error: null, individual_id: now2, code: 200 },
        { benefit_id: benefitId, note: null, error: null, individual_id: stranger, code: 404, message: expect.any(String) },
        { benefit_id: benefitId, note: null, error: null, individual_id: later, code: 200 },
      ],
    });
    const enrollment = { job_id: jobId, benefit_id: benefitId, operation: 'enroll' };
    expect(await enrollmentEventsOfJob(jobId)).toEqual([
      { type: 'EnrollmentGroupProcessed', data: { ...enrollment, effective_date: '2026-07-02', succeeded: 2, failed: 1, results: resultsOf(settled.body).slice(0, 3) } },
      { type: 'EnrollmentGroupProcessed', data: { ...enrollment, effective_date: '2026-08-01', succeeded: 1, failed: 0, results: [{ individual_id: later, code: 200 }] } },
      { type: 'EnrollmentJobCompleted', data: { ...enrollment, status: 'complete', succeeded: 3, failed: 1 } },
    ]);
    const inForce = async (date: string) => (await provider.enrollments(ref, benefitId, date)).map((e) => e.individual_id).sort();
    expect(await inForce('2026-07-02')).toEqual([now1, now2].sort());
    expect(await inForce('2026-08-01')).toEqual([now1, now2, later].sort());
    const rows = await dataSource.query(`SELECT individual_id, status FROM enrollments WHERE benefit_id = $1`, [benefitId]);
    expect(Object.fromEntries(rows.map((r: { individual_id: string; status: string }) => [r.individual_id, r.status]))).toEqual({
      [now1]: 'enrolled',
      [now2]: 'enrolled',
      [later]: 'enrolled',
      [stranger]: 'error',
    });

    // The enrollment in force reaches payroll: the next sandbox pay run deducts 5 %.
    const run = await service.request('/sandbox/payment', json({ pay_date: '2026-08-14' }, { authorization: `Bearer ${token}` }));
    expect(run.status).toBe(200);
    const statements = (await service.app.get(SandboxEmployerStore).payStatements(ref, run.body.payment_id, { limit: 100, offset: 0 }))!;
    for (const id of [now1, now2, later]) {
      const statement = statements.items.find((s) => s.individual_id === id)!;
      const deduction = statement.employee_deductions.find((d) => d.name === description);
      expect(Math.abs(deduction!.amount - statement.gross_pay.amount * 0.05)).toBeLessThanOrEqual(1);
    }

    // Unenrolling two of them (one unknown to the provider) ends the enrollment from the request date on.
    const out = await api(`/employer/benefits/${benefitId}/individuals`, { individual_ids: [now2, stranger] }, 'DELETE');
    expect(out.status).toBe(200);
    expect((await ops(`/ops/api/tasks/${(await taskOf(out.body.job_id)).task_id}/complete`)).status).toBe(200);
    const ended = await manualJobSettled(out.body.job_id);
    expect(ended).toMatchObject({ status: 'complete', body: [{ individual_id: now2, code: 200 }, { individual_id: stranger, code: 404 }] });
    const unenrollment = { job_id: out.body.job_id, benefit_id: benefitId, operation: 'unenroll' };
    expect(await enrollmentEventsOfJob(out.body.job_id)).toEqual([
      { type: 'EnrollmentGroupProcessed', data: { ...unenrollment, effective_date: '2026-08-01', succeeded: 1, failed: 1, results: resultsOf(ended.body) } },
      { type: 'EnrollmentJobCompleted', data: { ...unenrollment, status: 'complete', succeeded: 1, failed: 1 } },
    ]);
    expect(await inForce('2026-08-01')).toEqual([now1, later].sort());
    const [row] = await dataSource.query(`SELECT status, to_char(ended_on, 'YYYY-MM-DD') AS ended_on FROM enrollments WHERE benefit_id = $1 AND individual_id = $2`, [
      benefitId,
      now2,
    ]);
    expect(row).toEqual({ status: 'unenrolled', ended_on: '2026-08-01' });
  });

  it('completing an update task changes the description at the provider and in the service', async () => {
    const benefitId = await benefitAtProvider();
    const job = await open({ type: 'benefit_update', params: { benefit_id: benefitId, description: 'After' } });
    expect((await ops(`/ops/api/tasks/${(await taskOf(job.id)).task_id}/complete`)).status).toBe(200);
    expect((await manualJobSettled(job.id)).status).toBe('complete');
    expect((await provider.benefit(ref, benefitId))?.description).toBe('After');
    expect((await service.app.get(BenefitsRepository).findOfEntity(ref.entityId, benefitId))?.description).toBe('After');
    expect((await eventsOfJob(job.id)).map((e) => e.type)).toEqual(['OpsTaskOpened', 'OpsTaskCompleted']);
  });

  it('a change the provider refuses ends the work in error with the reason', async () => {
    const unknownBenefit = randomUUID();
    const update = await open({ type: 'benefit_update', params: { benefit_id: unknownBenefit, description: 'nope' } });
    expect((await ops(`/ops/api/tasks/${(await taskOf(update.id)).task_id}/complete`)).status).toBe(200);
    const settled = await manualJobSettled(update.id);
    expect(settled).toMatchObject({ status: 'error', body: [{ benefit_id: unknownBenefit, error: expect.stringContaining(unknownBenefit) }] });
    expect(await enrollmentEventsOfJob(update.id)).toEqual([]);

    // The employer removed the plan in the provider's portal: an enrollment is refused as a whole.
    const benefitId = await benefitAtProvider();
    await dataSource.query(`DELETE FROM sandbox_benefits WHERE id = $1`, [benefitId]);
    const [person] = await people(1);
    const enroll = await api(`/employer/benefits/${benefitId}/individuals`, [{ individual_id: person, configuration: FIVE_PERCENT }]);
    expect((await ops(`/ops/api/tasks/${(await taskOf(enroll.body.job_id)).task_id}/complete`)).status).toBe(200);
    const refused = await manualJobSettled(enroll.body.job_id);
    expect(refused).toMatchObject({ status: 'error', body: [{ error: expect.stringMatching(/refused/), individual_id: person, code: expect.any(Number) }] });
    expect(await eventsOf('OpsTaskCompleted')).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ job_id: enroll.body.job_id, job_status: 'error', error: refused.body[0].error }) }),
    );
    expect((await enrollmentEventsOfJob(enroll.body.job_id)).map((e) => e.type)).toEqual(['EnrollmentGroupProcessed', 'EnrollmentJobFailed']);
  });

  it('an enroll the provider answers with no success ends in error: its group is processed and the job failed', async () => {
    const benefitId = await benefitAtProvider();
    const strangers = [randomUUID(), randomUUID()];
    const res = await api(`/employer/benefits/${benefitId}/individuals`, strangers.map((id) => ({ individual_id: id, configuration: FIVE_PERCENT })));
    expect((await ops(`/ops/api/tasks/${(await taskOf(res.body.job_id)).task_id}/complete`)).status).toBe(200);
    const settled = await manualJobSettled(res.body.job_id);
    expect(settled).toMatchObject({ status: 'error', body: strangers.map(() => ({ error: 'No individual could be enrolled' })) });
    const enrollment = { job_id: res.body.job_id, benefit_id: benefitId, operation: 'enroll' };
    expect(await enrollmentEventsOfJob(res.body.job_id)).toEqual([
      { type: 'EnrollmentGroupProcessed', data: { ...enrollment, effective_date: '2026-07-02', succeeded: 0, failed: 2, results: resultsOf(settled.body) } },
      { type: 'EnrollmentJobFailed', data: { ...enrollment, status: 'error', succeeded: 0, failed: 2 } },
    ]);
    expect(settled.body.map((r: { code: number }) => r.code)).toEqual([404, 404]);
  });

  it('an apply whose runs keep dying ends the enrollment in error, with its events', async () => {
    const benefitId = await benefitAtProvider();
    const [person] = await people(1);
    const res = await api(`/employer/benefits/${benefitId}/individuals`, [{ individual_id: person, configuration: FIVE_PERCENT }]);
    const jobId: string = res.body.job_id;
    const opened = await taskOf(jobId);
    const applyId = randomUUID();
    const { maxAttempts } = await service.app.get(ProviderRetryPolicies).forConnection(connection.id);
    const [{ group_id: groupId }] = await dataSource.query(`SELECT group_id FROM ops_tasks WHERE id = $1`, [opened.task_id]);
    // Ops completed the task, and every run of its apply job died with its worker: the job is left
    // leased by a dead worker with no runs left. One transaction, so no worker sees it earlier.
    await service.app.get(UnitOfWork).transaction(async (manager) => {
      const now = clock.now();
      await service.app.get(OpsTasksRepository).resolve(opened.task_id, { status: 'completed', note: null, resolvedBy: 'ops', resolvedAt: now }, manager);
      await service.app.get(EnrollmentLifecycle).startSubmitting(groupId);
      await service.app.get(JobsRepository).insert(
        { id: applyId, connectionId: connection.id, entityId: ref.entityId, kind: 'internal', type: ASSISTED_APPLY, params: { task_id: opened.task_id }, createdAt: now },
        manager,
      );
      await holdJob(manager, applyId, 'crashed-worker', `now() - interval '1 second'`, maxAttempts);
    });

    const settled = await manualJobSettled(jobId);
    expect(settled).toMatchObject({
      job_id: jobId,
      status: 'error',
      body: [{ benefit_id: benefitId, error: expect.stringContaining(`Gave up after ${maxAttempts} runs`), individual_id: person, code: 500 }],
    });
    const [apply] = await dataSource.query(`SELECT status, result FROM jobs WHERE id = $1`, [applyId]);
    expect(apply).toEqual({ status: 'complete', result: { task_id: opened.task_id, manual_job_id: jobId } });
    expect((await eventsOfJob(jobId)).map((e) => e.type)).toEqual([
      'EnrollmentJobCreated',
      'OpsTaskOpened',
      'EnrollmentGroupProcessed',
      'EnrollmentJobFailed',
      'OpsTaskCompleted',
    ]);
    expect((await eventsOfJob(jobId))[4].data).toMatchObject({ task_id: opened.task_id, job_status: 'error', error: settled.body[0].error });
  });

  it('failing a task ends the work at once with the note: every individual refused, the job in error', async () => {
    const benefitId = await benefitAtProvider();
    const [person] = await people(1);
    const res = await api(`/employer/benefits/${benefitId}/individuals`, [{ individual_id: person, configuration: FIVE_PERCENT }]);
    const jobId: string = res.body.job_id;
    const opened = await taskOf(jobId);
    const failed = await ops(`/ops/api/tasks/${opened.task_id}/fail`, { note: 'Plan is closed to new enrollments' });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: 'failed', note: 'Plan is closed to new enrollments', resolved_by: 'ops' });
    expect((await manualJob(jobId)).body).toEqual({
      job_id: jobId,
      status: 'error',
      body: [
        {
          benefit_id: benefitId,
          note: 'Plan is closed to new enrollments',
          error: 'Plan is closed to new enrollments',
          individual_id: person,
          code: 422,
          message: 'Plan is closed to new enrollments',
        },
      ],
    });
    const [row] = await dataSource.query(`SELECT status FROM enrollments WHERE benefit_id = $1`, [benefitId]);
    expect(row.status).toBe('error');
    expect(await provider.enrollments(ref, benefitId, '2026-07-02')).toEqual([]);
    expect(await eventsOf('OpsTaskFailed')).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ task_id: opened.task_id, note: 'Plan is closed to new enrollments' }) }),
    );
    expect(await enrollmentEventsOfJob(jobId)).toEqual([
      {
        type: 'EnrollmentGroupProcessed',
        data: expect.objectContaining({ job_id: jobId, succeeded: 0, failed: 1 }),
      },
      { type: 'EnrollmentJobFailed', data: { job_id: jobId, benefit_id: benefitId, operation: 'enroll', status: 'error', succeeded: 0, failed: 1 } },
    ]);

    // Benefit work failed the same way ends its manual job; it has no enrollment event.
    const update = await open({ type: 'benefit_update', params: { benefit_id: benefitId, description: 'Never' } });
    expect((await ops(`/ops/api/tasks/${(await taskOf(update.id)).task_id}/fail`, { note: 'No' })).status).toBe(200);
    expect((await manualJob(update.id)).body).toEqual({ job_id: update.id, status: 'error', body: [{ benefit_id: benefitId, note: 'No', error: 'No' }] });
    expect((await eventsOfJob(update.id)).map((e) => e.type)).toEqual(['OpsTaskOpened', 'OpsTaskFailed']);
  });
});

describeWithPostgres('Assisted work while the provider is down', () => {
  const clock = new ManualClock('2026-07-02T15:00:00Z');
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ clock, env: { PROVIDER_FAILURE_RATE: '1' } });
  });
  afterAll(() => service?.close());

  it('shows the manual job in progress while the apply is retried, and ends it in error once the provider’s retry budget is spent', async () => {
    const app = await createApplication(service);
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_assisted', employee_size: 5 }, basic(app)));
    expect(res.status).toBe(200);
    const connection = (await service.app.get(ConnectionsRepository).find(res.body.connection_id))!;
    const dataSource = service.app.get(DataSource);
    const job = await service.app.get(UnitOfWork).transaction(() =>
      service.app.get(AssistedProvider).openBenefitWork(
        { connectionId: connection.id, entityId: res.body.entity_id },
        { type: 'benefit_create', params: { benefit_id: randomUUID(), type: '401k', description: 'Outage', frequency: null, company_contribution: null } },
      ),
    );
    const [opened] = await dataSource.query(`SELECT id FROM ops_tasks WHERE job_id = $1`, [job.id]);
    const policy = await service.app.get(ProviderRetryPolicies).forConnection(connection.id);
    const firstRun = clock.now();
    expect((await service.request(`/ops/api/tasks/${opened.id}/complete`, json({}, OPS))).status).toBe(200);
    const manualJob = async () =>
      (await service.request(`/jobs/manual/${job.id}`, { headers: { authorization: `Bearer ${res.body.access_token}`, 'service-api-version': '2020-09-17' } })).body;
    const applyRow = async () =>
      (await dataSource.query(`SELECT status, attempts, to_char(scheduled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS scheduled_at FROM jobs WHERE type = 'assisted_apply' AND params->>'task_id' = $1`, [opened.id]))[0];

    // Each failed run is retried after the backoff of the provider's policy, on the service clock.
    let runs = 1;
    for (;;) {
      const row = await expectEventually(async () => {
        const current = await applyRow();
        expect(current.attempts).toBe(runs);
        expect(current.status === 'pending' || current.status === 'complete').toBe(true);
        return current;
      });
      if (row.status === 'complete') break;
      expect((await manualJob()).status).toBe('in_progress');
      const next = nextAttemptAt(clock.now(), runs, policy, firstRun)!;
      expect(row.scheduled_at).toBe(next.toISOString());
      clock.set(next);
      service.app.get(JobSignal).nudge();
      runs++;
    }
    const [outcome] = (await manualJob()).body;
    expect(outcome.error).toMatch(new RegExp(`could not be reached in ${runs} attempts`));
    expect(runs).toBeGreaterThan(5);
    expect(nextAttemptAt(clock.now(), runs, policy, firstRun)).toBeUndefined();
  });
});
