import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../../src/config/app-config';
import { SnapshotBatch } from '../../../src/domain/providers/provider-port';
import { ManualClock } from '../../../src/domain/shared/clock';
import { dataSourceOptions } from '../../../src/infrastructure/database/data-source';
import { EmbeddedPostgres } from '../../../src/infrastructure/database/embedded-postgres';
import { SandboxEmployerStore } from '../../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { SandboxProviderAdapter } from '../../../src/infrastructure/providers/sandbox/sandbox-provider.adapter';
import { catalogue, sandboxEmployer, statementProblems, sum } from './sandbox-test-kit';
import { EMBEDDED_START_TIMEOUT_MS } from '../../utils/embedded';

/**
 * The sandbox on the embedded default (PGlite: one backend session, so a pool of exactly one
 * connection): generation, pay runs and the streamed snapshot must not need a second one.
 */
describe('sandbox payroll on the embedded database (PGlite)', () => {
  let embedded: EmbeddedPostgres;
  let dataSource: DataSource;
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  const newStore = () => new SandboxEmployerStore(dataSource, clock, catalogue);

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    embedded = await EmbeddedPostgres.start();
    dataSource = new DataSource(dataSourceOptions({ url: embedded.url, poolSize: 1 }));
    await dataSource.initialize();
  }, EMBEDDED_START_TIMEOUT_MS);

  afterAll(async () => {
    await dataSource?.destroy();
    await embedded?.stop();
  });

  it('generates once under concurrent callers, runs a pay period and streams a snapshot', async () => {
    const ref = await sandboxEmployer(dataSource, { employeeSize: 30 });
    await Promise.all([newStore().ensureEmployer(ref), newStore().ensureEmployer(ref), newStore().ensureEmployer(ref)]);
    const store = newStore();
    const before = await store.payments(ref, '0001-01-01', '9999-12-31');
    expect(before.length).toBeGreaterThanOrEqual(14);

    const payment = await store.runPayPeriod(ref);
    const statements = (await store.payStatements(ref, payment.id, { limit: 100, offset: 0 }))!.items;
    expect(statements.map((s) => s.individual_id)).toEqual([...payment.individual_ids].sort());
    expect(statements.flatMap(statementProblems)).toEqual([]);

    const adapter = new SandboxProviderAdapter(store, catalogue, Object.assign(new AppConfig(), { PROVIDER_LATENCY_MS: 0 }));
    const batches: SnapshotBatch[] = [];
    for await (const batch of adapter.snapshot(ref)) batches.push(batch);
    const payments = batches.filter((b) => b.kind === 'payment').flatMap((b) => b.records);
    expect(payments).toHaveLength(before.length + 1);
    const statementCount = sum(batches.filter((b) => b.kind === 'pay_statement').map((b) => b.records.length));
    expect(statementCount).toBe(sum([...before, payment].map((p) => p.individual_ids.length)));
  });
});
