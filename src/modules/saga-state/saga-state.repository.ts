import { Global, Injectable, Module } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Saga, SagaState, SagaStep, SagaType, stateAfterJobs, statusOfIndividuals, SUPERSEDED } from '../../domain/sagas/saga';
import { ChangeStatus } from '../../domain/enrollments/enrollment-change';
import { newId } from '../../domain/shared/new-id';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { recordset } from '../../infrastructure/database/recordset';

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

/** A `sagas` row with its `job_ids`, as the database answers it. */
export interface SagaRow {
  id: string;
  type: SagaType;
  state: SagaState;
  outcome: string | null;
  connection_id: string;
  entity_id: string | null;
  source_event_id: string | null;
  steps: SagaStep[] | null;
  attempts: number;
  last_error: string | null;
  job_ids: string[] | null;
  created_at: Date;
  updated_at: Date;
}

export const sagaOf = (r: SagaRow): Saga => ({
  id: r.id,
  type: r.type,
  state: r.state,
  outcome: r.outcome,
  connectionId: r.connection_id,
  entityId: r.entity_id,
  sourceEventId: r.source_event_id,
  steps: Array.isArray(r.steps) ? r.steps : [],
  attempts: r.attempts,
  lastError: r.last_error,
  jobIds: r.job_ids ?? [],
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

const FINAL_JOB_STATUSES = new Set(['complete', 'error', 'reauth_error', 'permissions_error', SUPERSEDED]);

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

/** A step of the sagas waiting on a job: as it is, or made for each saga from its own individuals (null: the whole job). */
export type StepOfJob = SagaStep | ((own: ReadonlySet<string> | null) => SagaStep | undefined);

/** The key of a transaction's saga progress among its pending writes. */
const TRANSACTION_PROGRESS = Symbol('SagaProgress');

/**
 * Persisted saga state, written in the transactions of the commands and jobs that move it (the
 * ambient unit of work). What a transaction moves is gathered in its `progress` and written once,
 * just before it commits: a statement per table for the whole transaction, and each saga row
 * written once.
 */
@Injectable()
export class SagasRepository {
  constructor(private readonly uow: UnitOfWork) {}

  private get db(): EntityManager {
    return this.uow.manager;
  }

  /** The saga progress of the ambient transaction, written just before it commits. */
  get progress(): SagaProgress {
    return this.uow.pending(
      TRANSACTION_PROGRESS,
      () => new SagaProgress(),
      (progress) => this.record(progress, progress.latest ?? new Date()),
    );
  }

  async start(saga: NewSaga): Promise<string> {
    const progress = new SagaProgress();
    const id = progress.start(saga);
    await this.record(progress, saga.at);
    return id;
  }

  /** Appends steps; with `end`, the saga ends in that state and outcome. */
  async step(sagaId: string, steps: SagaStep[], at: Date, end?: { state: SagaState; outcome: string; error?: string }) {
    await this.db.query(
      `UPDATE sagas SET steps = steps || $2::jsonb, updated_at = $3,
              state = coalesce($4, state), outcome = coalesce($5, outcome), last_error = coalesce($6, last_error)
       WHERE id = $1`,
      [sagaId, JSON.stringify(steps), at, end?.state ?? null, end?.outcome ?? null, end?.error ?? null],
    );
  }

  /**
   * Writes the progress. The sagas it moves that exist already are locked in id order first
   * (with those waiting on its jobs), so two transactions moving the same sagas take turns
   * instead of deadlocking, and each saga's state is computed from its jobs as they are once it
   * is locked. Each saga row is then written once: inserted, or updated with its new steps,
   * state and outcome together.
   */
  async record(progress: SagaProgress, at: Date): Promise<void> {
    if (progress.empty) return;
    const newIds = new Set(progress.started.map((s) => s.id));
    const jobIds = [...new Set([...progress.intents.flatMap((i) => ('jobId' in i ? [i.jobId] : [])), ...progress.ended.map((e) => e.jobId), ...progress.retried])];
    const named = [
      ...new Set([...progress.intents.flatMap((i) => ('sagaId' in i ? [i.sagaId] : [])), ...progress.waits.map((w) => w.sagaId), ...progress.ends.map((e) => e.sagaId)]),
    ].filter((id) => !newIds.has(id));
    const locked: { id: string; state: SagaState; outcome: string | null }[] =
      named.length + jobIds.length === 0
        ? []
        : await this.db.query(
            `SELECT id, state, outcome FROM sagas
             WHERE id IN (SELECT unnest($1::uuid[]) UNION SELECT sj.saga_id FROM unnest($2::uuid[]) AS k(job_id) JOIN saga_jobs sj ON sj.job_id = k.job_id)
             ORDER BY id FOR UPDATE`,
            [named, jobIds],
          );
    const pairs: { saga_id: string; job_id: string; status: string | null; individual_ids: string[] | null }[] =
      locked.length === 0
        ? []
        : await this.db.query(`SELECT sj.saga_id, sj.job_id, sj.status, sj.individual_ids FROM unnest($1::uuid[]) AS k(saga_id) JOIN saga_jobs sj ON sj.saga_id = k.saga_id`, [
            locked.map((r) => r.id),
          ]);

    // Each saga's jobs and how they stand: as stored, then what this progress changed.
    const jobsOf = new Map<string, Map<string, string | null>>();
    const sagasOfJob = new Map<string, Set<string>>();
    /** A saga's own individuals in a job it shares with others, by `saga/job`. */
    const ownIn = new Map<string, ReadonlySet<string>>();
    const pair = (sagaId: string, jobId: string, status: string | null, individualIds: readonly string[] | null | undefined) => {
      jobsOf.set(sagaId, (jobsOf.get(sagaId) ?? new Map()).set(jobId, status));
      sagasOfJob.set(jobId, (sagasOfJob.get(jobId) ?? new Set()).add(sagaId));
      if (individualIds) ownIn.set(`${sagaId}/${jobId}`, new Set(individualIds));
    };
    const own = (sagaId: string, jobId: string) => ownIn.get(`${sagaId}/${jobId}`) ?? null;
    for (const p of pairs) pair(p.saga_id, p.job_id, p.status, p.individual_ids);
    const unknown = [...new Set(progress.waits.filter((w) => w.status === undefined).map((w) => w.jobId))];
    const read = new Map<string, string>(
      unknown.length === 0
        ? []
        : (await this.db.query(`SELECT id, status FROM jobs WHERE id = ANY($1::uuid[])`, [unknown])).map((r: { id: string; status: string }) => [r.id, r.status]),
    );
    const waited = progress.waits.filter((w) => w.status !== undefined || read.has(w.jobId));
    for (const w of waited) if (!jobsOf.get(w.sagaId)?.has(w.jobId)) pair(w.sagaId, w.jobId, w.status ?? read.get(w.jobId)!, w.individualIds);
    const changedJobs = new Set<string>();
    for (const jobId of progress.retried) {
      changedJobs.add(jobId);
      for (const sagaId of sagasOfJob.get(jobId) ?? []) jobsOf.get(sagaId)!.set(jobId, null);
    }
    for (const { jobId, statusFor } of progress.ended) {
      changedJobs.add(jobId);
      for (const sagaId of sagasOfJob.get(jobId) ?? []) jobsOf.get(sagaId)!.set(jobId, statusFor(own(sagaId, jobId)));
    }

    const stepsOf = new Map<string, SagaStep[]>();
    const add = (sagaId: string, step: SagaStep | undefined) => {
      if (step) stepsOf.set(sagaId, [...(stepsOf.get(sagaId) ?? []), step]);
    };
    for (const intent of progress.intents) {
      if ('sagaId' in intent) add(intent.sagaId, intent.step);
      else for (const sagaId of sagasOfJob.get(intent.jobId) ?? []) add(sagaId, typeof intent.step === 'function' ? intent.step(own(sagaId, intent.jobId)) : intent.step);
    }

    // Where each saga ends up: reopened by a retry, settled by its jobs, or ended outright.
    const settling = new Set([...progress.waits.map((w) => w.sagaId), ...progress.ended.flatMap((e) => [...(sagasOfJob.get(e.jobId) ?? [])])]);
    const reopened = new Set(progress.retried.flatMap((j) => [...(sagasOfJob.get(j) ?? [])]));
    const endOf = new Map(progress.ends.map((e) => [e.sagaId, e]));
    const after = (id: string, before: { state: SagaState; outcome: string | null }) => {
      let { state, outcome } = before;
      if (reopened.has(id) && state === 'failed') [state, outcome] = ['waiting', null];
      const statuses = [...(jobsOf.get(id)?.values() ?? [])];
      if (settling.has(id) && statuses.length > 0 && (state === 'started' || state === 'waiting')) {
        const settled = stateAfterJobs(statuses.map((s) => (s !== null && FINAL_JOB_STATUSES.has(s) ? s : 'pending')));
        if (settled === 'waiting') state = 'waiting';
        else [state, outcome] = [settled, outcome ?? (settled === 'completed' ? 'jobs_complete' : 'job_failed')];
      }
      const end = endOf.get(id);
      return end ? { state: end.state, outcome: end.outcome } : { state, outcome };
    };

    if (progress.started.length > 0) {
      const started = progress.started.map((s) => ({ saga: s, ...after(s.id, { state: s.state ?? 'started', outcome: s.outcome ?? null }) }));
      await this.db.query(
        `INSERT INTO sagas (id, type, state, outcome, connection_id, entity_id, source_event_id, steps, created_at, updated_at)
         SELECT u.id, u.type, u.state, u.outcome, u.connection_id, u.entity_id, u.source_event_id, u.steps, u.at, $2
         FROM jsonb_to_recordset($1::jsonb)
           AS u(id uuid, type text, state text, outcome text, connection_id uuid, entity_id uuid, source_event_id text, steps jsonb, at timestamptz)`,
        [
          recordset(
            started.map(({ saga, state, outcome }) => ({
              id: saga.id,
              type: saga.type,
              state,
              outcome,
              connection_id: saga.connectionId,
              entity_id: saga.entityId,
              source_event_id: saga.sourceEventId ?? null,
              steps: [...saga.steps, ...(stepsOf.get(saga.id) ?? [])],
              at: saga.at,
            })),
          ),
          at,
        ],
      );
    }
    if (waited.length > 0) {
      await this.db.query(
        `INSERT INTO saga_jobs (saga_id, job_id, status, individual_ids)
         SELECT u.saga_id, u.job_id, u.status, nullif($4::jsonb -> (u.n::int - 1), 'null')
         FROM unnest($1::uuid[], $2::uuid[], $3::text[]) WITH ORDINALITY AS u(saga_id, job_id, status, n)
         ON CONFLICT DO NOTHING`,
        [
          waited.map((w) => w.sagaId),
          waited.map((w) => w.jobId),
          waited.map((w) => jobsOf.get(w.sagaId)!.get(w.jobId) ?? null),
          JSON.stringify(waited.map((w) => w.individualIds ?? null)),
        ],
      );
    }
    // Each stored saga's status on the jobs that moved (a shared job's may differ from saga to saga).
    const moves = pairs.filter((p) => changedJobs.has(p.job_id));
    if (moves.length > 0) {
      await this.db.query(
        `UPDATE saga_jobs sj SET status = u.status FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS u(saga_id, job_id, status)
         WHERE sj.saga_id = u.saga_id AND sj.job_id = u.job_id`,
        [moves.map((p) => p.saga_id), moves.map((p) => p.job_id), moves.map((p) => jobsOf.get(p.saga_id)!.get(p.job_id) ?? null)],
      );
    }
    const moved = locked
      .map((row) => ({ id: row.id, steps: stepsOf.get(row.id) ?? [], before: row, ...after(row.id, row) }))
      .filter((m) => m.steps.length > 0 || m.state !== m.before.state || m.outcome !== m.before.outcome);
    if (moved.length > 0) {
      await this.db.query(
        `UPDATE sagas s SET steps = s.steps || u.steps, state = u.state, outcome = u.outcome, updated_at = $2
         FROM jsonb_to_recordset($1::jsonb) AS u(id uuid, steps jsonb, state text, outcome text) WHERE s.id = u.id`,
        [recordset(moved.map((m) => ({ id: m.id, steps: m.steps, state: m.state, outcome: m.outcome }))), at],
      );
    }
  }

  /**
   * Of these events, those some saga was already started for in their connection, as
   * `lower(event id)/connection id`: read through the sagas' unique index of an event.
   */
  async eventsWithSagas(events: readonly { eventId: string; connectionId: string }[]): Promise<Set<string>> {
    if (events.length === 0) return new Set();
    const rows: { event_id: string; connection_id: string }[] = await this.db.query(
      `SELECT DISTINCT k.event_id, k.connection_id FROM unnest($1::text[], $2::uuid[]) AS k(event_id, connection_id)
       WHERE EXISTS (SELECT 1 FROM sagas s WHERE lower(s.source_event_id) = k.event_id AND s.connection_id = k.connection_id AND s.source_event_id IS NOT NULL)`,
      [events.map((e) => e.eventId.toLowerCase()), events.map((e) => e.connectionId)],
    );
    return new Set(rows.map((r) => `${r.event_id}/${r.connection_id}`));
  }

  async find(id: string): Promise<Saga | undefined> {
    const rows: SagaRow[] = await this.db.query(
      `SELECT s.*, (SELECT array_agg(job_id::text) FROM saga_jobs WHERE saga_id = s.id) AS job_ids FROM sagas s WHERE s.id = $1`,
      [id],
    );
    return rows[0] && sagaOf(rows[0]);
  }

  /** Sagas that waited on a job, e.g. to show them beside it. */
  async ofJob(jobId: string): Promise<Saga[]> {
    const rows: SagaRow[] = await this.db.query(
      `SELECT s.*, (SELECT array_agg(job_id::text) FROM saga_jobs WHERE saga_id = s.id) AS job_ids
       FROM sagas s JOIN saga_jobs sj ON sj.saga_id = s.id WHERE sj.job_id = $1 ORDER BY s.created_at`,
      [jobId],
    );
    return rows.map(sagaOf);
  }
}

@Global()
@Module({ providers: [SagasRepository], exports: [SagasRepository] })
export class SagasRepositoryModule {}
