import { SagaState, SagaStep, SagaType, stateAfterJobs, statusOfIndividuals, SUPERSEDED } from '../../domain/sagas/saga';
import { ChangeStatus } from '../../domain/enrollments/enrollment-change';
import { newId } from '../../domain/shared/new-id';
import type { SagaRow } from './saga-state.repository';

export interface NewSaga {
  /** Chosen by the caller when steps of the same batch must name it; minted otherwise. */
  id?: string;
  type: SagaType;
  connectionId: string;
  entityId: string | null;
  sourceEventId?: string | null;
  state?: SagaState;
  outcome?: string | null;
  steps: SagaStep[];
  at: Date;
}

const FINAL_JOB_STATUSES = new Set(['complete', 'error', 'reauth_error', 'permissions_error', SUPERSEDED]);

/** A step of the sagas waiting on a job: as it is, or made for each saga from its own individuals (null: the whole job). */
export type StepOfJob = SagaStep | ((own: ReadonlySet<string> | null) => SagaStep | undefined);

/**
 * How sagas move in one transaction, in the order things happened: sagas started, steps of a
 * saga or of every saga waiting on a job, jobs a saga now waits on, jobs that ended, and sagas
 * ended outright.
 */
export class SagaProgress {
  readonly started: (NewSaga & { id: string })[] = [];
  readonly intents: ({ sagaId: string; step: SagaStep } | { jobId: string; step: StepOfJob })[] = [];
  /**
   * `status`: the job's, when the caller knows it (a job opened now is pending); else it is read.
   * `individualIds`: the saga's own in a job other sagas share.
   */
  readonly waits: { sagaId: string; jobId: string; status?: string; individualIds?: readonly string[] }[] = [];
  readonly ended: { jobId: string; statusFor: (own: ReadonlySet<string> | null) => string }[] = [];
  readonly retried: string[] = [];
  readonly ends: { sagaId: string; state: SagaState; outcome: string }[] = [];
  /** The latest moment anything moved: the sagas' `updated_at`. */
  latest: Date | undefined;

  start(saga: NewSaga): string {
    const id = saga.id ?? newId();
    this.started.push({ ...saga, id });
    this.seen(saga.at);
    return id;
  }

  step(sagaId: string, step: SagaStep): void {
    this.intents.push({ sagaId, step });
  }

  /**
   * A step of every saga waiting on the job. A function gets each saga's own individuals in it
   * (null: the whole job) and answers its step, or nothing when the step is none of its business.
   */
  stepOfJob(jobId: string, step: StepOfJob): void {
    this.intents.push({ jobId, step });
  }

  waitFor(sagaId: string, jobId: string, status?: string, individualIds?: readonly string[]): void {
    this.waits.push({ sagaId, jobId, ...(status === undefined ? {} : { status }), ...(individualIds === undefined ? {} : { individualIds }) });
  }

  /**
   * The job ended (a final status, or `superseded`): its sagas record it, and end once nothing
   * they wait on runs. `outcomes`, each individual's in the job, gives a saga that waits on its
   * own individuals their status instead of the job's (superseded when they all were, an error
   * when they all failed or were superseded).
   */
  jobEnded(jobId: string, status: string, at: Date, outcomes?: ReadonlyMap<string, ChangeStatus>): void {
    if (!FINAL_JOB_STATUSES.has(status)) return;
    const statusFor = (own: ReadonlySet<string> | null) => (own && outcomes ? (statusOfIndividuals(own, outcomes) ?? status) : status);
    this.ended.push({ jobId, statusFor });
    this.stepOfJob(jobId, (own) => ({ at: at.toISOString(), name: `job_${statusFor(own)}`, detail: { job_id: jobId } }));
    this.seen(at);
  }

  /** The job runs again (an ops retry): the sagas that failed on it record it and wait for it again. */
  jobRetried(jobId: string, at: Date): void {
    this.retried.push(jobId);
    this.stepOfJob(jobId, { at: at.toISOString(), name: 'job_retried', detail: { job_id: jobId } });
    this.seen(at);
  }

  /** The saga ends in this state and outcome with a last step, whatever its jobs say. */
  end(sagaId: string, step: SagaStep, state: SagaState, outcome: string, at: Date): void {
    this.step(sagaId, step);
    this.ends.push({ sagaId, state, outcome });
    this.seen(at);
  }

  seen(at: Date): void {
    if (this.latest === undefined || at > this.latest) this.latest = at;
  }

  get empty(): boolean {
    return this.started.length + this.intents.length + this.waits.length + this.ended.length + this.retried.length + this.ends.length === 0;
  }
}

