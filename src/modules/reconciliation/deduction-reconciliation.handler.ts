import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { EnrollmentConfigurationParams } from '../../domain/benefits/benefit-job-params';
import { inForceOn } from '../../domain/enrollments/applied-timeline';
import { Job } from '../../domain/jobs/job';
import { EmployerRef, employerRefOf, PROVIDER_PORT, ProviderPort } from '../../domain/providers/provider-port';
import {
  applyConfigurationReads,
  applyStatementResults,
  ConfigurationPair,
  emptyChanges,
  LifecycleChanges,
  statementResultKey,
  yearToDateOfResults,
} from '../../domain/reconciliation/discrepancy-lifecycle';
import { ReconciledBenefit, StatementResult } from '../../domain/reconciliation/reconciliation.types';
import { limitTotalsOf, reconcilePerson } from '../../domain/reconciliation/statement-reconciliation';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { JobHandler, JobOutcome, JobRunContext } from '../jobs/job-handler';
import { DiscrepancyEvents } from './discrepancy-events';
import { normalisedConfiguration, ReconciliationRepository, StatementToReconcile } from './reconciliation.repository';

export const DEDUCTION_RECONCILIATION = 'deduction_reconciliation';

/** People reconciled per round of reads and writes: bounds memory whatever the headcount. */
const PEOPLE_PER_CHUNK = 1_000;

interface Scope {
  connectionId: string;
  entityId: string;
  syncJobId: string | null;
  /** The reconciliation job: statements are recorded as reconciled by it. */
  jobId: string;
  today: string;
}

interface Totals {
  statements: number;
  results: number;
  opened: number;
  resolved: number;
}

/** What the provider holds today, per benefit read (benefits it could not be asked about are absent). */
type ProviderReads = Map<string, Map<string, EnrollmentConfigurationParams>>;

/**
 * `deduction_reconciliation` (an internal job a completed data sync queues for its entity):
 * compares what payroll did with what the service applied. The provider's enrollments are read
 * first (live calls, retried like any provider work); then every statement of the current
 * generation not yet reconciled in its present form is reconciled (src/domain/reconciliation),
 * a thousand people per transaction under a lock of the entity: their results, the
 * discrepancies opened, updated and resolved, the events and webhooks, and the statements
 * recorded as reconciled commit together. A last transaction compares configurations (drift),
 * announces the payments and records the run. A crash loses only the transaction under way;
 * the job runs again and finds only what is left (a statement recorded with the same body is
 * done). Nothing is opened twice, nothing is lost. The job row is not held meanwhile, so the
 * worker's lease renewals never wait on a long reconciliation.
 */
@Injectable()
export class DeductionReconciliationHandler implements JobHandler {
  readonly type = DEDUCTION_RECONCILIATION;
  private readonly logger = new Logger(DeductionReconciliationHandler.name);

