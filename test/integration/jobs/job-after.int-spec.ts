import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DATA_SYNC_ALL } from '../../../src/domain/jobs/job';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createConnection } from '../sync/sync-test-kit';

const NOW = new Date('2026-07-01T12:00:00Z');

/** A job that runs after another (a sandbox edit's follow-up sync), and syncs left out of the refresh quota. */
describeWithPostgres('JobsRepository: jobs that run after another', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let jobs: JobsRepository;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource());
    jobs = new JobsRepository(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const sync = async (connectionId: string, options: { afterJobId?: string; trigger?: string } = {}) =>
    jobs.insert({
      id: randomUUID(),
      connectionId,
      kind: 'automated',
      type: DATA_SYNC_ALL,
      params: options.trigger ? { trigger: options.trigger } : null,
      createdAt: NOW,
      afterJobId: options.afterJobId,
    });
  const leaseSyncs = async () => (await jobs.lease('w1', [DATA_SYNC_ALL], NOW, 30_000, 10)).map((j) => j.id);

  it('is not leased while the job before it is queued or running, and is once that one ended', async () => {
    const connectionId = (await createConnection(dataSource)).id;
    const first = await sync(connectionId);
    const followUp = await sync(connectionId, { afterJobId: first.id, trigger: 'sandbox_edit' });
    expect(await leaseSyncs()).toEqual([first.id]);
    expect(await leaseSyncs()).toEqual([]);
    expect(await jobs.finish(first.id, 'w1', { status: 'error', result: null, completedAt: NOW })).toBe(true);
    expect(await leaseSyncs()).toEqual([followUp.id]);
    expect((await jobs.listOpen(connectionId, DATA_SYNC_ALL)).map((j) => [j.id, j.status, j.afterJobId])).toEqual([
      [followUp.id, 'in_progress', first.id],
    ]);
  });

  it('keeps one open sync per connection besides its follow-up, and one follow-up per sync', async () => {
    const connectionId = (await createConnection(dataSource)).id;
    const first = await sync(connectionId);
    await expect(sync(connectionId)).rejects.toThrow(/jobs_one_open_sync_idx/);
    await sync(connectionId, { afterJobId: first.id });
    await expect(sync(connectionId, { afterJobId: first.id })).rejects.toThrow(/jobs_one_sync_after_idx/);
  });

  it('counts created jobs without those of a trigger when asked', async () => {
    const connectionId = (await createConnection(dataSource)).id;
    const first = await sync(connectionId);
    await sync(connectionId, { afterJobId: first.id, trigger: 'sandbox_edit' });
    const window = [new Date(NOW.getTime() - 60_000), new Date(NOW.getTime() + 60_000)] as const;
    expect(await jobs.countCreated(connectionId, DATA_SYNC_ALL, ...window)).toBe(2);
    expect(await jobs.countCreated(connectionId, DATA_SYNC_ALL, ...window, undefined, { exceptTriggers: ['sandbox_edit'] })).toBe(1);
  });
});
