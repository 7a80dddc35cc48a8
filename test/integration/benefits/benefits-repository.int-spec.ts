import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Benefit } from '../../../src/domain/benefits/benefit';
import { Connection } from '../../../src/domain/connections/connection';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { BenefitsRepository } from '../../../src/modules/benefits/benefits.repository';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createConnection } from '../sync/sync-test-kit';

const at = new Date('2026-06-01T12:00:00Z');

/** The `benefits` table on real PostgreSQL: dedupe under concurrency, creation status, guarded renames. */
describeWithPostgres('BenefitsRepository', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let benefits: BenefitsRepository;
  let connection: Connection;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(8));
    benefits = new BenefitsRepository(dataSource);
    connection = await createConnection(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const benefit = (overrides: Partial<Benefit> = {}): Benefit => ({
    id: randomUUID(),
    connectionId: connection.id,
    entityId: connection.entities[0].id,
    type: '401k',
    description: 'Retirement',
    frequency: null,
    companyContribution: null,
    origin: 'created',
    jobId: null,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  });

  it('keeps one benefit per (entity, type, frequency, description) when inserts race', async () => {
    const contenders = Array.from({ length: 8 }, () => benefit({ description: 'Raced' }));
    const results = await Promise.all(contenders.map((b) => dataSource.transaction((manager) => benefits.insertOrFind(b, manager))));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.benefit.id)).size).toBe(1);
    expect(await dataSource.query(`SELECT id FROM benefits WHERE description = 'Raced'`)).toHaveLength(1);
  });

  it('treats an absent frequency and null alike in the key, and other frequencies apart', async () => {
    await dataSource.transaction((m) => benefits.insertOrFind(benefit({ description: 'Freq' }), m));
    const again = await dataSource.transaction((m) => benefits.insertOrFind(benefit({ description: 'Freq', frequency: null }), m));
    expect(again.created).toBe(false);
    const monthly = await dataSource.transaction((m) => benefits.insertOrFind(benefit({ description: 'Freq', frequency: 'monthly' }), m));
    expect(monthly.created).toBe(true);
  });

  it('lists benefits with the status of the job that created each', async () => {
    const jobs = new JobsRepository(dataSource);
    const entityId = connection.entities[0].id;
    const { benefit: withJob } = await dataSource.transaction((m) => benefits.insertOrFind(benefit({ description: 'With job' }), m));
    const job = await jobs.insert({ id: randomUUID(), connectionId: connection.id, entityId, kind: 'automated', type: 'benefit_create', createdAt: at });
    await dataSource.transaction((m) => benefits.setJob(withJob.id, job.id, at, m));
    const known = await benefits.listKnownOfEntity(entityId);
    expect(known.find((k) => k.benefit.id === withJob.id)).toMatchObject({ benefit: { jobId: job.id }, creationStatus: 'pending' });
    expect(known.find((k) => k.benefit.description === 'Raced')?.creationStatus).toBeNull();
    expect(await benefits.findKnownOfEntity(entityId, withJob.id)).toMatchObject({ creationStatus: 'pending' });
    expect(await benefits.findKnownOfEntity(entityId, 'not-a-uuid')).toBeUndefined();
    expect(await benefits.findKnownOfEntity(randomUUID(), withJob.id)).toBeUndefined();
  });

  it('renames unless another benefit holds the new key', async () => {
    const { benefit: a } = await dataSource.transaction((m) => benefits.insertOrFind(benefit({ type: 'commuter', description: 'A' }), m));
    await dataSource.transaction((m) => benefits.insertOrFind(benefit({ type: 'commuter', description: 'B' }), m));
    expect(await dataSource.transaction((m) => benefits.updateDescriptionUnlessTaken(a.id, 'B', at, m))).toBe(false);
    expect(await dataSource.transaction((m) => benefits.updateDescriptionUnlessTaken(a.id, 'C', at, m))).toBe(true);
    expect((await benefits.findOfEntity(a.entityId, a.id))?.description).toBe('C');
  });
});
