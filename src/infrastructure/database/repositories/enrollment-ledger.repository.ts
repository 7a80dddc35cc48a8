import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { EnrollmentConfigurationParams } from '../../../domain/benefits/benefit-job-params';
import { AppliedTimeline } from '../../../domain/enrollments/applied-timeline';
import {
  ChangeStatus,
  EnrollmentChange,
  EnrollmentGroup,
  EnrollmentJob,
  EnrollmentJobKind,
  EnrollmentOperation,
  GroupState,
} from '../../../domain/enrollments/enrollment-change';
import {
  EnrollmentChangesSuperseded,
  EnrollmentEvent,
  EnrollmentGroupProcessed,
  EnrollmentJobEnded,
  EnrollmentJobOpened,
} from '../../../domain/enrollments/enrollment-events';
import { EnrollmentLedger, IndividualEnrollment, LatestStatus, LedgerBenefit, LedgerChanges } from '../../../domain/enrollments/enrollment-ledger';
import { EnrollmentLedgerRepository, GroupWork } from '../../../domain/enrollments/enrollment-ledger.repository';
import { DomainEventBus } from '../../../domain/events/domain-event-bus';
import { Clock, CLOCK } from '../../../domain/shared/clock';
import { BenefitEventsWriter, NewBenefitEvent } from '../../messaging/outbox/benefit-events.writer';
import { ColumnSet } from '../column-set';
import { insertNewJobs } from '../new-jobs';
import { advisoryLocksFor } from './enrollment-locks';
import { UnitOfWork } from '../unit-of-work';

/** The internal job that works one effective-date group on its date (never pollable). */
export const ENROLLMENT_GROUP_JOB = 'benefit_enrollment_group';

interface IndividualRow {
  benefit_id: string;
  individual_id: string;
  entity_id: string;
  applied: AppliedTimeline;
  occurred_at: Date | null;
  job_id: string | null;
  job_type: string | null;
  configuration: EnrollmentConfigurationParams | null;
  effective_date: string | null;
  status: LatestStatus;
  ended_on: string | null;
}

interface ChangeRow {
  group_id: string;
  individual_id: string;
  benefit_id: string;
  position: number;
  configuration: EnrollmentConfigurationParams | null;
  status: ChangeStatus;
  code: number | null;
  message: string | null;
  cancels: string[];
  job_id: string;
  operation: EnrollmentOperation;
  effective_date: string;
  job_seq: string;
}

interface GroupRow {
  id: string;
  job_id: string;
  benefit_id: string;
  operation: EnrollmentOperation;
  effective_date: string;
  job_seq: string;
  state: GroupState;
  waiting: number;
  succeeded: number;
  failed: number;
  superseded: number;
  kind: EnrollmentJobKind;
  job_status: string;
  connection_id: string;
  entity_id: string;
}

const INDIVIDUAL_COLUMNS = `e.benefit_id, e.individual_id, e.entity_id, e.applied, e.occurred_at, e.job_id, j.type AS job_type, e.configuration,
  to_char(e.effective_date, 'YYYY-MM-DD') AS effective_date, e.status, to_char(e.ended_on, 'YYYY-MM-DD') AS ended_on`;

const individualOf = (row: IndividualRow): IndividualEnrollment => ({
  individualId: row.individual_id,
  entityId: row.entity_id,
  applied: row.applied,
  occurredAt: row.occurred_at === null ? null : new Date(row.occurred_at),
  latest:
    row.job_id === null || row.effective_date === null
      ? null
      : {
          jobId: row.job_id,
          operation: row.job_type === 'benefit_unenroll' ? 'unenroll' : 'enroll',
          configuration: row.configuration,
          effectiveDate: row.effective_date,
          status: row.status,
          endedOn: row.ended_on,
        },
});

const changeOf = (row: ChangeRow): EnrollmentChange => ({
  groupId: row.group_id,
  jobId: row.job_id,
  benefitId: row.benefit_id,
  individualId: row.individual_id,
  operation: row.operation,
  effectiveDate: row.effective_date,
  configuration: row.configuration,
  order: Number(row.job_seq),
  position: row.position,
  status: row.status,
  result: row.code === null ? null : { individual_id: row.individual_id, code: row.code, ...(row.message === null ? {} : { message: row.message }) },
  cancels: row.cancels,
});

/** A group as a row of a set: what its insert and its update both write. */
const GROUPS = new ColumnSet<ReturnType<typeof groupRecord>>({
  id: 'uuid',
  job_id: 'uuid',
  benefit_id: 'uuid',
  operation: 'text',
  effective_date: 'date',
  state: 'text',
  waiting: 'int',
  succeeded: 'int',
  failed: 'int',
  superseded: 'int',
});

/** A queue row (`q`) a wake moves: asleep past `$2` (now), or being worked. Candidates read it unlocked; the lock checks it again. */
const ASLEEP_OR_WORKED = `((q.leased_by IS NULL AND q.scheduled_at > $2) OR q.leased_by IS NOT NULL)`;

