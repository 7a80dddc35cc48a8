import { Inject, Injectable } from '@nestjs/common';
import { Benefit } from '../../domain/benefits/benefit';
import { utcDateOf, startOfUtcDate } from '../../domain/benefits/effective-date';
import { EnrollmentGroup, EnrollmentJobStatus, IndividualResult } from '../../domain/enrollments/enrollment-change';
import { EnrollmentLedger, EnrollmentRequest, RequestOutcome } from '../../domain/enrollments/enrollment-ledger';
import { ENROLLMENT_LEDGER_REPOSITORY, EnrollmentLedgerRepository, GroupWork } from '../../domain/enrollments/enrollment-ledger.repository';
import { PROVIDER_BEHAVIOURS, ProviderBehaviours } from '../../domain/providers/provider-behaviour';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { newId } from '../../domain/shared/new-id';
import { ENROLLMENT_GROUP_JOB } from '../../infrastructure/database/repositories/enrollment-ledger.repository';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { BenefitScope } from '../benefits/benefits-lookup.service';
import { JobSignal } from '../jobs/job-signal';
import { JobsRepository, NewJob } from '../jobs/jobs.repository';

/** An enroll or unenroll request, validated, for a benefit the caller may use. */
export interface OpenEnrollment {
  scope: BenefitScope;
  benefit: Pick<Benefit, 'id' | 'connectionId' | 'entityId'>;
  request: Omit<EnrollmentRequest, 'jobKind'>;
}

/**
 * Moves enrollments through their ledger (src/domain/enrollments), each step in one
 * transaction: the ambient one when there is one (an HRIS event's inbox transaction, a job's
 * completion), else its own. Automated and Assisted providers take the same steps; what differs
 * (when a group is worked, and how) is their ProviderBehaviour's.
 */
