import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ManualClock } from '../../src/domain/shared/clock';
import { JobWorker } from '../../src/modules/jobs/job-worker';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

/**
 * One individual's changes reach the provider in request order, even when the worker holding an
 * earlier request's group dies mid-call and its job is re-run after its lease runs out: the
 * later request's group waits for it instead of landing first and being overwritten.
 */
describeWithPostgres('enrollment changes reach the provider in request order', () => {
  const clock = new ManualClock('2026-07-01T12:00:00Z');
  let service: TestService;
  let app: Awaited<ReturnType<typeof createApplication>>;
  afterAll(() => service?.close());
  beforeAll(async () => {
    service = await startTestService({ clock, env: { JOB_LEASE_MS: '1500' } });
    app = await createApplication(service);
  });

  const db = () => service.app.get(DataSource);

  async function employerWithPlan() {
    const c = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5 }, basic(app)));
    const token = c.body.access_token;
    const dir = await service.request('/employer/directory', { headers: bearer(token) });
    const b = await service.request('/employer/benefits', json({ type: '401k', description: `401(k) ${randomUUID()}` }, bearer(token)));
    await expectEventually(async () => expect((await db().query(`SELECT status FROM jobs WHERE id = $1`, [b.body.job_id]))[0].status).toBe('complete'));
    return { token, connectionId: c.body.connection_id, entityId: c.body.entity_id, person: dir.body.individuals[0].id as string, benefitId: b.body.benefit_id as string };
  }

  /** The first request's group is taken by a worker that dies holding its lease; the second request follows. */
  async function olderHeldByADeadWorker(first: object, second: object) {
    const worker = service.app.get(JobWorker);
    await worker.stop();
    expect((await service.request('/hris/events', json(first, basic(app)))).body.outcome).toBe('applied');
    const [{ id: groupJob }] = await db().query(`SELECT id FROM jobs WHERE type = 'benefit_enrollment_group' AND status = 'pending'`);
    await db().query(`UPDATE jobs SET status = 'in_progress', leased_by = 'dead', leased_until = now() + interval '1.5 seconds', attempts = 1 WHERE id = $1`, [groupJob]);
    expect((await service.request('/hris/events', json(second, basic(app)))).body.outcome).toBe('applied');
    worker.start();
    await expectEventually(
      async () => expect((await db().query(`SELECT count(*)::int AS n FROM jobs WHERE type = 'benefit_enrollment_group' AND status IN ('pending', 'in_progress')`))[0].n).toBe(0),
      { timeoutMs: 20_000 },
    );
  }

  const event = (type: string, e: { connectionId: string; entityId: string }, data: Record<string, unknown>, occurredAt: string) => ({
    id: randomUUID(),
    type,
    version: 1,
    occurred_at: occurredAt,
    connection_id: e.connectionId,
    entity_id: e.entityId,
    data,
  });
  const atProvider = async (e: { token: string; benefitId: string; person: string }) =>
    (await service.request(`/employer/benefits/${e.benefitId}/individuals?individual_ids=${e.person}`, { headers: bearer(e.token) })).body[0];

  it('two contribution changes: the later one is what the provider holds', async () => {
    const e = await employerWithPlan();
    const change = (amount: number, at: string) =>
      event('ContributionChanged', e, { individual_id: e.person, benefit_id: e.benefitId, configuration: { employee_deduction: { type: 'percent', amount } } }, at);
    await olderHeldByADeadWorker(change(217, '2026-07-01T10:00:00Z'), change(222, '2026-07-01T11:00:00Z'));
    expect((await atProvider(e)).body.employee_deduction).toEqual({ type: 'percent', amount: 222 });
    const [row] = await db().query(`SELECT status, configuration->'employee_deduction'->>'amount' AS amount FROM enrollments WHERE benefit_id = $1`, [e.benefitId]);
    expect(row).toEqual({ status: 'enrolled', amount: '222' });
  });

  it('a change then a termination: the individual ends unenrolled at the service and the provider', async () => {
    const e = await employerWithPlan();
    const change = event('ContributionChanged', e, { individual_id: e.person, benefit_id: e.benefitId, configuration: { employee_deduction: { type: 'percent', amount: 300 } } }, '2026-07-01T10:00:00Z');
    const end = event('EmployeeTerminated', e, { individual_id: e.person, end_date: '2026-07-01' }, '2026-07-01T11:00:00Z');
    await olderHeldByADeadWorker(change, end);
    expect((await atProvider(e)).code).toBe(404);
    const [row] = await db().query(`SELECT status FROM enrollments WHERE benefit_id = $1`, [e.benefitId]);
    expect(row.status).toBe('unenrolled');
  });
});
