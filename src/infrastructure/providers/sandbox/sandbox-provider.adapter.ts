import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../../../config/app-config';
import {
  CompanyRecord,
  DirectoryEntry,
  EmploymentRecord,
  IndividualRecord,
  PayGroupRecord,
  PaymentRecord,
  PayStatementRecord,
} from '../../../domain/employer/unified-records';
import { isAssisted, ProviderDescriptor } from '../../../domain/providers/provider';
import { ProviderCatalogue } from '../../../domain/providers/provider-catalogue';
import { DomainError } from '../../../domain/shared/domain-error';
import {
  EmployerRef,
  ForwardRequest,
  ForwardResponse,
  Page,
  Paged,
  ProviderBenefit,
  ProviderChange,
  ProviderChangeResult,
  ProviderEnrollment,
  ProviderEnrollmentConfiguration,
  ProviderIndividualResult,
  ProviderPort,
  SnapshotBatch,
} from '../../../domain/providers/provider-port';
import { BenefitType } from '../../../domain/payroll/payroll.types';
import { SandboxEmployerStore } from './sandbox-employer.store';
import { SandboxNativeApi } from './sandbox-native-api';

/** Records per snapshot batch: large enough to be quick, small enough to keep memory flat. */
const SNAPSHOT_BATCH_SIZE = 500;

/**
 * ProviderPort over the sandbox payroll system. Every provider of the catalogue is simulated
 * by it, behaving as its entry says: each call first makes sure the employer exists, then
 * takes the provider's live latency (PROVIDER_LATENCY_MS when set, else a random value in the
 * entry's `live_latency_ms`: a few hundred ms for the sandbox's own providers, seconds to
 * minutes for the real ones), then reads the store.
 */
@Injectable()
export class SandboxProviderAdapter implements ProviderPort {
  constructor(
    private readonly store: SandboxEmployerStore,
    private readonly catalogue: ProviderCatalogue,
    private readonly config: AppConfig,
  ) {}

  /** The catalogue entry the employer's connection goes through. */
  providerOf(ref: EmployerRef): ProviderDescriptor {
    return this.catalogue.get(ref.providerId);
  }

  /** Assisted providers fulfil benefit work by hand (2 business days); Automated ones at once. */
  isAssisted(ref: EmployerRef): boolean {
    return isAssisted(this.providerOf(ref), ref.authenticationType);
  }

  async company(ref: EmployerRef): Promise<CompanyRecord> {
    await this.reach(ref);
    return this.store.company(ref);
  }

  async directory(ref: EmployerRef, page: Page): Promise<Paged<DirectoryEntry>> {
    await this.reach(ref);
    return this.store.directory(ref, page);
  }

  async individuals(ref: EmployerRef, ids: string[]): Promise<IndividualRecord[]> {
    await this.reach(ref);
    return this.store.individuals(ref, ids);
  }

  async employments(ref: EmployerRef, ids: string[]): Promise<EmploymentRecord[]> {
    await this.reach(ref);
    return this.store.employments(ref, ids);
  }

  async payments(ref: EmployerRef, startDate: string, endDate: string): Promise<PaymentRecord[]> {
    await this.reach(ref);
    return this.store.payments(ref, startDate, endDate);
  }

  async payStatements(ref: EmployerRef, paymentId: string, page: Page): Promise<Paged<PayStatementRecord> | undefined> {
    await this.reach(ref);
    return this.store.payStatements(ref, paymentId, page);
  }

  async payGroups(ref: EmployerRef): Promise<PayGroupRecord[]> {
    await this.reach(ref);
    return this.store.payGroups(ref);
  }

  async payGroup(ref: EmployerRef, id: string): Promise<PayGroupRecord | undefined> {
    await this.reach(ref);
    return this.store.payGroup(ref, id);
  }

