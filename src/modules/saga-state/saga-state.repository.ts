import { Global, Injectable, Module } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Saga, SagaState, SagaStep, SagaType } from '../../domain/sagas/saga';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { ColumnSet } from '../../infrastructure/database/column-set';
import { jobsToRead, LockedSaga, NewSaga, SagaJobRow, SagaProgress, sagasToLock, SagaWrites, sagaWrites } from './saga-progress';

/**
 * The sagas a transaction starts and those it moves on, sent as one array per column (ColumnSet):
 * as a JSON recordset every row repeated every key, and PostgreSQL parsed the whole text as
 * jsonb; the steps, different for every saga, still travel as JSON.
 */
const STARTED_SAGAS = new ColumnSet<SagaWrites['started'][number]>({
  id: 'uuid',
  type: 'text',
  state: 'text',
  outcome: 'text',
  connection_id: 'uuid',
  entity_id: 'uuid',
  source_event_id: 'text',
  steps: 'jsonb',
  at: 'timestamptz',
});
const MOVED_SAGAS = new ColumnSet<SagaWrites['updated'][number]>({ id: 'uuid', steps: 'jsonb', state: 'text', outcome: 'text' });

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
    const { named, jobIds } = sagasToLock(progress);
    const locked: LockedSaga[] =
      named.length + jobIds.length === 0
        ? []
        : await this.db.query(
            `SELECT id, state, outcome FROM sagas
             WHERE id = ANY(array_cat($1::uuid[], ARRAY(SELECT sj.saga_id FROM saga_jobs sj WHERE sj.job_id = ANY($2::uuid[]))))
             ORDER BY id FOR UPDATE`,
            [named, jobIds],
          );
    const stored: SagaJobRow[] =
      locked.length === 0
        ? []
        : await this.db.query(`SELECT saga_id, job_id, status, individual_ids FROM saga_jobs WHERE saga_id = ANY($1::uuid[])`, [
            locked.map((r) => r.id),
          ]);
    const unknown = jobsToRead(progress);
    const read = new Map<string, string>(
      unknown.length === 0
        ? []
        : (await this.db.query(`SELECT id, status FROM jobs WHERE id = ANY($1::uuid[])`, [unknown])).map((r: { id: string; status: string }) => [r.id, r.status]),
    );
    const writes = sagaWrites(progress, locked, stored, read);

    if (writes.started.length > 0) {
      await this.db.query(
        `INSERT INTO sagas (id, type, state, outcome, connection_id, entity_id, source_event_id, steps, created_at, updated_at)
         SELECT u.id, u.type, u.state, u.outcome, u.connection_id, u.entity_id, u.source_event_id, u.steps, u.at, $1
         FROM ${STARTED_SAGAS.from(2)}`,
        [at, ...STARTED_SAGAS.values(writes.started)],
      );
    }
    if (writes.waits.length > 0) {
      await this.db.query(
        `INSERT INTO saga_jobs (saga_id, job_id, status, individual_ids)
         SELECT u.saga_id, u.job_id, u.status, nullif($4::jsonb -> (u.n::int - 1), 'null')
         FROM unnest($1::uuid[], $2::uuid[], $3::text[]) WITH ORDINALITY AS u(saga_id, job_id, status, n)
         ON CONFLICT DO NOTHING`,
        [
          writes.waits.map((w) => w.sagaId),
          writes.waits.map((w) => w.jobId),
          writes.waits.map((w) => w.status),
          JSON.stringify(writes.waits.map((w) => w.individualIds)),
        ],
      );
    }
    if (writes.waitStatuses.length > 0) {
      await this.db.query(
        `UPDATE saga_jobs sj SET status = u.status FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS u(saga_id, job_id, status)
         WHERE sj.saga_id = u.saga_id AND sj.job_id = u.job_id`,
        [writes.waitStatuses.map((w) => w.sagaId), writes.waitStatuses.map((w) => w.jobId), writes.waitStatuses.map((w) => w.status)],
      );
    }
    if (writes.updated.length > 0) {
      await this.db.query(
        `UPDATE sagas s SET steps = s.steps || u.steps, state = u.state, outcome = u.outcome, updated_at = $1
         FROM ${MOVED_SAGAS.from(2)} WHERE s.id = u.id`,
        [at, ...MOVED_SAGAS.values(writes.updated)],
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
