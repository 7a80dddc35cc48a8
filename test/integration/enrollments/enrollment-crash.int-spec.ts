import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../../src/config/app-config';
import { DEFAULT_RETRY_POLICY, Job, nextAttemptAt } from '../../../src/domain/jobs/job';
import { employerRefOf, ProviderChangeResult } from '../../../src/domain/providers/provider-port';
import { CLOCK, Clock, ManualClock } from '../../../src/domain/shared/clock';
import { DomainError } from '../../../src/domain/shared/domain-error';
import { ConnectionsRepository } from '../../../src/infrastructure/database/repositories/connections.repository';
import { SandboxProviderAdapter } from '../../../src/infrastructure/providers/sandbox/sandbox-provider.adapter';
import { IssuedCredentials } from '../../../src/modules/applications/applications.service';
import { BenefitsRepository } from '../../../src/modules/benefits/benefits.repository';
import { JobHandlerRegistry } from '../../../src/modules/jobs/job-handler';
import { JobSignal } from '../../../src/modules/jobs/job-signal';
import { JobWorker } from '../../../src/modules/jobs/job-worker';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { ProviderRetryPolicies } from '../../../src/modules/providers/provider-retry-policies';
import { describeWithPostgres } from '../../setup/test-env';
import { basic, bearer, createApplication } from '../../utils/connect';
import { expectEventually } from '../../utils/expect-eventually';
import { json, startTestService, TestService } from '../../utils/test-app';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { DomainEventBus } from '../../../src/domain/events/domain-event-bus';

/**
 * A worker process that dies: once `crash()` is called nothing it does reaches the database any
 * more (no lease, no renewal, no final status), like a process killed mid-job. Its lease then
 * runs out in PostgreSQL and another worker takes the job over.
 */
class DyingJobs extends JobsRepository {
  dead = false;

  crash(): void {
    this.dead = true;
  }

  override async lease(owner: string, types: string[], now: Date, leaseMs: number, limit: number): Promise<Job[]> {
    return this.dead ? [] : super.lease(owner, types, now, leaseMs, limit);
  }
  override async renewLease(id: string, owner: string, leaseMs: number): Promise<boolean> {
    return this.dead ? true : super.renewLease(id, owner, leaseMs);
  }
  override async renewLeases(ids: readonly string[], owner: string, leaseMs: number): Promise<string[]> {
    return this.dead ? [...ids] : super.renewLeases(ids, owner, leaseMs);
  }
  override async finishMany(...args: Parameters<JobsRepository['finishMany']>): Promise<string[]> {
    return this.dead ? [] : super.finishMany(...args);
  }
  override async deferMany(...args: Parameters<JobsRepository['deferMany']>): Promise<number> {
    return this.dead ? 0 : super.deferMany(...args);
  }
  override async finish(...args: Parameters<JobsRepository['finish']>): Promise<boolean> {
    return this.dead ? false : super.finish(...args);
  }
  override async reschedule(...args: Parameters<JobsRepository['reschedule']>): Promise<boolean> {
    return this.dead ? false : super.reschedule(...args);
  }
  override async release(...args: Parameters<JobsRepository['release']>): Promise<boolean> {
    return this.dead ? false : super.release(...args);
  }
}