  constructor(
    private readonly connections: ConnectionsRepository,
    private readonly dataSource: DataSource,
    private readonly reconciliation: ReconciliationRepository,
    private readonly events: DiscrepancyEvents,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async run(job: Job, { signal }: JobRunContext): Promise<JobOutcome> {
    const connection = await this.connections.find(job.connectionId);
    const entity = connection?.entities.find((e) => e.id === job.entityId);
    if (!connection || !entity || connection.status === 'disconnected') {
      return { status: 'complete', result: { skipped: 'The connection or entity is gone' } };
    }
    const ref = employerRefOf(connection, entity);
    const today = this.clock.now().toISOString().slice(0, 10);
    const benefitIds = await this.benefitIdsOf(entity.id);
    const reads = connection.status === 'connected' ? await this.readProvider(ref, benefitIds, today) : new Map();
    const syncJobId = typeof job.params?.sync_job_id === 'string' ? job.params.sync_job_id : null;
    const scope = { connectionId: connection.id, entityId: entity.id, syncJobId, jobId: job.id, today };
    const summary = await this.reconcile(scope, reads, signal);
    return { status: 'complete', result: { ...summary, configurations_read: reads.size } };
  }

  private async benefitIdsOf(entityId: string): Promise<string[]> {
    const rows: { id: string }[] = await this.dataSource.query(`SELECT id FROM benefits WHERE entity_id = $1`, [entityId]);
    return rows.map((r) => r.id);
  }

  /**
   * The provider's enrollments in force today, per benefit. A provider that cannot answer such a
   * read (an error that is not transient) is not compared; a transient failure fails the run, to
   * be retried.
   */
  private async readProvider(ref: EmployerRef, benefitIds: string[], today: string): Promise<ProviderReads> {
    const reads: ProviderReads = new Map();
    for (const benefitId of benefitIds) {
      try {
        const enrollments = await this.provider.enrollments(ref, benefitId, today);
        reads.set(benefitId, new Map(enrollments.map((e) => [e.individual_id.toLowerCase(), normalisedConfiguration(e.configuration)])));
      } catch (error) {
        if (error instanceof DomainError && (error.family === 'provider_error' || error.family === 'provider_timeout')) throw error;
        this.logger.debug(`No configuration read of benefit ${benefitId}: ${(error as Error).message}`);
      }
    }
    return reads;
  }

  /**
   * Each chunk of people in a transaction of its own (the entity locked), then drift, the
   * payments' announcements and the run's record in a last one. A statement is recorded as
   * reconciled, by this job, with its results: a run cut short leaves whole chunks done, and the
   * next run (or this job again) does the rest; none is done twice.
   */
  private async reconcile(scope: Scope, reads: ProviderReads, signal: AbortSignal): Promise<Totals> {
    const { entityId } = scope;
    const totals: Totals = { statements: 0, results: 0, opened: 0, resolved: 0 };
    const plan = await this.dataSource.transaction(async (manager) => {
      const generation = await this.reconciliation.currentGeneration(manager, entityId);
      const benefits = await this.reconciliation.benefits(manager, entityId);
      if (generation === null || benefits.length === 0) return { generation, benefits, pending: [] };
      // From the start of the first reconciled year: earlier statements of that year count against its limits.
      const from = `${benefits.map((b) => b.reconcileFrom).sort()[0].slice(0, 4)}-01-01`;
      return { generation, benefits, pending: await this.reconciliation.statementsToReconcile(manager, entityId, generation, from) };
    });

    const people = [...new Set(plan.pending.map((s) => s.individualId))].sort();
    for (let at = 0; at < people.length; at += PEOPLE_PER_CHUNK) {
      signal.throwIfAborted();
      const chunk = new Set(people.slice(at, at + PEOPLE_PER_CHUNK));
      const statements = plan.pending.filter((s) => chunk.has(s.individualId));
      const written = await this.dataSource.transaction(async (manager) => {
        await this.reconciliation.lockEntity(manager, entityId);
        // Another run of the entity may have done some of them meanwhile.
        const left = await this.reconciliation.stillToReconcile(manager, entityId, statements);
        return this.reconcileChunk(manager, scope, plan.generation!, plan.benefits, [...chunk], left, this.clock.now());
      });
      totals.statements += written.statements;
      totals.results += written.results;
      totals.opened += written.opened;
      totals.resolved += written.resolved;
    }

    signal.throwIfAborted();
    await this.dataSource.transaction(async (manager) => {
      const now = this.clock.now();
      await this.reconciliation.lockEntity(manager, entityId);
      if (reads.size > 0) {
        const drift = await this.compareConfigurations(manager, scope, reads, now);
        totals.opened += drift.opened;
        totals.resolved += drift.resolved;
      }
      const payments = await this.reconciliation.paymentSummaries(manager, entityId, scope.jobId);
      await this.events.contributionsReady(manager, scope, payments);
      await this.reconciliation.recordRun(
        manager,
        { entityId, connectionId: scope.connectionId, syncJobId: scope.syncJobId, generation: plan.generation, statements: totals.statements },
        now,
      );
    });
    return totals;
  }

  private async reconcileChunk(
    manager: EntityManager,
    scope: Scope,
    generation: string,
    benefits: ReconciledBenefit[],
    people: string[],
    pending: StatementToReconcile[],
    now: Date,
  ): Promise<Totals> {
    const { entityId } = scope;
    if (pending.length === 0) return { statements: 0, results: 0, opened: 0, resolved: 0 };
    const firstYear = pending.reduce((year, s) => Math.min(year, Number(s.payDate.slice(0, 4))), Number.MAX_SAFE_INTEGER);
    const [statements, birthDates, enrollments, earlier, earlierTotals, live] = [
      await this.reconciliation.statementBodies(manager, entityId, generation, pending.map((s) => s.recordId)),
      await this.reconciliation.birthDates(manager, entityId, generation, people),
      await this.reconciliation.enrollments(manager, benefits.map((b) => b.id), people),
      await this.reconciliation.earlierResults(manager, entityId, people, firstYear),
      await this.reconciliation.earlierStatementTotals(manager, entityId, people, firstYear),
      await this.reconciliation.liveDiscrepancies(manager, entityId, { individualIds: people }),
    ];
    const timelinesOf = new Map<string, Map<string, (typeof enrollments)[number]['applied']>>();
    for (const e of enrollments) {
      const key = e.individualId.toLowerCase();
      if (!timelinesOf.has(key)) timelinesOf.set(key, new Map());
      timelinesOf.get(key)!.set(e.benefitId, e.applied);
    }
    const statementsOf = new Map<string, typeof statements>();
    for (const s of statements) statementsOf.set(s.individualId, [...(statementsOf.get(s.individualId) ?? []), s]);
    const regular = new Map(statements.map((s) => [`${s.paymentId}|${s.individualId}`, s.kind === 'regular_payroll']));

    const results: StatementResult[] = [];
    const changes = emptyChanges();
    for (const individualId of people) {
      const own = (statementsOf.get(individualId) ?? []).sort((a, b) => a.payDate.localeCompare(b.payDate) || a.paymentId.localeCompare(b.paymentId));
      if (own.length === 0) continue;
      const first = own[0];
      const year = Number(first.payDate.slice(0, 4));
      const redone = new Set(own.map((s) => s.paymentId));
      const isBefore = (r: { paymentId: string; payDate: string }) => !redone.has(r.paymentId) && r.payDate < first.payDate && r.payDate.startsWith(`${year}-`);
      const before = (earlier.get(individualId) ?? []).filter(isBefore);
      const totalsBefore = (earlierTotals.get(individualId) ?? []).filter(isBefore).map((t) => t.totals);
      const personResults = reconcilePerson(
        {
          individualId,
          dob: birthDates.get(individualId) ?? null,
          statements: own,
          timelines: timelinesOf.get(individualId.toLowerCase()) ?? new Map(),
          yearToDate: yearToDateOfResults(year, before, totalsBefore),
        },
        benefits,
      );
      applyStatementResults(live, personResults, changes);
      results.push(...personResults);
    }

    const written = await this.writeChanges(manager, scope, changes, now);
    // Each result points at the discrepancy it opened or added to; a result older than what the
    // pair's live ones have seen (history) changed none, and points at the live one of its kind.
    const liveIds = new Map<string, string>();
    for (const d of live) liveIds.set(`${d.benefitId}|${d.individualId}|${d.kind}`, written.idOf(d.id));
    const discrepancyOf = (r: StatementResult): string | null => {
      const shownIn = changes.shownIn.get(statementResultKey(r));
      return shownIn !== undefined ? written.idOf(shownIn) : (liveIds.get(`${r.benefitId}|${r.individualId}|${r.result}`) ?? null);
    };
    await this.reconciliation.writeResults(
      manager,
      entityId,
      results.map((r) => ({
        ...r,
        regular: regular.get(`${r.paymentId}|${r.individualId}`) ?? true,
        discrepancyId: r.result === 'matched' ? null : discrepancyOf(r),
      })),
      now,
    );
    // Only what was read: a statement whose generation went meanwhile is left for the next run.
    const limitTotals = new Map(statements.map((s) => [`${s.paymentId}|${s.individualId}`, limitTotalsOf(s)]));
    const read = pending.filter((s) => limitTotals.has(`${s.paymentId}|${s.individualId}`));
    await this.reconciliation.markReconciled(
      manager,
      entityId,
      scope.jobId,
      read.map((s) => ({ ...s, limitTotals: limitTotals.get(`${s.paymentId}|${s.individualId}`)! })),
      now,
    );
    await this.reconciliation.confirmInPayroll(
      manager,
      results
        .filter((r) => r.result === 'matched' && r.jobId !== null && (r.observedEmployee > 0 || r.configuration === null))
        .map((r) => ({ jobId: r.jobId!, paymentId: r.paymentId, payDate: r.payDate, individualId: r.individualId, benefitId: r.benefitId })),
      now,
    );
    return { statements: read.length, results: results.length, opened: written.opened, resolved: written.resolved };
  }

  /** Configuration drift: the provider's configurations today against the service's. */
  private async compareConfigurations(
    manager: EntityManager,
    scope: Scope,
    reads: ProviderReads,
    now: Date,
  ): Promise<{ opened: number; resolved: number }> {
    const enrollments = await this.reconciliation.enrollments(manager, [...reads.keys()]);
    const pairs = new Map<string, ConfigurationPair>();
    const skipped = new Set<string>();
    for (const e of enrollments) {
      const key = `${e.benefitId}|${e.individualId.toLowerCase()}`;
      // A change on its way to the provider: the two sides may differ for a moment.
      if (e.status === 'pending') {
        skipped.add(key);
        continue;
      }
      const service = inForceOn(e.applied, scope.today);
      pairs.set(key, { benefitId: e.benefitId, individualId: e.individualId.toLowerCase(), service: service && normalisedConfiguration(service), provider: null });
    }
    for (const [benefitId, held] of reads) {
      for (const [individualId, configuration] of held) {
        const key = `${benefitId}|${individualId}`;
        if (skipped.has(key)) continue;
        const pair = pairs.get(key) ?? { benefitId, individualId, service: null, provider: null };
        pair.provider = configuration;
        pairs.set(key, pair);
      }
    }
    const live = await this.reconciliation.liveDiscrepancies(manager, scope.entityId, { kind: 'configuration_drift' });
    const changes = emptyChanges();
    // Both sides empty is no enrollment at all: nothing to compare, unless a drift was open.
    const compared = [...pairs.values()].filter((p) => p.service !== null || p.provider !== null || live.some((d) => d.benefitId === p.benefitId && d.individualId === p.individualId));
    applyConfigurationReads(live, compared, changes);
    const written = await this.writeChanges(manager, scope, changes, now);
    return { opened: written.opened, resolved: written.resolved };
  }

  /** Writes the lifecycle's changes with their events; `idOf` maps a provisional id to the one written. */
  private async writeChanges(
    manager: EntityManager,
    scope: { connectionId: string; entityId: string },
    changes: LifecycleChanges,
    now: Date,
  ): Promise<{ opened: number; resolved: number; idOf: (id: string) => string }> {
    // A pair has one live discrepancy of a kind, and a later statement of this run may open the
    // kind a resolution ends again: the stored ones are resolved first, and one this run both
    // opened and resolved is written resolved.
    const isNew = (id: string) => id.startsWith('new:');
    const resolvedStored = await this.reconciliation.resolve(
      manager,
      changes.resolved.filter((r) => !isNew(r.id)),
      now,
    );
    const resolutionOfNew = new Map(changes.resolved.filter((r) => isNew(r.id)).map((r) => [Number(r.id.slice(4)), r]));
    const ids = await this.reconciliation.open(
      manager,
      scope,
      changes.opened,
      now,
      changes.opened.map((_, i) => resolutionOfNew.get(i)?.resolution ?? null),
    );
    const idOf = (id: string) => (isNew(id) ? ids[Number(id.slice(4))] : id);
    const updates = changes.updated.map((u) => ({ ...u, id: idOf(u.id) }));
    await this.reconciliation.update(manager, updates, now);
    const resolvedNew = changes.opened.flatMap((o, i) =>
      resolutionOfNew.has(i) ? [{ id: ids[i], kind: o.kind, benefit_id: o.benefitId, individual_id: o.individualId }] : [],
    );
    const resolutionOf = new Map(changes.resolved.map((r) => [idOf(r.id), r]));
    await this.events.opened(
      manager,
      scope,
      changes.opened.map((o, i) => ({ ...o, id: ids[i] })),
    );
    await this.events.resolved(
      manager,
      scope,
      [...resolvedStored, ...resolvedNew].map((r) => ({ ...r, resolution: resolutionOf.get(r.id)?.resolution ?? 'agreed', payment_id: resolutionOf.get(r.id)?.paymentId ?? null })),
    );
    return { opened: ids.length, resolved: resolvedStored.length + resolvedNew.length, idOf };
  }
}