/**
 * Waking a job put back to wait, `$2` being now: one asleep is due now; one being worked is
 * marked, its due time moved to a millisecond before now or before what it was (so it differs
 * from the time it was leased at), and a run that decided to wait before the wake committed then
 * puts its job back due at once (JobsRepository.deferMany) instead of asleep with nothing left
 * to wake it. The due time is the queue row's (`q`, leased when `leased_by` is set), copied to
 * the job's row after, queue row first as every writer of both does (JobQueue1798300000000).
 *
 * `candidates` selects the jobs to wake (`job_id`). A queue row another transaction holds is
 * skipped, not waited for: the wake runs in a group batch's commit, after that batch finished
 * its own jobs, so two batches waking each other's rows each waited for the other (PostgreSQL
 * found the deadlock after a second, with both batches' individuals locked meanwhile, and rolled
 * one batch back to be worked again). A row held is being leased, put back, ended or woken by
 * its holder; the statement answers the jobs it skipped, woken again once the commit is done.
 */
function wakeStatement(candidates: string): string {
  return `WITH candidate AS (${candidates}),
     locked AS (
       SELECT q.job_id FROM job_queue q JOIN candidate c ON c.job_id = q.job_id
       WHERE ${ASLEEP_OR_WORKED}
       ORDER BY q.job_id FOR UPDATE OF q SKIP LOCKED),
     woken AS (
       UPDATE job_queue q SET scheduled_at = CASE WHEN q.leased_by IS NOT NULL THEN least(q.scheduled_at, $2) - interval '1 millisecond' ELSE $2 END
       FROM locked l WHERE q.job_id = l.job_id
       RETURNING q.job_id, q.scheduled_at),
     copied AS (UPDATE jobs j SET scheduled_at = w.scheduled_at FROM woken w WHERE j.id = w.job_id)
   SELECT c.job_id FROM candidate c WHERE NOT EXISTS (SELECT 1 FROM locked l WHERE l.job_id = c.job_id)`;
}

/** Pauses before each wake again of rows that were held: their holders' statements are short (a lease, a put-back). */
const WAKE_AGAIN_AFTER_MS = [50, 250, 1_000];

const groupRecord = (g: EnrollmentGroup) => ({
  id: g.id,
  job_id: g.jobId,
  benefit_id: g.benefitId,
  operation: g.operation,
  effective_date: g.effectiveDate,
  state: g.state,
  waiting: g.counts.waiting,
  succeeded: g.counts.succeeded,
  failed: g.counts.failed,
  superseded: g.counts.superseded,
});

/**
 * Sets written once per save, as columns (column-set.ts): a request of 10,000 individuals is
 * 10,000 rows of each. Every statement here is driven by such a set or an `unnest` of keys, not
 * by `jsonb_to_recordset` or `= ANY(…)`: in a plan made for any parameters PostgreSQL takes an
 * `unnest` for 10 rows and looks each up by its index, where it took a recordset for 100 and an
 * `= ANY` for a share of the table, and scanned jobs, groups and items whole for a handful of
 * rows (docs/decisions.md, "Statements keyed by an unnest of their keys").
 */
const NEW_ITEMS = new ColumnSet<Pick<ChangeRow, 'group_id' | 'individual_id' | 'benefit_id' | 'position' | 'configuration' | 'status' | 'code' | 'message' | 'cancels'>>({
  group_id: 'uuid',
  individual_id: 'uuid',
  benefit_id: 'uuid',
  position: 'int',
  configuration: 'jsonb',
  status: 'text',
  code: 'int',
  message: 'text',
  cancels: 'uuid[]',
});

const ITEM_RESULTS = new ColumnSet<Pick<ChangeRow, 'group_id' | 'individual_id' | 'status' | 'code' | 'message'>>({
  group_id: 'uuid',
  individual_id: 'uuid',
  status: 'text',
  code: 'int',
  message: 'text',
});

// A row the ledger made may have no latest request yet: its status is written as 'pending'.
const INDIVIDUALS = new ColumnSet<
  Pick<IndividualRow, 'benefit_id' | 'individual_id' | 'entity_id' | 'applied' | 'occurred_at' | 'job_id' | 'configuration' | 'effective_date' | 'ended_on'> & {
    status: LatestStatus | null;
  }
>({
  benefit_id: 'uuid',
  individual_id: 'uuid',
  entity_id: 'uuid',
  applied: 'jsonb',
  occurred_at: 'timestamptz',
  job_id: 'uuid',
  configuration: 'jsonb',
  effective_date: 'date',
  status: 'text',
  ended_on: 'date',
});

const individualRecord = ({ benefitId, individual }: { benefitId: string; individual: IndividualEnrollment }) => ({
  benefit_id: benefitId,
  individual_id: individual.individualId,
  entity_id: individual.entityId,
  applied: individual.applied,
  occurred_at: individual.occurredAt,
  job_id: individual.latest?.jobId ?? null,
  configuration: individual.latest?.configuration ?? null,
  effective_date: individual.latest?.effectiveDate ?? null,
  status: individual.latest?.status ?? null,
  ended_on: individual.latest?.endedOn ?? null,
});

