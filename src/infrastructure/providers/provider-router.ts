import {
  EmployerRef,
  ForwardRequest,
  Page,
  ProviderBenefit,
  ProviderChange,
  ProviderEnrollmentConfiguration,
  ProviderPort,
  SnapshotBatch,
} from '../../domain/providers/provider-port';

/** Which real provider, if any, a connection was granted at (ProviderGrants.providerOf). */
export interface GrantedProviders {
  providerOf(connectionId: string): Promise<string | undefined>;
}

/** How long a connection's answer is kept: a reauthentication through OAuth is seen within this. */
const GRANT_CACHE_MS = 30_000;
const GRANT_CACHE_ENTRIES = 10_000;

/**
 * The provider port every feature injects (PROVIDER_PORT): each call goes to the adapter of the
 * connection it is for. A sandbox application's connections, and every connection made through
 * the simulated sign-in (no OAuth grant), go to the sandbox payroll system, as before real
 * providers existed; a connection that holds a grant at a real provider whose adapter is
 * configured goes to that adapter. The grant, not the catalogue entry, decides: a production
 * connection to `gusto` made before Gusto was configured keeps working as it was made.
 */
export class ProviderRouter implements ProviderPort {
  private readonly granted = new Map<string, { provider: string | undefined; until: number }>();

  constructor(
    private readonly sandbox: ProviderPort,
    private readonly real: ReadonlyMap<string, ProviderPort>,
    private readonly grants: GrantedProviders,
    private readonly now: () => number = Date.now,
  ) {}

  /** The adapter that serves this employer's connection. */
  async adapterOf(ref: EmployerRef): Promise<ProviderPort> {
    if (ref.sandbox !== false || !this.real.has(ref.providerId)) return this.sandbox;
    const provider = await this.grantedProvider(ref.connectionId);
    return (provider === ref.providerId && this.real.get(provider)) || this.sandbox;
  }

  private async grantedProvider(connectionId: string): Promise<string | undefined> {
    const now = this.now();
    const cached = this.granted.get(connectionId);
    if (cached && cached.until > now) return cached.provider;
    const provider = await this.grants.providerOf(connectionId);
    if (this.granted.size >= GRANT_CACHE_ENTRIES) this.granted.clear();
    this.granted.set(connectionId, { provider, until: now + GRANT_CACHE_MS });
    return provider;
  }

  async company(ref: EmployerRef) {
    return (await this.adapterOf(ref)).company(ref);
  }

  async directory(ref: EmployerRef, page: Page) {
    return (await this.adapterOf(ref)).directory(ref, page);
  }

  async individuals(ref: EmployerRef, ids: string[]) {
    return (await this.adapterOf(ref)).individuals(ref, ids);
  }

  async employments(ref: EmployerRef, ids: string[]) {
    return (await this.adapterOf(ref)).employments(ref, ids);
  }

  async payments(ref: EmployerRef, startDate: string, endDate: string) {
    return (await this.adapterOf(ref)).payments(ref, startDate, endDate);
  }

  async payStatements(ref: EmployerRef, paymentId: string, page: Page) {
    return (await this.adapterOf(ref)).payStatements(ref, paymentId, page);
  }

  async payGroups(ref: EmployerRef) {
    return (await this.adapterOf(ref)).payGroups(ref);
  }

  async payGroup(ref: EmployerRef, id: string) {
    return (await this.adapterOf(ref)).payGroup(ref, id);
  }

  async *snapshot(ref: EmployerRef): AsyncIterable<SnapshotBatch> {
    yield* (await this.adapterOf(ref)).snapshot(ref);
  }

  async forward(ref: EmployerRef, request: ForwardRequest) {
    return (await this.adapterOf(ref)).forward(ref, request);
  }

  async benefits(ref: EmployerRef) {
    return (await this.adapterOf(ref)).benefits(ref);
  }

  async benefit(ref: EmployerRef, benefitId: string) {
    return (await this.adapterOf(ref)).benefit(ref, benefitId);
  }

  async createBenefit(ref: EmployerRef, benefit: ProviderBenefit) {
    return (await this.adapterOf(ref)).createBenefit(ref, benefit);
  }

  async updateBenefit(ref: EmployerRef, benefitId: string, patch: { description: string }) {
    return (await this.adapterOf(ref)).updateBenefit(ref, benefitId, patch);
  }

  async enroll(
    ref: EmployerRef,
    benefitId: string,
    elements: { individual_id: string; effective_date: string; configuration: ProviderEnrollmentConfiguration }[],
  ) {
    return (await this.adapterOf(ref)).enroll(ref, benefitId, elements);
  }

  async unenroll(ref: EmployerRef, benefitId: string, individualIds: string[], onDate: string) {
    return (await this.adapterOf(ref)).unenroll(ref, benefitId, individualIds, onDate);
  }

  async applyChanges(ref: EmployerRef, benefitId: string, changes: ProviderChange[]) {
    return (await this.adapterOf(ref)).applyChanges(ref, benefitId, changes);
  }

  async enrollments(ref: EmployerRef, benefitId: string, onDate: string, individualIds?: string[]) {
    return (await this.adapterOf(ref)).enrollments(ref, benefitId, onDate, individualIds);
  }
}
