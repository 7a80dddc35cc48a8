import { randomUUID } from 'node:crypto';
import { DataSource, QueryRunner } from 'typeorm';
import { ManualClock } from '../../src/domain/shared/clock';
import { EnrollmentLifecycle } from '../../src/modules/enrollments/enrollment-lifecycle';
import { JobWorker } from '../../src/modules/jobs/job-worker';
import { JobsRepository } from '../../src/modules/jobs/jobs.repository';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';
import { holdJob } from '../utils/job-queue';
import { rowsReadOf } from '../utils/watched-statements';
import { advisoryLocksFor } from '../../src/infrastructure/database/repositories/enrollment-locks';

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
  // A test that stopped the workers and failed midway must not leave the next without them.
  afterEach(() => service?.app.get(JobWorker).start());
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
    await holdJob(db(), groupJob, 'dead', `now() + interval '1.5 seconds'`, 1);
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

  describe('a later group waiting for an earlier one of the same individual', () => {
    /**
     * Two changes of one individual, both due: the earlier one's provider call under way (its
     * group claimed) when the later arrives, so the later cannot take it over and must wait.
     * The workers stopped.
     */
    async function twoDueChanges() {
      const e = await employerWithPlan();
      await service.app.get(JobWorker).stop();
      const change = (amount: number, at: string) =>
        event('ContributionChanged', e, { individual_id: e.person, benefit_id: e.benefitId, configuration: { employee_deduction: { type: 'percent', amount } } }, at);
      const groupJobs = (): Promise<{ id: string; group_id: string }[]> =>
        db().query(`SELECT id, params->>'group_id' AS group_id FROM jobs WHERE type = 'benefit_enrollment_group' AND status = 'pending' ORDER BY seq`);
      expect((await service.request('/hris/events', json(change(217, '2026-07-01T10:00:00Z'), basic(app)))).body.outcome).toBe('applied');
      const [earlier] = await groupJobs();
      expect(await service.app.get(EnrollmentLifecycle).startSubmitting(earlier.group_id)).toBe(true);
      expect((await service.request('/hris/events', json(change(222, '2026-07-01T11:00:00Z'), basic(app)))).body.outcome).toBe('applied');
      const [, later] = await groupJobs();
      expect(later).toBeDefined();
      return { e, earlier, later };
    }
    const dueAt = async (jobId: string): Promise<Date> => (await db().query(`SELECT scheduled_at FROM jobs WHERE id = $1`, [jobId]))[0].scheduled_at;
    const leaseByHand = async (jobId: string, owner: string): Promise<Date> => {
      await holdJob(db(), jobId, owner, `now() + interval '1 minute'`);
      return dueAt(jobId);
    };
    const allGroupsDone = () =>
      expectEventually(
        async () => expect((await db().query(`SELECT count(*)::int AS n FROM jobs WHERE type = 'benefit_enrollment_group' AND status IN ('pending', 'in_progress')`))[0].n).toBe(0),
        { timeoutMs: 20_000 },
      );

    it('sleeps instead of being leased again at every poll, and is woken by the earlier group’s end', async () => {
      const { e, earlier, later } = await twoDueChanges();
      // The earlier group's run is held (a worker that died with it) for 3 s.
      await holdJob(db(), earlier.id, 'dead', `now() + interval '3 seconds'`, 1);
      service.app.get(JobWorker).start();
      // The clock stands still: a job put back due at once would be leased again at every poll.
      await expectEventually(async () => {
        const [job] = await db().query(`SELECT status, scheduled_at FROM jobs WHERE id = $1`, [later.id]);
        expect(job.status).toBe('pending');
        expect(new Date(job.scheduled_at).getTime()).toBeGreaterThanOrEqual(clock.now().getTime() + 5_000);
      });
      // Its wait outlasts this test under the standing clock: it runs only because the earlier group's end wakes it.
      await allGroupsDone();
      expect((await atProvider(e)).body.employee_deduction).toEqual({ type: 'percent', amount: 222 });
    });

    it('is due at once when the earlier group ends while its own run decides to wait', async () => {
      const { earlier, later } = await twoDueChanges();
      const jobs = service.app.get(JobsRepository);
      const asleep = new Date(clock.now().getTime() + 60_000);
      // Without a wake, the job sleeps as asked.
      let leasedDueAt = await leaseByHand(later.id, 'racer');
      expect(await jobs.deferMany('racer', [{ id: later.id, scheduledAt: asleep, leasedDueAt }])).toBe(1);
      expect((await dueAt(later.id)).getTime()).toBe(asleep.getTime());
      // Leased again; the earlier group ends (its results recorded) before this run puts it back.
      leasedDueAt = await leaseByHand(later.id, 'racer');
      await service.app.get(EnrollmentLifecycle).processed(earlier.group_id, [{ individual_id: (await db().query(`SELECT individual_id FROM enrollment_items WHERE group_id = $1`, [earlier.group_id]))[0].individual_id, code: 200, message: 'OK' }]);
      expect(await jobs.deferMany('racer', [{ id: later.id, scheduledAt: asleep, leasedDueAt }])).toBe(1);
      expect((await dueAt(later.id)).getTime()).toBeLessThanOrEqual(clock.now().getTime());
      service.app.get(JobWorker).start();
      await allGroupsDone();
      const [row] = await db().query(`SELECT status, result FROM jobs WHERE id = $1`, [later.id]);
      expect(row.status).toBe('complete');
      expect(row.result.results).toEqual([expect.objectContaining({ code: 200 })]);
    });

    it('a wake does not wait for a queue row another transaction holds (no deadlock), and wakes the row once it is free', async () => {
      const { earlier, later } = await twoDueChanges();
      const asleep = new Date(clock.now().getTime() + 60_000);
      const leasedDueAt = await leaseByHand(later.id, 'racer');
      expect(await service.app.get(JobsRepository).deferMany('racer', [{ id: later.id, scheduledAt: asleep, leasedDueAt }])).toBe(1);
      const [item] = await db().query(`SELECT benefit_id, individual_id FROM enrollment_items WHERE group_id = $1`, [earlier.group_id]);
      const [personLock] = advisoryLocksFor([[item.benefit_id, item.individual_id]]).filter((l) => !l.shared);
      // Held by the earlier group's results (its individual), checked in PostgreSQL's lock table.
      const personLockHeld = async () =>
        (
          await db().query(
            `SELECT count(*)::int AS n FROM pg_locks l, (SELECT hashtextextended($1, 0) AS h) k
             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
               AND l.classid = ((k.h >> 32) & 4294967295)::oid AND l.objid = (k.h & 4294967295)::oid`,
            [personLock.key],
          )
        )[0].n;
      // Another group batch's commit: it holds the later job's queue row (it finished or put back
      // its own jobs) and then needs the individual the earlier group's results hold. A gate (a
      // lock on the earlier request's job row, taken after the individuals) keeps the results'
      // transaction holding its individual until the holder waits for it.
      const [{ job_id: requestJob }] = await db().query(`SELECT job_id FROM enrollment_groups WHERE id = $1`, [earlier.group_id]);
      const holder = db().createQueryRunner();
      const gate = db().createQueryRunner();
      try {
        await gate.startTransaction();
        await gate.query(`SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, [requestJob]);
        await holder.startTransaction();
        const [{ pid: holderPid }] = await holder.query(`SELECT pg_backend_pid() AS pid`);
        await holder.query(`SELECT 1 FROM job_queue WHERE job_id = $1 FOR UPDATE`, [later.id]);
        const recorded = service.app
          .get(EnrollmentLifecycle)
          .processed(earlier.group_id, [{ individual_id: item.individual_id, code: 200, message: 'OK' }])
          .then(
            () => 'recorded',
            (error: Error) => error.message,
          );
        await expectEventually(async () => expect(await personLockHeld()).toBe(1));
        const holderGotIt = holder.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [personLock.key]).then(
          () => 'locked',
          (error: Error) => error.message,
        );
        await expectEventually(async () =>
          expect((await db().query(`SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1`, [holderPid]))[0].wait_event_type).toBe('Lock'),
        );
        await gate.commitTransaction();
        // A wake that waited for the row would deadlock with the holder: one of them rolled back.
        expect(await recorded).toBe('recorded');
        expect(await holderGotIt).toBe('locked');
        // The row was held during the wake: still asleep until the holder is done.
        expect((await dueAt(later.id)).getTime()).toBe(asleep.getTime());
        await holder.commitTransaction();
      } finally {
        for (const runner of [gate, holder]) {
          if (runner.isTransactionActive) await runner.rollbackTransaction();
          await runner.release();
        }
      }
      // Woken again after the commit, once its row was free.
      await expectEventually(async () => expect((await dueAt(later.id)).getTime()).toBeLessThanOrEqual(clock.now().getTime()));
      service.app.get(JobWorker).start();
      await allGroupsDone();
      expect((await db().query(`SELECT status FROM jobs WHERE id = $1`, [later.id]))[0].status).toBe('complete');
    });
  });

  /** The group jobs open, oldest first (not those a test made up as history). */
  const groupJobs = (): Promise<{ id: string; group_id: string }[]> =>
    db().query(
      `SELECT id, params->>'group_id' AS group_id FROM jobs
       WHERE type = 'benefit_enrollment_group' AND status IN ('pending', 'in_progress') AND params->>'history' IS NULL ORDER BY seq`,
    );
  const dueAt = async (jobId: string): Promise<number> => new Date((await db().query(`SELECT scheduled_at FROM jobs WHERE id = $1`, [jobId]))[0].scheduled_at).getTime();
  /** Enrolls the employer's person at `amount` percent from 2026-07-01. */
  const enrollAt = (e: { token: string; benefitId: string; person: string }, amount: number) =>
    service.request(
      `/employer/benefits/${e.benefitId}/individuals`,
      json([{ individual_id: e.person, configuration: { effective_date: '2026-07-01', employee_deduction: { type: 'percent', amount } } }], bearer(e.token)),
    );

  it('wakes only the next of a line of waiting groups when the first ends, not the whole line', async () => {
    const e = await employerWithPlan();
    const worker = service.app.get(JobWorker);
    await worker.stop();
    const enroll = (amount: number) => enrollAt(e, amount);
    // First: an enrollment whose provider call is under way (claimed, held by a worker that died).
    expect((await enroll(300)).status).toBe(200);
    const [first] = await groupJobs();
    expect(await service.app.get(EnrollmentLifecycle).startSubmitting(first.group_id)).toBe(true);
    await holdJob(db(), first.id, 'dead', `now() + interval '1 minute'`, 1);
    // Then an unenrollment and a new enrollment, neither able to take over the one before it.
    expect((await service.request(`/employer/benefits/${e.benefitId}/individuals`, { ...json({ individual_ids: [e.person] }, bearer(e.token)), method: 'DELETE' })).status).toBe(200);
    expect((await enroll(400)).status).toBe(200);
    const [, second, third] = await groupJobs();
    worker.start();
    await expectEventually(async () => {
      for (const job of [second, third]) expect(await dueAt(job.id)).toBeGreaterThanOrEqual(clock.now().getTime() + 5_000);
    });
    await worker.stop();

    await service.app.get(EnrollmentLifecycle).processed(first.group_id, [{ individual_id: e.person, code: 200, message: 'OK' }]);
    expect(await dueAt(second.id)).toBeLessThanOrEqual(clock.now().getTime());
    expect(await dueAt(third.id)).toBeGreaterThanOrEqual(clock.now().getTime() + 5_000);

    // The rest of the line follows, each woken by the one before it (the clock stands still).
    await db().query(`UPDATE job_queue SET leased_until = now() WHERE job_id = $1`, [first.id]);
    worker.start();
    await expectEventually(
      async () => expect((await db().query(`SELECT count(*)::int AS n FROM jobs WHERE type = 'benefit_enrollment_group' AND status IN ('pending', 'in_progress')`))[0].n).toBe(0),
      { timeoutMs: 20_000 },
    );
    expect((await atProvider(e)).body.employee_deduction).toEqual({ type: 'percent', amount: 400 });
  });

  it('wakes the next group through its job’s index, without reading the jobs of every group there has been', async () => {
    const e = await employerWithPlan();
    const worker = service.app.get(JobWorker);
    await worker.stop();
    // What a wake must not read: the jobs of 5,000 other groups, 3,000 done and 2,000 asleep in the queue.
    await db().query(
      `WITH made AS (
         INSERT INTO jobs (id, connection_id, entity_id, kind, type, status, params, created_at, scheduled_at, completed_at)
         SELECT gen_random_uuid(), $1, $2, 'internal', 'benefit_enrollment_group', CASE WHEN n <= 3000 THEN 'complete' ELSE 'pending' END,
                jsonb_build_object('group_id', gen_random_uuid(), 'history', true), now(), now() + interval '1 hour', CASE WHEN n <= 3000 THEN now() END
         FROM generate_series(1, 5000) AS n
         RETURNING id, connection_id, status, scheduled_at, seq, weight)
       INSERT INTO job_queue (job_id, type, connection_id, scheduled_at, seq, weight)
       SELECT id, 'benefit_enrollment_group', connection_id, scheduled_at, seq, weight FROM made WHERE status = 'pending'`,
      [e.connectionId, e.entityId],
    );
    await db().query(`ANALYZE jobs, job_queue`);
    const enroll = (amount: number) => enrollAt(e, amount);
    expect((await enroll(300)).status).toBe(200);
    const [first] = await groupJobs();
    expect(await service.app.get(EnrollmentLifecycle).startSubmitting(first.group_id)).toBe(true);
    await holdJob(db(), first.id, 'dead', `now() + interval '1 minute'`, 1);
    expect((await enroll(400)).status).toBe(200);
    const [, second] = await groupJobs();
    worker.start();
    await expectEventually(async () => expect(await dueAt(second.id)).toBeGreaterThanOrEqual(clock.now().getTime() + 5_000));
    await worker.stop();

    // Every statement of the service goes through its query runners.
    const probe = db().createQueryRunner();
    const statements = jest.spyOn(Object.getPrototypeOf(probe) as QueryRunner, 'query');
    await probe.release();
    let calls: unknown[][];
    try {
      await service.app.get(EnrollmentLifecycle).processed(first.group_id, [{ individual_id: e.person, code: 200, message: 'OK' }]);
    } finally {
      calls = [...statements.mock.calls];
      statements.mockRestore();
    }
    expect(await dueAt(second.id)).toBeLessThanOrEqual(clock.now().getTime());
    // The wake's statement, run again (and rolled back) with its plan: the rows it read of jobs.
    const [sql, params] = calls.find(([text]) => /WITH candidate AS/.test(String(text)))!;
    const runner = db().createQueryRunner();
    try {
      await runner.startTransaction();
      const [jobsRead] = await rowsReadOf(runner, 'jobs', [{ sql: String(sql), params: params as unknown[] }]);
      expect(jobsRead).toBeLessThan(20);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
      // The other tests' job reads find none of them.
      await db().query(`DELETE FROM job_queue WHERE job_id IN (SELECT id FROM jobs WHERE params->>'history' = 'true')`);
      await db().query(`DELETE FROM jobs WHERE params->>'history' = 'true'`);
    }
    // The first group's run, held by the dead worker, ends; then the second runs.
    await db().query(`UPDATE job_queue SET leased_until = now() WHERE job_id = $1`, [first.id]);
    worker.start();
    await expectEventually(
      async () => expect((await db().query(`SELECT count(*)::int AS n FROM jobs WHERE type = 'benefit_enrollment_group' AND status IN ('pending', 'in_progress')`))[0].n).toBe(0),
      { timeoutMs: 20_000 },
    );
    expect((await atProvider(e)).body.employee_deduction).toEqual({ type: 'percent', amount: 400 });
  });

  it('a group waiting for its benefit’s creation at the provider sleeps, and is woken by the creation’s end', async () => {
    const c = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5 }, basic(app)));
    const token = c.body.access_token;
    const person = (await service.request('/employer/directory', { headers: bearer(token) })).body.individuals[0].id as string;
    const worker = service.app.get(JobWorker);
    await worker.stop();
    const b = await service.request('/employer/benefits', json({ type: '401k', description: `401(k) ${randomUUID()}` }, bearer(token)));
    // The creation's run is held by a worker that died with it, for 3 s.
    await holdJob(db(), b.body.job_id, 'dead', `now() + interval '3 seconds'`, 1);
    const enrolled = await service.request(
      `/employer/benefits/${b.body.benefit_id}/individuals`,
      json([{ individual_id: person, configuration: { effective_date: '2026-07-01', employee_deduction: { type: 'percent', amount: 250 } } }], bearer(token)),
    );
    expect(enrolled.status).toBe(200);
    const [group] = await db().query(`SELECT id FROM jobs WHERE type = 'benefit_enrollment_group' AND status = 'pending'`);
    worker.start();
    // Asleep, not leased again at every poll while the creation runs (the clock stands still).
    await expectEventually(async () => {
      const [job] = await db().query(`SELECT status, scheduled_at FROM jobs WHERE id = $1`, [group.id]);
      expect(job.status).toBe('pending');
      expect(new Date(job.scheduled_at).getTime()).toBeGreaterThanOrEqual(clock.now().getTime() + 5_000);
    });
    // Its wait outlasts this test under the standing clock: it runs only because the creation's end wakes it.
    await expectEventually(async () => expect((await db().query(`SELECT status FROM jobs WHERE id = $1`, [group.id]))[0].status).toBe('complete'), { timeoutMs: 20_000 });
    expect((await atProvider({ token, benefitId: b.body.benefit_id, person })).body.employee_deduction).toEqual({ type: 'percent', amount: 250 });
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
