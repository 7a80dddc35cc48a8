import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainEventBus } from '../../../src/domain/events/domain-event-bus';
import { Job } from '../../../src/domain/jobs/job';
import { SystemClock } from '../../../src/domain/shared/clock';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { OutboxRelay } from '../../../src/infrastructure/messaging/outbox/outbox-relay';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { ServiceInstance, ServiceInstanceSettings } from '../../../src/infrastructure/scheduling/service-instance';
import { InstanceIdentity, ServiceInstancesRepository } from '../../../src/infrastructure/scheduling/service-instances.repository';
import { JobHandler, JobHandlerRegistry, JobOutcome, JobRunContext } from '../../../src/modules/jobs/job-handler';
import { JobSignal } from '../../../src/modules/jobs/job-signal';
import { JobWorker } from '../../../src/modules/jobs/job-worker';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { describeWithPostgres } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { holdJob, JOB_WITH_LEASE } from '../../utils/job-queue';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { RecordingTransport, relaySettings } from '../messaging/messaging-test-kit';
import { createConnection, workerSettings } from '../sync/sync-test-kit';

/** Far longer than any test: a job resumed within a test was never waiting for its lease to run out. */
const LONG_LEASE_MS = 10 * 60_000;
// Bounds with room for a loaded CI host, where the suites beside this one can hold its event loop
// for a few hundred milliseconds: a live instance must never miss a whole bound by such a stall.
const HEARTBEAT_MS = 100;
const DEAD_AFTER_MS = 1_500;

/**
 * A process's view of the database that can be cut, as a kill (or a frozen process) cuts it: its
 * heartbeats and lease renewals stop reaching the database, while what it was running hangs.
 */
class Reach {
  cut = false;
}

class CuttableInstances extends ServiceInstancesRepository {
  constructor(
    dataSource: DataSource,
    private readonly reach: Reach,
  ) {
    super(dataSource);
  }

  override beat(me: InstanceIdentity): Promise<boolean> {
    if (this.reach.cut) return Promise.reject(new Error('connection terminated'));
    return super.beat(me);
  }
}

class CuttableJobs extends JobsRepository {
  constructor(
    dataSource: DataSource,
    private readonly reach: Reach,
  ) {
    super(dataSource);
  }

  // A killed process leases nothing more: without this, its worker could take back the job the
  // live instance just freed, which no kill allows.
  override lease(...args: Parameters<JobsRepository['lease']>): Promise<Job[]> {
    return this.reach.cut ? Promise.reject(new Error('connection terminated')) : super.lease(...args);
  }

  override renewLease(id: string, owner: string, leaseMs: number): Promise<boolean> {
    return this.reach.cut ? Promise.resolve(true) : super.renewLease(id, owner, leaseMs);
  }

  override renewLeases(ids: readonly string[], owner: string, leaseMs: number): Promise<string[]> {
    return this.reach.cut ? Promise.resolve([...ids]) : super.renewLeases(ids, owner, leaseMs);
  }
}

/** Runs each job for `runMs`, or until told, and records every run by the worker that made it. */
class RecordingHandler {
  readonly runs: { jobId: string; owner: string; attempt: number }[] = [];
  /** Runs of these owners never end on their own (a process that died in them). */
  readonly hangs = new Set<string>();
  runMs = 0;

  constructor(readonly type: string) {}

  run(job: Job, context: JobRunContext, owner: string): Promise<JobOutcome> {
    this.runs.push({ jobId: job.id, owner, attempt: context.attempt });
    if (this.hangs.has(owner)) {
      return new Promise((_resolve, reject) => context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true }));
    }
    return new Promise((resolve) => setTimeout(() => resolve({ status: 'complete', result: { by: owner } }), this.runMs));
  }

  /** The handler as one worker sees it: its runs are told which worker made them. */
  forWorker(owner: string): JobHandler {
    return { type: this.type, run: (job, context) => this.run(job, context, owner) };
  }
}

