import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Connection } from '../../../src/domain/connections/connection';
import {
  CompanyRecord,
  EmploymentRecord,
  IndividualRecord,
  PayGroupRecord,
  PaymentRecord,
  PayStatementRecord,
} from '../../../src/domain/employer/unified-records';
import { DEFAULT_RETRY_POLICY } from '../../../src/domain/jobs/job';
import {
  EmployerRef,
  ForwardResponse,
  Paged,
  ProviderPort,
  SnapshotBatch,
} from '../../../src/domain/providers/provider-port';
import { Clock } from '../../../src/domain/shared/clock';
import { DomainError } from '../../../src/domain/shared/domain-error';
import { ConnectionsRepository } from '../../../src/infrastructure/database/repositories/connections.repository';
import { JobHandlerRegistry } from '../../../src/modules/jobs/job-handler';
import { JobSignal } from '../../../src/modules/jobs/job-signal';
import { JobWorker, JobWorkerSettings } from '../../../src/modules/jobs/job-worker';
import { JobsRepository } from '../../../src/modules/jobs/jobs.repository';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { DomainEventBus } from '../../../src/domain/events/domain-event-bus';

/** Worker settings for tests: fast polling, quick retries. */
export const workerSettings = (overrides: Partial<JobWorkerSettings> = {}): JobWorkerSettings => ({
  pollMs: 20,
  leaseMs: 30_000,
  concurrency: 2,
  retry: { ...DEFAULT_RETRY_POLICY, baseDelayMs: 10, maxDelayMs: 50 },
  shutdownGraceMs: 5_000,
  ...overrides,
});

export function newWorker(
  dataSource: DataSource,
  registry: JobHandlerRegistry,
  clock: Clock,
  settings: Partial<JobWorkerSettings> = {},
  signal = new JobSignal(),
): JobWorker {
  return new JobWorker(new UnitOfWork(dataSource), new JobsRepository(dataSource), registry, signal, clock, workerSettings(settings), new DomainEventBus());
}

/** A connection with its entities, as the connect flow would leave it. */
export async function createConnection(
  dataSource: DataSource,
  { sandbox = true, entityNames = ['Acme Corp'], providerId = 'sandbox_automated' } = {},
): Promise<Connection> {
  const applicationId = randomUUID();
  await dataSource.query(`INSERT INTO applications (id, name, secret_hash, sandbox) VALUES ($1, 'sync tests', 'not-a-secret', $2)`, [
    applicationId,
    sandbox,
  ]);
  return dataSource.transaction((manager) =>
    new ConnectionsRepository(dataSource).create(
      {
        applicationId,
        customerId: null,
        customerName: 'Acme Corp',
        customerEmail: null,
        providerId,
        authenticationType: 'credential',
        products: ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement'],
        sandbox,
        manual: false,
        employeeSize: 3,
        entityNames,
      },
      manager,
    ),
  );
}

const address = { line1: '1 Main St', line2: null, city: 'Springfield', state: 'IL', postal_code: '62701', country: 'US' };

/** A small employer: `people` individuals and employments, pay groups, payments with statements. */
export function employerSnapshot(label: string, people = 3, payDates = ['2026-01-15', '2026-01-29']): SnapshotBatch[] {
  const company: CompanyRecord = {
    id: randomUUID(),
    legal_name: `${label} Inc`,
    entity: { type: 'corporation', subtype: 'c_corporation' },
    ein: '12-3456789',
    primary_email: 'admin@example.com',
    primary_phone_number: '+15555550100',
    departments: [{ name: 'Engineering', parent: null }],
    locations: [address],
    accounts: [],
  };
  const ids = Array.from({ length: people }, () => randomUUID());
  const individuals: IndividualRecord[] = ids.map((id, n) => ({
    id,
    first_name: `${label}-first-${n}`,
    middle_name: null,
    last_name: `last-${n}`,
    preferred_name: null,
    emails: [{ data: `p${n}@example.com`, type: 'work' }],
    phone_numbers: [],
    gender: 'other',
    ethnicity: 'decline_to_specify',
    marital_status: 'single',
    dob: '1990-01-01',
    residence: address,
    ssn: `123-45-${String(6789 + n).slice(-4)}`,
  }));
  const employments: EmploymentRecord[] = ids.map((id, n) => ({
    id,
    first_name: `${label}-first-${n}`,
    middle_name: null,
    last_name: `last-${n}`,
    title: 'Engineer',
    manager: n === 0 ? null : { id: ids[0] },
    department: { name: 'Engineering' },
    employment: { type: 'employee', subtype: 'full_time' },
    start_date: '2024-01-01',
    end_date: null,
    is_active: true,
    class_code: null,
    location: address,
    income: { unit: 'yearly', amount: 10_000_000, currency: 'usd', effective_date: '2024-01-01' },
    income_history: [],
    work_email: null,
    pay_group_ids: [],
  }));
  const payGroup: PayGroupRecord = { id: randomUUID(), name: 'Bi-weekly', pay_frequencies: ['bi_weekly'], individual_ids: ids };
  const money = (amount: number) => ({ amount, currency: 'usd' });
  const payments: PaymentRecord[] = payDates.map((payDate) => ({
    id: randomUUID(),
    pay_date: payDate,
    debit_date: payDate,
    pay_period: { start_date: payDate, end_date: payDate },
    company_debit: money(people * 400_000),
    gross_pay: money(people * 384_615),
    net_pay: money(people * 300_000),
    employer_taxes: money(people * 20_000),
    employee_taxes: money(people * 60_000),
    individual_ids: ids,
    pay_group_ids: [payGroup.id],
    pay_frequencies: ['bi_weekly'],
  }));
  const statement = (individualId: string): PayStatementRecord => ({
    individual_id: individualId,
    type: 'regular_payroll',
    payment_method: 'direct_deposit',
    total_hours: 80,
    gross_pay: money(384_615),
    net_pay: money(300_000),
    earnings: [{ type: 'salary', name: 'Salary', amount: 384_615, currency: 'usd', hours: 80 }],
    taxes: [
      { type: 'federal', name: 'Federal Income Tax', employer: false, amount: 50_000, currency: 'usd' },
      { type: 'fica', name: 'Social Security', employer: true, amount: 20_000, currency: 'usd' },
    ],
    employee_deductions: [{ name: '401k', amount: 19_231, currency: 'usd', pre_tax: true, type: '401k' }],
    employer_contributions: [],
  });
  return [
    { kind: 'company', records: [company] },
    { kind: 'individual', records: individuals },
    { kind: 'employment', records: employments },
    { kind: 'pay_group', records: [payGroup] },
    { kind: 'payment', records: payments },
    ...payments.map(
      (p): SnapshotBatch => ({
        kind: 'pay_statement',
        records: ids.map((id) => ({ payment_id: p.id, pay_date: p.pay_date, statement: statement(id) })),
      }),
    ),
  ];
}

