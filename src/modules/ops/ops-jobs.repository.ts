import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Job, JobKind, JobStatus } from '../../domain/jobs/job';

interface JobRow {
  id: string;
  connection_id: string;
  entity_id: string | null;
  kind: JobKind;
  type: string;
  status: JobStatus;
  params: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  attempts: number;
  created_at: Date;
  scheduled_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

const COLUMNS = `id, connection_id, entity_id, kind, type, status, params, result, attempts, created_at, scheduled_at, started_at, completed_at`;

const dateOrNull = (value: Date | null) => (value === null ? null : new Date(value));

function jobOf(row: JobRow): Job {
  return {
    id: row.id,
    connectionId: row.connection_id,
    entityId: row.entity_id,
    kind: row.kind,
    type: row.type,
    status: row.status,
    params: row.params,
    result: row.result,
    attempts: row.attempts,
    createdAt: new Date(row.created_at),
    scheduledAt: new Date(row.scheduled_at),
    startedAt: dateOrNull(row.started_at),
    completedAt: dateOrNull(row.completed_at),
  };
}

export interface OpsJobFilter {
  status?: JobStatus;
  kind?: JobKind;
  type?: string;
  connectionId?: string;
}

/** Jobs of every connection, for the ops API (the `jobs` table; JobsRepository owns its writes). */
@Injectable()
export class OpsJobsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Unfinished jobs (pending, in progress) oldest first, so the longest waiting lead; everything
   * else newest first.
   */
  async list(filter: OpsJobFilter, page: { limit: number; offset: number }): Promise<{ count: number; jobs: Job[] }> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    const where = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      conditions.push(sql(`$${params.length}`));
    };
    if (filter.status) where((p) => `status = ${p}`, filter.status);
    if (filter.kind) where((p) => `kind = ${p}`, filter.kind);
    if (filter.type) where((p) => `type = ${p}`, filter.type);
    if (filter.connectionId) where((p) => `connection_id = ${p}`, filter.connectionId);
    const clause = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const oldestFirst = filter.status === 'pending' || filter.status === 'in_progress';
    const order = oldestFirst ? 'created_at, seq' : 'created_at DESC, seq DESC';
    const [{ n }] = await this.dataSource.query(`SELECT count(*)::int AS n FROM jobs ${clause}`, params);
    const rows: JobRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM jobs ${clause} ORDER BY ${order} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset],
    );
    return { count: n, jobs: rows.map(jobOf) };
  }
}