/*
 * Writing a progress is three reads (the stored sagas it moves, locked; their jobs; the status of
 * jobs a wait did not give), then the plan below, then a statement per table. The plan is plain
 * synchronous functions, apart from the reads and writes: V8 optimizes and, when a new shape
 * turns up, recompiles each of them alone instead of one long async function.
 */

/** The stored sagas a progress moves, to lock: those it names (not the new ones), and those waiting on the jobs it moves. */
export function sagasToLock(progress: SagaProgress): { named: string[]; jobIds: string[] } {
  const jobIds = new Set<string>();
  const named = new Set<string>();
  for (const intent of progress.intents) {
    if ('jobId' in intent) jobIds.add(intent.jobId);
    else named.add(intent.sagaId);
  }
  for (const e of progress.ended) jobIds.add(e.jobId);
  for (const jobId of progress.retried) jobIds.add(jobId);
  for (const w of progress.waits) named.add(w.sagaId);
  for (const e of progress.ends) named.add(e.sagaId);
  for (const s of progress.started) named.delete(s.id);
  return { named: [...named], jobIds: [...jobIds] };
}

/** The jobs whose status a wait did not give, to read. */
export function jobsToRead(progress: SagaProgress): string[] {
  const unknown = new Set<string>();
  for (const w of progress.waits) if (w.status === undefined) unknown.add(w.jobId);
  return [...unknown];
}

/** A stored saga, locked. */
export interface LockedSaga {
  id: string;
  state: SagaState;
  outcome: string | null;
}

/** A stored saga's wait on a job (`saga_jobs`). */
export interface SagaJobRow {
  saga_id: string;
  job_id: string;
  status: string | null;
  individual_ids: string[] | null;
}

/** What a progress writes: sagas inserted, waits inserted, stored waits' statuses, and stored sagas updated. */
export interface SagaWrites {
  /** `sagas` rows as inserted: `at` is their `created_at`. */
  started: (Pick<SagaRow, 'id' | 'type' | 'state' | 'outcome' | 'connection_id' | 'entity_id' | 'source_event_id'> & { steps: SagaStep[]; at: Date })[];
  waits: { sagaId: string; jobId: string; status: string | null; individualIds: readonly string[] | null }[];
  waitStatuses: { sagaId: string; jobId: string; status: string | null }[];
  updated: { id: string; steps: SagaStep[]; state: SagaState; outcome: string | null }[];
}

/** Each saga's jobs and how they stand: as stored, then as this progress leaves them. */
class JobStandings {
  private readonly jobsOf = new Map<string, Map<string, string | null>>();
  private readonly sagasOfJob = new Map<string, Set<string>>();
  /** A saga's own individuals in a job it shares with others, by `saga/job`. */
  private readonly ownIn = new Map<string, ReadonlySet<string>>();

  add(sagaId: string, jobId: string, status: string | null, individualIds: readonly string[] | null | undefined): void {
    let jobs = this.jobsOf.get(sagaId);
    if (!jobs) this.jobsOf.set(sagaId, (jobs = new Map()));
    jobs.set(jobId, status);
    let sagas = this.sagasOfJob.get(jobId);
    if (!sagas) this.sagasOfJob.set(jobId, (sagas = new Set()));
    sagas.add(sagaId);
    if (individualIds) this.ownIn.set(`${sagaId}/${jobId}`, new Set(individualIds));
  }

  has(sagaId: string, jobId: string): boolean {
    return this.jobsOf.get(sagaId)?.has(jobId) ?? false;
  }

  own(sagaId: string, jobId: string): ReadonlySet<string> | null {
    return this.ownIn.get(`${sagaId}/${jobId}`) ?? null;
  }

  sagasOf(jobId: string): Iterable<string> {
    return this.sagasOfJob.get(jobId) ?? [];
  }

  set(sagaId: string, jobId: string, status: string | null): void {
    this.jobsOf.get(sagaId)!.set(jobId, status);
  }

  status(sagaId: string, jobId: string): string | null {
    return this.jobsOf.get(sagaId)?.get(jobId) ?? null;
  }

  statuses(sagaId: string): (string | null)[] {
    return [...(this.jobsOf.get(sagaId)?.values() ?? [])];
  }
}

/**
 * The writes of a progress, from the stored sagas it moves (`locked`), their waits (`stored`) and
 * the statuses read of jobs a wait did not give (`read`).
 */