describeWithPostgres('dead-lease recovery: instances with a heartbeat (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let jobs: JobsRepository;
  let connectionId: string;
  let type: string;
  const clock = new SystemClock();
  const instances: ServiceInstance[] = [];
  const workers: JobWorker[] = [];
  const relays: { relay: OutboxRelay; transport: RecordingTransport }[] = [];

  const settings = (name: string, overrides: Partial<ServiceInstanceSettings> = {}): ServiceInstanceSettings => ({
    name,
    heartbeatMs: HEARTBEAT_MS,
    deadAfterMs: DEAD_AFTER_MS,
    soleUser: false,
    ...overrides,
  });

  /** An instance (registered and beating once started) whose reach to the database can be cut. */
  const newInstance = async (name: string, overrides: Partial<ServiceInstanceSettings> = {}) => {
    const reach = new Reach();
    const instance = new ServiceInstance(new CuttableInstances(dataSource, reach), settings(name, overrides));
    instances.push(instance);
    return { instance, reach };
  };

  /** A job worker of that instance (not started): its leases record the instance's id. */
  const newWorker = (instance: ServiceInstance, reach: Reach, handler: RecordingHandler, leaseMs = LONG_LEASE_MS) => {
    const registry = new JobHandlerRegistry();
    registry.register(handler.forWorker(instance.id));
    const worker = new JobWorker(
      new UnitOfWork(dataSource),
      new CuttableJobs(dataSource, reach),
      registry,
      new JobSignal(),
      clock,
      workerSettings({ leaseMs, concurrency: 2, shutdownGraceMs: 50 }),
      new DomainEventBus(),
      instance,
    );
    workers.push(worker);
    return worker;
  };

  const enqueue = async () => (await jobs.insert({ id: randomUUID(), connectionId, kind: 'automated', type, createdAt: clock.now() })).id;
  const jobState = async (id: string) =>
    (await dataSource.query(`SELECT j.status, j.attempts, q.leased_by, q.leased_until, j.result FROM ${JOB_WITH_LEASE} WHERE j.id = $1`, [id]))[0] as {
      status: string;
      attempts: number;
      leased_by: string | null;
      leased_until: Date | null;
      result: { by?: string } | null;
    };
  const instanceRows = async (): Promise<{ id: string; name: string }[]> => dataSource.query(`SELECT id, name FROM service_instances ORDER BY id`);

  /** What a process killed while it ran a job leaves behind: its row, and the job leased for a long time yet. */
  const leftByKilledProcess = async (name: string, heartbeatAgoMs = 0) => {
    const holder = `${name}/${randomUUID().slice(0, 8)}`;
    await dataSource.query(
      `INSERT INTO service_instances (id, name, host, pid, heartbeat_at) VALUES ($1, $2, 'gone-host', 4242, now() - ($3 || ' milliseconds')::interval)`,
      [holder, name, String(heartbeatAgoMs)],
    );
    const jobId = await enqueue();
    await holdJob(dataSource, jobId, holder, `now() + interval '${LONG_LEASE_MS} milliseconds'`, 1);
    await dataSource.query(`UPDATE jobs SET started_at = now() WHERE id = $1`, [jobId]);
    return { holder, jobId };
  };

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ dataSource, database } = await openTestDataSource(12));
    jobs = new JobsRepository(dataSource);
    connectionId = (await createConnection(dataSource)).id;
  });

  beforeEach(() => {
    type = `instances_${randomUUID().slice(0, 8)}`;
  });

  afterEach(async () => {
    for (const { transport } of relays) transport.release();
    await Promise.all(relays.splice(0).map(({ relay }) => relay.stop()));
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await Promise.all(instances.splice(0).map((i) => i.stop()));
    await dataSource.query(`DELETE FROM service_instances`);
    await dataSource.query(`DELETE FROM outbox_batches`);
    await dataSource.query(`UPDATE outbox_lanes SET leased_by = NULL, lease_until = 'epoch'`);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it("a restarted instance frees its predecessor's leases as it starts, and its worker resumes the job at once", async () => {
    const killed = await leftByKilledProcess('node-a');
    // Another instance, alive: it beats as a live process does (a row left still would be taken
    // for dead once DEAD_AFTER_MS passes, which a loaded host reaches before node-a's sweep), and
    // none of its leases are touched.
    const other = await leftByKilledProcess('node-b');
    const beat = () => dataSource.query(`UPDATE service_instances SET heartbeat_at = now() WHERE id = $1`, [other.holder]).catch(() => undefined);
    const beating = setInterval(() => void beat(), HEARTBEAT_MS);
    try {
      const handler = new RecordingHandler(type);
      const { instance, reach } = await newInstance('node-a');
      const worker = newWorker(instance, reach, handler);
      const started = Date.now();
      await instance.start();
      worker.start();

      const resumed = await expectEventually(async () => {
        const job = await jobState(killed.jobId);
        expect(job.status).toBe('complete');
        return job;
      });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(resumed).toMatchObject({ attempts: 2, leased_by: null, result: { by: instance.id } });
      expect(handler.runs).toEqual([{ jobId: killed.jobId, owner: instance.id, attempt: 2 }]);
      expect(await instanceRows()).toEqual([
        { id: instance.id, name: 'node-a' },
        { id: other.holder, name: 'node-b' },
      ]);
      expect(await jobState(other.jobId)).toMatchObject({ status: 'in_progress', leased_by: other.holder, attempts: 1 });
    } finally {
      clearInterval(beating);
    }
  });

  it("a live instance frees a silent instance's leases after the dead bound, far sooner than the lease, and the job runs once more only", async () => {
    const handler = new RecordingHandler(type);
    const a = await newInstance('node-a');
    const workerA = newWorker(a.instance, a.reach, handler);
    handler.hangs.add(workerA.owner);
    await a.instance.start();
    workerA.start();
    const jobId = await enqueue();
    await expectEventually(async () => expect(await jobState(jobId)).toMatchObject({ status: 'in_progress', leased_by: a.instance.id }));

    const b = await newInstance('node-b');
    const workerB = newWorker(b.instance, b.reach, handler);
    await b.instance.start();
    workerB.start();
    // B has beaten for a whole bound: it judges others from now on.
    await new Promise((resolve) => setTimeout(resolve, DEAD_AFTER_MS));
    expect(await jobState(jobId)).toMatchObject({ status: 'in_progress', leased_by: a.instance.id });

    // A is killed: its beats and renewals no longer reach the database.
    a.reach.cut = true;
    const killedAt = Date.now();
    const done = await expectEventually(async () => {
      const job = await jobState(jobId);
      expect(job.status).toBe('complete');
      return job;
    });
    const waited = Date.now() - killedAt;
    expect(waited).toBeGreaterThanOrEqual(DEAD_AFTER_MS - 2 * HEARTBEAT_MS);
    expect(waited).toBeLessThan(5_000);
    expect(done).toMatchObject({ attempts: 2, result: { by: b.instance.id } });
    expect(handler.runs.map((r) => [r.owner, r.attempt])).toEqual([
      [a.instance.id, 1],
      [b.instance.id, 2],
    ]);
    expect((await instanceRows()).map((r) => r.name)).toEqual(['node-b']);
  });

  it("a live instance's long job keeps its lease through renewals: the other instance never takes it", async () => {
    const handler = new RecordingHandler(type);
    handler.runMs = 4_000;
    const a = await newInstance('node-a');
    // A lease of 1.2 s, renewed every 400 ms, on a job of 4 s: more than three leases long.
    const workerA = newWorker(a.instance, a.reach, handler, 1_200);
    await a.instance.start();
    workerA.start();
    const jobId = await enqueue();
    await expectEventually(async () => expect(await jobState(jobId)).toMatchObject({ leased_by: a.instance.id }));

    const b = await newInstance('node-b');
    const workerB = newWorker(b.instance, b.reach, handler, 1_200);
    await b.instance.start();
    workerB.start();

    const done = await expectEventually(async () => {
      const job = await jobState(jobId);
      expect(job.status).toBe('complete');
      return job;
    });
    expect(done).toMatchObject({ attempts: 1, result: { by: a.instance.id } });
    expect(handler.runs).toEqual([{ jobId, owner: a.instance.id, attempt: 1 }]);
    expect((await instanceRows()).map((r) => r.name)).toEqual(['node-a', 'node-b']);
  });

  it('a graceful stop removes the row and frees what the instance still holds', async () => {
    const { instance, reach } = await newInstance('node-a');
    // Built, as in every process, though not started here.
    newWorker(instance, reach, new RecordingHandler(type));
    await instance.start();
    expect(await instanceRows()).toEqual([{ id: instance.id, name: 'node-a' }]);
    const jobId = await enqueue();
    await holdJob(dataSource, jobId, instance.id, `now() + interval '10 minutes'`, 1);

    await instance.stop();
    expect(await instanceRows()).toEqual([]);
    const job = await jobState(jobId);
    expect(job.leased_until!.getTime()).toBeLessThan(Date.now());
    // Due for the next worker's lease round.
    expect((await jobs.lease('next', [type], clock.now(), 30_000, 5)).map((j) => [j.id, j.attempts])).toEqual([[jobId, 2]]);
  });

  it('an instance whose row was removed while it lived registers again at its next beat', async () => {
    const { instance } = await newInstance('node-a');
    await instance.start();
    await dataSource.query(`DELETE FROM service_instances`);
    await expectEventually(async () => expect(await instanceRows()).toEqual([{ id: instance.id, name: 'node-a' }]));
  });

  it('after a failed beat, an instance judges others only once it has beaten again for a whole bound', async () => {
    // Beats only when told (the timer's first beat is a minute away).
    const { instance, reach } = await newInstance('node-a', { heartbeatMs: 60_000 });
    newWorker(instance, reach, new RecordingHandler(type));
    await instance.start();
    const stale = await leftByKilledProcess('node-b', 60_000);

    reach.cut = true;
    await instance.beat();
    reach.cut = false;
    await instance.beat();
    // The database was away: node-b may only now be reconnecting.
    expect((await instanceRows()).map((r) => r.id)).toContain(stale.holder);
    await new Promise((resolve) => setTimeout(resolve, DEAD_AFTER_MS));
    await instance.beat();
    expect(await instanceRows()).toEqual([{ id: instance.id, name: 'node-a' }]);
    expect((await jobState(stale.jobId)).leased_until!.getTime()).toBeLessThan(Date.now());
  });

  it('on a database no other process uses (the embedded one), every instance registered before is gone at start', async () => {
    const earlier = await leftByKilledProcess('other-name');
    const { instance, reach } = await newInstance('node-a', { soleUser: true });
    newWorker(instance, reach, new RecordingHandler(type));
    await instance.start();
    expect(await instanceRows()).toEqual([{ id: instance.id, name: 'node-a' }]);
    expect((await jobState(earlier.jobId)).leased_until!.getTime()).toBeLessThan(Date.now());
  });

  it("frees a killed relay's outbox lanes after the dead bound, and another relay publishes their messages", async () => {
    const writer = new OutboxWriter(new OutboxSignal());
    const newRelay = (instance: ServiceInstance) => {
      const transport = new RecordingTransport();
      const relay = new OutboxRelay(dataSource, transport, new OutboxSignal(), new Metrics(), relaySettings({ leaseMs: LONG_LEASE_MS }), instance);
      relays.push({ relay, transport });
      return { relay, transport };
    };
    const a = await newInstance('node-a');
    const relayA = newRelay(a.instance);
    await a.instance.start();
    // A dies mid-publish: its transport never answers.
    relayA.transport.hang();
    relayA.relay.start();
    const [messageId] = await dataSource.transaction((manager) =>
      writer.append(manager, [{ topic: 'instances.test', key: 'k-1', type: 'TestHappened', payload: { n: 1 } }]),
    );
    await expectEventually(async () => expect(relayA.transport.calls).toBe(1));
    const [lane] = await dataSource.query(`SELECT leased_by FROM outbox_lanes WHERE leased_by IS NOT NULL`);
    expect(lane.leased_by).toBe(a.instance.id);

    const b = await newInstance('node-b');
    const relayB = newRelay(b.instance);
    await b.instance.start();
    relayB.relay.start();
    a.reach.cut = true;
    const killedAt = Date.now();
    await expectEventually(() => expect(relayB.transport.published.map((m) => m.messageId)).toEqual([messageId]));
    expect(Date.now() - killedAt).toBeLessThan(5_000);
  });
});
