import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { BenefitJobParams, EnrollmentConfigurationParams } from '../../../src/domain/benefits/benefit-job-params';
import { Connection } from '../../../src/domain/connections/connection';
import { DEFAULT_RETRY_POLICY, Job } from '../../../src/domain/jobs/job';
import { EmployerRef, employerRefOf, PROVIDER_PORT, ProviderPort } from '../../../src/domain/providers/provider-port';
import { ManualClock } from '../../../src/domain/shared/clock';
import { ConnectionsRepository } from '../../../src/infrastructure/database/repositories/connections.repository';
import { SandboxEmployerStore } from '../../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { IssuedCredentials } from '../../../src/modules/applications/applications.service';
import { ASSISTED_APPLY } from '../../../src/modules/assisted/assisted-apply.handler';
import { AssistedWorkService } from '../../../src/modules/assisted/assisted-work.service';
import { ManualJobsRepository } from '../../../src/modules/assisted/manual-jobs.repository';
import { OpsTasksRepository } from '../../../src/modules/assisted/ops-tasks.repository';
import { BenefitsRepository } from '../../../src/modules/benefits/benefits.repository';
import { EnrollmentsRepository } from '../../../src/modules/enrollments/enrollments.repository';
import { JobHandlerRegistry } from '../../../src/modules/jobs/job-handler';
import { JobWorker } from '../../../src/modules/jobs/job-worker';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { describeWithPostgres } from '../../setup/test-env';
import { basic, createApplication } from '../../utils/connect';
import { expectEventually } from '../../utils/expect-eventually';
import { json, startTestService, TestService } from '../../utils/test-app';

const OPS = { authorization: `Basic ${Buffer.from('ops:ops-password-for-tests').toString('base64')}` };
const FIVE_PERCENT: EnrollmentConfigurationParams = {
  employee_deduction: { type: 'percent', amount: 500 },
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
};

