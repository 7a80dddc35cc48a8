import { randomUUID } from 'node:crypto';
import { Global, Injectable, Module } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Saga, SagaState, SagaStep, SagaType, stateAfterJobs, SUPERSEDED } from '../../domain/sagas/saga';

export interface NewSaga {
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

/** Persisted saga state: written in the transactions of the commands and jobs that move it. */
@Injectable()
export class SagasRepository {
  constructor(private readonly dataSource: DataSource) {}

  async start(manager: EntityManager, saga: NewSaga): Promise<string> {
    const id = randomUUID();
    await manager.query(
      `INSERT INTO sagas (id, type, state, outcome, connection_id, entity_id, source_event_id, steps, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $9)`,
      [id, saga.type, saga.state ?? 'started', saga.outcome ?? null, saga.connectionId, saga.entityId, saga.sourceEventId ?? null, JSON.stringify(saga.steps), saga.at],
    );
    return id;
  }

  /** Appends steps; with `end`, the saga ends in that state and outcome. */
  async step(manager: EntityManager, sagaId: string, steps: SagaStep[], at: Date, end?: { state: SagaState; outcome: string; error?: string }) {
    await manager.query(
      `UPDATE sagas SET steps = steps || $2::jsonb, updated_at = $3,
              state = coalesce($4, state), outcome = coalesce($5, outcome), last_error = coalesce($6, last_error)
       WHERE id = $1`,
      [sagaId, JSON.stringify(steps), at, end?.state ?? null, end?.outcome ?? null, end?.error ?? null],
    );
  }

  /** A step of a job (e.g. one effective-date group processed) on every saga waiting on it. */
  async stepOfJob(manager: EntityManager, jobId: string, step: SagaStep, at: Date): Promise<void> {
    await manager.query(
      `UPDATE sagas SET steps = steps || $2::jsonb, updated_at = $3
       WHERE id IN (SELECT saga_id FROM saga_jobs WHERE job_id = $1)`,
      [jobId, JSON.stringify([step]), at],
    );
  }

  /** The saga now waits on these jobs (it ends when the last one ends). */
  async waitFor(manager: EntityManager, sagaId: string, jobs: { id: string; status: string }[], at: Date): Promise<void> {
    if (jobs.length === 0) return;
    await manager.query(
      `INSERT INTO saga_jobs (saga_id, job_id, status)
       SELECT $1, j.id, j.status FROM jsonb_to_recordset($2::jsonb) AS j(id uuid, status text) ON CONFLICT DO NOTHING`,
      [sagaId, JSON.stringify(jobs)],
    );
    await this.settle(manager, sagaId, at);
  }

  /**
   * A job ended: every saga waiting on it records the step, and ends once none of its jobs is
   * still running. Called in the transaction that gives the job its final status.
   */
  async jobEnded(manager: EntityManager, jobId: string, status: string, at: Date): Promise<void> {
    if (!FINAL_JOB_STATUSES.has(status)) return;
    const rows: { saga_id: string }[] = await manager.query(
      `UPDATE saga_jobs SET status = $2 WHERE job_id = $1 RETURNING saga_id`,
      [jobId, status],
    );
    // UPDATE … RETURNING answers [rows, count] through TypeORM's postgres driver.
    const updated = (Array.isArray(rows[0]) ? rows[0] : rows) as { saga_id: string }[];
    for (const { saga_id } of updated) {
      await this.step(manager, saga_id, [{ at: at.toISOString(), name: `job_${status}`, detail: { job_id: jobId } }], at);
      await this.settle(manager, saga_id, at);
    }
  }

  /** A job in error runs again (ops retry): the sagas that failed on it wait for it again. */
  async jobRetried(manager: EntityManager, jobId: string, at: Date): Promise<void> {
    const rows = await manager.query(`UPDATE saga_jobs SET status = NULL WHERE job_id = $1 RETURNING saga_id`, [jobId]);
    const updated = (Array.isArray(rows[0]) ? rows[0] : rows) as { saga_id: string }[];
    for (const { saga_id } of updated) {
      await manager.query(
        `UPDATE sagas SET state = 'waiting', outcome = NULL, updated_at = $2, steps = steps || $3::jsonb WHERE id = $1 AND state = 'failed'`,
        [saga_id, at, JSON.stringify([{ at: at.toISOString(), name: 'job_retried', detail: { job_id: jobId } }])],
      );
    }
  }

  /** Ends a waiting saga whose jobs have all ended. */
  private async settle(manager: EntityManager, sagaId: string, at: Date): Promise<void> {
    const jobs: { status: string | null }[] = await manager.query(`SELECT status FROM saga_jobs WHERE saga_id = $1 FOR UPDATE`, [sagaId]);
    const state = stateAfterJobs(jobs.map((j) => (j.status !== null && FINAL_JOB_STATUSES.has(j.status) ? j.status : 'pending')));
    if (state === 'waiting') {
      await manager.query(`UPDATE sagas SET state = 'waiting', updated_at = $2 WHERE id = $1 AND state = 'started'`, [sagaId, at]);
      return;
    }
    const outcome = state === 'completed' ? 'jobs_complete' : 'job_failed';
    await manager.query(
      `UPDATE sagas SET state = $2, outcome = coalesce(outcome, $3), updated_at = $4 WHERE id = $1 AND state IN ('started', 'waiting')`,
      [sagaId, state, outcome, at],
    );
  }

  async find(id: string, manager: EntityManager = this.dataSource.manager): Promise<Saga | undefined> {
    const rows: SagaRow[] = await manager.query(
      `SELECT s.*, (SELECT array_agg(job_id::text) FROM saga_jobs WHERE saga_id = s.id) AS job_ids FROM sagas s WHERE s.id = $1`,
      [id],
    );
    return rows[0] && sagaOf(rows[0]);
  }

  async findBySource(sourceEventId: string, type: SagaType, manager: EntityManager = this.dataSource.manager): Promise<Saga | undefined> {
    const rows: SagaRow[] = await manager.query(
      `SELECT s.*, (SELECT array_agg(job_id::text) FROM saga_jobs WHERE saga_id = s.id) AS job_ids
       FROM sagas s WHERE s.source_event_id = $1 AND s.type = $2`,
      [sourceEventId, type],
    );
    return rows[0] && sagaOf(rows[0]);
  }

  /** Sagas that waited on a job, e.g. to show them beside it. */
  async ofJob(jobId: string, manager: EntityManager = this.dataSource.manager): Promise<Saga[]> {
    const rows: SagaRow[] = await manager.query(
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
