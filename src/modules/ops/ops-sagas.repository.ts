import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Saga, SagaState, SagaType } from '../../domain/sagas/saga';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';
import { SagaCounts } from '../saga-state/saga-counts';
import { SagaJobLink } from './dto/saga.dto';
import { SagaRow, sagaOf } from '../saga-state/saga-state.repository';

const COLUMNS = `s.id, s.type, s.state, s.outcome, s.connection_id, s.entity_id, s.source_event_id, s.steps, s.attempts,
  s.last_error, s.created_at, s.updated_at,
  ARRAY(SELECT sj.job_id FROM saga_jobs sj WHERE sj.saga_id = s.id ORDER BY sj.job_id) AS job_ids`;

export interface SagaFilter {
  type?: SagaType;
  state?: SagaState;
  connectionId?: string;
  /** The HRIS event that started it, compared without regard to case. */
  sourceEventId?: string;
  createdAtOrBefore?: Date;
  createdAfter?: Date;
}


/** Reads `sagas` and `saga_jobs` for the ops API; the sagas themselves write them. */
@Injectable()
export class OpsSagasRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sagaCounts: SagaCounts,
  ) {}

  /**
   * Newest first, with the total for paging (by type and state alone: from the counts, not a scan
   * of every saga). The failed ones are read from `failed_sagas` (migration 1798850000000), a
   * handful among millions that a walk of every saga would look for.
   */
  async list(filter: SagaFilter, page: { limit: number; offset: number }): Promise<{ count: number; sagas: Saga[] }> {
    const failed = filter.state === 'failed';
    const where = new SqlFilter();
    if (filter.type) where.and((p) => `s.type = ${p}`, filter.type);
    if (filter.state && !failed) where.and((p) => `s.state = ${p}`, filter.state);
    if (filter.connectionId) where.and((p) => `s.connection_id = ${p}`, filter.connectionId);
    if (filter.sourceEventId) where.and((p) => `lower(s.source_event_id) = lower(${p})`, filter.sourceEventId);
    if (filter.createdAtOrBefore) where.and((p) => `s.created_at <= ${p}`, filter.createdAtOrBefore);
    if (filter.createdAfter) where.and((p) => `s.created_at > ${p}`, filter.createdAfter);
    const from = failed ? 'failed_sagas f JOIN sagas s ON s.id = f.saga_id' : 'sagas s';
    const { count, rows } = await countedPage<SagaRow>(
      this.dataSource,
      { from, select: `SELECT ${COLUMNS} FROM ${from}`, where, orderBy: failed ? 'f.created_at DESC, f.saga_id' : 's.created_at DESC, s.id' },
      page,
      filter.connectionId || filter.sourceEventId || filter.createdAtOrBefore || filter.createdAfter ? undefined : () => this.sagaCounts.count(filter),
    );
    return { count, sagas: rows.map(sagaOf) };
  }

  async find(id: string): Promise<Saga | undefined> {
    const [row] = await this.dataSource.query(`SELECT ${COLUMNS} FROM sagas s WHERE s.id = $1`, [id]);
    return row ? sagaOf(row) : undefined;
  }

  /** The jobs the saga started, oldest first, with their status now and the one the saga saw. */
  async jobsOf(sagaId: string): Promise<SagaJobLink[]> {
    const rows: {
      job_id: string;
      saga_status: string | null;
      kind: string;
      type: string;
      status: string;
      created_at: Date;
      completed_at: Date | null;
      error: string | null;
    }[] = await this.dataSource.query(
      `SELECT sj.job_id, sj.status AS saga_status, j.kind, j.type, j.status, j.created_at, j.completed_at, j.result->>'error' AS error
       FROM saga_jobs sj JOIN jobs j ON j.id = sj.job_id
       WHERE sj.saga_id = $1 ORDER BY j.created_at, j.seq`,
      [sagaId],
    );
    return rows.map((r) => ({
      jobId: r.job_id,
      statusSeen: r.saga_status,
      kind: r.kind,
      type: r.type,
      status: r.status,
      createdAt: new Date(r.created_at),
      completedAt: r.completed_at === null ? null : new Date(r.completed_at),
      error: r.error,
    }));
  }
}
