import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source';
import { describeWithPostgres } from '../setup/test-env';
import { bearer } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { ServiceProcess, startServiceProcess } from '../utils/service-process';
import { json } from '../utils/test-app';
import { createTestDatabase, TestDatabase } from '../utils/test-database';
import { JOB_WITH_LEASE } from '../utils/job-queue';

/** A lease far longer than any wait here: a job resumed within these tests did not wait for it. */
const JOB_LEASE_MS = 120_000;
const DEAD_AFTER_MS = 2_000;
/** A provider this slow keeps a sync in its provider call until the process is killed. */
const SLOW_PROVIDER_MS = 60_000;
/** Two service processes start per test; on a busy machine each may take most of a minute. */
const PROCESSES_TIMEOUT_MS = 240_000;

interface JobRow {
  status: string;
  attempts: number;
  leased_by: string | null;
  lease_left_ms: number | null;
}

/**
 * The service as separate processes on one database, killed with SIGKILL in the middle of a job:
 * the job does not wait for its lease to run out. The restarted process (same INSTANCE_ID) frees
 * the lease as it starts; another live process frees it once the killed one has been silent for
 * INSTANCE_DEAD_AFTER_MS.
 */
describeWithPostgres('dead-lease recovery across processes (SIGKILL mid-job)', () => {
  let database: TestDatabase;
  let db: DataSource;
  const processes: ServiceProcess[] = [];
  const clientId = randomUUID();
  const clientSecret = `secret-${randomBytes(16).toString('hex')}`;
  const appAuth = { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` };

  const start = async (name: string, env: Record<string, string>) => {
    const service = await startServiceProcess({
      name,
      databaseUrl: database.url,
      env: {
        APP_CLIENT_ID: clientId,
        APP_CLIENT_SECRET: clientSecret,
        JOB_LEASE_MS: String(JOB_LEASE_MS),
        OUTBOX_LEASE_MS: String(JOB_LEASE_MS),
        INSTANCE_HEARTBEAT_MS: '250',
        INSTANCE_DEAD_AFTER_MS: String(DEAD_AFTER_MS),
        ...env,
      },
    });
    processes.push(service);
    return service;
  };

  const job = async (id: string): Promise<JobRow> =>
    (
      await db.query(
        `SELECT j.status, j.attempts, q.leased_by, (extract(epoch FROM q.leased_until - now()) * 1000)::int AS lease_left_ms FROM ${JOB_WITH_LEASE} WHERE j.id = $1`,
        [id],
      )
    )[0];
  const instanceNames = async (): Promise<string[]> => (await db.query(`SELECT name FROM service_instances ORDER BY name`)).map((r: { name: string }) => r.name);

  /** A data sync enqueued through `service`, once its worker is inside the (slow) provider call. */
  async function syncUnderWay(service: ServiceProcess, instanceId: string): Promise<{ jobId: string; token: string }> {
    const connection = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5 }, appAuth));
    expect(connection.status).toBe(200);
    const token: string = connection.body.access_token;
    const created = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
    expect(created.status).toBe(201);
    const jobId: string = created.body.job_id;
    await expectEventually(async () => expect((await job(jobId)).leased_by).toMatch(new RegExp(`^${instanceId}/`)));
    return { jobId, token };
  }

  const untilComplete = (service: ServiceProcess, token: string, jobId: string) =>
    expectEventually(
      async () => {
        const res = await service.request(`/jobs/automated/${jobId}`, { headers: bearer(token) });
        expect(res.body.status).toBe('complete');
      },
      { timeoutMs: 30_000 },
    );

  beforeAll(async () => {
    database = await createTestDatabase();
    db = new DataSource(dataSourceOptions({ url: database.url, poolSize: 2 }));
    await db.initialize();
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    await db?.destroy();
    await database?.drop();
  });

  it('a process killed mid-job is resumed at once by its restart (the same INSTANCE_ID), and the job runs to the end once', async () => {
    const first = await start('node-a', { INSTANCE_ID: 'node-a', PROVIDER_LATENCY_MS: String(SLOW_PROVIDER_MS) });
    const { jobId, token } = await syncUnderWay(first, 'node-a');

    expect((await first.kill('SIGKILL')).signal).toBe('SIGKILL');
    const left = await job(jobId);
    expect(left).toMatchObject({ status: 'in_progress', attempts: 1 });
    // Without recovery the job would wait this long for anyone to take it.
    expect(left.lease_left_ms).toBeGreaterThan(JOB_LEASE_MS - 30_000);

    const restarted = await start('node-a (restarted)', { INSTANCE_ID: 'node-a', PROVIDER_LATENCY_MS: '0' });
    const readyAt = Date.now();
    await untilComplete(restarted, token, jobId);
    expect(Date.now() - readyAt).toBeLessThan(5_000);
    // The killed run and the one that finished: no other.
    expect(await job(jobId)).toMatchObject({ status: 'complete', attempts: 2, leased_by: null });
    expect(await instanceNames()).toEqual(['node-a']);

    // A graceful stop takes the instance's row with it.
    expect((await restarted.stop()).code).toBe(0);
    expect(await instanceNames()).toEqual([]);
   }, PROCESSES_TIMEOUT_MS);

  it("another live process resumes a killed process's job once it has been silent for the dead bound, not after the lease", async () => {
    const doomed = await start('node-b', { INSTANCE_ID: 'node-b', PROVIDER_LATENCY_MS: String(SLOW_PROVIDER_MS) });
    const { jobId, token } = await syncUnderWay(doomed, 'node-b');
    const survivor = await start('node-c', { INSTANCE_ID: 'node-c', PROVIDER_LATENCY_MS: '0' });
    // The survivor runs beside it without taking its job: the lease is live and renewed.
    expect(await job(jobId)).toMatchObject({ status: 'in_progress', attempts: 1, leased_by: expect.stringMatching(/^node-b\//) });
    expect(await instanceNames()).toEqual(['node-b', 'node-c']);

    expect((await doomed.kill('SIGKILL')).signal).toBe('SIGKILL');
    const killedAt = Date.now();
    await untilComplete(survivor, token, jobId);
    const waited = Date.now() - killedAt;
    expect(waited).toBeGreaterThanOrEqual(DEAD_AFTER_MS - 500);
    expect(waited).toBeLessThan(DEAD_AFTER_MS + 8_000);
    expect(await job(jobId)).toMatchObject({ status: 'complete', attempts: 2, leased_by: null });
    expect(await instanceNames()).toEqual(['node-c']);
   }, PROCESSES_TIMEOUT_MS);
});
