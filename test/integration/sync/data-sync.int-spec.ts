import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Connection } from '../../../src/domain/connections/connection';
import { payStatementItemKey, payStatementItemsOf } from '../../../src/domain/employer/pay-statement-items';
import { DATA_SYNC_ALL } from '../../../src/domain/jobs/job';
import { SnapshotBatch } from '../../../src/domain/providers/provider-port';
import { SystemClock } from '../../../src/domain/shared/clock';
import { ConnectionsRepository } from '../../../src/infrastructure/database/repositories/connections.repository';
import { EmployerDataRepository } from '../../../src/infrastructure/database/repositories/employer-data.repository';
import { JobHandlerRegistry } from '../../../src/modules/jobs/job-handler';
import { JobWorker } from '../../../src/modules/jobs/job-worker';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { DataSyncHandler } from '../../../src/modules/sync/data-sync.handler';
import { SandboxJobConfigurationsRepository } from '../../../src/modules/sync/sandbox-job-configurations.repository';
import { describeWithPostgres } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createConnection, employerSnapshot, FakeProvider, generationsOf, newWorker, rowsOfGeneration } from './sync-test-kit';

/** The rows the layout says a snapshot becomes (see employer-data.repository.ts). */
function expectedRows(batches: SnapshotBatch[]) {
  const rows: { kind: string; record_id: string; parent_id: string | null; pay_date: string | null; sort_key: string; body: unknown }[] = [];
  const add = (kind: string, record_id: string, sort_key: string, body: unknown, parent_id: string | null = null, pay_date: string | null = null) =>
    rows.push({ kind, record_id, parent_id, pay_date, sort_key, body });
  let position = 0;
  const items = new Set<string>();
  for (const batch of batches) {
    if (batch.kind === 'company') batch.records.forEach((c) => add('company', c.id, '', c));
    if (batch.kind === 'individual') batch.records.forEach((i) => add('individual', i.id, i.id, i));
    if (batch.kind === 'employment') {
      for (const e of batch.records) {
        add('employment', e.id, e.id, e);
        const { id, first_name, middle_name, last_name, manager, department, is_active } = e;
        add('directory', e.id, String(position++).padStart(8, '0'), { id, first_name, middle_name, last_name, manager, department, is_active });
      }
    }
    if (batch.kind === 'pay_group') batch.records.forEach((g) => add('pay_group', g.id, g.name, g));
    if (batch.kind === 'payment') batch.records.forEach((p) => add('payment', p.id, p.pay_date + p.id, p, null, p.pay_date));
    if (batch.kind === 'pay_statement') {
      for (const { payment_id, pay_date, statement } of batch.records) {
        add('pay_statement', `${payment_id}:${statement.individual_id}`, statement.individual_id, statement, payment_id, pay_date);
        for (const item of payStatementItemsOf(statement)) {
          const key = payStatementItemKey(item);
          if (items.has(`${key}|${pay_date}`)) continue;
          items.add(`${key}|${pay_date}`);
          add('pay_statement_item', `${key}|${pay_date}`, key, item, null, pay_date);
        }
      }
    }
  }
  return rows.sort((a, b) => (a.kind === b.kind ? (a.record_id < b.record_id ? -1 : 1) : a.kind < b.kind ? -1 : 1));
}

