import { DataSource } from 'typeorm';
import { AppConfig } from '../../../src/config/app-config';
import { EmploymentRecord, IndividualRecord, PaymentRecord, PayStatementRecord } from '../../../src/domain/employer/unified-records';
import { EmployerRef, SnapshotBatch } from '../../../src/domain/providers/provider-port';
import { ManualClock } from '../../../src/domain/shared/clock';
import { DomainError } from '../../../src/domain/shared/domain-error';
import { SandboxEmployerStore } from '../../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { SandboxProviderAdapter } from '../../../src/infrastructure/providers/sandbox/sandbox-provider.adapter';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { catalogue, fixedDeduction, sandboxEmployer, sum } from './sandbox-test-kit';

describeWithPostgres('sandbox provider adapter (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let adapter: SandboxProviderAdapter;
  let store: SandboxEmployerStore;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(6));
    const config = Object.assign(new AppConfig(), { PROVIDER_LATENCY_MS: 0 });
    store = new SandboxEmployerStore(dataSource, new ManualClock('2026-06-01T12:00:00Z'), catalogue);
    adapter = new SandboxProviderAdapter(store, catalogue, config);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('generates the employer on the first call, whichever call it is', async () => {
    const ref = await sandboxEmployer(dataSource, { employeeSize: 12 });
    const directory = await adapter.directory(ref, { limit: 5, offset: 0 });
    expect(directory.count).toBe(12);
    expect(directory.items).toHaveLength(5);
    expect((await adapter.company(ref)).legal_name).toBe('Acme Corp');
  });

  it('answers batches with the known ids only, and undefined for one unknown id', async () => {
    const ref = await sandboxEmployer(dataSource, { employeeSize: 8 });
    const unknownId = '0b6f8a8e-3c1d-4e5f-8a9b-0c1d2e3f4a5b';
    const ids = (await adapter.directory(ref, { limit: 100, offset: 0 })).items.map((d) => d.id);
    expect((await adapter.individuals(ref, [ids[0], unknownId, 'x'])).map((i) => i.id)).toEqual([ids[0]]);
    expect((await adapter.employments(ref, [unknownId, ids[1]])).map((e) => e.id)).toEqual([ids[1]]);
    expect(await adapter.payStatements(ref, unknownId, { limit: 10, offset: 0 })).toBeUndefined();
    expect(await adapter.payGroup(ref, unknownId)).toBeUndefined();
    const [group] = await adapter.payGroups(ref);
    expect(await adapter.payGroup(ref, group.id)).toEqual(group);
    const payments = await adapter.payments(ref, '2026-01-01', '2026-06-01');
    expect(payments.length).toBeGreaterThan(0);
    expect(payments.every((p) => p.pay_date >= '2026-01-01' && p.pay_date <= '2026-06-01')).toBe(true);
    expect(await adapter.payments(ref, '2020-01-01', '2020-12-31')).toEqual([]);
  });

  it('applies a batch of changes in one call: the known individuals enrolled, the others answered 404, an unknown benefit refused whole', async () => {
    const ref = await sandboxEmployer(dataSource, { employeeSize: 6 });
    const [benefit] = await adapter.benefits(ref);
    const ids = (await adapter.directory(ref, { limit: 100, offset: 0 })).items.map((d) => d.id);
    const unknownId = '0b6f8a8e-3c1d-4e5f-8a9b-0c1d2e3f4a5b';
    const configuration = fixedDeduction;
    const changes = [
      { individual_id: ids[0].toUpperCase(), effective_date: '2026-07-01', configuration: configuration(100) },
      { individual_id: unknownId, effective_date: '2026-07-01', configuration: configuration(200) },
      { individual_id: 'not-an-id', effective_date: '2026-07-01', configuration: configuration(300) },
      { individual_id: ids[1], effective_date: '2026-07-01', configuration: configuration(400) },
      // The same individual and date again in one call: the last configuration stands.
      { individual_id: ids[1], effective_date: '2026-07-01', configuration: configuration(500) },
    ];
    const answers = await adapter.applyChanges(ref, benefit.benefit_id, changes);
    expect(answers.map((a) => [a.individual_id, a.code])).toEqual([
      [ids[0].toUpperCase(), 200],
      [unknownId, 404],
      ['not-an-id', 404],
      [ids[1], 200],
      [ids[1], 200],
    ]);
    const inForce = async () =>
      new Map((await adapter.enrollments(ref, benefit.benefit_id, '2026-07-01', [ids[0], ids[1]])).map((e) => [e.individual_id, e.configuration.employee_deduction?.amount]));
    expect(await inForce()).toEqual(new Map([[ids[0], 100], [ids[1], 500]]));
    // A retried call writes the same rows again, and answers the same.
    expect((await adapter.applyChanges(ref, benefit.benefit_id, changes)).map((a) => a.code)).toEqual([200, 404, 404, 200, 200]);

    // An unknown benefit: the call fails and writes nothing, as a provider refusing it would.
    const unknownBenefit = '7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
    const refused = await adapter.applyChanges(ref, unknownBenefit, [{ individual_id: ids[2], effective_date: '2026-07-01', configuration: configuration(1) }]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).message).toContain(unknownBenefit);
    expect(await dataSource.query(`SELECT 1 FROM sandbox_enrollments WHERE benefit_id = $1`, [unknownBenefit])).toEqual([]);
    // Nobody it knows, no benefit it knows: each individual is simply not found.
    expect((await adapter.applyChanges(ref, unknownBenefit, [{ individual_id: unknownId, effective_date: '2026-07-01', configuration: configuration(1) }])).map((a) => a.code)).toEqual([404]);
  });

  it('knows each provider from the catalogue: Assisted or Automated, and refuses an unknown one', async () => {
    const automated = await sandboxEmployer(dataSource, { providerId: 'sandbox_automated' });
    const assisted = await sandboxEmployer(dataSource, { providerId: 'sandbox_assisted' });
    expect(adapter.isAssisted(automated)).toBe(false);
    expect(adapter.isAssisted(assisted)).toBe(true);
    expect(adapter.providerOf(assisted).id).toBe('sandbox_assisted');
    const error = await adapter.company({ ...automated, providerId: 'no_such_provider' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).family).toBe('not_found_error');
  });

  it('exports everything in the snapshot, in batches of at most 500, streamed page by page', async () => {
    const ref: EmployerRef = await sandboxEmployer(dataSource, { employeeSize: 620 });
    const batches: SnapshotBatch[] = [];
    for await (const batch of adapter.snapshot(ref)) batches.push(batch);
    const kinds = batches.map((b) => b.kind);
    // Company first, then people, pay groups, payments and statements, each kind in one stretch.
    expect([...new Set(kinds)]).toEqual(['company', 'individual', 'employment', 'pay_group', 'payment', 'pay_statement']
      .filter((k) => kinds.includes(k as SnapshotBatch['kind'])));
    for (const batch of batches) {
      expect(batch.records.length).toBeGreaterThan(0);
      expect(batch.records.length).toBeLessThanOrEqual(500);
    }
    const records = (kind: SnapshotBatch['kind']): unknown[] => batches.filter((b) => b.kind === kind).flatMap((b): unknown[] => b.records);

    expect(records('company')).toEqual([await store.company(ref)]);
    const directory = await store.directory(ref, { limit: 10_000, offset: 0 });
    expect((records('individual') as IndividualRecord[]).map((i) => i.id)).toEqual(directory.items.map((d) => d.id));
    expect((records('employment') as EmploymentRecord[]).map((e) => e.id)).toEqual(directory.items.map((d) => d.id));
    expect(batches.filter((b) => b.kind === 'individual').map((b) => b.records.length)).toEqual([500, 120]);
    expect(records('pay_group')).toEqual(await store.payGroups(ref));

    const payments = records('payment') as PaymentRecord[];
    expect(payments).toEqual(await store.payments(ref, '0001-01-01', '9999-12-31'));
    const statements = records('pay_statement') as { payment_id: string; pay_date: string; statement: PayStatementRecord }[];
    expect(statements).toHaveLength(sum(payments.map((p) => p.individual_ids.length)));
    for (const payment of payments) {
      const ofPayment = statements.filter((s) => s.payment_id === payment.id);
      expect(ofPayment.map((s) => s.statement.individual_id)).toEqual([...payment.individual_ids].sort());
      expect(ofPayment.every((s) => s.pay_date === payment.pay_date)).toBe(true);
    }
    // Statement batches are filled across payments: only the last may be short.
    const statementBatches = batches.filter((b) => b.kind === 'pay_statement');
    expect(statementBatches.slice(0, -1).every((b) => b.records.length === 500)).toBe(true);
  });

  it("forwards raw requests to the provider's own API, generating the employer first", async () => {
    const ref = await sandboxEmployer(dataSource, { employeeSize: 4 });
    const response = await adapter.forward(ref, { method: 'GET', route: '/company' });
    expect(response.status_code).toBe(200);
    expect(JSON.stringify(response.data)).toContain('Acme Corp');
  });
});
