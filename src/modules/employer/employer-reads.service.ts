import { Inject, Injectable } from '@nestjs/common';
import { Connection } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { PayStatementItemFilter, SeenItemsCollector, SeenPayStatementItem } from '../../domain/employer/pay-statement-item-rules';
import {
  CompanyRecord,
  DirectoryEntry,
  employmentViewOf,
  EmploymentView,
  IndividualRecord,
  PayGroupRecord,
  PaymentRecord,
  PayStatementRecord,
} from '../../domain/employer/unified-records';
import { DATA_SYNC_ALL } from '../../domain/jobs/job';
import { employerRefOf, EmployerRef, Page, Paged, PROVIDER_PORT, ProviderPort } from '../../domain/providers/provider-port';
import { EmployerDataRepository } from '../../infrastructure/database/repositories/employer-data.repository';
import { JobsRepository } from '../jobs/jobs.repository';
import { SyncedAsOf } from './not-found-messages';

/** Whose data a read is: the token's connection and the one entity it resolved to. */
export interface ReadScope {
  connection: Connection;
  entity: ConnectionEntity;
}

export interface PayGroupFilter {
  individualId?: string;
  payFrequencies?: string[];
}

/**
 * Employer data as the Unified API serves it: from the entity's latest completed sync, or,
 * before the first sync completes, live from the provider (with its latency). Both paths
 * return the same records in the same order; callers cannot tell them apart.
 */
@Injectable()
export class EmployerReadsService {
  constructor(
    private readonly synced: EmployerDataRepository,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    private readonly jobs: JobsRepository,
  ) {}

  /** For the messages of not-found items: the entity's last completed sync and the sync under way; undefined while reads are live. */
  async syncedAsOf(scope: ReadScope): Promise<SyncedAsOf | undefined> {
    const last = await this.synced.lastSync(scope.entity.id);
    if (!last) return undefined;
    const open = await this.jobs.findOpen(scope.connection.id, DATA_SYNC_ALL);
    return { completedAt: last.completedAt, openSync: open && { id: open.id, kind: open.kind, status: open.status } };
  }

  async company(scope: ReadScope): Promise<CompanyRecord | null> {
    const synced = await this.synced.syncedCompany(scope.entity.id);
    return synced ? synced.value : this.provider.company(refOf(scope));
  }

  async directory(scope: ReadScope, page: Page): Promise<Paged<DirectoryEntry>> {
    const synced = await this.synced.syncedDirectory(scope.entity.id, page);
    return synced ? synced.value : this.provider.directory(refOf(scope), page);
  }

  /**
   * The individuals among `ids` (lowercase), in no particular order; unknown ids are left out.
   * The SSN is null unless asked for: both sources hold it, neither hands it out by default.
   */
  async individuals(scope: ReadScope, ids: string[], { includeSsn }: { includeSsn: boolean }): Promise<IndividualRecord[]> {
    if (ids.length === 0) return [];
    const synced = await this.synced.syncedPeople(scope.entity.id, 'individual', ids);
    const individuals = synced ? synced.value : await this.provider.individuals(refOf(scope), ids);
    return includeSsn ? individuals : individuals.map((individual) => ({ ...individual, ssn: null }));
  }

  async employments(scope: ReadScope, ids: string[]): Promise<EmploymentView[]> {
    if (ids.length === 0) return [];
    const synced = await this.synced.syncedPeople(scope.entity.id, 'employment', ids);
    return (synced ? synced.value : await this.provider.employments(refOf(scope), ids)).map(employmentViewOf);
  }

  /** Payments with a pay date in the range, oldest first (ties by id, as syncs store them). */
  async payments(scope: ReadScope, startDate: string, endDate: string): Promise<PaymentRecord[]> {
    const synced = await this.synced.syncedPayments(scope.entity.id, startDate, endDate);
    if (synced) return synced.value;
    const live = await this.provider.payments(refOf(scope), startDate, endDate);
    return sortBy(live, (p) => p.pay_date + p.id);
  }

  /** One payment's statements by individual id; null for a payment the employer does not have. */
  async payStatements(scope: ReadScope, paymentId: string, page: Page): Promise<Paged<PayStatementRecord> | null> {
    const synced = await this.synced.syncedPayStatements(scope.entity.id, paymentId, page);
    if (synced) return synced.value;
    return (await this.provider.payStatements(refOf(scope), paymentId, page)) ?? null;
  }

  /** Pay groups by name, then id. */
  async payGroups(scope: ReadScope, filter: PayGroupFilter): Promise<PayGroupRecord[]> {
    const synced = await this.synced.syncedPayGroups(scope.entity.id, filter);
    if (synced) return synced.value;
    const live = (await this.provider.payGroups(refOf(scope))).filter(
      (group) =>
        (filter.individualId === undefined || group.individual_ids.includes(filter.individualId)) &&
        (filter.payFrequencies === undefined || group.pay_frequencies.some((f) => filter.payFrequencies!.includes(f))),
    );
    return live.sort((a, b) => compareBytes(a.name, b.name) || compareBytes(a.id, b.id));
  }

  async payGroup(scope: ReadScope, id: string): Promise<PayGroupRecord | null> {
    const synced = await this.synced.syncedPayGroup(scope.entity.id, id);
    if (synced) return synced.value;
    return (await this.provider.payGroup(refOf(scope), id)) ?? null;
  }

  /**
   * Distinct pay-statement items with the latest pay date each was seen on. Live, they come
   * from the provider's snapshot: one live call (one latency) for the whole pay history,
   * reduced as it streams, so memory holds only the distinct items.
   */
  async payStatementItems(scope: ReadScope, filter: PayStatementItemFilter): Promise<SeenPayStatementItem[]> {
    const synced = await this.synced.syncedPayStatementItems(scope.entity.id, filter);
    if (synced) return synced.value;
    const collector = new SeenItemsCollector(filter);
    for await (const batch of this.provider.snapshot(refOf(scope))) {
      if (batch.kind !== 'pay_statement') continue;
      for (const { pay_date, statement } of batch.records) collector.add(pay_date, statement);
    }
    return collector.items();
  }
}

function refOf({ connection, entity }: ReadScope): EmployerRef {
  return employerRefOf(connection, entity);
}

/** Code-unit order, the same as the synced reads' `COLLATE "C"` for the text they hold. */
function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortBy<T>(items: T[], key: (item: T) => string): T[] {
  return items
    .map((item) => ({ item, key: key(item) }))
    .sort((a, b) => compareBytes(a.key, b.key))
    .map(({ item }) => item);
}