const groupOf = (row: GroupRow): EnrollmentGroup => ({
  id: row.id,
  jobId: row.job_id,
  benefitId: row.benefit_id,
  operation: row.operation,
  effectiveDate: row.effective_date,
  order: Number(row.job_seq),
  state: row.state,
  counts: { waiting: row.waiting, succeeded: row.succeeded, failed: row.failed, superseded: row.superseded },
});


/**
 * Enrollment ledgers in PostgreSQL: `enrollments` (one row per benefit and individual),
 * `enrollment_groups`, `enrollment_items` (one per individual of a group) and the request's row
 * in `jobs`. Loads and saves are set-wise, a statement per table whatever the number of
 * requests and individuals, so a batch of HRIS events costs about what one does.
 *
 * Locks: every change first takes transaction-scoped advisory locks on the benefits and
 * (benefit, individual) pairs it names (enrollment-locks.ts), in one order, then the rows of
 * the jobs their waiting changes belong to (sorted), then reads. Changes of one individual
 * therefore serialize, changes of others run side by side, and no two transactions wait on
 * each other in a cycle.
 */
@Injectable()
export class TypeormEnrollmentLedgerRepository implements EnrollmentLedgerRepository {
  private readonly logger = new Logger(TypeormEnrollmentLedgerRepository.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly uow: UnitOfWork,
    private readonly outbox: BenefitEventsWriter,
    private readonly bus: DomainEventBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  private get db(): EntityManager {
    return this.uow.manager;
  }

  // ---- loading ----

  async lockForRequests(requests: readonly { benefit: LedgerBenefit; individualIds: readonly string[] }[]): Promise<Map<string, EnrollmentLedger>> {
    const benefits = new Map<string, { benefit: LedgerBenefit; individuals: Set<string> }>();
    for (const { benefit, individualIds } of requests) {
      const entry = benefits.get(benefit.id) ?? { benefit, individuals: new Set<string>() };
      for (const id of individualIds) entry.individuals.add(id.toLowerCase());
      benefits.set(benefit.id, entry);
    }
    const ledgers = await this.load([...benefits.values()].map((b) => ({ benefit: b.benefit, individualIds: [...b.individuals] })), [], true);
    return new Map([...ledgers].map(([benefitId, { ledger }]) => [benefitId, ledger]));
  }

  lockForGroups(groupIds: readonly string[]): Promise<Map<string, GroupWork>> {
    return this.groupWork(groupIds, true);
  }

  lockGroupsToClaim(groupIds: readonly string[]): Promise<Map<string, GroupWork>> {
    return this.groupWork(groupIds, true, false);
  }

  readGroups(groupIds: readonly string[]): Promise<Map<string, GroupWork>> {
    return this.groupWork(groupIds, false);
  }

  private async groupWork(groupIds: readonly string[], lock: boolean, withIndividuals = true): Promise<Map<string, GroupWork>> {
    if (groupIds.length === 0) return new Map();
    const rows: { group_id: string; benefit_id: string; connection_id: string; entity_id: string; individual_id: string | null }[] = await this.db.query(
      `SELECT g.id AS group_id, g.benefit_id, b.connection_id, b.entity_id, i.individual_id
       FROM unnest($1::uuid[]) AS k(id) JOIN enrollment_groups g ON g.id = k.id JOIN benefits b ON b.id = g.benefit_id
         LEFT JOIN enrollment_items i ON i.group_id = g.id AND i.status = 'waiting'`,
      [groupIds],
    );
    const benefits = new Map<string, { benefit: LedgerBenefit; individualIds: Set<string> }>();
    for (const row of rows) {
      const entry = benefits.get(row.benefit_id) ?? {
        benefit: { id: row.benefit_id, connectionId: row.connection_id, entityId: row.entity_id },
        individualIds: new Set<string>(),
      };
      if (row.individual_id !== null) entry.individualIds.add(row.individual_id);
      benefits.set(row.benefit_id, entry);
    }
    const loaded = await this.load(
      [...benefits.values()].map((b) => ({ benefit: b.benefit, individualIds: [...b.individualIds] })),
      [...new Set(rows.map((r) => r.group_id))],
      lock,
      withIndividuals,
    );
    const work = new Map<string, GroupWork>();
    for (const { ledger } of loaded.values()) {
      for (const groupId of groupIds) {
        const group = ledger.group(groupId);
        const job = group && ledger.job(group.jobId);
        if (group && job) work.set(groupId, { ledger, group, job, changes: ledger.waitingOf(groupId) });
      }
    }
    return work;
  }

  /**
   * The ledgers of these benefits for these individuals (locked when `lock`), with the jobs of
   * `alsoGroups` even when none of their changes still waits.
   */
  private async load(
    slices: readonly { benefit: LedgerBenefit; individualIds: readonly string[] }[],
    alsoGroups: readonly string[],
    lock: boolean,
    withIndividuals = true,
  ): Promise<Map<string, { ledger: EnrollmentLedger }>> {
    const keys = slices.flatMap((s) => s.individualIds.map((id) => [s.benefit.id.toLowerCase(), id.toLowerCase()] as const));
    if (lock && keys.length > 0) {
      const locks = advisoryLocksFor(keys);
      // A function scan returns the arrays in order, so the locks are taken in that order.
      await this.db.query(
        `SELECT count(CASE WHEN u.shared THEN pg_advisory_xact_lock_shared(hashtextextended(u.k, 0)) ELSE pg_advisory_xact_lock(hashtextextended(u.k, 0)) END)
         FROM unnest($1::text[], $2::boolean[]) AS u(k, shared)`,
        [locks.map((l) => l.key), locks.map((l) => l.shared)],
      );
    }
    const benefitIds = keys.map(([b]) => b);
    const individualIds = keys.map(([, i]) => i);
    const individuals: IndividualRow[] =
      keys.length === 0 || !withIndividuals
        ? []
        : await this.db.query(
            `SELECT ${INDIVIDUAL_COLUMNS}
             FROM unnest($1::uuid[], $2::uuid[]) AS k(benefit_id, individual_id)
               JOIN enrollments e ON e.benefit_id = k.benefit_id AND e.individual_id = k.individual_id
               LEFT JOIN jobs j ON j.id = e.job_id`,
            [benefitIds, individualIds],
          );
    const changes: ChangeRow[] =
      keys.length === 0
        ? []
        : await this.db.query(
            `SELECT i.group_id, i.individual_id, i.benefit_id, i.position, i.configuration, i.status, i.code, i.message, i.cancels,
                    g.job_id, g.operation, to_char(g.effective_date, 'YYYY-MM-DD') AS effective_date, g.job_seq
             FROM unnest($1::uuid[], $2::uuid[]) AS k(benefit_id, individual_id)
               JOIN waiting_enrollment_items w ON w.benefit_id = k.benefit_id AND w.individual_id = k.individual_id
               JOIN enrollment_items i ON i.group_id = w.group_id AND i.individual_id = w.individual_id AND i.status = 'waiting'
               JOIN enrollment_groups g ON g.id = i.group_id`,
            [benefitIds, individualIds],
          );
    let jobIds = [...new Set(changes.map((c) => c.job_id))];
    if (alsoGroups.length > 0) {
      const extra: { job_id: string }[] = await this.db.query(
        `SELECT DISTINCT g.job_id FROM unnest($1::uuid[]) AS k(id) JOIN enrollment_groups g ON g.id = k.id`,
        [alsoGroups],
      );
      jobIds = [...new Set([...jobIds, ...extra.map((r) => r.job_id)])];
    }
    // Jobs are locked after the individuals, in id order: their counts are read fresh under the lock.
    if (lock && jobIds.length > 0) {
      await this.db.query(`SELECT count(*) FROM (SELECT j.id FROM unnest($1::uuid[]) AS k(id) JOIN jobs j ON j.id = k.id ORDER BY j.id FOR UPDATE OF j) locked`, [jobIds]);
    }
    const groups: GroupRow[] =
      jobIds.length === 0
        ? []
        : await this.db.query(
            `SELECT g.id, g.job_id, g.benefit_id, g.operation, to_char(g.effective_date, 'YYYY-MM-DD') AS effective_date, g.job_seq, g.state,
                    g.waiting, g.succeeded, g.failed, g.superseded, j.kind, j.status AS job_status, j.connection_id, j.entity_id
             FROM unnest($1::uuid[]) AS k(job_id) JOIN enrollment_groups g ON g.job_id = k.job_id JOIN jobs j ON j.id = g.job_id`,
            [jobIds],
          );

    const ledgers = new Map<string, { ledger: EnrollmentLedger }>();
    const individualsOf = groupBy(individuals, (r) => r.benefit_id);
    const changesOf = groupBy(changes, (c) => c.benefit_id);
    const groupsOf = groupBy(groups, (g) => g.benefit_id);
    const benefitsOfGroups = new Map(groups.map((g) => [g.benefit_id, g]));
    const allBenefits = new Map(slices.map((s) => [s.benefit.id.toLowerCase(), s.benefit]));
    for (const g of benefitsOfGroups.values()) {
      if (!allBenefits.has(g.benefit_id)) allBenefits.set(g.benefit_id, { id: g.benefit_id, connectionId: g.connection_id, entityId: g.entity_id });
    }
    for (const [benefitId, benefit] of allBenefits) {
      const ownGroups = groupsOf.get(benefitId) ?? [];
      const jobs = new Map<string, EnrollmentJob>();
      for (const g of ownGroups) {
        const job = jobs.get(g.job_id) ?? {
          id: g.job_id,
          kind: g.kind,
          operation: g.operation,
          connectionId: g.connection_id,
          entityId: g.entity_id,
          benefitId,
          order: Number(g.job_seq),
          status: g.job_status === 'complete' || g.job_status === 'error' ? g.job_status : 'pending',
          counts: { waiting: 0, succeeded: 0, failed: 0, superseded: 0 },
        };
        job.counts.waiting += g.waiting;
        job.counts.succeeded += g.succeeded;
        job.counts.failed += g.failed;
        job.counts.superseded += g.superseded;
        jobs.set(g.job_id, job);
      }
      const ledger = EnrollmentLedger.restore({
        benefit: { ...benefit, id: benefitId },
        individuals: withIndividuals ? (individualsOf.get(benefitId) ?? []).map(individualOf) : null,
        changes: (changesOf.get(benefitId) ?? []).map(changeOf),
        groups: ownGroups.map(groupOf),
        jobs: [...jobs.values()],
      });
      ledgers.set(benefitId, { ledger });
    }
    return ledgers;
  }

  // ---- saving ----

  async save(ledgers: Iterable<EnrollmentLedger>): Promise<void> {
    const plans: LedgerChanges[] = [];
    const events: EnrollmentEvent[] = [];
    for (const ledger of ledgers) {
      plans.push(ledger.pendingChanges());
      events.push(...ledger.pullEvents());
    }
    const now = this.clock.now();
    await this.insertJobs(plans.flatMap((p) => p.newJobs), plans.flatMap((p) => p.newChanges));
    await this.insertChanges(plans.flatMap((p) => p.newChanges));
    await this.updateChanges(plans.flatMap((p) => p.changedChanges));
    await this.updateGroups(plans.flatMap((p) => p.changedGroups), now);
    await this.callOff(plans.flatMap((p) => p.calledOffGroups), now);
    // A group called off (its changes taken over by a later request) holds no one back: the
    // taker took the same individuals' later waiting changes too. Waking for those made every
    // consumer transaction run the wake under its individuals' locks.
    const calledOff = new Set(plans.flatMap((p) => p.calledOffGroups));
    await this.wakeWaiting(plans.flatMap((p) => p.changedGroups.filter((g) => g.state === 'processed' && !calledOff.has(g.id)).map((g) => g.id)), now);
    await this.insertIndividuals(
      plans.flatMap((p) => p.newIndividuals.map((individual) => ({ benefitId: p.benefitId, individual }))),
      now,
    );
    await this.updateIndividuals(
      plans.flatMap((p) => p.changedIndividuals.map((individual) => ({ benefitId: p.benefitId, individual }))),
      now,
    );
    await this.updateJobs(plans.flatMap((p) => p.progressedJobs), plans.flatMap((p) => p.endedJobs), now);
    await this.outbox.record(this.db, events.flatMap(messageOf));
    await this.bus.publish(events);
  }

  private async insertJobs(newJobs: LedgerChanges['newJobs'], changes: readonly EnrollmentChange[]): Promise<void> {
    if (newJobs.length === 0) return;
    const changesOf = groupBy(changes, (c) => c.jobId);
    const paramsOf = (job: EnrollmentJob, groups: readonly EnrollmentGroup[]) => {
      const own = changesOf.get(job.id) ?? [];
      if (job.operation === 'unenroll') {
        return { benefit_id: job.benefitId, effective_date: groups[0].effectiveDate, individual_ids: own.map((c) => c.individualId) };
      }
      return {
        benefit_id: job.benefitId,
        groups: groups.map((g) => ({
          effective_date: g.effectiveDate,
          items: own.filter((c) => c.groupId === g.id).map((c) => ({ individual_id: c.individualId, configuration: c.configuration })),
        })),
      };
    };
    await this.db.query(
      // In opening order: a job's seq (its request order) is taken as it is inserted.
      ...insertNewJobs(
        newJobs.map((j) => ({
          id: j.job.id,
          connection_id: j.job.connectionId,
          entity_id: j.job.entityId,
          kind: j.job.kind,
          type: `benefit_${j.job.operation}`,
          params: paramsOf(j.job, j.groups),
          created_at: j.createdAt,
          scheduled_at: j.createdAt,
          // Its groups move its status (updateJobs): no worker leases it.
          queued: false,
        })),
      ),
    );
    const groups = newJobs.flatMap((j) => j.groups);
    await this.db.query(
      `INSERT INTO enrollment_groups (id, job_id, benefit_id, operation, effective_date, state, job_seq, waiting, succeeded, failed, superseded, processed_at)
       SELECT u.id, u.job_id, u.benefit_id, u.operation, u.effective_date, u.state, j.seq, u.waiting, u.succeeded, u.failed, u.superseded,
              CASE WHEN u.state = 'processed' THEN j.created_at END
       FROM ${GROUPS.from(1)}
         JOIN jobs j ON j.id = u.job_id`,
      GROUPS.values(groups.map(groupRecord)),
    );
  }

  private async insertChanges(changes: readonly EnrollmentChange[]): Promise<void> {
    if (changes.length === 0) return;
    // The waiting ones are listed apart too (EnrollmentItemsUpdatedInPlace1798320000000).
    await this.db.query(
      `WITH inserted AS (
         INSERT INTO enrollment_items (group_id, individual_id, benefit_id, position, configuration, status, code, message, cancels)
         SELECT u.group_id, u.individual_id, u.benefit_id, u.position, u.configuration, u.status, u.code, u.message, u.cancels
         FROM ${NEW_ITEMS.from(1)}
         RETURNING benefit_id, individual_id, group_id, status)
       INSERT INTO waiting_enrollment_items (benefit_id, individual_id, group_id)
       SELECT benefit_id, individual_id, group_id FROM inserted WHERE status = 'waiting'`,
      NEW_ITEMS.values(
        changes.map((c) => ({
          group_id: c.groupId,
          individual_id: c.individualId,
          benefit_id: c.benefitId,
          position: c.position,
          configuration: c.configuration,
          status: c.status,
          code: c.result?.code ?? null,
          message: c.result?.message ?? null,
          cancels: c.cancels,
        })),
      ),
    );
  }

  private async updateChanges(changes: readonly EnrollmentChange[]): Promise<void> {
    if (changes.length === 0) return;
    // A change that stops waiting leaves the list of waiting ones; its row is updated in place.
    await this.db.query(
      `WITH updated AS (
         UPDATE enrollment_items i SET status = u.status, code = u.code, message = u.message
         FROM ${ITEM_RESULTS.from(1)}
         WHERE i.group_id = u.group_id AND i.individual_id = u.individual_id
         RETURNING i.benefit_id, i.individual_id, i.group_id, i.status)
       DELETE FROM waiting_enrollment_items w USING updated d
       WHERE d.status <> 'waiting' AND w.benefit_id = d.benefit_id AND w.individual_id = d.individual_id AND w.group_id = d.group_id`,
      ITEM_RESULTS.values(
        changes.map((c) => ({
          group_id: c.groupId,
          individual_id: c.individualId,
          status: c.status,
          code: c.result?.code ?? null,
          message: c.result?.message ?? null,
        })),
      ),
    );
  }

  private async updateGroups(groups: readonly EnrollmentGroup[], now: Date): Promise<void> {
    if (groups.length === 0) return;
    await this.db.query(
      `UPDATE enrollment_groups g SET state = u.state, waiting = u.waiting, succeeded = u.succeeded, failed = u.failed, superseded = u.superseded,
              processed_at = CASE WHEN u.state = 'processed' THEN coalesce(g.processed_at, $1) ELSE g.processed_at END
       FROM ${GROUPS.from(2)}
       WHERE g.id = u.id`,
      [now, ...GROUPS.values(groups.map(groupRecord))],
    );
  }

  /** Groups left with nothing to submit: their work job ends now instead of waking on the date for nothing. */
  private async callOff(groupIds: readonly string[], now: Date): Promise<void> {
    if (groupIds.length === 0) return;
    await this.db.query(
      `WITH ended AS (
         DELETE FROM job_queue q USING jobs g, unnest($1::text[]) AS k(group_id)
         WHERE g.type = '${ENROLLMENT_GROUP_JOB}' AND g.params->>'group_id' = k.group_id AND q.job_id = g.id AND q.leased_by IS NULL
         RETURNING q.job_id)
       UPDATE jobs j SET status = 'complete', completed_at = $2, result = jsonb_build_object('group_id', j.params->>'group_id', 'superseded', true)
       FROM ended e WHERE j.id = e.job_id`,
      [groupIds, now],
    );
  }

  /**
   * Groups of the same individuals whose date has come, that were put back to wait for these
   * (now processed) and are now first in line: due at once, instead of when their wait would
   * have ended; one being worked now is marked (wakeStatement).
   */
  private wakeWaiting(processedGroups: readonly string[], now: Date): Promise<void> {
    if (processedGroups.length === 0) return Promise.resolve();
    // From the groups waiting on the processed ones to each group's job by its index, a probe per
    // group (a LATERAL subquery with OFFSET 0 is kept as one): as a plain join the planner could
    // merge the jobs of every group ever made, read whole by their key, with the queue.
    return this.wake(
      `SELECT q.job_id FROM enrollment_groups g
       CROSS JOIN LATERAL (SELECT j.id FROM jobs j WHERE j.params->>'group_id' = g.id::text AND j.type = '${ENROLLMENT_GROUP_JOB}' OFFSET 0) j
       JOIN job_queue q ON q.job_id = j.id
       WHERE ${ASLEEP_OR_WORKED}
         AND g.state = 'waiting' AND g.effective_date <= $3::date
         AND g.id IN (SELECT w.group_id FROM unnest($1::uuid[]) AS k(group_id)
                      JOIN enrollment_items p ON p.group_id = k.group_id
                      JOIN waiting_enrollment_items w ON w.benefit_id = p.benefit_id AND w.individual_id = p.individual_id)
         -- Only a group now first in line for all its individuals (the ledger's orderCheck): one
         -- further back would be put back to wait again, and a long line woken whole at each step
         -- costs a lease and a claim per waiting group per step.
         AND NOT EXISTS (SELECT 1 FROM enrollment_items own
                         JOIN waiting_enrollment_items e ON e.benefit_id = own.benefit_id AND e.individual_id = own.individual_id AND e.group_id <> g.id
                         JOIN enrollment_groups eg ON eg.id = e.group_id
                         WHERE own.group_id = g.id AND own.status = 'waiting' AND eg.effective_date <= g.effective_date
                           AND (eg.job_seq < g.job_seq OR (eg.job_id = g.job_id AND eg.effective_date < g.effective_date)))`,
      processedGroups,
      now,
    );
  }

  wakeGroupsWaitingForBenefits(benefitIds: readonly string[]): Promise<void> {
    if (benefitIds.length === 0) return Promise.resolve();
    return this.wake(
      `SELECT q.job_id FROM unnest($1::uuid[]) AS k(benefit_id)
       JOIN enrollment_groups g ON g.benefit_id = k.benefit_id
       CROSS JOIN jobs j
       JOIN job_queue q ON q.job_id = j.id
       WHERE ${ASLEEP_OR_WORKED}
         AND (
           -- The group's own work job, once its date has come.
           (j.type = '${ENROLLMENT_GROUP_JOB}' AND j.params->>'group_id' = g.id::text AND g.state = 'waiting' AND g.effective_date <= $3::date)
           -- On an Assisted provider, the job applying the group's completed ops task (AssistedApplyHandler).
           OR (j.type = 'assisted_apply' AND j.params->>'task_id' IN (SELECT t.id::text FROM ops_tasks t WHERE t.group_id = g.id)))`,
      benefitIds,
      this.clock.now(),
    );
  }

  /**
   * Wakes the jobs `candidates` selects (wakeStatement) in the caller's transaction. Those whose
   * queue rows were held are woken again after the commit, by the same statement on its own,
   * a few times while some are still held; past that, a job put back wakes when its wait ends.
   */
  private async wake(candidates: string, keys: readonly string[], now: Date): Promise<void> {
    const sql = wakeStatement(candidates);
    const params = [keys, now, now.toISOString().slice(0, 10)];
    const skipped: unknown[] = await this.db.query(sql, params);
    if (skipped.length === 0) return;
    this.uow.afterCommit(() => void this.wakeAgain(sql, params));
  }

  private async wakeAgain(sql: string, params: readonly unknown[]): Promise<void> {
    try {
      for (const pause of WAKE_AGAIN_AFTER_MS) {
        await new Promise((resolve) => setTimeout(resolve, pause));
        const skipped: unknown[] = await this.dataSource.query(sql, [...params]);
        if (skipped.length === 0) return;
      }
    } catch (error) {
      this.logger.warn(`waking waiting enrollment groups again failed (they run when their wait ends): ${(error as Error).message}`);
    }
  }

  /** Rows the ledgers made: none was stored (the individuals are locked, so none can appear meanwhile). */
  private async insertIndividuals(rows: readonly { benefitId: string; individual: IndividualEnrollment }[], now: Date): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(
      `INSERT INTO enrollments (benefit_id, individual_id, entity_id, applied, occurred_at, job_id, configuration, effective_date, status, ended_on, updated_at)
       SELECT u.benefit_id, u.individual_id, u.entity_id, u.applied, u.occurred_at, u.job_id, u.configuration, u.effective_date,
              coalesce(u.status, 'pending'), u.ended_on, $${INDIVIDUALS.count + 1}
       FROM ${INDIVIDUALS.from(1)}`,
      [...INDIVIDUALS.values(rows.map(individualRecord)), now],
    );
  }