  /**
   * Everything, in batches of at most 500 records, read page by page from PostgreSQL (keyset
   * paging), so a 10,000-employee employer's statements are never in memory at once. One
   * latency wait in total, as one live export.
   */
  async *snapshot(ref: EmployerRef): AsyncIterable<SnapshotBatch> {
    await this.reach(ref);
    yield { kind: 'company', records: [await this.store.company(ref)] };
    for await (const people of this.store.peopleInPages(ref, SNAPSHOT_BATCH_SIZE)) {
      yield { kind: 'individual', records: people.map((p) => p.individual) };
      yield { kind: 'employment', records: people.map((p) => p.employment) };
    }
    yield { kind: 'pay_group', records: await this.store.payGroups(ref) };
    const payments = await this.store.payments(ref, '0001-01-01', '9999-12-31');
    for (let at = 0; at < payments.length; at += SNAPSHOT_BATCH_SIZE) {
      yield { kind: 'payment', records: payments.slice(at, at + SNAPSHOT_BATCH_SIZE) };
    }
    for await (const statements of this.store.payStatementsInPages(ref, SNAPSHOT_BATCH_SIZE)) {
      yield { kind: 'pay_statement', records: statements };
    }
  }

  /** One live call to the provider's own API (sandbox-native-api.ts), answered as its server would. */
  async forward(ref: EmployerRef, request: ForwardRequest): Promise<ForwardResponse> {
    await this.reach(ref);
    // Stateless over the store: built per call, so the adapter's dependencies stay as they are.
    return new SandboxNativeApi(this.store).handle(ref, request);
  }

  async benefits(ref: EmployerRef): Promise<ProviderBenefit[]> {
    await this.reach(ref);
    return this.store.benefits(ref);
  }

  async benefit(ref: EmployerRef, benefitId: string): Promise<ProviderBenefit | undefined> {
    await this.reach(ref);
    return this.store.benefit(ref, benefitId);
  }

  async createBenefit(ref: EmployerRef, benefit: ProviderBenefit): Promise<ProviderBenefit> {
    await this.reach(ref);
    const existing = await this.store.benefit(ref, benefit.benefit_id);
    if (existing) return existing;
    return this.store.addBenefit(ref, { ...benefit, type: benefit.type as BenefitType });
  }

  async updateBenefit(ref: EmployerRef, benefitId: string, patch: { description: string }): Promise<ProviderBenefit | undefined> {
    await this.reach(ref);
    return this.store.updateBenefit(ref, benefitId, patch);
  }

  async enroll(
    ref: EmployerRef,
    benefitId: string,
    elements: { individual_id: string; effective_date: string; configuration: ProviderEnrollmentConfiguration }[],
  ): Promise<ProviderIndividualResult[]> {
    await this.reach(ref);
    const enrolled = await this.store.enrollKnown(ref, benefitId, elements);
    return elements.map((e) => resultFor(e.individual_id, enrolled));
  }

  async unenroll(ref: EmployerRef, benefitId: string, individualIds: string[], onDate: string): Promise<ProviderIndividualResult[]> {
    await this.reach(ref);
    const ended = new Set(await this.store.unenroll(ref, benefitId, individualIds, onDate));
    // A retried call finds the enrollment already ended on that date: done, not missing.
    const endedBefore = await this.store.enrollmentsEndedOn(ref, benefitId, individualIds, onDate);
    for (const id of endedBefore) ended.add(id);
    return individualIds.map((id) =>
      ended.has(id.toLowerCase())
        ? { individual_id: id, code: 200 }
        : { individual_id: id, code: 404, message: `Individual ${id} has no enrollment in this benefit` },
    );
  }