describeWithPostgres('enrollment jobs survive crashes and provider failures (PostgreSQL)', () => {
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  let service: TestService;
  let app: IssuedCredentials;
  let adapter: SandboxProviderAdapter;
  let realApply: SandboxProviderAdapter['applyChanges'];
  const workers: JobWorker[] = [];

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    // No worker of the service's own: each test runs the workers it needs.
    service = await startTestService({ clock, env: { WORKERS_ENABLED: 'false' } });
    app = await createApplication(service);
    adapter = service.app.get(SandboxProviderAdapter);
    realApply = adapter.applyChanges.bind(adapter);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    adapter.applyChanges = realApply;
  });
  afterAll(() => service?.close());

  const db = () => service.app.get(DataSource);

  function worker(jobs: JobsRepository, leaseMs: number): JobWorker {
    const w = new JobWorker(service.app.get(UnitOfWork), jobs, service.app.get(JobHandlerRegistry), service.app.get(JobSignal), service.app.get<Clock>(CLOCK), {
      pollMs: 20,
      leaseMs,
      concurrency: 2,
      retry: DEFAULT_RETRY_POLICY,
      shutdownGraceMs: 50,
    }, service.app.get(DomainEventBus));
    workers.push(w);
    w.start();
    return w;
  }

  /** A sandbox employer, its paid employees and a 401(k) the provider already runs. */
  async function employerWithPlan() {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 10, products: ['benefits', 'payment'] }, basic(app)));
    expect(res.status).toBe(200);
    const token: string = res.body.access_token;
    const payments = await service.request('/employer/payment?start_date=2026-01-01&end_date=2026-06-01', { headers: bearer(token) });
    const regular = payments.body.filter((p: { individual_ids: string[] }) => p.individual_ids.length > 1);
    const people: string[] = regular[regular.length - 1].individual_ids;
    // The benefit is made the way the create job would make it (that job's own tests are elsewhere).
    const connection = (await service.app.get(ConnectionsRepository).find(res.body.connection_id))!;
    const entity = connection.entities[0];
    const benefitId = randomUUID();
    const now = clock.now();
    await adapter.createBenefit(employerRefOf(connection, entity), {
      benefit_id: benefitId,
      type: '401k',
      description: '401(k)',
      frequency: 'every_paycheck',
      company_contribution: null,
    });
    await db().transaction((manager) =>
      service.app.get(BenefitsRepository).insertOrFind(
        {
          id: benefitId,
          connectionId: connection.id,
          entityId: entity.id,
          type: '401k',
          description: '401(k)',
          frequency: 'every_paycheck',
          companyContribution: null,
          origin: 'provider',
          jobId: null,
          createdAt: now,
          updatedAt: now,
        },
        manager,
      ),
    );
    return { token, people: people.slice(0, 3), benefitId, connectionId: connection.id };
  }

  async function enroll(token: string, benefitId: string, people: string[]): Promise<string> {
    const res = await service.request(
      `/employer/benefits/${benefitId}/individuals`,
      json(people.map((id) => ({ individual_id: id, configuration: { employee_deduction: { type: 'percent', amount: 500 } } })), bearer(token)),
    );
    expect(res.status).toBe(200);
    return res.body.job_id;
  }

  /** The provider answers 503 to its first `failures` calls, then works: how many calls it got so far. */
  function providerFailingFirst(failures: number): () => number {
    let calls = 0;
    adapter.applyChanges = async (ref, id, changes) => {
      calls++;
      if (calls <= failures) throw new DomainError('provider_error', 'The provider answered 503');
      return realApply(ref, id, changes);
    };
    return () => calls;
  }

  // The worker has recorded its run (its backoff is set from the clock it read): only then may a test move the clock.
  const workersIdle = () => expectEventually(() => expect(workers.flatMap((w) => w.activeJobIds)).toEqual([]));
  const jobRow = async (id: string) => (await db().query(`SELECT status, result FROM jobs WHERE id = $1`, [id]))[0];
  const groupJob = async (parentId: string) =>
    (await db().query(`SELECT status, attempts FROM jobs WHERE kind = 'internal' AND params->>'job_id' = $1`, [parentId]))[0];

  it('a worker that dies after the provider call and before recording it: the next worker completes the job, one enrollment each', async () => {
    const { token, people, benefitId } = await employerWithPlan();
    const dying = new DyingJobs(db());
    let calls = 0;
    let wakeTheDead = () => undefined as void;
    adapter.applyChanges = async (ref, id, changes) => {
      const answer = await realApply(ref, id, changes);
      calls++; // counted once the provider has answered, so the test reads the provider's writes after it
      if (calls === 1) {
        // The provider has done it; the worker dies before a single write of its own.
        dying.crash();
        return new Promise<ProviderChangeResult[]>((resolve) => (wakeTheDead = () => resolve(answer)));
      }
      return answer;
    };
    const jobId = await enroll(token, benefitId, people);
    worker(dying, 300);

    await expectEventually(() => expect(calls).toBe(1));
    expect((await jobRow(jobId)).status).toBe('pending');
    const atProvider = () =>
      db().query(`SELECT individual_id, count(*)::int AS n FROM sandbox_enrollments WHERE benefit_id = $1 GROUP BY 1 ORDER BY 1`, [benefitId]);
    expect(await atProvider()).toHaveLength(3);
    // Not processed: its provider call was under way (no later request may take it over) when the worker died.
    const [group] = await db().query(`SELECT state FROM enrollment_groups WHERE job_id = $1`, [jobId]);
    expect(group.state).toBe('submitting');

    // A new worker (the restarted process) takes the job over once the dead one's lease runs out.
    worker(service.app.get(JobsRepository), 10_000);
    await expectEventually(async () => expect((await jobRow(jobId)).status).toBe('complete'));
    expect(calls).toBe(2);
    expect((await jobRow(jobId)).result.body).toEqual(people.map((id) => ({ individual_id: id, code: 200 })));
    expect(await groupJob(jobId)).toEqual({ status: 'complete', attempts: 2 });
    expect(await atProvider()).toEqual([...people].sort().map((id) => ({ individual_id: id, n: 1 })));
    const rows = await db().query(`SELECT status FROM enrollments WHERE benefit_id = $1`, [benefitId]);
    expect(rows).toEqual(people.map(() => ({ status: 'enrolled' })));

    // Let the dead worker's frozen run end (so its timers stop): whatever it does reaches nothing.
    wakeTheDead();
    await expectEventually(() => expect(workers[0].activeJobIds).toEqual([]));
    expect(await groupJob(jobId)).toEqual({ status: 'complete', attempts: 2 });
  });

  it('a group whose runs kept dying: the worker that gives up ends the group, its job and its saga', async () => {
    const { token, people, benefitId, connectionId } = await employerWithPlan();
    let calls = 0;
    adapter.applyChanges = async (ref, id, changes) => {
      calls++;
      return realApply(ref, id, changes);
    };
    const jobId = await enroll(token, benefitId, people);
    // As if every run the provider's retry policy allows had died mid-way (each lease counts a run).
    const { maxAttempts } = await service.app.get(ProviderRetryPolicies).forConnection(connectionId);
    await db().query(`UPDATE jobs SET attempts = $2 WHERE kind = 'internal' AND params->>'job_id' = $1`, [jobId, maxAttempts]);
    worker(service.app.get(JobsRepository), 10_000);

    await expectEventually(async () => expect((await jobRow(jobId)).status).toBe('error'));
    expect(calls).toBe(0);
    expect((await jobRow(jobId)).result.body).toEqual(
      people.map((id) => ({ individual_id: id, code: 500, message: expect.stringContaining('The provider call was given up') })),
    );
    expect((await groupJob(jobId)).status).toBe('complete');
    const [group] = await db().query(`SELECT state FROM enrollment_groups WHERE job_id = $1`, [jobId]);
    expect(group.state).toBe('processed');
    const [saga] = await db().query(`SELECT s.state FROM sagas s JOIN saga_jobs sj ON sj.saga_id = s.id WHERE sj.job_id = $1`, [jobId]);
    expect(saga.state).toBe('failed');
    const rows = await db().query(`SELECT status FROM enrollments WHERE benefit_id = $1`, [benefitId]);
    expect(rows).toEqual(people.map(() => ({ status: 'error' })));
  });

  it('provider errors are retried with backoff; the job completes when the provider recovers', async () => {
    const { token, people, benefitId } = await employerWithPlan();
    const calls = providerFailingFirst(2);
    const jobId = await enroll(token, benefitId, people);
    worker(service.app.get(JobsRepository), 10_000);

    await expectEventually(async () => expect((await groupJob(jobId)).status).toBe('pending'));
    await expectEventually(() => expect(calls()).toBe(1));
    await workersIdle();
    // Backoff is the clock's: 1 s after the first failure, 2 s after the second.
    clock.advance(1_000);
    service.app.get(JobSignal).nudge();
    await expectEventually(() => expect(calls()).toBe(2));
    await workersIdle();
    expect((await jobRow(jobId)).status).toBe('pending');
    clock.advance(2_000);
    service.app.get(JobSignal).nudge();
    await expectEventually(async () => expect((await jobRow(jobId)).status).toBe('complete'));
    expect(calls()).toBe(3);
    expect(await groupJob(jobId)).toEqual({ status: 'complete', attempts: 3 });
  });

  it('the wait between runs is capped by PROVIDER_RETRY_MAX_DELAY_MS: each failure reschedules the job at most that far ahead', async () => {
    const config = service.app.get(AppConfig);
    const configured = config.PROVIDER_RETRY_MAX_DELAY_MS;
    config.PROVIDER_RETRY_MAX_DELAY_MS = 1_500; // read when the new connection's policy is first looked up
    try {
      const { token, people, benefitId } = await employerWithPlan();
      const calls = providerFailingFirst(3);
      const jobId = await enroll(token, benefitId, people);
      worker(service.app.get(JobsRepository), 10_000);
      const dueIn = async () => {
        const [row] = await db().query(`SELECT scheduled_at FROM jobs WHERE kind = 'internal' AND params->>'job_id' = $1`, [jobId]);
        return new Date(row.scheduled_at).getTime() - clock.now().getTime();
      };
      // Uncapped the waits would be 1, 2 and 4 s.
      for (const [run, wait] of [[1, 1_000], [2, 1_500], [3, 1_500]]) {
        await expectEventually(() => expect(calls()).toBe(run));
        await workersIdle();
        await expectEventually(async () => expect(await groupJob(jobId)).toEqual({ status: 'pending', attempts: run }));
        expect(await dueIn()).toBe(wait);
        clock.advance(wait);
        service.app.get(JobSignal).nudge();
      }
      await expectEventually(async () => expect((await jobRow(jobId)).status).toBe('complete'));
      expect(calls()).toBe(4);
    } finally {
      config.PROVIDER_RETRY_MAX_DELAY_MS = configured;
    }
  });

  it('a provider that never recovers: retried for its retry budget (time, not a count); then each individual carries the error and the job ends in error', async () => {
    const { token, people, benefitId, connectionId } = await employerWithPlan();
    let calls = 0;
    adapter.applyChanges = async () => {
      calls++;
      throw new DomainError('provider_timeout', 'The provider did not answer');
    };
    const jobId = await enroll(token, benefitId, people);
    const policy = await service.app.get(ProviderRetryPolicies).forConnection(connectionId);
    const firstRun = clock.now();
    worker(service.app.get(JobsRepository), 10_000);
    let attempt = 1;
    for (;;) {
      await expectEventually(() => expect(calls).toBe(attempt));
      await workersIdle();
      const next = nextAttemptAt(clock.now(), attempt, policy, firstRun);
      if (!next) break;
      clock.set(next);
      service.app.get(JobSignal).nudge();
      attempt++;
    }
    await expectEventually(async () => expect((await jobRow(jobId)).status).toBe('error'));
    expect(calls).toBe(attempt);
    // Ten minutes of retries for a provider answering in under a second: more than five quick tries.
    expect(attempt).toBeGreaterThan(DEFAULT_RETRY_POLICY.maxAttempts);
    expect(clock.now().getTime() - firstRun.getTime()).toBeGreaterThan(policy.budgetMs! / 2);
    expect((await jobRow(jobId)).result.body).toEqual(
      people.map((id) => ({ individual_id: id, code: 504, message: 'The provider did not answer' })),
    );
    const rows = await db().query(`SELECT DISTINCT status FROM enrollments WHERE benefit_id = $1`, [benefitId]);
    expect(rows).toEqual([{ status: 'error' }]);
  });
});