describeWithPostgres('data sync (PostgreSQL, fake provider)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let jobs: JobsRepository;
  let employerData: EmployerDataRepository;
  let provider: FakeProvider;
  let worker: JobWorker;
  const clock = new SystemClock();

  const sync = (connection: Connection) =>
    jobs.insert({ id: randomUUID(), connectionId: connection.id, kind: 'automated', type: DATA_SYNC_ALL, createdAt: clock.now() });

  const jobState = async (id: string) => (await dataSource.query(`SELECT status, attempts, result FROM jobs WHERE id = $1`, [id]))[0];

  const finished = async (jobId: string, status = 'complete') => {
    await expectEventually(async () => expect((await jobState(jobId)).status).not.toMatch(/pending|in_progress/));
    const state = await jobState(jobId);
    expect(state.status).toBe(status);
    return state;
  };

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ dataSource, database } = await openTestDataSource(8));
    jobs = new JobsRepository(dataSource);
    employerData = new EmployerDataRepository(dataSource);
  });

  beforeEach(() => {
    provider = new FakeProvider();
    const registry = new JobHandlerRegistry();
    registry.register(
      new DataSyncHandler(
        new ConnectionsRepository(dataSource),
        new SandboxJobConfigurationsRepository(dataSource),
        employerData,
        provider,
        clock,
        new OutboxWriter(new OutboxSignal()),
      ),
    );
    worker = newWorker(dataSource, registry, clock, { retry: { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 20 } });
    worker.start();
  });

  afterEach(async () => {
    provider.openGate();
    await worker.stop();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it("stores the provider's snapshot in the documented layout and switches the entity to it", async () => {
    const connection = await createConnection(dataSource);
    const entityId = connection.entities[0].id;
    const snapshot = employerSnapshot('first', 4, ['2026-01-15', '2026-01-29', '2026-02-12']);
    provider.snapshots.set(entityId, snapshot);
    expect(await employerData.currentGeneration(entityId)).toBeNull();

    const job = await sync(connection);
    const state = await finished(job.id);

    const generation = await employerData.currentGeneration(entityId);
    expect(generation).not.toBeNull();
    expect(await rowsOfGeneration(dataSource, entityId, generation!)).toEqual(expectedRows(snapshot));
    expect(await employerData.lastSync(entityId)).toMatchObject({ generation, jobId: job.id });
    expect(state.result).toEqual({
      entities: [
        {
          entity_id: entityId,
          generation,
          // 3 distinct items (salary, federal, social security employer share, 401k = 4) per pay date
          records: { company: 1, individual: 4, employment: 4, directory: 4, pay_group: 1, payment: 3, pay_statement: 12, pay_statement_item: 12 },
        },
      ],
    });
  });

  it('serves the old generation whole until the new one commits, then keeps only the new and the previous', async () => {
    const connection = await createConnection(dataSource);
    const entityId = connection.entities[0].id;
    const first = employerSnapshot('first');
    provider.snapshots.set(entityId, first);
    await finished((await sync(connection)).id);
    const firstGeneration = (await employerData.currentGeneration(entityId))!;
    const firstRows = await rowsOfGeneration(dataSource, entityId, firstGeneration);

    // Enough people that rows are written before the gate (company, individuals, employments).
    const second = employerSnapshot('second', 600);
    provider.snapshots.set(entityId, second);
    provider.closeGate(3);
    const secondJob = await sync(connection);
    await expectEventually(() => expect(provider.gateReached).toBe(true));
    // Mid-sync: part of the new generation is written, and reads still get the whole old one.
    await expectEventually(async () => expect((await generationsOf(dataSource, entityId)).length).toBe(2));
    expect(await employerData.currentGeneration(entityId)).toBe(firstGeneration);
    expect(await rowsOfGeneration(dataSource, entityId, firstGeneration)).toEqual(firstRows);
    expect((await jobState(secondJob.id)).status).toBe('in_progress');

    provider.openGate();
    await finished(secondJob.id);
    const secondGeneration = (await employerData.currentGeneration(entityId))!;
    expect(secondGeneration).not.toBe(firstGeneration);
    expect(await rowsOfGeneration(dataSource, entityId, secondGeneration)).toEqual(expectedRows(second));
    // The previous generation stays for reads that started before the switch.
    expect(await generationsOf(dataSource, entityId)).toEqual([firstGeneration, secondGeneration]);

    provider.snapshots.set(entityId, employerSnapshot('third'));
    await finished((await sync(connection)).id);
    const thirdGeneration = (await employerData.currentGeneration(entityId))!;
    // The older generations are deleted after the switch commits (afterCommit), so once the job
    // shows complete their delete may still be under way.
    await expectEventually(async () => expect(await generationsOf(dataSource, entityId)).toEqual([secondGeneration, thirdGeneration]));
  });

  it('retries a transient provider failure and discards the half-written generation', async () => {
    const connection = await createConnection(dataSource);
    const entityId = connection.entities[0].id;
    // The failure comes after the people's batches, so rows of the failed runs were written.
    const snapshot = employerSnapshot('retried', 600);
    provider.snapshots.set(entityId, snapshot);
    provider.failNextSnapshots(2, 3);

    const state = await finished((await sync(connection)).id);
    expect(state.attempts).toBe(3);
    expect(provider.snapshotCalls).toBe(3);
    const generation = (await employerData.currentGeneration(entityId))!;
    expect(await generationsOf(dataSource, entityId)).toEqual([generation]);
    expect(await rowsOfGeneration(dataSource, entityId, generation)).toEqual(expectedRows(snapshot));
  });

  it('syncs every active entity of the connection, and leaves a disconnected one alone', async () => {
    const connection = await createConnection(dataSource, { entityNames: ['North', 'South', 'Closed'] });
    const [north, south, closed] = connection.entities.map((e) => e.id);
    await dataSource.query(`UPDATE connection_entities SET status = 'disconnected' WHERE id = $1`, [closed]);
    provider.snapshots.set(north, employerSnapshot('north', 2));
    provider.snapshots.set(south, employerSnapshot('south', 5));

    await finished((await sync(connection)).id);
    for (const [entityId, snapshot] of [
      [north, provider.snapshots.get(north)!],
      [south, provider.snapshots.get(south)!],
    ] as const) {
      const generation = (await employerData.currentGeneration(entityId))!;
      expect(await rowsOfGeneration(dataSource, entityId, generation)).toEqual(expectedRows(snapshot));
    }
    expect(await employerData.currentGeneration(closed)).toBeNull();
  });

  it.each(['permissions_error', 'error'])('ends in %s when the sandbox configuration says so, switching no data', async (status) => {
    const connection = await createConnection(dataSource);
    const entityId = connection.entities[0].id;
    provider.snapshots.set(entityId, employerSnapshot('configured'));
    await new SandboxJobConfigurationsRepository(dataSource).save(connection.id, { type: DATA_SYNC_ALL, completionStatus: status as 'error' }, clock.now());

    await finished((await sync(connection)).id, status);
    expect(await employerData.currentGeneration(entityId)).toBeNull();
    expect(await generationsOf(dataSource, entityId)).toEqual([]);
    expect((await new ConnectionsRepository(dataSource).find(connection.id))!.status).toBe('connected');
  });

  it('ends in reauth_error and moves the connection to reauth when the sandbox configuration says so', async () => {
    const connection = await createConnection(dataSource);
    const entityId = connection.entities[0].id;
    provider.snapshots.set(entityId, employerSnapshot('reauth'));
    await new SandboxJobConfigurationsRepository(dataSource).save(connection.id, { type: DATA_SYNC_ALL, completionStatus: 'reauth_error' }, clock.now());

    await finished((await sync(connection)).id, 'reauth_error');
    expect(await employerData.currentGeneration(entityId)).toBeNull();
    expect((await new ConnectionsRepository(dataSource).find(connection.id))!.status).toBe('reauth');
    expect(provider.snapshotCalls).toBe(0);
  });

  it('ignores the sandbox configuration for a production connection', async () => {
    const connection = await createConnection(dataSource, { sandbox: false, providerId: 'gusto' });
    const entityId = connection.entities[0].id;
    provider.snapshots.set(entityId, employerSnapshot('production'));
    await new SandboxJobConfigurationsRepository(dataSource).save(connection.id, { type: DATA_SYNC_ALL, completionStatus: 'error' }, clock.now());

    await finished((await sync(connection)).id, 'complete');
    expect(await employerData.currentGeneration(entityId)).not.toBeNull();
  });
});
