import { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import { utcDateOf } from '../benefits/effective-date';
import { newId } from '../shared/new-id';
import { AppliedTimeline, applyToTimeline, enrolledOnOrAfter } from './applied-timeline';
import {
  EnrollmentChange,
  EnrollmentGroup,
  EnrollmentJob,
  EnrollmentJobKind,
  EnrollmentOperation,
  groupByEffectiveDate,
  IndividualResult,
  jobStatusOf,
  NO_CHANGES,
  repeatedKeys,
} from './enrollment-change';
import {
  EnrollmentChangesSuperseded,
  EnrollmentEvent,
  EnrollmentGroupHandedToOps,
  EnrollmentGroupProcessed,
  EnrollmentJobEnded,
  EnrollmentJobOpened,
  OpenedGroup,
} from './enrollment-events';

/**
 * The enrollment lifecycle: every rule of how an enrollment request moves lives here.
 *
 * A ledger is one benefit's enrollments for the individuals a command names: what the provider
 * holds for each (the applied timeline), the latest request naming each, the changes of theirs
 * still waiting, and the jobs and groups those changes belong to. It is loaded with the
 * individuals locked, changed in memory, and saved whole (rows, outbox events) in the
 * command's transaction, so a batch of requests is the same code as one.
 *
 * The rules:
 * - A request is split into one group per effective date (absent or past: today), each one
 *   provider call on its date. An individual may be named on several dates, once per date.
 * - An enroll whose `occurred_at` (an HRIS source) is older than the change an individual's
 *   enrollment already reflects is stale: that individual is left alone. REST requests and
 *   unenrolls are never stale.
 * - A later request takes its individuals over from its (earliest) date: they leave the enroll
 *   groups of earlier requests still waiting on that date or later (result 409, "Superseded by
 *   job …"). A waiting unenroll is never taken over by an enroll; a group whose provider call is
 *   under way is left alone. A job whose every individual was taken over completes.
 * - One individual's changes reach the provider in request order: a group waits while an earlier
 *   request's change of one of its individuals, dated no later, still waits.
 * - A group processed records each individual's result; what succeeded is applied to the
 *   timeline, so reads and terminations see what the provider holds, whatever later requests
 *   are still waiting or failed. An unenroll whose individual had only a waiting enrollment,
 *   now cancelled, succeeds even though the provider had nothing to end.
 * - The job stays pending until no change waits (the latest date included), then completes, or
 *   errs when some individual failed and none succeeded.
 */

export type LatestStatus = 'pending' | 'enrolled' | 'unenrolled' | 'error';

/** The latest request naming an individual, and how it came out for them. */
export interface LatestRequest {
  jobId: string;
  operation: EnrollmentOperation;
  /** The latest-dated configuration asked for (an unenroll keeps the one before). */
  configuration: EnrollmentConfigurationParams | null;
  effectiveDate: string;
  status: LatestStatus;
  /** When an unenroll of it took effect. */
  endedOn: string | null;
}

/** One individual's enrollment in the benefit. */
export interface IndividualEnrollment {
  individualId: string;
  entityId: string;
  /** What the provider holds, by date. */
  applied: AppliedTimeline;
  /** When the newest change reflected here happened at its source. */
  occurredAt: Date | null;
  latest: LatestRequest | null;
}

export interface LedgerBenefit {
  id: string;
  connectionId: string;
  entityId: string;
}

/** What a ledger is restored from: the slice of the benefit's state its command needs. */
export interface LedgerSlice {
  benefit: LedgerBenefit;
  /**
   * The individuals' enrollment rows; null when not read: such a ledger orders, claims and hands
   * over groups, and refuses anything that reads or changes an individual's row.
   */
  individuals: IndividualEnrollment[] | null;
  /** Waiting changes of those individuals, and the waiting changes of any group being processed. */
  changes: EnrollmentChange[];
  /** The groups of those changes. */
  groups: EnrollmentGroup[];
  /** The jobs of those groups, their counts summed over all their groups. */
  jobs: EnrollmentJob[];
}

export interface RequestItem {
  individualId: string;
  effectiveDate: string;
  /** Enroll: the configuration; unenroll: null. */
  configuration: EnrollmentConfigurationParams | null;
  /**
   * When this item's change happened at its source, and the saga it belongs to, where they are
   * its own (HRIS events of one batch share a request: each item keeps its event's); absent:
   * the request's.
   */
  occurredAt?: Date | null;
  sagaId?: string;
}

export interface EnrollmentRequest {
  jobKind: EnrollmentJobKind;
  operation: EnrollmentOperation;
  items: readonly RequestItem[];
  /** When the change happened at its source (an HRIS event); null for REST requests. Items may have their own. */
  occurredAt: Date | null;
  /** The saga the request belongs to (an HRIS saga's); items may have their own. */
  sagaId?: string;
}

export interface RequestOutcome {
  /** The job opened; null when every individual was stale. */
  job: EnrollmentJob | null;
  groups: EnrollmentGroup[];
  /** Individuals left alone: their enrollment reflects a later change. */
  stale: string[];
}

export type OrderCheck = { ready: true } | { ready: false; waitsFor: { groupId: string; jobId: string } };

/** What a save writes. */
export interface LedgerChanges {
  benefitId: string;
  newJobs: { job: EnrollmentJob; groups: EnrollmentGroup[]; createdAt: Date }[];
  newChanges: EnrollmentChange[];
  /** Existing changes that got a result or were taken over. */
  changedChanges: EnrollmentChange[];
  /** Existing groups whose state or counts moved. */
  changedGroups: EnrollmentGroup[];
  /** Groups that ended before being submitted (every change taken over): their work is called off. */
  calledOffGroups: string[];
  /** Enrollment rows made here: none was stored for these individuals. */
  newIndividuals: IndividualEnrollment[];
  /** Stored enrollment rows that changed. */
  changedIndividuals: IndividualEnrollment[];
  /** Jobs whose individuals got results (their per-individual body grows as groups are processed). */
  progressedJobs: string[];
  endedJobs: { job: EnrollmentJob; reason: string | null }[];
}

const SUPERSEDED_PREFIX = 'Superseded by job';

export class EnrollmentLedger {
  private readonly individuals = new Map<string, IndividualEnrollment>();
  /** Every change the ledger holds, by individual and by group (a batch names thousands). */
  private readonly changesOf = new Map<string, EnrollmentChange[]>();
  private readonly changesIn = new Map<string, EnrollmentChange[]>();
  private readonly groups = new Map<string, EnrollmentGroup>();
  private readonly jobs = new Map<string, EnrollmentJob>();
  private readonly events: EnrollmentEvent[] = [];
  private readonly plan: Pick<LedgerChanges, 'newJobs' | 'newChanges' | 'calledOffGroups' | 'endedJobs'> = {
    newJobs: [],
    newChanges: [],
    calledOffGroups: [],
    endedJobs: [],
  };
  private readonly dirtyIndividuals = new Set<string>();
  private readonly newIndividualIds = new Set<string>();
  private readonly individualsRead: boolean;
  private readonly dirtyChanges = new Set<EnrollmentChange>();
  private readonly dirtyGroups = new Set<string>();
  private readonly newGroupIds = new Set<string>();
  /** Provisional order of jobs opened here: after every job that exists, in opening order. */
  private nextOrder: number;

  private constructor(
    readonly benefit: LedgerBenefit,
    slice: LedgerSlice,
    private readonly newId: () => string,
  ) {
    this.individualsRead = slice.individuals !== null;
    for (const individual of slice.individuals ?? []) this.individuals.set(individual.individualId, { ...individual });
    for (const change of slice.changes) this.hold({ ...change, cancels: [...change.cancels] });
    for (const group of slice.groups) this.groups.set(group.id, { ...group, counts: { ...group.counts } });
    for (const job of slice.jobs) this.jobs.set(job.id, { ...job, counts: { ...job.counts } });
    this.nextOrder = Math.max(Number.MAX_SAFE_INTEGER / 2, ...slice.jobs.map((j) => j.order + 1));
  }

  static restore(slice: LedgerSlice, makeId: () => string = newId): EnrollmentLedger {
    return new EnrollmentLedger(slice.benefit, slice, makeId);
  }

  // ---- requests ----

  /**
   * Opens an enroll or unenroll request: the job, its effective-date groups and their changes,
   * after taking its individuals out of earlier requests' waiting groups.
   */
  request(request: EnrollmentRequest, now: Date): RequestOutcome {
    const repeated = repeatedKeys(request.items.map((i) => `${i.individualId}|${i.effectiveDate}`));
    if (repeated.length > 0) throw new Error(`an individual is named twice on one date: ${repeated.join(', ')}`);
    const staleIds = new Set<string>();
    const occurredAtOf = (item: RequestItem) => (item.occurredAt === undefined ? request.occurredAt : item.occurredAt);
    // An unenroll is never stale: a termination ends what is there, whatever came since.
    if (request.operation === 'enroll') {
      for (const item of request.items) {
        const at = occurredAtOf(item);
        const reflected = at === null ? null : this.individualRow(item.individualId)?.occurredAt;
        if (at !== null && reflected && reflected > at) staleIds.add(item.individualId);
      }
    }
    const fresh = request.items.filter((i) => !staleIds.has(i.individualId));
    if (fresh.length === 0) return { job: null, groups: [], stale: [...staleIds] };

    const job: EnrollmentJob = {
      id: this.newId(),
      kind: request.jobKind,
      operation: request.operation,
      connectionId: this.benefit.connectionId,
      entityId: this.benefit.entityId,
      benefitId: this.benefit.id,
      order: this.nextOrder++,
      status: 'pending',
      counts: { ...NO_CHANGES, waiting: fresh.length },
    };
    this.jobs.set(job.id, job);
    const groups: EnrollmentGroup[] = [];
    const added: EnrollmentChange[] = [];
    const position = new Map(request.items.map((item, index) => [item, index]));
    for (const { effectiveDate, items } of groupByEffectiveDate(fresh)) {
      const group: EnrollmentGroup = {
        id: this.newId(),
        jobId: job.id,
        benefitId: this.benefit.id,
        operation: request.operation,
        effectiveDate,
        order: job.order,
        state: 'waiting',
        counts: { ...NO_CHANGES, waiting: items.length },
      };
      groups.push(group);
      this.groups.set(group.id, group);
      this.newGroupIds.add(group.id);
      for (const item of items) {
        added.push({
          groupId: group.id,
          jobId: job.id,
          benefitId: this.benefit.id,
          individualId: item.individualId,
          operation: request.operation,
          effectiveDate,
          configuration: request.operation === 'enroll' ? item.configuration : null,
          order: job.order,
          position: position.get(item)!,
          status: 'waiting',
          result: null,
          cancels: [],
        });
      }
    }

    // Each individual is taken over from the earliest date this request names them on.
    const from = new Map<string, string>();
    for (const change of added) {
      const earliest = from.get(change.individualId);
      if (earliest === undefined || change.effectiveDate < earliest) from.set(change.individualId, change.effectiveDate);
    }
    const mark = this.events.length;
    const cancelled = this.takeOver(from, job, now);
    for (const change of added) change.cancels = cancelled.get(change.individualId) ?? [];
    for (const change of added) this.hold(change);
    this.plan.newChanges.push(...added);
    this.plan.newJobs.push({ job, groups, createdAt: now });

    const addedOf = new Map<string, EnrollmentChange[]>();
    for (const change of added) addedOf.set(change.individualId, [...(addedOf.get(change.individualId) ?? []), change]);
    const itemOf = new Map(fresh.map((item) => [item.individualId, item]));
    for (const [individualId, own] of addedOf) {
      const latestDated = own.reduce((a, b) => (b.effectiveDate > a.effectiveDate ? b : a));
      const row = this.individualOf(individualId);
      if (request.operation === 'enroll') row.occurredAt = laterOf(row.occurredAt, occurredAtOf(itemOf.get(individualId)!) ?? now);
      row.latest = {
        jobId: job.id,
        operation: request.operation,
        configuration: request.operation === 'enroll' ? latestDated.configuration : (row.latest?.configuration ?? null),
        effectiveDate: latestDated.effectiveDate,
        status: 'pending',
        endedOn: null,
      };
      this.dirtyIndividuals.add(individualId);
    }

    const opened: OpenedGroup[] = groups.map((g) => ({
      id: g.id,
      effectiveDate: g.effectiveDate,
      items: added.filter((c) => c.groupId === g.id).map((c) => ({ individualId: c.individualId, configuration: c.configuration })),
    }));
    // The sagas the request's items belong to, each with its individuals.
    const sagas = new Map<string, Set<string>>();
    for (const item of fresh) {
      const sagaId = item.sagaId ?? request.sagaId;
      if (sagaId !== undefined) sagas.set(sagaId, (sagas.get(sagaId) ?? new Set()).add(item.individualId));
    }
    // Opened first: the job exists before anything is said of the jobs it took individuals from.
    this.events.splice(
      mark,
      0,
      new EnrollmentJobOpened(
        this.scopeAt(now),
        { id: job.id, kind: job.kind, operation: job.operation },
        opened,
        [...sagas].map(([sagaId, individualIds]) => ({ sagaId, individualIds: [...individualIds] })),
      ),
    );
    return { job, groups, stale: [...staleIds] };
  }

  /**
   * Takes each individual out of earlier requests' enroll groups still waiting on its date or
   * later: one EnrollmentChangesSuperseded per group touched. Answers, per individual, the jobs
   * whose changes were taken over.
   */
  private takeOver(from: ReadonlyMap<string, string>, byJob: EnrollmentJob, now: Date): Map<string, string[]> {
    const taken = [...from.keys()].flatMap((id) => this.changesOf.get(id) ?? []).filter((c) => {
      const fromDate = from.get(c.individualId);
      return (
        fromDate !== undefined &&
        c.status === 'waiting' &&
        c.jobId !== byJob.id &&
        c.operation === 'enroll' &&
        c.effectiveDate >= fromDate &&
        this.isWaitingToBeWorked(c.groupId)
      );
    });
    const byGroup = new Map<string, EnrollmentChange[]>();
    for (const change of taken) {
      const fromDate = from.get(change.individualId)!;
      change.status = 'superseded';
      change.result = {
        individual_id: change.individualId,
        code: 409,
        message: `${SUPERSEDED_PREFIX} ${byJob.id}, a later request for this individual effective ${fromDate}`,
      };
      this.dirtyChanges.add(change);
      const group = this.groups.get(change.groupId)!;
      this.count(group, 'waiting', -1);
      this.count(group, 'superseded', +1);
      byGroup.set(group.id, [...(byGroup.get(group.id) ?? []), change]);
    }
    for (const [groupId, changes] of byGroup) {
      const group = this.groups.get(groupId)!;
      if (group.counts.waiting === 0) {
        group.state = 'processed';
        this.plan.calledOffGroups.push(group.id);
      }
      const ids = changes.map((c) => c.individualId);
      this.events.push(new EnrollmentChangesSuperseded(this.scopeAt(now), group.jobId, group.id, group.effectiveDate, byJob.id, ids, group.counts.waiting));
      this.settle(group.jobId, now, null);
    }
    const cancelled = new Map<string, string[]>();
    for (const change of taken) {
      const jobs = cancelled.get(change.individualId) ?? [];
      if (!jobs.includes(change.jobId)) jobs.push(change.jobId);
      cancelled.set(change.individualId, jobs);
    }
    return cancelled;
  }

  private isWaitingToBeWorked(groupId: string): boolean {
    const state = this.groups.get(groupId)?.state;
    return state === 'waiting' || state === 'in_ops';
  }

  // ---- groups ----

  /**
   * Whether the group may go to the provider now: not while an earlier request's change of one
   * of its individuals, dated no later, still waits (it goes first, or the older change would
   * land last).
   */
  orderCheck(groupId: string): OrderCheck {
    const group = this.requireGroup(groupId);
    const own = new Set(this.waitingOf(groupId).map((c) => c.individualId));
    const earlier = [...own]
      .flatMap((id) => this.changesOf.get(id) ?? [])
      .filter(
        (c) =>
          c.status === 'waiting' &&
          c.groupId !== groupId &&
          c.effectiveDate <= group.effectiveDate &&
          (c.order < group.order || (c.jobId === group.jobId && c.effectiveDate < group.effectiveDate)),
      )
      .sort((a, b) => a.order - b.order || a.effectiveDate.localeCompare(b.effectiveDate));
    return earlier.length === 0 ? { ready: true } : { ready: false, waitsFor: { groupId: earlier[0].groupId, jobId: earlier[0].jobId } };
  }

  /** The group's changes still waiting, in request order. */
  waitingOf(groupId: string): EnrollmentChange[] {
    return (this.changesIn.get(groupId) ?? []).filter((c) => c.status === 'waiting').sort((a, b) => a.position - b.position);
  }

  group(groupId: string): EnrollmentGroup | undefined {
    return this.groups.get(groupId);
  }

  job(jobId: string): EnrollmentJob | undefined {
    return this.jobs.get(jobId);
  }

  /** The group's provider call is starting (or ops completed its task): no later request may take it over now. */
  submitting(groupId: string): void {
    this.moveGroup(groupId, 'submitting');
  }

  /** An Assisted provider's staff get the group as a task (its date came, and it goes first). */
  handedToOps(groupId: string, now: Date): void {
    const group = this.requireGroup(groupId);
    this.moveGroup(groupId, 'in_ops');
    const items = this.waitingOf(groupId).map((c) => ({ individualId: c.individualId, configuration: c.configuration }));
    this.events.push(new EnrollmentGroupHandedToOps(this.scopeAt(now), group.jobId, group.id, group.operation, group.effectiveDate, items));
  }

  private moveGroup(groupId: string, state: 'submitting' | 'in_ops'): void {
    const group = this.requireGroup(groupId);
    if (group.state === 'processed') throw new Error(`group ${groupId} is already processed`);
    group.state = state;
    this.markGroup(group);
  }

  /**
   * Records how the provider answered each individual of the group (missing: 502), applies what
   * succeeded, and settles the job. `reason`: why the group failed when a person said so (an
   * Assisted task failed with a note). False when the group was already processed (a repeated run).
   */
  processed(groupId: string, results: readonly IndividualResult[], now: Date, reason: string | null = null): boolean {
    const group = this.requireGroup(groupId);
    if (group.state === 'processed') return false;
    const today = utcDateOf(now);
    const byId = new Map(results.map((r) => [r.individual_id.toLowerCase(), r]));
    const recorded: IndividualResult[] = [];
    const waiting = this.waitingOf(groupId);
    for (const change of waiting) {
      let result: IndividualResult = byId.get(change.individualId.toLowerCase()) ?? {
        individual_id: change.individualId,
        code: 502,
        message: 'The provider gave no answer for this individual',
      };
      result = { ...result, individual_id: change.individualId };
      if (change.operation === 'unenroll' && result.code === 404 && change.cancels.length > 0) {
        // Nothing at the provider to end: what was waiting to start is cancelled, which is what was asked.
        result = {
          individual_id: change.individualId,
          code: 200,
          message: `Nothing was enrolled at the provider yet; the waiting enrollment of job ${change.cancels.join(', ')} was cancelled`,
        };
      }
      change.status = result.code === 200 ? 'done' : 'failed';
      change.result = result;
      this.dirtyChanges.add(change);
      this.count(group, 'waiting', -1);
      this.count(group, result.code === 200 ? 'succeeded' : 'failed', +1);
      recorded.push(result);
      this.recordOnRow(change, result, today);
    }
    group.state = 'processed';
    this.markGroup(group);
    this.events.push(new EnrollmentGroupProcessed(this.scopeAt(now), group.jobId, group.id, group.operation, group.effectiveDate, recorded));
    this.settle(group.jobId, now, reason);
    return true;
  }

  private recordOnRow(change: EnrollmentChange, result: IndividualResult, today: string): void {
    const row = this.individualOf(change.individualId);
    if (result.code === 200) row.applied = applyToTimeline(row.applied, change, today);
    const latest = row.latest;
    if (latest?.jobId === change.jobId) {
      const more = (this.changesOf.get(change.individualId) ?? []).some((c) => c.jobId === change.jobId && c.status === 'waiting');
      if (!more) {
        if (result.code !== 200) latest.status = 'error';
        else if (change.operation === 'enroll') latest.status = 'enrolled';
        else {
          latest.status = 'unenrolled';
          latest.endedOn = change.effectiveDate;
        }
      }
    }
    this.dirtyIndividuals.add(change.individualId);
  }

  // ---- jobs ----

  private settle(jobId: string, now: Date, reason: string | null): void {
    const job = this.jobs.get(jobId);
    if (!job || job.status !== 'pending') return;
    const status = jobStatusOf(job.counts);
    if (status === 'pending') return;
    job.status = status;
    this.plan.endedJobs.push({ job, reason: status === 'error' ? reason : null });
    const { succeeded, failed, superseded } = job.counts;
    this.events.push(
      new EnrollmentJobEnded(
        { connectionId: job.connectionId, entityId: job.entityId, benefitId: job.benefitId, at: now },
        { id: job.id, kind: job.kind, operation: job.operation },
        status,
        { succeeded, failed, superseded },
        status === 'error' ? reason : null,
      ),
    );
  }

  // ---- reads ----

  individual(individualId: string): IndividualEnrollment | undefined {
    return this.individualRow(individualId);
  }

  // ---- what a save needs ----

  /** The events since the last call, in the order they happened. */
  pullEvents(): EnrollmentEvent[] {
    return this.events.splice(0);
  }

  /** What to write: new rows, and the existing ones that moved. */
  pendingChanges(): LedgerChanges {
    const newChanges = new Set(this.plan.newChanges);
    return {
      ...this.plan,
      benefitId: this.benefit.id,
      changedChanges: [...this.dirtyChanges].filter((c) => !newChanges.has(c)),
      changedGroups: [...this.dirtyGroups].filter((id) => !this.newGroupIds.has(id)).map((id) => this.groups.get(id)!),
      newIndividuals: [...this.dirtyIndividuals].filter((id) => this.newIndividualIds.has(id)).map((id) => this.individuals.get(id)!),
      changedIndividuals: [...this.dirtyIndividuals].filter((id) => !this.newIndividualIds.has(id)).map((id) => this.individuals.get(id)!),
      progressedJobs: [...new Set([...this.dirtyChanges].filter((c) => c.result !== null).map((c) => c.jobId))],
    };
  }

  // ---- helpers ----

  private hold(change: EnrollmentChange): void {
    this.changesOf.set(change.individualId, [...(this.changesOf.get(change.individualId) ?? []), change]);
    const inGroup = this.changesIn.get(change.groupId);
    if (inGroup) inGroup.push(change);
    else this.changesIn.set(change.groupId, [change]);
  }

  private individualRow(individualId: string): IndividualEnrollment | undefined {
    // Without the rows, "none" would be a guess: a fresh row would overwrite the stored one.
    if (!this.individualsRead) throw new Error(`the enrollment rows of benefit ${this.benefit.id} were not read into this ledger`);
    return this.individuals.get(individualId);
  }

  private individualOf(individualId: string): IndividualEnrollment {
    let row = this.individualRow(individualId);
    if (!row) {
      row = { individualId, entityId: this.benefit.entityId, applied: [], occurredAt: null, latest: null };
      this.individuals.set(individualId, row);
      this.newIndividualIds.add(individualId);
    }
    return row;
  }

  private requireGroup(groupId: string): EnrollmentGroup {
    const group = this.groups.get(groupId);
    if (!group) throw new Error(`group ${groupId} is not in this ledger`);
    return group;
  }

  private count(group: EnrollmentGroup, field: keyof EnrollmentGroup['counts'], delta: number): void {
    group.counts[field] += delta;
    const job = this.jobs.get(group.jobId);
    if (job) job.counts[field] += delta;
    this.markGroup(group);
  }

  private markGroup(group: EnrollmentGroup): void {
    this.dirtyGroups.add(group.id);
  }

  private scopeAt(at: Date) {
    return { connectionId: this.benefit.connectionId, entityId: this.benefit.entityId, benefitId: this.benefit.id, at };
  }
}

function laterOf(a: Date | null, b: Date): Date {
  return a !== null && a > b ? a : b;
}

/**
 * What a termination must end: an enrollment the provider holds now or from a later date, or
 * one still waiting to start, whatever happened to changes requested since.
 */
export function toEndOnTermination(enrollment: IndividualEnrollment, today: string): boolean {
  return enrolledOnOrAfter(enrollment.applied, today) || (enrollment.latest?.operation === 'enroll' && enrollment.latest.status === 'pending');
}