export function sagaWrites(progress: SagaProgress, locked: readonly LockedSaga[], stored: readonly SagaJobRow[], read: ReadonlyMap<string, string>): SagaWrites {
  const standings = new JobStandings();
  for (const p of stored) standings.add(p.saga_id, p.job_id, p.status, p.individual_ids);
  const waited = progress.waits.filter((w) => w.status !== undefined || read.has(w.jobId));
  for (const w of waited) if (!standings.has(w.sagaId, w.jobId)) standings.add(w.sagaId, w.jobId, w.status ?? read.get(w.jobId)!, w.individualIds);
  const changedJobs = new Set<string>();
  for (const jobId of progress.retried) {
    changedJobs.add(jobId);
    for (const sagaId of standings.sagasOf(jobId)) standings.set(sagaId, jobId, null);
  }
  for (const { jobId, statusFor } of progress.ended) {
    changedJobs.add(jobId);
    for (const sagaId of standings.sagasOf(jobId)) standings.set(sagaId, jobId, statusFor(standings.own(sagaId, jobId)));
  }
  const stepsOf = newSteps(progress, standings);
  const after = new SagaSettling(progress, standings);

  const started = progress.started.map((saga) => {
    const { state, outcome } = after.of(saga.id, saga.state ?? 'started', saga.outcome ?? null);
    return {
      id: saga.id,
      type: saga.type,
      state,
      outcome,
      connection_id: saga.connectionId,
      entity_id: saga.entityId,
      source_event_id: saga.sourceEventId ?? null,
      steps: [...saga.steps, ...(stepsOf.get(saga.id) ?? [])],
      at: saga.at,
    };
  });
  const updated: SagaWrites['updated'] = [];
  for (const row of locked) {
    const steps = stepsOf.get(row.id) ?? [];
    const { state, outcome } = after.of(row.id, row.state, row.outcome);
    if (steps.length > 0 || state !== row.state || outcome !== row.outcome) updated.push({ id: row.id, steps, state, outcome });
  }
  return {
    started,
    waits: waited.map((w) => ({ sagaId: w.sagaId, jobId: w.jobId, status: standings.status(w.sagaId, w.jobId), individualIds: w.individualIds ?? null })),
    // Each stored saga's status on the jobs that moved (a shared job's may differ from saga to saga).
    waitStatuses: stored.filter((p) => changedJobs.has(p.job_id)).map((p) => ({ sagaId: p.saga_id, jobId: p.job_id, status: standings.status(p.saga_id, p.job_id) })),
    updated,
  };
}

/** The steps each saga gains, in the order they happened. */
function newSteps(progress: SagaProgress, standings: JobStandings): Map<string, SagaStep[]> {
  const stepsOf = new Map<string, SagaStep[]>();
  const add = (sagaId: string, step: SagaStep | undefined) => {
    if (!step) return;
    const steps = stepsOf.get(sagaId);
    if (steps) steps.push(step);
    else stepsOf.set(sagaId, [step]);
  };
  for (const intent of progress.intents) {
    if ('sagaId' in intent) add(intent.sagaId, intent.step);
    else for (const sagaId of standings.sagasOf(intent.jobId)) add(sagaId, typeof intent.step === 'function' ? intent.step(standings.own(sagaId, intent.jobId)) : intent.step);
  }
  return stepsOf;
}

/** Where each saga ends up: reopened by a retry, settled by its jobs, or ended outright. */
class SagaSettling {
  private readonly settling = new Set<string>();
  private readonly reopened = new Set<string>();
  private readonly ends: Map<string, { state: SagaState; outcome: string }>;

  constructor(
    progress: SagaProgress,
    private readonly standings: JobStandings,
  ) {
    for (const w of progress.waits) this.settling.add(w.sagaId);
    for (const e of progress.ended) for (const sagaId of standings.sagasOf(e.jobId)) this.settling.add(sagaId);
    for (const jobId of progress.retried) for (const sagaId of standings.sagasOf(jobId)) this.reopened.add(sagaId);
    this.ends = new Map(progress.ends.map((e) => [e.sagaId, e]));
  }

  of(id: string, stateBefore: SagaState, outcomeBefore: string | null): { state: SagaState; outcome: string | null } {
    const end = this.ends.get(id);
    if (end) return { state: end.state, outcome: end.outcome };
    let state = stateBefore;
    let outcome = outcomeBefore;
    if (this.reopened.has(id) && state === 'failed') [state, outcome] = ['waiting', null];
    if (this.settling.has(id) && (state === 'started' || state === 'waiting')) {
      const statuses = this.standings.statuses(id);
      if (statuses.length > 0) {
        const settled = stateAfterJobs(statuses.map((s) => (s !== null && FINAL_JOB_STATUSES.has(s) ? s : 'pending')));
        if (settled === 'waiting') state = 'waiting';
        else [state, outcome] = [settled, outcome ?? (settled === 'completed' ? 'jobs_complete' : 'job_failed')];
      }
    }
    return { state, outcome };
  }
}