/**
 * Assisted work through AssistedWorkService (the seam the benefit and enrollment commands
 * call), with the ops API and the apply job running for real: SLA arithmetic over a holiday
 * weekend, each kind of work applied to the sandbox payroll system, failures.
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
    dataSource.transaction((manager) => service.app.get(AssistedWorkService).open(manager, { connection, entityId: ref.entityId, work }));

  const taskOf = async (jobId: string) => {
    const [row] = await dataSource.query(`SELECT id FROM ops_tasks WHERE job_id = $1`, [jobId]);
    const res = await service.request(`/ops/api/tasks/${row.id}`, { headers: OPS });
    expect(res.status).toBe(200);
    return res.body;
  };
  const ops = (path: string, body: unknown = {}) => service.request(path, json(body, OPS));
  const manualJob = (jobId: string) =>
    service.request(`/jobs/manual/${jobId}`, { headers: { authorization: `Bearer ${token}`, 'service-api-version': '2020-09-17' } });
  const manualJobSettled = (jobId: string) =>
    expectEventually(async () => {
      const res = await manualJob(jobId);
      expect(['complete', 'error']).toContain(res.body.status);
      return res.body;
    });
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
  const enrollmentEventsOfJob = async (jobId: string) => (await eventsOfJob(jobId)).filter((e) => e.type.startsWith('Enrollment'));

  /** A benefit the service records (as the create command does) and the provider holds. */
  async function benefitAtProvider(description = `Plan ${randomUUID().slice(0, 8)}`) {
    const benefitId = randomUUID();
    const params = { benefit_id: benefitId, type: '401k', description, frequency: 'every_paycheck' as const, company_contribution: null };
    const job = await open({ type: 'benefit_create', params });
    const now = clock.now();
    await dataSource.transaction((manager) =>
      service.app.get(BenefitsRepository).insertOrFind(
        {
          id: benefitId,
          connectionId: connection.id,
          entityId: ref.entityId,
          type: '401k',
          description,
          frequency: 'every_paycheck',
          companyContribution: null,
          origin: 'created',
          jobId: job.id,
          createdAt: now,
          updatedAt: now,
        },
        manager,
      ),
    );
    const task = await taskOf(job.id);
    expect((await ops(`/ops/api/tasks/${task.task_id}/complete`)).status).toBe(200);
    expect((await manualJobSettled(job.id)).status).toBe('complete');
    return benefitId;
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

    const task = await taskOf(job.id);
    // Thu Jul 2 + 2 business days: Fri Jul 3 (holiday), Sat, Sun skipped → Mon Jul 6, Tue Jul 7.
    expect(task).toMatchObject({
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
        data: { task_id: task.task_id, job_id: job.id, type: 'benefit_create', benefit_id: benefitId, due_date: '2026-07-07' },
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
    expect(overdue.body.data.map((t: { task_id: string }) => t.task_id)).toContain(task.task_id);
    const onTime = await service.request(`/ops/api/tasks?due_state=on_time`, { headers: OPS });
    expect(onTime.body.data.map((t: { task_id: string }) => t.task_id)).not.toContain(task.task_id);
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
    const task = await taskOf(job.id);
    expect(await provider.benefit(ref, benefitId)).toBeUndefined();

    clock.set('2026-07-06T10:00:00Z');
    const res = await ops(`/ops/api/tasks/${task.task_id}/complete`, { note: 'Set up in the provider portal' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', due_state: null, note: 'Set up in the provider portal', resolved_by: 'ops', resolved_at: '2026-07-06T10:00:00.000Z' });

    expect(await manualJobSettled(job.id)).toEqual({
      job_id: job.id,
      status: 'complete',
      body: { benefit_id: benefitId, note: 'Set up in the provider portal', error: null },
    });
    expect(await provider.benefit(ref, benefitId)).toEqual(params);
    expect(await eventsOf('OpsTaskCompleted')).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ task_id: task.task_id, job_id: job.id, job_status: 'complete', resolved_by: 'ops' }) }),
    );
    // As on the Automated path, the benefit's own event belongs to the request; applying adds none.
    expect((await eventsOfJob(job.id)).map((e) => e.type)).toEqual(['OpsTaskOpened', 'OpsTaskCompleted']);
  });

  it('completing an enroll task enrolls per effective date, records the rows, and reports each individual', async () => {
    const description = `Assisted 401k ${randomUUID().slice(0, 8)}`;
    const benefitId = await benefitAtProvider(description);
    const [now1, now2, later] = await people(3);
    const stranger = randomUUID();
    const params = {
      benefit_id: benefitId,
      groups: [
        { effective_date: '2026-07-02', items: [{ individual_id: now1, configuration: FIVE_PERCENT }, { individual_id: now2, configuration: FIVE_PERCENT }, { individual_id: stranger, configuration: FIVE_PERCENT }] },
        { effective_date: '2026-08-01', items: [{ individual_id: later, configuration: FIVE_PERCENT }] },
      ],
    };
    const job = await open({ type: 'benefit_enroll', params });
    const at = clock.now();
    await dataSource.transaction((manager) =>
      service.app.get(EnrollmentsRepository).upsertRequested(
        params.groups.flatMap((g) => g.items.map((i) => ({ benefitId, entityId: ref.entityId, individualId: i.individual_id, configuration: i.configuration, effectiveDate: g.effective_date }))),
        job.id,
        at,
        manager,
      ),
    );
    const task = await taskOf(job.id);
    expect((await ops(`/ops/api/tasks/${task.task_id}/complete`)).status).toBe(200);

    const settled = await manualJobSettled(job.id);
    // Read at once: the events commit with the manual job's end.
    const events = await eventsOfJob(job.id);
    expect(settled.status).toBe('complete');
    expect(settled.body).toEqual({
      benefit_id: benefitId,
      note: null,
      error: null,
      individuals: [
        { individual_id: now1, code: 200 },
        { individual_id: now2, code: 200 },
        { individual_id: stranger, code: 404, message: expect.any(String) },
        { individual_id: later, code: 200 },
      ],
    });
    expect(events.map((e) => e.type)).toEqual([
      'OpsTaskOpened',
      'OpsTaskCompleted',
      'EnrollmentGroupProcessed',
      'EnrollmentGroupProcessed',
      'EnrollmentJobCompleted',
    ]);
    const enrollment = { job_id: job.id, benefit_id: benefitId, operation: 'enroll' };
    expect(events.slice(2)).toEqual([
      {
        type: 'EnrollmentGroupProcessed',
        data: { ...enrollment, effective_date: '2026-07-02', succeeded: 2, failed: 1, results: settled.body.individuals.slice(0, 3) },
      },
      {
        type: 'EnrollmentGroupProcessed',
        data: { ...enrollment, effective_date: '2026-08-01', succeeded: 1, failed: 0, results: [{ individual_id: later, code: 200 }] },
      },
      { type: 'EnrollmentJobCompleted', data: { ...enrollment, status: 'complete', succeeded: 3, failed: 1 } },
    ]);
    const inForce = async (date: string) => (await provider.enrollments(ref, benefitId, date)).map((e) => e.individual_id).sort();
    expect(await inForce('2026-07-02')).toEqual([now1, now2].sort());
    expect(await inForce('2026-08-01')).toEqual([now1, now2, later].sort());
    const rows = await service.app.get(EnrollmentsRepository).listOfBenefit(benefitId);
    expect(Object.fromEntries(rows.map((r) => [r.individualId, r.status]))).toEqual({
      [now1]: 'enrolled',
      [now2]: 'enrolled',
      [later]: 'enrolled',
      [stranger]: 'error',
    });

    // The enrollment in force reaches payroll: the next sandbox pay run deducts 5 %.
    const run = await service.request('/sandbox/payment', json({ pay_date: '2026-07-17' }, { authorization: `Bearer ${token}` }));
    expect(run.status).toBe(200);
    const statements = (await service.app.get(SandboxEmployerStore).payStatements(ref, run.body.payment_id, { limit: 100, offset: 0 }))!;
    const deductionOf = (id: string) => {
      const statement = statements.items.find((s) => s.individual_id === id)!;
      return { gross: statement.gross_pay.amount, deduction: statement.employee_deductions.find((d) => d.name === description) };
    };
    for (const id of [now1, now2]) {
      const { gross, deduction } = deductionOf(id);
      expect(Math.abs(deduction!.amount - gross * 0.05)).toBeLessThanOrEqual(1);
    }
    expect(deductionOf(later).deduction).toBeUndefined(); // enrolled from Aug 1 only

    // Unenrolling one of them ends the enrollment from the request date on.
    const unenroll = await open({ type: 'benefit_unenroll', params: { benefit_id: benefitId, effective_date: '2026-07-02', individual_ids: [now2, stranger] } });
    const unenrollTask = await taskOf(unenroll.id);
    expect((await ops(`/ops/api/tasks/${unenrollTask.task_id}/complete`)).status).toBe(200);
    const ended = await manualJobSettled(unenroll.id);
    expect(ended).toMatchObject({ status: 'complete', body: { individuals: [{ individual_id: now2, code: 200 }, { individual_id: stranger, code: 404 }] } });
    const unenrollment = { job_id: unenroll.id, benefit_id: benefitId, operation: 'unenroll' };
    expect(await enrollmentEventsOfJob(unenroll.id)).toEqual([
      {
        type: 'EnrollmentGroupProcessed',
        data: { ...unenrollment, effective_date: '2026-07-02', succeeded: 1, failed: 1, results: ended.body.individuals },
      },
      { type: 'EnrollmentJobCompleted', data: { ...unenrollment, status: 'complete', succeeded: 1, failed: 1 } },
    ]);
    expect(await inForce('2026-07-02')).toEqual([now1]);
    const after = await service.app.get(EnrollmentsRepository).listOfBenefit(benefitId, { individualIds: [now2] });
    expect(after[0]).toMatchObject({ status: 'unenrolled', endedOn: '2026-07-02' });
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

  it('a change the provider refuses ends the manual job in error with the reason', async () => {
    const unknownBenefit = randomUUID();
    const update = await open({ type: 'benefit_update', params: { benefit_id: unknownBenefit, description: 'nope' } });
    expect((await ops(`/ops/api/tasks/${(await taskOf(update.id)).task_id}/complete`)).status).toBe(200);
    const settled = await manualJobSettled(update.id);
    expect(settled).toMatchObject({ status: 'error', body: { benefit_id: unknownBenefit, error: expect.stringContaining(unknownBenefit) } });

    const [person] = await people(1);
    const enroll = await open({
      type: 'benefit_enroll',
      params: { benefit_id: unknownBenefit, groups: [{ effective_date: '2026-07-02', items: [{ individual_id: person, configuration: FIVE_PERCENT }] }] },
    });
    expect((await ops(`/ops/api/tasks/${(await taskOf(enroll.id)).task_id}/complete`)).status).toBe(200);
    expect(await manualJobSettled(enroll.id)).toMatchObject({ status: 'error', body: { error: expect.stringMatching(/refused/) } });
    expect(await eventsOf('OpsTaskCompleted')).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ job_id: enroll.id, job_status: 'error' }) }),
    );
    // Refused as a whole: no group was processed, and the job failed for everyone asked for.
    expect(await enrollmentEventsOfJob(enroll.id)).toEqual([
      { type: 'EnrollmentJobFailed', data: { job_id: enroll.id, benefit_id: unknownBenefit, operation: 'enroll', status: 'error', succeeded: 0, failed: 1 } },
    ]);
    expect(await enrollmentEventsOfJob(update.id)).toEqual([]);
  });

  it('an enroll the provider answers with no success ends in error: its group is processed and the job failed', async () => {
    const benefitId = await benefitAtProvider();
    const strangers = [randomUUID(), randomUUID()];
    const job = await open({
      type: 'benefit_enroll',
      params: { benefit_id: benefitId, groups: [{ effective_date: '2026-07-02', items: strangers.map((id) => ({ individual_id: id, configuration: FIVE_PERCENT })) }] },
    });
    expect((await ops(`/ops/api/tasks/${(await taskOf(job.id)).task_id}/complete`)).status).toBe(200);
    const settled = await manualJobSettled(job.id);
    expect(settled).toMatchObject({ status: 'error', body: { error: 'No individual could be enrolled' } });
    const enrollment = { job_id: job.id, benefit_id: benefitId, operation: 'enroll' };
    expect(await enrollmentEventsOfJob(job.id)).toEqual([
      { type: 'EnrollmentGroupProcessed', data: { ...enrollment, effective_date: '2026-07-02', succeeded: 0, failed: 2, results: settled.body.individuals } },
      { type: 'EnrollmentJobFailed', data: { ...enrollment, status: 'error', succeeded: 0, failed: 2 } },
    ]);
    expect(settled.body.individuals.map((r: { code: number }) => r.code)).toEqual([404, 404]);
  });

  it('an apply whose runs keep dying ends the manual job in error, with its events', async () => {
    const [person] = await people(1);
    const benefitId = randomUUID();
    const job = await open({
      type: 'benefit_enroll',
      params: { benefit_id: benefitId, groups: [{ effective_date: '2026-07-02', items: [{ individual_id: person, configuration: FIVE_PERCENT }] }] },
    });
    const task = await taskOf(job.id);
    const applyId = randomUUID();
    // Ops completed the task, and every run of its apply job died with its worker: the job is
    // left leased by a dead worker with no attempts left. One transaction, so no worker sees it earlier.
    await dataSource.transaction(async (manager) => {
      const now = clock.now();
      await service.app.get(OpsTasksRepository).resolve(task.task_id, { status: 'completed', note: null, resolvedBy: 'ops', resolvedAt: now }, manager);
      await service.app.get(ManualJobsRepository).markInProgress(job.id, now, manager);
      await service.app.get(JobsRepository).insert(
        { id: applyId, connectionId: connection.id, entityId: ref.entityId, kind: 'internal', type: ASSISTED_APPLY, params: { task_id: task.task_id }, createdAt: now },
        manager,
      );
      await manager.query(
        `UPDATE jobs SET status = 'in_progress', leased_by = 'crashed-worker', leased_until = now() - interval '1 second', attempts = $2 WHERE id = $1`,
        [applyId, DEFAULT_RETRY_POLICY.maxAttempts],
      );
    });
    expect((await manualJob(job.id)).body.status).toBe('in_progress');

    const settled = await manualJobSettled(job.id);
    expect(settled).toEqual({
      job_id: job.id,
      status: 'error',
      body: { benefit_id: benefitId, note: null, error: expect.stringContaining(`Gave up after ${DEFAULT_RETRY_POLICY.maxAttempts} runs`) },
    });
    const [apply] = await dataSource.query(`SELECT status, result FROM jobs WHERE id = $1`, [applyId]);
    expect(apply).toEqual({ status: 'complete', result: { task_id: task.task_id, manual_job_id: job.id, manual_job_status: 'error' } });
    expect(await eventsOfJob(job.id)).toEqual([
      expect.objectContaining({ type: 'OpsTaskOpened' }),
      { type: 'OpsTaskCompleted', data: expect.objectContaining({ task_id: task.task_id, job_status: 'error', error: settled.body.error }) },
      { type: 'EnrollmentJobFailed', data: { job_id: job.id, benefit_id: benefitId, operation: 'enroll', status: 'error', succeeded: 0, failed: 1 } },
    ]);
  });

  it('failing a task ends the manual job in error with the note at once, and its enrollment rows too', async () => {
    const benefitId = await benefitAtProvider();
    const [person] = await people(1);
    const params = { benefit_id: benefitId, groups: [{ effective_date: '2026-07-02', items: [{ individual_id: person, configuration: FIVE_PERCENT }] }] };
    const job = await open({ type: 'benefit_enroll', params });
    await dataSource.transaction((manager) =>
      service.app.get(EnrollmentsRepository).upsertRequested(
        [{ benefitId, entityId: ref.entityId, individualId: person, configuration: FIVE_PERCENT, effectiveDate: '2026-07-02' }],
        job.id,
        clock.now(),
        manager,
      ),
    );
    const task = await taskOf(job.id);
    const res = await ops(`/ops/api/tasks/${task.task_id}/fail`, { note: 'Plan is closed to new enrollments' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'failed', note: 'Plan is closed to new enrollments', resolved_by: 'ops' });
    expect((await manualJob(job.id)).body).toEqual({
      job_id: job.id,
      status: 'error',
      body: { benefit_id: benefitId, note: 'Plan is closed to new enrollments', error: 'Plan is closed to new enrollments' },
    });
    expect((await service.app.get(EnrollmentsRepository).listOfBenefit(benefitId))[0].status).toBe('error');
    expect(await provider.enrollments(ref, benefitId, '2026-07-02')).toEqual([]);
    expect(await eventsOf('OpsTaskFailed')).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ task_id: task.task_id, note: 'Plan is closed to new enrollments' }) }),
    );
    expect(await enrollmentEventsOfJob(job.id)).toEqual([
      { type: 'EnrollmentJobFailed', data: { job_id: job.id, benefit_id: benefitId, operation: 'enroll', status: 'error', succeeded: 0, failed: 1 } },
    ]);

    // An unenroll task failed the same way; other work has no enrollment event.
    const unenroll = await open({ type: 'benefit_unenroll', params: { benefit_id: benefitId, effective_date: '2026-07-02', individual_ids: [person, randomUUID()] } });
    expect((await ops(`/ops/api/tasks/${(await taskOf(unenroll.id)).task_id}/fail`, { note: 'Not now' })).status).toBe(200);
    expect(await enrollmentEventsOfJob(unenroll.id)).toEqual([
      { type: 'EnrollmentJobFailed', data: { job_id: unenroll.id, benefit_id: benefitId, operation: 'unenroll', status: 'error', succeeded: 0, failed: 2 } },
    ]);
    const update = await open({ type: 'benefit_update', params: { benefit_id: benefitId, description: 'Never' } });
    expect((await ops(`/ops/api/tasks/${(await taskOf(update.id)).task_id}/fail`, { note: 'No' })).status).toBe(200);
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

  it('shows the manual job in progress while the apply is retried, and ends it in error when the retries run out', async () => {
    const app = await createApplication(service);
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_assisted', employee_size: 5 }, basic(app)));
    expect(res.status).toBe(200);
    const connection = (await service.app.get(ConnectionsRepository).find(res.body.connection_id))!;
    const dataSource = service.app.get(DataSource);
    const job = await dataSource.transaction((manager) =>
      service.app.get(AssistedWorkService).open(manager, {
        connection,
        entityId: res.body.entity_id,
        work: { type: 'benefit_create', params: { benefit_id: randomUUID(), type: '401k', description: 'Outage', frequency: null, company_contribution: null } },
      }),
    );
    const [task] = await dataSource.query(`SELECT id FROM ops_tasks WHERE job_id = $1`, [job.id]);
    expect((await service.request(`/ops/api/tasks/${task.id}/complete`, json({}, OPS))).status).toBe(200);
    const manualJob = async () =>
      (await service.request(`/jobs/manual/${job.id}`, { headers: { authorization: `Bearer ${res.body.access_token}`, 'service-api-version': '2020-09-17' } })).body;

    // Each failed run is retried after a backoff measured on the service clock: move it past each one.
    const body = await expectEventually(async () => {
      const current = await manualJob();
      if (current.status === 'in_progress') {
        expect(current.body).toBeNull();
        clock.advance(10 * 60_000);
      }
      expect(current.status).toBe('error');
      return current.body;
    }, { timeoutMs: 30_000 });
    expect(body.error).toMatch(/could not be reached in 5 attempts/);
    const [apply] = await dataSource.query(`SELECT status, attempts FROM jobs WHERE type = 'assisted_apply' AND params->>'task_id' = $1`, [task.id]);
    expect(apply).toEqual({ status: 'complete', attempts: 5 });
  });
});