/**
 * A provider whose snapshot is whatever the test sets per entity. It can fail the next calls
 * with a provider error, or stop after the first batch until the test opens the gate.
 */
export class FakeProvider implements ProviderPort {
  readonly snapshots = new Map<string, SnapshotBatch[]>();
  snapshotCalls = 0;
  private failures = 0;
  private gate: { reached: boolean; open: () => void; opened: Promise<void> } | undefined;
  private gateAfter = 1;
  private failAfter = 1;

  /** The next `times` snapshots fail after `afterBatches` batches. */
  failNextSnapshots(times: number, afterBatches = 1): void {
    this.failures = times;
    this.failAfter = afterBatches;
  }

  /** The next snapshot stops after `afterBatches` batches until `openGate()`. */
  closeGate(afterBatches = 1): void {
    this.gateAfter = afterBatches;
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    this.gate = { reached: false, open, opened };
  }

  get gateReached(): boolean {
    return this.gate?.reached ?? false;
  }

  openGate(): void {
    this.gate?.open();
    this.gate = undefined;
  }

  async *snapshot(ref: EmployerRef): AsyncIterable<SnapshotBatch> {
    this.snapshotCalls++;
    const batches = this.snapshots.get(ref.entityId) ?? [];
    let sent = 0;
    for (const batch of batches) {
      if (sent === this.failAfter && this.failures > 0) {
        this.failures--;
        throw new DomainError('provider_error', 'The provider answered 503 Service Unavailable', { serviceCode: 'provider_unavailable' });
      }
      if (sent === this.gateAfter && this.gate) {
        this.gate.reached = true;
        await this.gate.opened;
      }
      yield batch;
      sent++;
    }
  }

  company(): Promise<CompanyRecord> {
    throw new Error('not used by syncs');
  }
  directory(): Promise<Paged<never>> {
    throw new Error('not used by syncs');
  }
  individuals(): Promise<IndividualRecord[]> {
    throw new Error('not used by syncs');
  }
  employments(): Promise<EmploymentRecord[]> {
    throw new Error('not used by syncs');
  }
  payments(): Promise<PaymentRecord[]> {
    throw new Error('not used by syncs');
  }
  payStatements(): Promise<undefined> {
    throw new Error('not used by syncs');
  }
  payGroups(): Promise<PayGroupRecord[]> {
    throw new Error('not used by syncs');
  }
  payGroup(): Promise<undefined> {
    throw new Error('not used by syncs');
  }
  forward(): Promise<ForwardResponse> {
    throw new Error('not used by syncs');
  }
  benefits(): Promise<never> {
    throw new Error('not used by syncs');
  }
  benefit(): Promise<never> {
    throw new Error('not used by syncs');
  }
  createBenefit(): Promise<never> {
    throw new Error('not used by syncs');
  }
  updateBenefit(): Promise<never> {
    throw new Error('not used by syncs');
  }
  enroll(): Promise<never> {
    throw new Error('not used by syncs');
  }
  unenroll(): Promise<never> {
    throw new Error('not used by syncs');
  }
  applyChanges(): Promise<never> {
    throw new Error('not used by syncs');
  }
  enrollments(): Promise<never> {
    throw new Error('not used by syncs');
  }
}

/** Every synced row of an entity's generation, keyed `kind/record_id`. */
export async function rowsOfGeneration(dataSource: DataSource, entityId: string, generation: string) {
  const rows: { kind: string; record_id: string; parent_id: string | null; pay_date: string | null; sort_key: string; body: unknown }[] =
    await dataSource.query(
      `SELECT kind, record_id, parent_id, to_char(pay_date, 'YYYY-MM-DD') AS pay_date, sort_key, body
       FROM employer_data WHERE entity_id = $1 AND generation = $2 ORDER BY kind, record_id`,
      [entityId, generation],
    );
  return rows;
}

export async function generationsOf(dataSource: DataSource, entityId: string): Promise<string[]> {
  const rows: { generation: string }[] = await dataSource.query(
    `SELECT DISTINCT generation::text AS generation FROM employer_data WHERE entity_id = $1 ORDER BY 1`,
    [entityId],
  );
  return rows.map((r) => r.generation).sort((a, b) => Number(a) - Number(b));
}
