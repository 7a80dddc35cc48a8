import { Connection } from '../../domain/connections/connection';
import { PayGroupRecord, PaymentRecord, PayStatementRecord } from '../../domain/employer/unified-records';
import { EmployerRef, ProviderPort, SnapshotBatch } from '../../domain/providers/provider-port';
import { DomainError } from '../../domain/shared/domain-error';
import { EmployerDataRepository, Synced } from '../../infrastructure/database/repositories/employer-data.repository';
import { JobsRepository } from '../jobs/jobs.repository';
import { EmployerReadsService, ReadScope } from './employer-reads.service';

const scope: ReadScope = {
  connection: {
    id: 'connection-1',
    providerId: 'sandbox_automated',
    authenticationType: 'credential',
    employeeSize: null,
  } as Connection,
  entity: { id: 'entity-1', name: 'Acme', status: 'active' },
};

const payment = (id: string, payDate: string) => ({ id, pay_date: payDate }) as PaymentRecord;
const group = (id: string, name: string, frequencies: string[], individuals: string[]): PayGroupRecord => ({
  id,
  name,
  pay_frequencies: frequencies,
  individual_ids: individuals,
});

/** A provider that answers from fixed data, records whom it was asked about, and can fail. */
class FakeProvider implements Partial<ProviderPort> {
  readonly refs: EmployerRef[] = [];
  failure: DomainError | undefined;

  private async answer<T>(ref: EmployerRef, value: T): Promise<T> {
    this.refs.push(ref);
    if (this.failure) throw this.failure;
    return value;
  }

  payments(ref: EmployerRef) {
    return this.answer(ref, [payment('b', '2026-02-13'), payment('c', '2026-01-30'), payment('a', '2026-02-13')]);
  }

  payGroups(ref: EmployerRef) {
    return this.answer(ref, [
      group('2', 'Weekly', ['weekly'], ['p1']),
      group('1', 'Bi-weekly', ['bi_weekly'], ['p2']),
      group('0', 'Weekly', ['weekly'], ['p2']),
    ]);
  }

  payStatements(ref: EmployerRef) {
    return this.answer(ref, undefined);
  }

  async *snapshot(ref: EmployerRef): AsyncIterable<SnapshotBatch> {
    await this.answer(ref, undefined);
    yield { kind: 'company', records: [] };
    const statement = {
      earnings: [{ type: 'salary', name: 'Salary', amount: 1, currency: 'usd', hours: 1 }],
      taxes: [],
      employee_deductions: [],
      employer_contributions: [],
    };
    yield {
      kind: 'pay_statement',
      records: [
        { payment_id: 'p1', pay_date: '2026-01-30', statement: statement as unknown as PayStatementRecord },
        { payment_id: 'p2', pay_date: '2026-02-13', statement: statement as unknown as PayStatementRecord },
      ],
    };
  }
}

/** Synced data as the repository answers it: `undefined` until a sync has completed. */
class FakeSyncedData {
  synced: Record<string, unknown> = {};

  private read<T>(name: string): Promise<Synced<T>> {
    return Promise.resolve(name in this.synced ? { value: this.synced[name] as T } : undefined);
  }

  syncedPayments = () => this.read('payments');
  syncedPayGroups = () => this.read('payGroups');
  syncedPayStatements = () => this.read('payStatements');
  syncedPayStatementItems = () => this.read('items');
}

describe('EmployerReadsService', () => {
  let provider: FakeProvider;
  let synced: FakeSyncedData;
  let reads: EmployerReadsService;

  beforeEach(() => {
    provider = new FakeProvider();
    synced = new FakeSyncedData();
    // No sync is ever under way here.
    const jobs: Partial<JobsRepository> = { findOpen: async () => undefined };
    reads = new EmployerReadsService(synced as unknown as EmployerDataRepository, provider as unknown as ProviderPort, jobs as JobsRepository);
  });

  it('goes live before the first sync, addressing the entity’s employer', async () => {
    const payments = await reads.payments(scope, '2026-01-01', '2026-12-31');
    // Ordered as syncs store them: pay date, then id.
    expect(payments.map((p) => p.id)).toEqual(['c', 'a', 'b']);
    expect(provider.refs).toEqual([
      {
        connectionId: 'connection-1',
        entityId: 'entity-1',
        entityName: 'Acme',
        providerId: 'sandbox_automated',
        authenticationType: 'credential',
        employeeSize: 20,
      },
    ]);
  });

  it('serves the synced copy once there is one, without asking the provider', async () => {
    synced.synced.payments = [payment('s', '2026-03-13')];
    expect(await reads.payments(scope, '2026-01-01', '2026-12-31')).toEqual([payment('s', '2026-03-13')]);
    synced.synced.payStatements = null;
    expect(await reads.payStatements(scope, 'unknown', { limit: 10, offset: 0 })).toBeNull();
    expect(provider.refs).toEqual([]);
  });

  it('filters and orders live pay groups as the synced read does', async () => {
    expect((await reads.payGroups(scope, {})).map((g) => g.id)).toEqual(['1', '0', '2']);
    expect((await reads.payGroups(scope, { individualId: 'p2' })).map((g) => g.id)).toEqual(['1', '0']);
    expect((await reads.payGroups(scope, { payFrequencies: ['weekly', 'monthly'] })).map((g) => g.id)).toEqual(['0', '2']);
  });

  it('answers null for a payment the provider does not know', async () => {
    expect(await reads.payStatements(scope, 'unknown', { limit: 10, offset: 0 })).toBeNull();
  });

  it('derives live items from the snapshot’s statements, with their last pay date', async () => {
    expect(await reads.payStatementItems(scope, {})).toEqual([
      {
        item: { name: 'Salary', category: 'earnings', attributes: { type: 'salary', employer: null, pre_tax: null, metadata: null } },
        lastPayDate: '2026-02-13',
      },
    ]);
    expect(await reads.payStatementItems(scope, { endDate: '2026-01-31' })).toEqual([
      expect.objectContaining({ lastPayDate: '2026-01-30' }),
    ]);
  });

  it('lets a provider failure through as the provider_error it is (rendered 502/504)', async () => {
    provider.failure = new DomainError('provider_timeout', 'The provider did not answer in time');
    await expect(reads.payments(scope, '2026-01-01', '2026-12-31')).rejects.toMatchObject({ family: 'provider_timeout' });
    await expect(reads.payStatementItems(scope, {})).rejects.toMatchObject({ family: 'provider_timeout' });
  });
});