@Injectable()
export class EnrollmentLifecycle {
  constructor(
    private readonly uow: UnitOfWork,
    @Inject(ENROLLMENT_LEDGER_REPOSITORY) private readonly ledgers: EnrollmentLedgerRepository,
    @Inject(PROVIDER_BEHAVIOURS) private readonly behaviours: ProviderBehaviours,
    private readonly jobs: JobsRepository,
    private readonly signal: JobSignal,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Opens requests (in order: a later one takes individuals over from an earlier one of the same
   * batch as it would across batches) and arranges for each new group to be worked on its date.
   */
  open(requests: readonly OpenEnrollment[]): Promise<RequestOutcome[]> {
    return this.uow.transaction(async () => {
      const now = this.clock.now();
      const today = utcDateOf(now);
      const ledgers = await this.ledgers.lockForRequests(
        requests.map((r) => ({ benefit: r.benefit, individualIds: r.request.items.map((i) => i.individualId) })),
      );
      const opened: { ledger: EnrollmentLedger; open: OpenEnrollment; groups: EnrollmentGroup[] }[] = [];
      const outcomes = requests.map((open) => {
        const ledger = ledgers.get(open.benefit.id)!;
        const behaviour = this.behaviours.of(open.scope.connection);
        const outcome = ledger.request({ ...open.request, jobKind: behaviour.jobKind }, now);
        if (outcome.job) opened.push({ ledger, open, groups: outcome.groups });
        return outcome;
      });

      // Once the whole batch is in: a group a later request emptied needs no work.
      const work: NewJob[] = [];
      for (const { ledger, open, groups } of opened) {
        const live = groups.filter((g) => g.state === 'waiting');
        const plan = this.behaviours.of(open.scope.connection).planGroups(live, today);
        for (const group of plan.handedToOps) {
          // People get a group at once only when it goes first for its individuals; otherwise its
          // work job hands it over when its turn comes.
          if (ledger.orderCheck(group.id).ready) ledger.handedToOps(group.id, now);
          else plan.scheduled.push(group);
        }
        for (const group of plan.scheduled) work.push(this.workJobOf(open, group, now));
      }
      await this.ledgers.save(ledgers.values());
      await this.jobs.insertMany(work, this.uow.manager);
      if (work.length > 0) this.uow.afterCommit(() => this.signal.nudge());
      return outcomes;
    });
  }

  private workJobOf(open: OpenEnrollment, group: EnrollmentGroup, now: Date): NewJob {
    const due = startOfUtcDate(group.effectiveDate);
    return {
      id: newId(),
      connectionId: open.scope.connection.id,
      entityId: open.scope.entity.id,
      kind: 'internal',
      type: ENROLLMENT_GROUP_JOB,
      params: { group_id: group.id, job_id: group.jobId },
      createdAt: now,
      scheduledAt: due > now ? due : now,
      // Its people: a batch of groups is leased by how many people it holds (GROUP_BATCH_PEOPLE).
      weight: Math.max(1, group.counts.waiting),
    };
  }

  /** A group as it stands, for the checks before its work (no locks). */
  async read(groupId: string): Promise<GroupWork | undefined> {
    return (await this.ledgers.readGroups([groupId])).get(groupId);
  }

  /**
   * The group's provider call starts now: from here no later request takes its individuals
   * over. False when it was processed meanwhile.
   */
  async startSubmitting(groupId: string): Promise<boolean> {
    return (await this.claim([groupId], (works) => Promise.resolve([...works.keys()]))).has(groupId);
  }

  /**
   * The start of many groups' work, in one transaction: the groups are locked with their
   * individuals, `choose` picks those whose provider call may start now (deciding what becomes
   * of the others), and those are marked submitting: from here no later request takes their
   * individuals over. Answers the chosen groups that were not processed meanwhile.
   */
  claim(groupIds: readonly string[], choose: (works: ReadonlyMap<string, GroupWork>) => Promise<readonly string[]>): Promise<Map<string, GroupWork>> {
    // Ordering and claiming read no individual's enrollment row: those are left unread.
    return this.steps(
      groupIds,
      async (works) => {
        const chosen = new Map<string, GroupWork>();
        for (const id of await choose(works)) {
          const work = works.get(id);
          if (!work || work.group.state === 'processed') continue;
          if (work.group.state !== 'submitting') work.ledger.submitting(id);
          chosen.set(id, work);
        }
        return chosen;
      },
      (ids) => this.ledgers.lockGroupsToClaim(ids),
    );
  }

  /**
   * Records the group's results (its job settles when it was the last). Answers the job's status
   * after it; undefined when the group was already processed (a repeated run).
   */
  async processed(groupId: string, results: readonly IndividualResult[], reason: string | null = null): Promise<EnrollmentJobStatus | undefined> {
    return (await this.record({ processed: [{ groupId, results, reason }] })).get(groupId);
  }

  /**
   * Every individual of the group still waiting gets the same failure (ops failed the task,
   * with `reason`); answers the job's status after it, as processed() does.
   */
  refused(groupId: string, code: number, message: string, reason: string): Promise<EnrollmentJobStatus | undefined> {
    return this.steps([groupId], (works) => {
      const work = works.get(groupId);
      if (!work) return undefined;
      const results = work.ledger.waitingOf(groupId).map((c) => ({ individual_id: c.individualId, code, message }));
      return work.ledger.processed(groupId, results, this.clock.now(), reason) ? work.ledger.job(work.group.jobId)?.status : undefined;
    });
  }

  /**
   * The outcome of many groups' work in one transaction: results recorded (their jobs settling),
   * and groups handed to ops. Answers, per group it changed, its job's status after it.
   */
  record(outcome: { processed?: readonly { groupId: string; results: readonly IndividualResult[]; reason?: string | null }[]; handedToOps?: readonly string[] }): Promise<Map<string, EnrollmentJobStatus>> {
    const processed = outcome.processed ?? [];
    const handedToOps = outcome.handedToOps ?? [];
    return this.steps([...processed.map((p) => p.groupId), ...handedToOps], (works) => {
      const now = this.clock.now();
      const statuses = new Map<string, EnrollmentJobStatus>();
      for (const { groupId, results, reason } of processed) {
        const work = works.get(groupId);
        if (work?.ledger.processed(groupId, results, now, reason ?? null)) statuses.set(groupId, work.ledger.job(work.group.jobId)!.status);
      }
      for (const groupId of handedToOps) {
        const work = works.get(groupId);
        if (!work || work.ledger.group(groupId)?.state === 'processed') continue;
        work.ledger.handedToOps(groupId, now);
        statuses.set(groupId, work.ledger.job(work.group.jobId)!.status);
      }
      return statuses;
    });
  }

  private steps<T>(
    groupIds: readonly string[],
    change: (works: Map<string, GroupWork>) => T | Promise<T>,
    lock: (groupIds: readonly string[]) => Promise<Map<string, GroupWork>> = (ids) => this.ledgers.lockForGroups(ids),
  ): Promise<T> {
    return this.uow.transaction(async () => {
      const works = await lock(groupIds);
      const answer = await change(works);
      await this.ledgers.save(new Set([...works.values()].map((w) => w.ledger)));
      return answer;
    });
  }
}
