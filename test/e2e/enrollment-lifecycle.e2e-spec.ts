import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { employerRefOf, PROVIDER_PORT, ProviderPort } from '../../src/domain/providers/provider-port';
import { ManualClock } from '../../src/domain/shared/clock';
import { DomainError } from '../../src/domain/shared/domain-error';
import { ConnectionsRepository } from '../../src/infrastructure/database/repositories/connections.repository';
import { SandboxProviderAdapter } from '../../src/infrastructure/providers/sandbox/sandbox-provider.adapter';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { JobSignal } from '../../src/modules/jobs/job-signal';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const OPS = { authorization: `Basic ${Buffer.from('ops:ops-password-for-tests').toString('base64')}` };
const pct = (amount: number) => ({ employee_deduction: { type: 'percent', amount } });

interface Employer {
  token: string;
  connectionId: string;
  entityId: string;
}

/**
 * One lifecycle for an enrollment, whoever the provider is: the rules that the Automated and
 * Assisted paths used to hold twice, checked end to end over HTTP (Assisted work through the ops
 * task API). Each test names the rule it holds.
 */
describeWithPostgres('the enrollment lifecycle, Automated and Assisted alike', () => {
  const clock = new ManualClock('2026-07-02T15:00:00Z');
  let service: TestService;
  let app: IssuedCredentials;
  let automated: Employer;
  let assisted: Employer;
  let adapter: SandboxProviderAdapter;
  let realApply: SandboxProviderAdapter['applyChanges'];

  beforeAll(async () => {
    service = await startTestService({ clock, env: { OPS_SIGN_IN_MAX_FAILURES: '1000' } });
    app = await createApplication(service);
    automated = await sandboxEmployer('sandbox_automated');
    assisted = await sandboxEmployer('sandbox_assisted');
    adapter = service.app.get(SandboxProviderAdapter);
    realApply = adapter.applyChanges.bind(adapter);
  });
  afterAll(() => service?.close());
  beforeEach(() => clock.set('2026-07-02T15:00:00Z'));
  afterEach(() => {
    adapter.applyChanges = realApply;
  });

  async function sandboxEmployer(providerId: string): Promise<Employer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: providerId, employee_size: 12 }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  const db = () => service.app.get(DataSource);
  const api = (of: Employer, path: string, body?: unknown, method?: string): Promise<TestResponse> =>
    body === undefined && method === undefined
      ? service.request(path, { headers: bearer(of.token) })
      : service.request(path, { ...json(body ?? {}, bearer(of.token)), ...(method ? { method } : {}) });
  const ops = (path: string, body: unknown = {}) => service.request(path, json(body, OPS));
  const nudgeAt = (at: string) => {
    clock.set(at);
    service.app.get(JobSignal).nudge();
  };
  const jobOf = (of: Employer, id: string) => api(of, of === assisted ? `/jobs/manual/${id}` : `/jobs/automated/${id}`);
  const ended = (of: Employer, id: string) =>
    expectEventually(async () => {
      const res = await jobOf(of, id);
      expect(['complete', 'error']).toContain(res.body.status);
      return res.body;
    });
  /** The open ops tasks of a manual job, oldest first. */
  const openTasks = async (jobId: string): Promise<string[]> =>
    (await db().query(`SELECT id FROM ops_tasks WHERE job_id = $1 AND status = 'open' ORDER BY created_at, id`, [jobId])).map((r: { id: string }) => r.id);
  const complete = async (jobId: string) => {
    const [taskId] = await openTasks(jobId);
    expect(taskId).toBeDefined();
    expect((await ops(`/ops/api/tasks/${taskId}/complete`)).status).toBe(200);
  };
  const enroll = async (of: Employer, benefitId: string, elements: { individual_id: string; configuration: Record<string, unknown> }[]) => {
    const res = await api(of, `/employer/benefits/${benefitId}/individuals`, elements);
    expect(res.status).toBe(200);
    return res.body.job_id as string;
  };
  const unenroll = async (of: Employer, benefitId: string, ids: string[]) => {
    const res = await api(of, `/employer/benefits/${benefitId}/individuals`, { individual_ids: ids }, 'DELETE');
    expect(res.status).toBe(200);
    return res.body.job_id as string;
  };
  /** `GET …/individuals` for one individual: the configuration in force, or null when none is. */
  const inForce = async (of: Employer, benefitId: string, individualId: string) => {
    const res = await api(of, `/employer/benefits/${benefitId}/individuals?individual_ids=${individualId}`);
    expect(res.status).toBe(200);
    return res.body[0].code === 200 ? (res.body[0].body.employee_deduction.amount as number) : null;
  };
  const enrolledIds = async (of: Employer, benefitId: string) => (await api(of, `/employer/benefits/${benefitId}/enrolled`)).body.individual_ids as string[];
  /** What the provider (the sandbox payroll system) deducts for the individual on a date, or null. */
  const atProvider = async (of: Employer, benefitId: string, individualId: string, date: string) => {
    const connection = (await service.app.get(ConnectionsRepository).find(of.connectionId))!;
    const [enrollment] = await service.app.get<ProviderPort>(PROVIDER_PORT).enrollments(employerRefOf(connection, connection.entities[0]), benefitId, date, [individualId]);
    return enrollment?.configuration.employee_deduction?.amount ?? null;
  };
  async function people(of: Employer, n: number): Promise<string[]> {
    const directory = await api(of, '/employer/directory');
    return directory.body.individuals.map((i: { id: string }) => i.id).slice(0, n);
  }
  async function benefit(of: Employer, description = `Plan ${randomUUID().slice(0, 8)}`): Promise<string> {
    const res = await api(of, '/employer/benefits', { type: '401k', description, frequency: 'every_paycheck' });
    expect(res.status).toBe(200);
    if (of === assisted) await complete(res.body.job_id);
    expect((await ended(of, res.body.job_id)).status).toBe('complete');
    return res.body.benefit_id;
  }

  describe('1. reads show the configuration in force (Assisted)', () => {
    it('a re-enroll waiting for its date or for ops does not hide it, nor does ops failing it', async () => {
      const plan = await benefit(assisted);
      const [person] = await people(assisted, 1);
      const first = await enroll(assisted, plan, [{ individual_id: person, configuration: pct(500) }]);
      await complete(first);
      expect((await ended(assisted, first)).status).toBe('complete');
      expect(await inForce(assisted, plan, person)).toBe(500);

      await enroll(assisted, plan, [{ individual_id: person, configuration: { ...pct(700), effective_date: '2026-09-01' } }]);
      expect(await enrolledIds(assisted, plan)).toEqual([person]);
      expect(await inForce(assisted, plan, person)).toBe(500);

      const waitingForOps = await enroll(assisted, plan, [{ individual_id: person, configuration: pct(600) }]);
      expect(await inForce(assisted, plan, person)).toBe(500);
      const [taskId] = await openTasks(waitingForOps);
      expect((await ops(`/ops/api/tasks/${taskId}/fail`, { note: 'Not in this payroll cycle' })).status).toBe(200);
      expect((await ended(assisted, waitingForOps)).status).toBe('error');
      // The provider still holds 5 %: that is what the reads say.
      expect(await inForce(assisted, plan, person)).toBe(500);
      expect(await enrolledIds(assisted, plan)).toEqual([person]);
    });
  });

  describe('2. a failed re-enroll does not stop a later termination', () => {
    const post = (of: Employer, event: Record<string, unknown>) => service.request('/hris/events', json(event, basic(app)));
    const terminated = (of: Employer, individualId: string) => ({
      id: randomUUID(),
      type: 'EmployeeTerminated',
      version: 1,
      occurred_at: clock.now().toISOString(),
      connection_id: of.connectionId,
      entity_id: of.entityId,
      data: { individual_id: individualId, end_date: '2026-07-02' },
    });

    it('Automated: the provider refused the new amount, the old one still runs, and the termination ends it', async () => {
      const plan = await benefit(automated);
      const [person] = await people(automated, 1);
      expect((await ended(automated, await enroll(automated, plan, [{ individual_id: person, configuration: pct(400) }]))).status).toBe('complete');
      adapter.applyChanges = async () => {
        throw new DomainError('invalid_request_error', 'Amount above the plan maximum');
      };
      expect((await ended(automated, await enroll(automated, plan, [{ individual_id: person, configuration: pct(900) }]))).status).toBe('error');
      adapter.applyChanges = realApply;
      expect(await atProvider(automated, plan, person, '2026-07-02')).toBe(400);

      const event = terminated(automated, person);
      expect((await post(automated, event)).body.outcome).toBe('applied');
      const [saga] = await db().query(`SELECT outcome FROM sagas WHERE source_event_id = $1`, [event.id]);
      expect(saga.outcome).not.toBe('no_enrollments');
      await expectEventually(async () => expect(await atProvider(automated, plan, person, '2026-07-02')).toBeNull());
    });

    it('Assisted: ops failed the new amount, the old one still runs, and the termination ends it', async () => {
      const plan = await benefit(assisted);
      const [person] = await people(assisted, 1);
      const first = await enroll(assisted, plan, [{ individual_id: person, configuration: pct(400) }]);
      await complete(first);
      await ended(assisted, first);
      const raise = await enroll(assisted, plan, [{ individual_id: person, configuration: pct(900) }]);
      const [taskId] = await openTasks(raise);
      expect((await ops(`/ops/api/tasks/${taskId}/fail`, { note: 'Above the plan maximum' })).status).toBe(200);

      const event = terminated(assisted, person);
      expect((await post(assisted, event)).body.outcome).toBe('applied');
      const [saga] = await db().query(`SELECT id, outcome FROM sagas WHERE source_event_id = $1`, [event.id]);
      expect(saga.outcome).not.toBe('no_enrollments');
      // The termination ends every benefit the individual is enrolled in: this plan's job is the one with it.
      const [{ job_id: termination }] = await db().query(
        `SELECT sj.job_id FROM saga_jobs sj JOIN jobs j ON j.id = sj.job_id WHERE sj.saga_id = $1 AND j.params->>'benefit_id' = $2`,
        [saga.id, plan],
      );
      await complete(termination);
      expect(await ended(assisted, termination)).toMatchObject({ status: 'complete', body: [{ individual_id: person, code: 200 }] });
      expect(await atProvider(assisted, plan, person, '2026-07-02')).toBeNull();
      expect(await inForce(assisted, plan, person)).toBeNull();
    });
  });

  describe('3. Assisted work reaches the provider in request order; later requests supersede waiting ones', () => {
    it('a later request for the same date takes the individual out of the open task: the task is cancelled, only the new amount is asked for', async () => {
      const plan = await benefit(assisted);
      const [person] = await people(assisted, 1);
      const older = await enroll(assisted, plan, [{ individual_id: person, configuration: pct(500) }]);
      const [olderTask] = await openTasks(older);
      const newer = await enroll(assisted, plan, [{ individual_id: person, configuration: pct(600) }]);

      expect((await service.request(`/ops/api/tasks/${olderTask}`, { headers: OPS })).body).toMatchObject({ status: 'cancelled', resolved_by: 'service' });
      expect((await ops(`/ops/api/tasks/${olderTask}/complete`)).status).toBe(409);
      const olderJob = await ended(assisted, older);
      expect(olderJob).toMatchObject({ status: 'complete', body: [{ individual_id: person, code: 409, message: expect.stringContaining(`Superseded by job ${newer}`) }] });
      await complete(newer);
      expect((await ended(assisted, newer)).status).toBe('complete');
      expect(await atProvider(assisted, plan, person, '2026-07-02')).toBe(600);
    });

    it('a later-dated change waits for the earlier one: its task opens on its date once the earlier is applied, so the newer amount lands last', async () => {
      const plan = await benefit(assisted);
      const [person] = await people(assisted, 1);
      const older = await enroll(assisted, plan, [{ individual_id: person, configuration: pct(500) }]);
      const newer = await enroll(assisted, plan, [{ individual_id: person, configuration: { ...pct(600), effective_date: '2026-08-01' } }]);
      expect(await openTasks(newer)).toEqual([]);

      // August 1 comes before ops did the July work: the August change waits for it (its work job is put back, spending no run).
      nudgeAt('2026-08-01T08:00:00Z');
      await expectEventually(async () =>
        expect(
          await db().query(`SELECT status, attempts, scheduled_at > '2026-08-01T08:00:00Z' AS deferred FROM jobs WHERE type = 'benefit_enrollment_group' AND params->>'job_id' = $1`, [newer]),
        ).toEqual([{ status: 'pending', attempts: 0, deferred: true }]),
      );
      expect(await openTasks(newer)).toEqual([]);
      expect((await jobOf(assisted, newer)).body.status).toBe('pending');

      await complete(older);
      expect((await ended(assisted, older)).status).toBe('complete');
      service.app.get(JobSignal).nudge();
      await expectEventually(async () => expect(await openTasks(newer)).toHaveLength(1));
      await complete(newer);
      expect((await ended(assisted, newer)).status).toBe('complete');
      expect(await atProvider(assisted, plan, person, '2026-07-31')).toBe(500);
      expect(await atProvider(assisted, plan, person, '2026-08-01')).toBe(600);
    });

    it('an unenroll takes a waiting future-dated enroll over: nothing brings the individual back on its date', async () => {
      const plan = await benefit(assisted);
      const [person] = await people(assisted, 1);
      const future = await enroll(assisted, plan, [{ individual_id: person, configuration: { ...pct(500), effective_date: '2026-09-01' } }]);
      const out = await unenroll(assisted, plan, [person]);
      expect(await ended(assisted, future)).toMatchObject({ status: 'complete', body: [{ code: 409 }] });
      await complete(out);
      expect(await ended(assisted, out)).toMatchObject({ status: 'complete', body: [{ individual_id: person, code: 200 }] });

      nudgeAt('2026-09-01T08:00:00Z');
      await expectEventually(async () =>
        expect((await db().query(`SELECT status FROM jobs WHERE type = 'benefit_enrollment_group' AND params->>'job_id' = $1`, [future]))[0].status).toBe('complete'),
      );
      expect(await openTasks(future)).toEqual([]);
      expect(await atProvider(assisted, plan, person, '2026-09-01')).toBeNull();
    });

    it('a future-dated Assisted group is worked on its date; the manual job stays pending until the latest date is processed', async () => {
      const plan = await benefit(assisted);
      const [a, b] = await people(assisted, 2);
      const job = await enroll(assisted, plan, [
        { individual_id: a, configuration: pct(300) },
        { individual_id: b, configuration: { ...pct(300), effective_date: '2026-10-01' } },
      ]);
      await complete(job);
      await expectEventually(async () => expect(await atProvider(assisted, plan, a, '2026-07-02')).toBe(300));
      expect((await jobOf(assisted, job)).body.status).toBe('pending');
      expect(await openTasks(job)).toEqual([]);
      nudgeAt('2026-10-01T00:00:00Z');
      await expectEventually(async () => expect(await openTasks(job)).toHaveLength(1));
      expect((await jobOf(assisted, job)).body.status).toBe('pending');
      await complete(job);
      expect((await ended(assisted, job)).status).toBe('complete');
    });
  });

  describe('4. work that depends on a benefit being created waits for it (a slow provider)', () => {
    let slow: TestService;
    const slowClock = new ManualClock('2026-07-02T15:00:00Z');

    beforeAll(async () => {
      slow = await startTestService({ clock: slowClock, env: { PROVIDER_LATENCY_MS: '2500', JOB_POLL_MS: '50' } });
    });
    afterAll(() => slow?.close());

    it('create, then enroll at once: the group waits for the creation without spending its retries, then enrolls', async () => {
      const slowApp = await createApplication(slow);
      const res = await slow.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5 }, basic(slowApp)));
      const of = { token: res.body.access_token };
      const person = (await slow.request('/employer/directory', { headers: bearer(of.token) })).body.individuals[0].id;
      const created = await slow.request('/employer/benefits', json({ type: '401k', description: 'Slow plan', frequency: 'every_paycheck' }, bearer(of.token)));
      expect(created.status).toBe(200);
      const enrolled = await slow.request(`/employer/benefits/${created.body.benefit_id}/individuals`, json([{ individual_id: person, configuration: pct(300) }], bearer(of.token)));
      expect(enrolled.status).toBe(200);
      // While the creation call is under way, the service's clock runs far past any quick retries.
      const db2 = slow.app.get(DataSource);
      const creation = async () => (await db2.query(`SELECT status FROM jobs WHERE id = $1`, [created.body.job_id]))[0].status;
      while ((await creation()) !== 'complete') {
        slowClock.advance(10 * 60_000);
        slow.app.get(JobSignal).nudge();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const job = await expectEventually(
        async () => {
          const current = (await slow.request(`/jobs/automated/${enrolled.body.job_id}`, { headers: bearer(of.token) })).body;
          expect(['complete', 'error']).toContain(current.status);
          return current;
        },
        { timeoutMs: 20_000 },
      );
      expect(job).toMatchObject({ status: 'complete', body: [{ individual_id: person, code: 200 }] });
      const [group] = await db2.query(`SELECT attempts FROM jobs WHERE type = 'benefit_enrollment_group' AND params->>'job_id' = $1`, [enrolled.body.job_id]);
      expect(group.attempts).toBe(1);
    });
  });

  describe('5. a benefit whose creation failed is not there', () => {
    it('enroll, unenroll and update answer 404 benefit_not_found, as the read does', async () => {
      const created = await api(assisted, '/employer/benefits', { type: '401k', description: `Refused ${randomUUID().slice(0, 8)}`, frequency: 'every_paycheck' });
      const [taskId] = await openTasks(created.body.job_id);
      expect((await ops(`/ops/api/tasks/${taskId}/fail`, { note: 'The provider has no such plan' })).status).toBe(200);
      const id = created.body.benefit_id;
      const [person] = await people(assisted, 1);
      const notFound = { code: 404, name: 'not_found_error', service_code: 'benefit_not_found' };
      expect((await api(assisted, `/employer/benefits/${id}`)).body).toMatchObject(notFound);
      expect((await api(assisted, `/employer/benefits/${id}/individuals`, [{ individual_id: person, configuration: pct(300) }])).body).toMatchObject(notFound);
      expect((await api(assisted, `/employer/benefits/${id}/individuals`, { individual_ids: [person] }, 'DELETE')).body).toMatchObject(notFound);
      expect((await api(assisted, `/employer/benefits/${id}`, { description: 'Renamed' })).body).toMatchObject(notFound);
    });
  });

  describe('6. a plan found at the provider keeps its own id', () => {
    it('two plans of one type, frequency and description stay two benefits: enrolling in the second reaches the second', async () => {
      const connection = (await service.app.get(ConnectionsRepository).find(automated.connectionId))!;
      const ref = employerRefOf(connection, connection.entities[0]);
      const provider = service.app.get<ProviderPort>(PROVIDER_PORT);
      const plan = { type: '401k', description: `Legacy ${randomUUID().slice(0, 8)}`, frequency: 'every_paycheck' as const, company_contribution: null };
      const [first, second] = [randomUUID(), randomUUID()];
      await provider.createBenefit(ref, { benefit_id: first, ...plan });
      await provider.createBenefit(ref, { benefit_id: second, ...plan });
      const [person] = await people(automated, 1);
      expect((await api(automated, `/employer/benefits/${first}`)).status).toBe(200);

      const job = await enroll(automated, second, [{ individual_id: person, configuration: pct(250) }]);
      expect((await ended(automated, job)).status).toBe('complete');
      expect(await atProvider(automated, second, person, '2026-07-02')).toBe(250);
      expect(await atProvider(automated, first, person, '2026-07-02')).toBeNull();
      expect((await db().query(`SELECT id FROM benefits WHERE id = ANY($1::uuid[]) ORDER BY id`, [[first, second]])).length).toBe(2);
    });
  });

  describe('7. replaced work is not an error', () => {
    it('a job whose individuals a later request took over completes, each result naming the job that did; the cancelling unenroll completes', async () => {
      const plan = await benefit(automated);
      const [person] = await people(automated, 1);
      const future = await enroll(automated, plan, [{ individual_id: person, configuration: { ...pct(300), effective_date: '2026-09-01' } }]);
      const out = await unenroll(automated, plan, [person]);
      expect(await ended(automated, future)).toMatchObject({
        status: 'complete',
        body: [{ individual_id: person, code: 409, message: expect.stringContaining(`Superseded by job ${out}`) }],
      });
      expect(await ended(automated, out)).toMatchObject({ status: 'complete', body: [{ individual_id: person, code: 200 }] });
    });
  });

  describe('8. a new hire whose every request is stale settles', () => {
    it('ends completed with the outcome stale instead of staying started', async () => {
      const plan = await benefit(automated);
      const policy = await ops('/ops/api/policies', {
        connection_id: automated.connectionId,
        entity_id: automated.entityId,
        benefit_id: plan,
        configuration: pct(300),
        waiting_period_days: 0,
      });
      expect(policy.status).toBe(200);
      const [, person] = await people(automated, 2);
      const event = (type: string, occurredAt: string, data: Record<string, unknown>) => ({
        id: randomUUID(),
        type,
        version: 1,
        occurred_at: occurredAt,
        connection_id: automated.connectionId,
        entity_id: automated.entityId,
        data: { individual_id: person, ...data },
      });
      const change = event('ContributionChanged', '2026-07-02T12:00:00Z', { benefit_id: plan, configuration: pct(450) });
      expect((await service.request('/hris/events', json(change, basic(app)))).body.outcome).toBe('applied');
      // The hire happened before that change, and arrives after it.
      const hire = event('EmployeeHired', '2026-07-01T09:00:00Z', { start_date: '2026-07-01' });
      expect((await service.request('/hris/events', json(hire, basic(app)))).body.outcome).toBe('applied');
      const [saga] = await db().query(`SELECT state, outcome FROM sagas WHERE source_event_id = $1`, [hire.id]);
      expect(saga).toEqual({ state: 'completed', outcome: 'stale' });
    });
  });

  describe('9. GET …/individuals with individual_ids empty', () => {
    it('answers every individual enrolled, as the public API family reads it', async () => {
      const plan = await benefit(automated);
      const [a, b] = await people(automated, 2);
      expect((await ended(automated, await enroll(automated, plan, [a, b].map((id) => ({ individual_id: id, configuration: pct(200) }))))).status).toBe('complete');
      const res = await api(automated, `/employer/benefits/${plan}/individuals?individual_ids=`);
      expect(res.status).toBe(200);
      expect(res.body.map((r: { individual_id: string; code: number }) => [r.individual_id, r.code]).sort()).toEqual([a, b].sort().map((id) => [id, 200]));
    });
  });

  describe('10. one request may name an individual on different effective dates', () => {
    it('today’s amount now and a raise next year, one group each; the same individual twice on one date stays a 400', async () => {
      const plan = await benefit(automated);
      const [person] = await people(automated, 1);
      const job = await enroll(automated, plan, [
        { individual_id: person, configuration: pct(300) },
        { individual_id: person, configuration: { ...pct(400), effective_date: '2027-01-01' } },
      ]);
      await expectEventually(async () => expect(await atProvider(automated, plan, person, '2026-07-02')).toBe(300));
      expect((await jobOf(automated, job)).body.status).toBe('pending');
      nudgeAt('2027-01-01T00:00:00Z');
      expect((await ended(automated, job)).status).toBe('complete');
      expect(await atProvider(automated, plan, person, '2026-12-31')).toBe(300);
      expect(await atProvider(automated, plan, person, '2027-01-01')).toBe(400);

      const twice = await api(automated, `/employer/benefits/${plan}/individuals`, [
        { individual_id: person, configuration: pct(300) },
        { individual_id: person, configuration: pct(350) },
      ]);
      expect(twice.status).toBe(400);
      expect(twice.body.message).toMatch(/once per effective date/);
    });
  });
});
