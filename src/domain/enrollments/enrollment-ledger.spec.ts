import { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import { inForceOn } from './applied-timeline';
import { EnrollmentChange, EnrollmentGroup, EnrollmentJob, NO_CHANGES } from './enrollment-change';
import { EnrollmentChangesSuperseded, EnrollmentGroupProcessed, EnrollmentJobEnded, EnrollmentJobOpened } from './enrollment-events';
import { EnrollmentLedger, EnrollmentRequest, IndividualEnrollment, LedgerSlice } from './enrollment-ledger';

const pct = (amount: number): EnrollmentConfigurationParams => ({
  employee_deduction: { type: 'percent', amount },
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
});
const NOW = new Date('2026-07-02T15:00:00Z');
const TODAY = '2026-07-02';
const BENEFIT = { id: 'benefit-1', connectionId: 'connection-1', entityId: 'entity-1' };

/** Fresh ids in order, so tests can name what a request creates. */
function ids(prefix = 'id'): () => string {
  let n = 0;
  return () => `${prefix}-${++n}`;
}

const emptySlice = (): LedgerSlice => ({ benefit: BENEFIT, individuals: [], changes: [], groups: [], jobs: [] });

const enroll = (items: [string, string, number][], more: Partial<EnrollmentRequest> = {}): EnrollmentRequest => ({
  jobKind: 'automated',
  operation: 'enroll',
  items: items.map(([individualId, effectiveDate, amount]) => ({ individualId, effectiveDate, configuration: pct(amount) })),
  occurredAt: null,
  ...more,
});
const unenroll = (individualIds: string[], effectiveDate: string, more: Partial<EnrollmentRequest> = {}): EnrollmentRequest => ({
  jobKind: 'automated',
  operation: 'unenroll',
  items: individualIds.map((individualId) => ({ individualId, effectiveDate, configuration: null })),
  occurredAt: null,
  ...more,
});
const ok = (id: string) => ({ individual_id: id, code: 200 });

/**
 * A ledger saved and restored between steps, as the repository does: only the slice a command
 * loads (the named individuals' rows and waiting changes, their groups and jobs) survives.
 */
class Store {
  rows = new Map<string, IndividualEnrollment>();
  changes: EnrollmentChange[] = [];
  groups = new Map<string, EnrollmentGroup>();
  jobs = new Map<string, EnrollmentJob>();
  private readonly newId = ids('x');

  slice(individualIds: string[]): LedgerSlice {
    const changes = this.changes.filter((c) => c.status === 'waiting' && individualIds.includes(c.individualId));
    const groupIds = new Set(changes.map((c) => c.groupId));
    const jobIds = new Set([...groupIds].map((g) => this.groups.get(g)!.jobId));
    return {
      benefit: BENEFIT,
      individuals: individualIds.flatMap((id) => (this.rows.has(id) ? [structuredClone(this.rows.get(id)!)] : [])),
      changes: structuredClone(changes),
      groups: [...groupIds].map((g) => structuredClone(this.groups.get(g)!)),
      jobs: [...jobIds].map((j) => structuredClone(this.jobs.get(j)!)),
    };
  }

  sliceOfGroup(groupId: string): LedgerSlice {
    const individuals = this.changes.filter((c) => c.groupId === groupId && c.status === 'waiting').map((c) => c.individualId);
    return this.slice(individuals);
  }

  open(individualIds: string[]): EnrollmentLedger {
    return EnrollmentLedger.restore(this.slice(individualIds), this.newId);
  }

  openGroup(groupId: string): EnrollmentLedger {
    return EnrollmentLedger.restore(this.sliceOfGroup(groupId), this.newId);
  }

  save(ledger: EnrollmentLedger): void {
    const plan = ledger.pendingChanges();
    for (const { job, groups } of plan.newJobs) {
      this.jobs.set(job.id, structuredClone(job));
      for (const g of groups) this.groups.set(g.id, structuredClone(g));
    }
    this.changes.push(...structuredClone(plan.newChanges));
    for (const changed of plan.changedChanges) {
      const i = this.changes.findIndex((c) => c.groupId === changed.groupId && c.individualId === changed.individualId);
      this.changes[i] = structuredClone(changed);
    }
    for (const g of plan.changedGroups) this.groups.set(g.id, structuredClone(g));
    // Job counts are sums over groups; statuses come from the ledger.
    for (const job of this.jobs.values()) {
      const counts = { ...NO_CHANGES };
      for (const g of this.groups.values()) if (g.jobId === job.id) for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += g.counts[k];
      job.counts = counts;
    }
    for (const { job } of plan.endedJobs) this.jobs.get(job.id)!.status = job.status;
    for (const row of plan.newIndividuals) {
      if (this.rows.has(row.individualId)) throw new Error(`row ${row.individualId} is stored already`);
      this.rows.set(row.individualId, structuredClone(row));
    }
    for (const row of plan.changedIndividuals) {
      if (!this.rows.has(row.individualId)) throw new Error(`row ${row.individualId} is not stored`);
      this.rows.set(row.individualId, structuredClone(row));
    }
  }

  groupsOf(jobId: string): EnrollmentGroup[] {
    return [...this.groups.values()].filter((g) => g.jobId === jobId).sort((a, b) => a.effectiveDate.localeCompare(b.effectiveDate));
  }

  resultsOf(jobId: string) {
    const groups = this.groupsOf(jobId);
    return this.changes
      .filter((c) => c.jobId === jobId && c.result !== null)
      .sort((a, b) => groups.findIndex((g) => g.id === a.groupId) - groups.findIndex((g) => g.id === b.groupId) || a.position - b.position)
      .map((c) => c.result);
  }

  request(request: EnrollmentRequest, at = NOW) {
    const ledger = this.open([...new Set(request.items.map((i) => i.individualId))]);
    const outcome = ledger.request(request, at);
    const events = ledger.pullEvents();
    this.save(ledger);
    return { ...outcome, events };
  }

  process(groupId: string, results: { individual_id: string; code: number; message?: string }[], at = NOW, reason: string | null = null) {
    const ledger = this.openGroup(groupId);
    const done = ledger.processed(groupId, results, at, reason);
    const events = ledger.pullEvents();
    this.save(ledger);
    return { done, events };
  }
}

describe('EnrollmentLedger', () => {
  describe('opening a request', () => {
    it('splits it into one group per effective date, oldest first, and emits EnrollmentJobOpened', () => {
      const ledger = EnrollmentLedger.restore(emptySlice(), ids());
      const { job, groups, stale } = ledger.request(
        enroll([
          ['c', '2026-08-01', 300],
          ['a', TODAY, 100],
          ['b', TODAY, 200],
        ]),
        NOW,
      );
      expect(stale).toEqual([]);
      expect(job).toMatchObject({ status: 'pending', kind: 'automated', operation: 'enroll', counts: { waiting: 3 } });
      expect(groups.map((g) => [g.effectiveDate, g.counts.waiting])).toEqual([
        [TODAY, 2],
        ['2026-08-01', 1],
      ]);
      expect(ledger.waitingOf(groups[0].id).map((c) => c.individualId)).toEqual(['a', 'b']);
      const [opened] = ledger.pullEvents();
      expect(opened).toBeInstanceOf(EnrollmentJobOpened);
      expect((opened as EnrollmentJobOpened).groups.map((g) => g.items.map((i) => i.individualId))).toEqual([['a', 'b'], ['c']]);
      expect(ledger.individual('a')?.latest).toMatchObject({ jobId: job!.id, status: 'pending', configuration: pct(100) });
    });

    it('lets one request name an individual on different dates (today, and a raise next year), but not twice on one date', () => {
      const ledger = EnrollmentLedger.restore(emptySlice(), ids());
      const { groups } = ledger.request(
        enroll([
          ['a', TODAY, 300],
          ['a', '2027-01-01', 400],
        ]),
        NOW,
      );
      expect(groups.map((g) => g.effectiveDate)).toEqual([TODAY, '2027-01-01']);
      // The latest-dated configuration is the one the row names; the earlier one still applies first.
      expect(ledger.individual('a')?.latest?.configuration).toEqual(pct(400));
      expect(() => ledger.request(enroll([['b', TODAY, 1], ['b', TODAY, 2]]), NOW)).toThrow(/named twice/);
    });

    it('leaves an individual alone whose enrollment reflects a later change (stale), and opens nothing when all are', () => {
      const store = new Store();
      store.request(enroll([['a', TODAY, 300]], { occurredAt: new Date('2026-07-02T10:00:00Z') }));
      const older = store.request(enroll([['a', TODAY, 100], ['b', TODAY, 100]], { occurredAt: new Date('2026-07-02T09:00:00Z') }));
      expect(older.stale).toEqual(['a']);
      expect(older.job?.counts.waiting).toBe(1);
      const allStale = store.request(enroll([['a', TODAY, 100]], { occurredAt: new Date('2026-07-01T00:00:00Z') }));
      expect(allStale).toMatchObject({ job: null, stale: ['a'], events: [] });
      // REST requests (no occurred_at) are never stale.
      expect(store.request(enroll([['a', TODAY, 100]])).job).not.toBeNull();
    });
    it('judges each item by its own occurred_at and names each item’s saga with its individuals (a request HRIS events share)', () => {
      const store = new Store();
      store.request(enroll([['a', TODAY, 300]], { occurredAt: new Date('2026-07-02T10:00:00Z') }));
      const request = enroll([
        ['a', TODAY, 100],
        ['b', TODAY, 200],
        ['c', TODAY, 250],
      ]);
      const shared: EnrollmentRequest = {
        ...request,
        items: [
          { ...request.items[0], occurredAt: new Date('2026-07-02T09:00:00Z'), sagaId: 'saga-a' },
          { ...request.items[1], occurredAt: new Date('2026-07-02T11:00:00Z'), sagaId: 'saga-b' },
          { ...request.items[2], occurredAt: new Date('2026-07-02T11:30:00Z'), sagaId: 'saga-b' },
        ],
      };
      const ledger = EnrollmentLedger.restore(store.slice(['a', 'b', 'c']), ids());
      const outcome = ledger.request(shared, NOW);
      // Only a's change is older than what a's enrollment reflects.
      expect(outcome.stale).toEqual(['a']);
      expect(outcome.job?.counts.waiting).toBe(2);
      const [opened] = ledger.pullEvents();
      expect((opened as EnrollmentJobOpened).sagas).toEqual([{ sagaId: 'saga-b', individualIds: ['b', 'c'] }]);
      // Each row reflects its own item's time.
      expect(ledger.individual('b')?.occurredAt).toEqual(new Date('2026-07-02T11:00:00Z'));
      expect(ledger.individual('c')?.occurredAt).toEqual(new Date('2026-07-02T11:30:00Z'));
      // A request's own saga stands for items without one.
      const ofRequest = EnrollmentLedger.restore(emptySlice(), ids());
      ofRequest.request(enroll([['d', TODAY, 1]], { sagaId: 'saga-d' }), NOW);
      expect((ofRequest.pullEvents()[0] as EnrollmentJobOpened).sagas).toEqual([{ sagaId: 'saga-d', individualIds: ['d'] }]);
    });
  });

  describe('a later request takes individuals over', () => {
    it('from its date: waiting enroll groups dated then or later lose them (409, by which job); earlier ones still apply', () => {
      const store = new Store();
      const early = store.request(enroll([['a', '2026-07-10', 150]]));
      const first = store.request(enroll([['a', '2026-08-01', 100], ['b', '2026-08-01', 100]]));
      const second = store.request(enroll([['a', '2026-07-20', 200]]));
      expect(second.events.map((e) => e.constructor.name)).toEqual(['EnrollmentJobOpened', 'EnrollmentChangesSuperseded']);
      const superseded = second.events[1] as EnrollmentChangesSuperseded;
      expect(superseded).toMatchObject({ jobId: first.job!.id, byJobId: second.job!.id, individualIds: ['a'], remaining: 1 });
      // The July 10 request is dated before July 20: it still applies, then the later one.
      expect(store.jobs.get(early.job!.id)!.counts.waiting).toBe(1);
      expect(store.resultsOf(first.job!.id)).toEqual([
        { individual_id: 'a', code: 409, message: `Superseded by job ${second.job!.id}, a later request for this individual effective 2026-07-20` },
      ]);
    });

    it('a job whose every individual was taken over completes (not error), and its emptied group is called off', () => {
      const store = new Store();
      const first = store.request(enroll([['a', '2026-08-01', 100]]));
      const ledger = store.open(['a']);
      const second = ledger.request(enroll([['a', TODAY, 200]]), NOW);
      const plan = ledger.pendingChanges();
      expect(plan.calledOffGroups).toEqual([first.groups[0].id]);
      expect(plan.endedJobs.map((e) => [e.job.id, e.job.status])).toEqual([[first.job!.id, 'complete']]);
      const events = ledger.pullEvents();
      const ended = events.find((e) => e instanceof EnrollmentJobEnded) as EnrollmentJobEnded;
      expect(ended).toMatchObject({ status: 'complete', counts: { succeeded: 0, failed: 0, superseded: 1 } });
      expect(ended.superseded).toBe(true);
      expect(second.job).not.toBeNull();
    });

    it('an unenroll cancels a waiting future enrollment, and completes though the provider had nothing to end', () => {
      const store = new Store();
      const future = store.request(enroll([['a', '2026-09-01', 300]]));
      const end = store.request(unenroll(['a'], TODAY));
      expect(store.jobs.get(future.job!.id)!.status).toBe('complete');
      const { events } = store.process(end.groups[0].id, [{ individual_id: 'a', code: 404, message: 'Individual a has no enrollment in this benefit' }]);
      const processed = events.find((e) => e instanceof EnrollmentGroupProcessed) as EnrollmentGroupProcessed;
      expect(processed.results).toEqual([
        { individual_id: 'a', code: 200, message: `Nothing was enrolled at the provider yet; the waiting enrollment of job ${future.job!.id} was cancelled` },
      ]);
      expect(store.jobs.get(end.job!.id)!.status).toBe('complete');
    });

    it('never takes over a waiting unenroll, nor a group whose provider call is under way', () => {
      const store = new Store();
      const termination = store.request(unenroll(['a'], '2026-09-01'));
      const inFlight = store.request(enroll([['b', '2026-08-01', 100]]));
      const ledger = store.openGroup(inFlight.groups[0].id);
      ledger.submitting(inFlight.groups[0].id);
      store.save(ledger);

      const later = store.request(enroll([['a', TODAY, 200], ['b', TODAY, 200]]));
      expect(later.events.filter((e) => e instanceof EnrollmentChangesSuperseded)).toEqual([]);
      expect(store.jobs.get(termination.job!.id)!.counts.waiting).toBe(1);
      expect(store.jobs.get(inFlight.job!.id)!.counts.waiting).toBe(1);
    });

    it('takes over a group an Assisted provider’s staff hold as an open task, but not one ops completed', () => {
      const store = new Store();
      const open = store.request(enroll([['a', TODAY, 100]], { jobKind: 'manual' }));
      let ledger = store.openGroup(open.groups[0].id);
      ledger.handedToOps(open.groups[0].id, NOW);
      store.save(ledger);
      const completed = store.request(enroll([['b', TODAY, 100]], { jobKind: 'manual' }));
      ledger = store.openGroup(completed.groups[0].id);
      ledger.submitting(completed.groups[0].id);
      store.save(ledger);

      const later = store.request(enroll([['a', TODAY, 200], ['b', TODAY, 200]], { jobKind: 'manual' }));
      const superseded = later.events.filter((e) => e instanceof EnrollmentChangesSuperseded) as EnrollmentChangesSuperseded[];
      expect(superseded.map((e) => [e.groupId, e.individualIds, e.remaining])).toEqual([[open.groups[0].id, ['a'], 0]]);
    });
  });

  describe('request order', () => {
    it('a group waits for an earlier request’s change of the same individual dated no later', () => {
      const store = new Store();
      const older = store.request(enroll([['a', TODAY, 100]]));
      const newer = store.request(enroll([['a', '2026-07-03', 200], ['b', '2026-07-03', 200]]));
      // The newer request is dated later, so it did not take the older one over.
      expect(store.jobs.get(older.job!.id)!.counts.waiting).toBe(1);
      const check = store.openGroup(newer.groups[0].id).orderCheck(newer.groups[0].id);
      expect(check).toEqual({ ready: false, waitsFor: { groupId: older.groups[0].id, jobId: older.job!.id } });
      expect(store.openGroup(older.groups[0].id).orderCheck(older.groups[0].id)).toEqual({ ready: true });
      store.process(older.groups[0].id, [ok('a')]);
      expect(store.openGroup(newer.groups[0].id).orderCheck(newer.groups[0].id)).toEqual({ ready: true });
    });

    it('a later-dated group of one request waits for its earlier-dated group naming the same individual', () => {
      const store = new Store();
      const { groups } = store.request(enroll([['a', TODAY, 100], ['a', '2027-01-01', 200]]));
      expect(store.openGroup(groups[1].id).orderCheck(groups[1].id)).toMatchObject({ ready: false, waitsFor: { groupId: groups[0].id } });
    });

    it('is checked, and a group claimed, without the individuals’ rows; results and requests need them', () => {
      const store = new Store();
      const older = store.request(enroll([['a', TODAY, 100]]));
      const newer = store.request(enroll([['a', '2026-07-03', 200]]));
      const withoutRows = () => EnrollmentLedger.restore({ ...store.sliceOfGroup(newer.groups[0].id), individuals: null });
      const ledger = withoutRows();
      expect(ledger.orderCheck(newer.groups[0].id)).toMatchObject({ ready: false, waitsFor: { groupId: older.groups[0].id } });
      ledger.submitting(newer.groups[0].id);
      expect(ledger.pendingChanges().changedGroups.map((g) => [g.id, g.state])).toEqual([[newer.groups[0].id, 'submitting']]);
      expect(ledger.pendingChanges()).toMatchObject({ newIndividuals: [], changedIndividuals: [] });
      // Recording a result or opening a request without the rows would overwrite them with guesses.
      expect(() => withoutRows().processed(newer.groups[0].id, [ok('a')], NOW)).toThrow(/rows of benefit benefit-1 were not read/);
      expect(() => withoutRows().request(enroll([['a', TODAY, 300]], { occurredAt: NOW }), NOW)).toThrow(/were not read/);
    });
  });

  describe('a group processed', () => {
    it('records results, applies successes to what the provider holds, and settles the job when its latest group is done', () => {
      const store = new Store();
      const { job, groups } = store.request(enroll([['a', TODAY, 300], ['b', TODAY, 300], ['c', '2026-08-01', 300]]));
      const first = store.process(groups[0].id, [ok('a'), { individual_id: 'b', code: 404, message: 'no such individual' }]);
      expect(first.events.map((e) => e.constructor.name)).toEqual(['EnrollmentGroupProcessed']);
      expect(store.jobs.get(job!.id)!.status).toBe('pending');
      expect(store.rows.get('a')!.latest?.status).toBe('enrolled');
      expect(store.rows.get('b')!.latest?.status).toBe('error');
      expect(inForceOn(store.rows.get('a')!.applied, TODAY)).toEqual(pct(300));
      expect(store.rows.get('b')!.applied).toEqual([]);

      const last = store.process(groups[1].id, [ok('c')], new Date('2026-08-01T00:00:01Z'));
      expect(last.events.map((e) => e.constructor.name)).toEqual(['EnrollmentGroupProcessed', 'EnrollmentJobEnded']);
      expect(last.events[1]).toMatchObject({ status: 'complete', counts: { succeeded: 2, failed: 1, superseded: 0 } });
      expect(store.resultsOf(job!.id)).toEqual([ok('a'), { individual_id: 'b', code: 404, message: 'no such individual' }, ok('c')]);
    });

    it('answers 502 for an individual the provider said nothing of, and errs the job when no one succeeded', () => {
      const store = new Store();
      const { job, groups } = store.request(enroll([['a', TODAY, 300]]));
      const { events } = store.process(groups[0].id, []);
      expect((events[0] as EnrollmentGroupProcessed).results).toEqual([{ individual_id: 'a', code: 502, message: 'The provider gave no answer for this individual' }]);
      expect(store.jobs.get(job!.id)!.status).toBe('error');
    });

    it('is recorded once: a repeated run after a crash changes nothing', () => {
      const store = new Store();
      const { groups } = store.request(enroll([['a', TODAY, 300]]));
      expect(store.process(groups[0].id, [ok('a')]).done).toBe(true);
      const ledger = EnrollmentLedger.restore(
        { ...store.slice(['a']), groups: [structuredClone(store.groups.get(groups[0].id)!)] },
        ids(),
      );
      expect(ledger.processed(groups[0].id, [ok('a')], NOW)).toBe(false);
      expect(ledger.pullEvents()).toEqual([]);
    });

    it('carries the reason ops gave when they failed the work', () => {
      const store = new Store();
      const { groups } = store.request(enroll([['a', TODAY, 300]], { jobKind: 'manual' }));
      const { events } = store.process(groups[0].id, [{ individual_id: 'a', code: 422, message: 'Plan closed' }], NOW, 'Plan closed');
      expect(events[1]).toMatchObject({ status: 'error', reason: 'Plan closed', job: { kind: 'manual' } });
    });
  });

  describe('what a read and a termination see', () => {
    it('a re-enroll waiting for its date (or failing) does not hide the configuration in force', () => {
      const store = new Store();
      const first = store.request(enroll([['a', TODAY, 300]]));
      store.process(first.groups[0].id, [ok('a')]);
      const raise = store.request(enroll([['a', '2027-01-01', 500]]));
      expect(inForceOn(store.rows.get('a')!.applied, TODAY)).toEqual(pct(300));
      store.process(raise.groups[0].id, [{ individual_id: 'a', code: 422, message: 'refused' }], new Date('2027-01-01T00:00:00Z'));
      expect(store.rows.get('a')!.latest?.status).toBe('error');
      // The provider still holds the first configuration: a read shows it and a termination must end it.
      expect(inForceOn(store.rows.get('a')!.applied, '2027-01-02')).toEqual(pct(300));
    });

    it('an unenroll ends what applied from its date, and the row says when', () => {
      const store = new Store();
      const first = store.request(enroll([['a', TODAY, 300]]));
      store.process(first.groups[0].id, [ok('a')]);
      const end = store.request(unenroll(['a'], '2026-08-15'));
      store.process(end.groups[0].id, [ok('a')], new Date('2026-08-15T00:00:00Z'));
      expect(store.rows.get('a')!.latest).toMatchObject({ status: 'unenrolled', endedOn: '2026-08-15', configuration: pct(300) });
      expect(inForceOn(store.rows.get('a')!.applied, '2026-08-15')).toBeNull();
      // What applied before the end stays (pay statements of those dates are reconciled against it).
      expect(store.rows.get('a')!.applied).toEqual([
        { from: '2026-07-02', configuration: pct(300), jobId: expect.any(String) },
        { from: '2026-08-15', configuration: null, jobId: expect.any(String) },
      ]);
    });
  });
});
