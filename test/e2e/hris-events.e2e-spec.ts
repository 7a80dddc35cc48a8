import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ManualClock } from '../../src/domain/shared/clock';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { JobSignal } from '../../src/modules/jobs/job-signal';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

const OPS = { authorization: `Basic ${Buffer.from('ops:ops-password-for-tests').toString('base64')}` };
const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }] };
const percent = (amount: number) => ({ type: 'percent', amount });

interface Employer {
  token: string;
  connectionId: string;
  entityId: string;
}

/**
 * HRIS events through `POST /hris/events` (the embedded intake; Kafka feeds the same inbox and
 * sagas): new hires enrolled by policy, contribution changes ordered by `occurred_at`,
 * terminations ending every enrollment, duplicates ignored, poison dead-lettered with a reason.
 */
describeWithPostgres('HRIS events and their sagas', () => {
  const clock = new ManualClock('2026-07-01T12:00:00Z');
  let service: TestService;
  let app: IssuedCredentials;
  let employer: Employer;
  let people: string[];
  let plan: string;

  beforeAll(async () => {
    service = await startTestService({ clock });
    app = await createApplication(service);
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 12 }, basic(app)));
    employer = { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
    const directory = await service.request('/employer/directory', { headers: bearer(employer.token) });
    people = directory.body.individuals.map((i: { id: string }) => i.id).sort();
    const created = await service.request('/employer/benefits', json({ type: '401k', description: '401(k)', frequency: 'every_paycheck', company_contribution: MATCH }, bearer(employer.token)));
    plan = created.body.benefit_id;
    await expectEventually(async () => expect((await service.request(`/jobs/automated/${created.body.job_id}`, { headers: bearer(employer.token) })).body.status).toBe('complete'));
  });
  afterAll(() => service?.close());

  const db = () => service.app.get(DataSource);
  const post = (body: unknown, headers = basic(app)) => service.request('/hris/events', json(body, headers));
  const envelope = (type: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    id: randomUUID(),
    type,
    version: 1,
    occurred_at: clock.now().toISOString(),
    connection_id: employer.connectionId,
    entity_id: employer.entityId,
    data,
    ...extra,
  });
  const sagaOf = async (eventId: string) =>
    (
      await db().query(
        `SELECT s.type, s.state, s.outcome, s.steps, coalesce((SELECT array_agg(job_id::text) FROM saga_jobs WHERE saga_id = s.id), '{}') AS job_ids
         FROM sagas s WHERE s.source_event_id = $1`,
        [eventId],
      )
    )[0];
  const jobStatus = async (id: string) => (await db().query(`SELECT status FROM jobs WHERE id = $1`, [id]))[0].status;
  const inForce = async (individualId: string) => {
    const res = await service.request(`/employer/benefits/${plan}/individuals?individual_ids=${individualId}`, { headers: bearer(employer.token) });
    return res.body[0];
  };

  it('needs application credentials', async () => {
    const res = await post(envelope('EmployeeHired', { individual_id: people[0], start_date: '2026-07-01' }), {});
    expect(res.status).toBe(401);
    expect(res.body.name).toBe('authentication_error');
  });

  it('a new hire without a policy: the saga ends at once with no_policy, nothing enrolled', async () => {
    const event = envelope('EmployeeHired', { individual_id: people[0], start_date: '2026-07-01' });
    const res = await post(event);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: event.id, outcome: 'applied' });
    const saga = await sagaOf(event.id);
    expect(saga).toMatchObject({ type: 'new_hire', state: 'completed', outcome: 'no_policy', job_ids: [] });
    expect(saga.steps.map((s: { name: string }) => s.name)).toEqual(['employee_hired', 'no_policy']);
  });

  describe('with a policy: 3 % after 30 days, +1 point a year up to 5 %', () => {
    let hire: ReturnType<typeof envelope>;

    beforeAll(async () => {
      const policy = await service.request(
        '/ops/api/policies',
        json(
          {
            connection_id: employer.connectionId,
            entity_id: employer.entityId,
            benefit_id: plan,
            configuration: { employee_deduction: percent(300) },
            waiting_period_days: 30,
            escalation: { increase: 100, cap: 500 },
          },
          OPS,
        ),
      );
      expect(policy.status).toBe(200);
    });

    it('a new hire is enrolled from start date + 30 days, with the escalation scheduled; a redelivery changes nothing', async () => {
      hire = envelope('EmployeeHired', { individual_id: people[1], start_date: '2026-07-01' });
      expect((await post(hire)).body).toEqual({ id: hire.id, outcome: 'applied' });
      const saga = await sagaOf(hire.id);
      expect(saga).toMatchObject({ type: 'new_hire', state: 'waiting' });
      expect(saga.job_ids).toHaveLength(3);
      const groups = await db().query(
        `SELECT to_char(g.effective_date, 'YYYY-MM-DD') AS date, i.configuration->'employee_deduction'->>'amount' AS amount
         FROM enrollment_groups g JOIN enrollment_items i ON i.group_id = g.id WHERE g.job_id = ANY($1::uuid[]) ORDER BY g.effective_date`,
        [saga.job_ids],
      );
      expect(groups).toEqual([
        { date: '2026-07-31', amount: '300' },
        { date: '2027-07-31', amount: '400' },
        { date: '2028-07-31', amount: '500' },
      ]);

      const jobsBefore = (await db().query(`SELECT count(*)::int AS n FROM jobs`))[0].n;
      expect((await post(hire)).body).toEqual({ id: hire.id, outcome: 'duplicate' });
      expect((await post({ ...hire, id: hire.id.toUpperCase() })).body.outcome).toBe('duplicate');
      expect((await db().query(`SELECT count(*)::int AS n FROM jobs`))[0].n).toBe(jobsBefore);
      expect(await db().query(`SELECT count(*)::int AS n FROM sagas WHERE source_event_id = $1`, [hire.id])).toEqual([{ n: 1 }]);

      clock.set('2026-07-31T00:00:00Z');
      service.app.get(JobSignal).nudge();
      await expectEventually(async () => expect((await inForce(people[1])).code).toBe(200));
      expect((await inForce(people[1])).body.employee_deduction).toEqual(percent(300));
    });

    it('a termination ends the enrollment on the end date and cancels the scheduled escalation', async () => {
      const saga = await sagaOf(hire.id);
      const end = envelope('EmployeeTerminated', { individual_id: people[1], end_date: '2026-08-15' });
      expect((await post(end)).body.outcome).toBe('applied');
      const termination = await sagaOf(end.id);
      expect(termination).toMatchObject({ type: 'termination', state: 'waiting' });
      expect(termination.job_ids).toHaveLength(1);

      // The two escalation jobs lost their only individual: they end, superseded.
      for (const jobId of saga.job_ids) {
        await expectEventually(async () => expect(['complete', 'error']).toContain(await jobStatus(jobId)));
      }
      clock.set('2026-08-15T00:00:00Z');
      service.app.get(JobSignal).nudge();
      await expectEventually(async () => expect(await jobStatus(termination.job_ids[0])).toBe('complete'));
      await expectEventually(async () => expect((await sagaOf(end.id)).state).toBe('completed'));
      expect((await inForce(people[1])).code).toBe(404);
      const hired = await sagaOf(hire.id);
      // Its escalation jobs were taken over by the termination: cancelled, not failed.
      expect(hired).toMatchObject({ state: 'completed', outcome: 'jobs_complete' });
      expect(hired.steps.map((s: { name: string }) => s.name)).toEqual(
        expect.arrayContaining(['employee_hired', 'policy_applied', 'enroll_requested', 'group_processed', 'individuals_superseded', 'job_complete', 'job_superseded']),
      );
    });
  });

  describe('contribution changes', () => {
    it('apply at their effective date; an older change (occurred_at) arriving later is left alone', async () => {
      clock.set('2026-08-15T12:00:00Z');
      const individual = people[2];
      const newer = envelope(
        'ContributionChanged',
        { individual_id: individual, benefit_id: plan, configuration: { employee_deduction: percent(600) } },
        { occurred_at: '2026-08-15T10:00:00Z' },
      );
      const older = envelope(
        'ContributionChanged',
        { individual_id: individual, benefit_id: plan, configuration: { employee_deduction: percent(200) } },
        { occurred_at: '2026-08-15T09:00:00Z' },
      );
      const answers = await post([newer, older]);
      expect(answers.status).toBe(200);
      expect(answers.body).toEqual([
        { id: newer.id, outcome: 'applied' },
        { id: older.id, outcome: 'applied' },
      ]);
      expect(await sagaOf(older.id)).toMatchObject({ type: 'contribution_change', state: 'completed', outcome: 'stale', job_ids: [] });
      const applied = await sagaOf(newer.id);
      await expectEventually(async () => expect(await jobStatus(applied.job_ids[0])).toBe('complete'));
      expect((await inForce(individual)).body.employee_deduction).toEqual(percent(600));
      const [row] = await db().query(`SELECT occurred_at FROM enrollments WHERE benefit_id = $1 AND individual_id = $2`, [plan, individual]);
      expect(row.occurred_at.toISOString()).toBe('2026-08-15T10:00:00.000Z');

      // A later change wins again.
      const latest = envelope(
        'ContributionChanged',
        { individual_id: individual, benefit_id: plan, configuration: { employee_deduction: percent(400) }, effective_date: '2026-08-15' },
        { occurred_at: '2026-08-15T11:00:00Z' },
      );
      expect((await post(latest)).body.outcome).toBe('applied');
      const latestSaga = await sagaOf(latest.id);
      expect(latestSaga.job_ids).toHaveLength(1);
      await expectEventually(async () => expect(await jobStatus(latestSaga.job_ids[0])).toBe('complete'));
      await expectEventually(async () => expect((await inForce(individual)).body.employee_deduction).toEqual(percent(400)));
    });
  });

  describe('the events of one batch share jobs', () => {
    it('one job per benefit for a batch, a later change of the same person in a job after it; each saga follows its own people', async () => {
      clock.set('2026-09-01T12:00:00Z');
      const [first, second] = [people[5], people[6]];
      const stranger = randomUUID();
      const change = (individual: string, amount: number, at: string) =>
        envelope('ContributionChanged', { individual_id: individual, benefit_id: plan, configuration: { employee_deduction: percent(amount) }, effective_date: '2026-09-01' }, { occurred_at: at });
      const events = [
        change(first, 300, '2026-09-01T10:00:00Z'),
        change(second, 350, '2026-09-01T10:00:01Z'),
        // Not at the provider: the provider fails this one person.
        change(stranger, 400, '2026-09-01T10:00:02Z'),
        // The first person again: a job of its own, after the first, which takes them over.
        change(first, 500, '2026-09-01T10:00:03Z'),
      ];
      const answers = await post(events);
      expect(answers.body.map((a: { outcome: string }) => a.outcome)).toEqual(['applied', 'applied', 'applied', 'applied']);
      const [a, b, c, d] = await Promise.all(events.map((e) => sagaOf(e.id)));
      expect(a.job_ids).toHaveLength(1);
      expect([b.job_ids, c.job_ids]).toEqual([a.job_ids, a.job_ids]);
      expect(d.job_ids).toHaveLength(1);
      expect(d.job_ids[0]).not.toBe(a.job_ids[0]);
      const [shared] = a.job_ids;
      await expectEventually(async () => {
        expect(await jobStatus(shared)).toBe('complete');
        expect(await jobStatus(d.job_ids[0])).toBe('complete');
      });
      expect(await db().query(`SELECT count(*)::int AS n FROM enrollment_groups WHERE job_id = $1`, [shared])).toEqual([{ n: 1 }]);

      const settled = await Promise.all(events.map((e) => sagaOf(e.id)));
      const names = (saga: { steps: { name: string }[] }) => saga.steps.map((s) => s.name);
      const stepNamed = (saga: { steps: { name: string; detail: Record<string, unknown> }[] }, name: string) => saga.steps.find((s) => s.name === name)?.detail;
      // Each saga's request counts its own people in the shared job, not the job's three.
      for (const saga of settled.slice(0, 3)) expect(stepNamed(saga, 'enroll_requested')).toMatchObject({ job_id: shared, groups: [{ effective_date: '2026-09-01', individuals: 1 }] });
      // The first change was taken over: superseded, not the job's outcome; the others' steps say nothing of it.
      expect(settled[0]).toMatchObject({ state: 'completed' });
      expect(names(settled[0])).toEqual(expect.arrayContaining(['individuals_superseded', 'job_superseded']));
      expect(names(settled[0])).not.toContain('group_processed');
      expect(names(settled[1])).not.toContain('individuals_superseded');
      // The second person succeeded and the stranger failed, in the same group.
      expect(settled[1]).toMatchObject({ state: 'completed', outcome: 'jobs_complete' });
      expect(stepNamed(settled[1], 'group_processed')).toMatchObject({ succeeded: 1, failed: 0 });
      expect(names(settled[1])).toContain('job_complete');
      expect(settled[2]).toMatchObject({ state: 'failed', outcome: 'job_failed' });
      expect(stepNamed(settled[2], 'group_processed')).toMatchObject({ succeeded: 0, failed: 1 });
      expect(names(settled[2])).toContain('job_error');
      expect(settled[3]).toMatchObject({ state: 'completed', outcome: 'jobs_complete' });
      expect((await inForce(first)).body.employee_deduction).toEqual(percent(500));
      expect((await inForce(second)).body.employee_deduction).toEqual(percent(350));
    });
  });

  describe('poison and foreign events', () => {
    const deadLetters = async (reasonLike: string) =>
      (await db().query(`SELECT reason FROM dead_letters WHERE consumer = 'hris-sagas' AND reason LIKE $1`, [`%${reasonLike}%`])) as { reason: string }[];

    it.each([
      ['an unknown type', () => envelope('EmployeePromoted', { individual_id: randomUUID() }), 'Unknown HRIS event type'],
      ['an unsupported version', () => envelope('EmployeeHired', { individual_id: randomUUID(), start_date: '2026-07-01' }, { version: 9 }), 'Unsupported version 9'],
      ['an impossible date', () => envelope('EmployeeHired', { individual_id: randomUUID(), start_date: '2026-02-30' }), 'start_date'],
      ['an unknown benefit', () => envelope('ContributionChanged', { individual_id: randomUUID(), benefit_id: randomUUID(), configuration: { employee_deduction: percent(100) } }), 'Unknown benefit'],
      ['a configuration the benefit refuses', () => envelope('ContributionChanged', { individual_id: randomUUID(), benefit_id: plan, configuration: { employee_deduction: percent(10_001) } }), 'benefit '],
      ['an unknown entity', () => envelope('EmployeeHired', { individual_id: randomUUID(), start_date: '2026-07-01' }, { entity_id: randomUUID() }), 'is not an entity of connection'],
    ])('%s is dead-lettered with the reason, and changes nothing', async (_, make, reason) => {
      const event = make();
      const before = (await db().query(`SELECT (SELECT count(*) FROM jobs)::int AS jobs, (SELECT count(*) FROM sagas)::int AS sagas`))[0];
      const res = await post(event);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: event.id, outcome: 'dead_lettered', reason: expect.stringContaining(reason) });
      expect((await deadLetters(reason)).length).toBeGreaterThanOrEqual(1);
      expect((await db().query(`SELECT (SELECT count(*) FROM jobs)::int AS jobs, (SELECT count(*) FROM sagas)::int AS sagas`))[0]).toEqual(before);
      // Redelivered, it is a duplicate: the dead letter is not written twice.
      expect((await post(event)).body.outcome).toBe('duplicate');
    });

    it('an event already applied that the inbox no longer holds is dead-lettered, not applied twice', async () => {
      const event = envelope('ContributionChanged', { individual_id: people[4], benefit_id: plan, configuration: { employee_deduction: percent(300) } });
      expect((await post(event)).body.outcome).toBe('applied');
      const counts = async () => (await db().query(`SELECT (SELECT count(*) FROM jobs)::int AS jobs, (SELECT count(*) FROM sagas)::int AS sagas`))[0];
      const before = await counts();
      // As if the inbox had forgotten it: it searches from a day before an event happened, and keeps a week.
      await db().query(`DELETE FROM inbox_messages WHERE consumer = 'hris-sagas' AND message_id = $1`, [event.id]);
      const again = await post(event);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ id: event.id, outcome: 'dead_lettered', reason: expect.stringContaining(`Event ${event.id} was already applied`) });
      expect(await counts()).toEqual(before);
      // Its dead letter is recorded once.
      expect((await post(event)).body.outcome).toBe('duplicate');
    });

    it('an event of another application’s connection is rejected, not applied nor dead-lettered', async () => {
      const other = await createApplication(service);
      const event = envelope('EmployeeHired', { individual_id: people[3], start_date: '2026-07-01' });
      const res = await post(event, basic(other));
      expect(res.body).toEqual({ id: event.id, outcome: 'rejected', reason: `No connection ${employer.connectionId} for this application` });
      expect(await sagaOf(event.id)).toBeUndefined();
      expect(await db().query(`SELECT 1 FROM inbox_messages WHERE message_id = $1`, [event.id])).toEqual([]);
    });

    it('bodies that are not events: 400; too many events: 400', async () => {
      expect((await post('"text"')).status).toBe(400);
      const many = Array.from({ length: 1_001 }, () => envelope('EmployeeHired', { individual_id: randomUUID(), start_date: '2026-07-01' }));
      const res = await post(many);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('1 to 1000 events');
      expect((await post([])).status).toBe(400);
    });
  });
});