  /** One live call for a whole batch: enrolls in one statement, ends in one per end date. */
  async applyChanges(ref: EmployerRef, benefitId: string, changes: ProviderChange[]): Promise<ProviderChangeResult[]> {
    await this.reach(ref);
    const results = new Map<ProviderChange, ProviderChangeResult>();
    const enrolls = changes.filter((c) => c.configuration !== null);
    if (enrolls.length > 0) {
      const enrolled = await this.store.enrollKnown(
        ref,
        benefitId,
        enrolls.map((c) => ({ individual_id: c.individual_id, effective_date: c.effective_date, configuration: c.configuration! })),
      );
      for (const c of enrolls) results.set(c, { ...resultFor(c.individual_id, enrolled), effective_date: c.effective_date });
    }
    const endsByDate = new Map<string, ProviderChange[]>();
    for (const c of changes) if (c.configuration === null) endsByDate.set(c.effective_date, [...(endsByDate.get(c.effective_date) ?? []), c]);
    for (const [onDate, ends] of endsByDate) {
      const ids = ends.map((c) => c.individual_id);
      const ended = new Set(await this.store.unenroll(ref, benefitId, ids, onDate));
      // A retried call finds the enrollment already ended on that date: done, not missing.
      for (const id of await this.store.enrollmentsEndedOn(ref, benefitId, ids, onDate)) ended.add(id);
      for (const c of ends) {
        results.set(
          c,
          ended.has(c.individual_id.toLowerCase())
            ? { individual_id: c.individual_id, code: 200, effective_date: onDate }
            : { individual_id: c.individual_id, code: 404, message: `Individual ${c.individual_id} has no enrollment in this benefit`, effective_date: onDate },
        );
      }
    }
    return changes.map((c) => results.get(c)!);
  }

  async enrollments(ref: EmployerRef, benefitId: string, onDate: string, individualIds?: string[]): Promise<ProviderEnrollment[]> {
    await this.reach(ref);
    return this.store.enrollmentsInForce(ref, onDate, { benefitId, individualIds });
  }

  /**
   * The employer exists, and the provider's live latency has passed; or the call fails the
   * way a provider's do, when a fault drill asks for it (PROVIDER_FAILURE_RATE/TIMEOUT_RATE).
   */
  private async reach(ref: EmployerRef): Promise<void> {
    const provider = this.providerOf(ref);
    await this.store.ensureEmployer(ref);
    const fault = providerFault(this.config.PROVIDER_FAILURE_RATE, this.config.PROVIDER_TIMEOUT_RATE);
    if (fault === 'timeout') {
      await sleep(this.config.PROVIDER_TIMEOUT_MS);
      throw new DomainError('provider_timeout', `${provider.display_name} did not answer within ${this.config.PROVIDER_TIMEOUT_MS} ms`);
    }
    const latency = liveLatencyMs(provider, this.config.PROVIDER_LATENCY_MS);
    if (latency > 0) await sleep(latency);
    if (fault === 'error') {
      throw new DomainError('provider_error', `${provider.display_name} answered with a server error (503 Service Unavailable)`);
    }
  }
}

function resultFor(individualId: string, known: Set<string>): ProviderIndividualResult {
  return known.has(individualId.toLowerCase())
    ? { individual_id: individualId, code: 200 }
    : { individual_id: individualId, code: 404, message: `The provider has no individual ${individualId}` };
}

/**
 * Which fault, if any, a live call meets: `error` with probability failureRate, `timeout` with
 * probability timeoutRate (together at most certain), none otherwise.
 */
export function providerFault(failureRate: number, timeoutRate: number, random: () => number = Math.random): 'error' | 'timeout' | undefined {
  if (failureRate <= 0 && timeoutRate <= 0) return undefined;
  const draw = random();
  if (draw < failureRate) return 'error';
  if (draw < failureRate + timeoutRate) return 'timeout';
  return undefined;
}

/**
 * How long one live call to the provider takes: PROVIDER_LATENCY_MS when set (tests set 0),
 * else uniform in the catalogue entry's `live_latency_ms` range, as it is: 50–500 ms for the
 * sandbox's own providers, seconds to minutes for the simulated real ones.
 */
export function liveLatencyMs(provider: ProviderDescriptor, configured: number | undefined, random: () => number = Math.random): number {
  if (configured !== undefined) return configured;
  const { min, max } = provider.live_latency_ms;
  return min + Math.floor(random() * (max - min + 1));
}