  /** Stored rows that changed: an update in place, the key and entity left as they are. */
  private async updateIndividuals(rows: readonly { benefitId: string; individual: IndividualEnrollment }[], now: Date): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(
      `UPDATE enrollments e SET applied = u.applied, occurred_at = u.occurred_at, job_id = u.job_id, configuration = u.configuration,
              effective_date = u.effective_date, status = coalesce(u.status, 'pending'), ended_on = u.ended_on, updated_at = $${INDIVIDUALS.count + 1}
       FROM ${INDIVIDUALS.from(1)}
       WHERE e.benefit_id = u.benefit_id AND e.individual_id = u.individual_id`,
      [...INDIVIDUALS.values(rows.map(individualRecord)), now],
    );
  }

  /**
   * Jobs whose individuals got results: the per-individual results of all their groups so far,
   * by date then request order; those that ended, their status too.
   */
  private async updateJobs(progressed: readonly string[], ended: LedgerChanges['endedJobs'], now: Date): Promise<void> {
    const endings = new Map(ended.map((e) => [e.job.id, e]));
    const ids = [...new Set([...progressed, ...endings.keys()])];
    if (ids.length === 0) return;
    await this.db.query(
      `WITH results AS (
         SELECT g.job_id, coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object('individual_id', i.individual_id, 'code', i.code, 'message', i.message))
                                  ORDER BY g.effective_date, i.position), '[]'::jsonb) AS individuals
         FROM unnest($1::uuid[]) AS k(job_id) JOIN enrollment_groups g ON g.job_id = k.job_id JOIN enrollment_items i ON i.group_id = g.id
         WHERE i.status <> 'waiting'
         GROUP BY g.job_id)
       UPDATE jobs j SET status = coalesce(u.status, j.status), completed_at = CASE WHEN u.status IS NULL THEN j.completed_at ELSE $4 END,
         started_at = coalesce(j.started_at, $4),
         result = CASE WHEN j.kind = 'manual' THEN jsonb_build_object(
             'benefit_id', j.params->>'benefit_id',
             'note', (SELECT t.note FROM ops_tasks t WHERE t.job_id = j.id AND t.status IN ('completed', 'failed') ORDER BY t.resolved_at DESC LIMIT 1),
             'error', CASE WHEN u.status = 'error'
                           THEN coalesce(u.reason, CASE WHEN j.type = 'benefit_unenroll' THEN 'No individual could be unenrolled' ELSE 'No individual could be enrolled' END)
                      END,
             'individuals', coalesce(r.individuals, '[]'::jsonb))
           ELSE jsonb_build_object('body', coalesce(r.individuals, '[]'::jsonb)) END
       FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(id, status, reason)
         LEFT JOIN results r ON r.job_id = u.id
       WHERE j.id = u.id`,
      [ids, ids.map((id) => endings.get(id)?.job.status ?? null), ids.map((id) => endings.get(id)?.reason ?? null), now],
    );
  }

  // ---- reads ----

  async individualOutcomes(jobIds: readonly string[]): Promise<Map<string, Map<string, ChangeStatus>>> {
    const result = new Map<string, Map<string, ChangeStatus>>();
    if (jobIds.length === 0) return result;
    const rows: { job_id: string; individual_id: string; status: ChangeStatus }[] = await this.db.query(
      `SELECT g.job_id, i.individual_id, i.status FROM enrollment_groups g JOIN enrollment_items i ON i.group_id = g.id WHERE g.job_id = ANY($1::uuid[])`,
      [jobIds],
    );
    // One change per date: the individual's best (done, then failed, then superseded), unless one still waits.
    const rank: Record<ChangeStatus, number> = { superseded: 0, failed: 1, done: 2, waiting: 3 };
    for (const row of rows) {
      const ofJob = result.get(row.job_id) ?? new Map<string, ChangeStatus>();
      const seen = ofJob.get(row.individual_id);
      if (seen === undefined || rank[row.status] > rank[seen]) ofJob.set(row.individual_id, row.status);
      result.set(row.job_id, ofJob);
    }
    return result;
  }

  async individualsOf(benefitId: string, individualIds?: readonly string[]): Promise<IndividualEnrollment[]> {
    const rows: IndividualRow[] = await this.db.query(
      `SELECT ${INDIVIDUAL_COLUMNS} FROM enrollments e LEFT JOIN jobs j ON j.id = e.job_id
       WHERE e.benefit_id = $1 AND ($2::uuid[] IS NULL OR e.individual_id = ANY($2::uuid[]))
       ORDER BY e.individual_id`,
      [benefitId, individualIds?.map((id) => id.toLowerCase()) ?? null],
    );
    return rows.map(individualOf);
  }

  async enrollmentsOfIndividuals(individuals: readonly { entityId: string; individualId: string }[]): Promise<Map<string, Map<string, IndividualEnrollment>>> {
    const result = new Map<string, Map<string, IndividualEnrollment>>(individuals.map((i) => [`${i.entityId}/${i.individualId.toLowerCase()}`, new Map()]));
    if (individuals.length === 0) return result;
    const rows: IndividualRow[] = await this.db.query(
      `SELECT ${INDIVIDUAL_COLUMNS}
       FROM (SELECT DISTINCT * FROM unnest($1::uuid[], $2::uuid[]) AS k(entity_id, individual_id)) k
         JOIN enrollments e ON e.entity_id = k.entity_id AND e.individual_id = k.individual_id
         LEFT JOIN jobs j ON j.id = e.job_id
       ORDER BY e.benefit_id`,
      [individuals.map((i) => i.entityId), individuals.map((i) => i.individualId.toLowerCase())],
    );
    for (const row of rows) result.get(`${row.entity_id}/${row.individual_id}`)?.set(row.benefit_id, individualOf(row));
    return result;
  }
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** The versioned `benefits.events` message each ledger event is published as (none for a take-over). */
function messageOf(event: EnrollmentEvent): NewBenefitEvent[] {
  const { connectionId, entityId, benefitId } = event.scope;
  const scope = { connectionId, entityId };
  if (event instanceof EnrollmentJobOpened) {
    return [
      {
        type: 'EnrollmentJobCreated',
        ...scope,
        data: {
          job_id: event.job.id,
          job_kind: event.job.kind,
          operation: event.job.operation,
          benefit_id: benefitId,
          groups: event.groups.map((g) => ({ effective_date: g.effectiveDate, individuals: g.items.length })),
        },
      },
    ];
  }
  if (event instanceof EnrollmentGroupProcessed) {
    return [
      {
        type: 'EnrollmentGroupProcessed',
        ...scope,
        data: {
          job_id: event.jobId,
          benefit_id: benefitId,
          operation: event.operation,
          effective_date: event.effectiveDate,
          succeeded: event.succeeded,
          failed: event.results.length - event.succeeded,
          results: event.results,
        },
      },
    ];
  }
  if (event instanceof EnrollmentJobEnded) {
    const { succeeded, failed, superseded } = event.counts;
    return [
      {
        type: event.status === 'complete' ? 'EnrollmentJobCompleted' : 'EnrollmentJobFailed',
        ...scope,
        data: { job_id: event.job.id, benefit_id: benefitId, operation: event.job.operation, status: event.status, succeeded, failed: failed + superseded },
      },
    ];
  }
  if (event instanceof EnrollmentChangesSuperseded) return [];
  return [];
}
