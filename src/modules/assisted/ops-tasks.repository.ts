import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { DueState, OpsTask, OpsTaskStatus } from '../../domain/assisted/ops-task';
import { BenefitJobType } from '../../domain/benefits/benefit-job-params';

interface OpsTaskRow {
  id: string;
  connection_id: string;
  entity_id: string;
  job_id: string;
  type: BenefitJobType;
  payload: Record<string, unknown>;
  status: OpsTaskStatus;
  due_date: string;
  note: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  created_at: Date;
}

// due_date as text: a calendar date must not pass through a JS Date and a time zone.
const COLUMNS = `id, connection_id, entity_id, job_id, type, payload, status, to_char(due_date, 'YYYY-MM-DD') AS due_date, note,
  resolved_by, resolved_at, created_at`;

export interface OpsTaskFilter {
  status?: OpsTaskStatus;
  /** Only open tasks in this due state on `today`. */
  dueState?: DueState;
  connectionId?: string;
  type?: BenefitJobType;
  /** `YYYY-MM-DD`, for dueState. */
  today: string;
}

export interface Resolution {
  status: Exclude<OpsTaskStatus, 'open'>;
  note: string | null;
  resolvedBy: string;
  resolvedAt: Date;
}

/** UPDATE … RETURNING answers [rows, count] through TypeORM's postgres driver. */
const returnedRows = <T>(result: unknown): T[] => (Array.isArray(result) && Array.isArray(result[0]) ? (result[0] as T[]) : []);

/** The `ops_tasks` table. */
@Injectable()
export class OpsTasksRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(task: OpsTask, manager: EntityManager): Promise<void> {
    await manager.query(
      `INSERT INTO ops_tasks (id, connection_id, entity_id, job_id, type, payload, status, due_date, note, resolved_by, resolved_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12)`,
      [
        task.id,
        task.connectionId,
        task.entityId,
        task.jobId,
        task.type,
        JSON.stringify(task.payload),
        task.status,
        task.dueDate,
        task.note,
        task.resolvedBy,
        task.resolvedAt,
        task.createdAt,
      ],
    );
  }

  async find(id: string, manager: EntityManager = this.dataSource.manager): Promise<OpsTask | undefined> {
    const rows: OpsTaskRow[] = await manager.query(`SELECT ${COLUMNS} FROM ops_tasks WHERE id = $1`, [id]);
    return rows[0] && taskOf(rows[0]);
  }

  async findByJob(jobId: string, manager: EntityManager = this.dataSource.manager): Promise<OpsTask | undefined> {
    const rows: OpsTaskRow[] = await manager.query(`SELECT ${COLUMNS} FROM ops_tasks WHERE job_id = $1`, [jobId]);
    return rows[0] && taskOf(rows[0]);
  }

  /** Soonest due first (then oldest), with the total for paging. */
  async list(filter: OpsTaskFilter, page: { limit: number; offset: number }): Promise<{ count: number; tasks: OpsTask[] }> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    const where = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      conditions.push(sql(`$${params.length}`));
    };
    if (filter.status) where((p) => `status = ${p}`, filter.status);
    if (filter.connectionId) where((p) => `connection_id = ${p}`, filter.connectionId);
    if (filter.type) where((p) => `type = ${p}`, filter.type);
    if (filter.dueState) {
      const compare = { on_time: '>', due_today: '=', overdue: '<' }[filter.dueState];
      conditions.push(`status = 'open'`);
      where((p) => `due_date ${compare} ${p}::date`, filter.today);
    }
    const clause = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const [{ n }] = await this.dataSource.query(`SELECT count(*)::int AS n FROM ops_tasks ${clause}`, params);
    const rows: OpsTaskRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM ops_tasks ${clause}
       ORDER BY ops_tasks.due_date, created_at, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset],
    );
    return { count: n, tasks: rows.map(taskOf) };
  }

  /**
   * Resolves the task if it is still open; undefined when it is not (already resolved, or no such
   * task). The row lock the UPDATE takes makes concurrent resolutions wait, then find it resolved:
   * exactly one wins.
   */
  async resolve(id: string, resolution: Resolution, manager: EntityManager): Promise<OpsTask | undefined> {
    const result = await manager.query(
      `UPDATE ops_tasks SET status = $2, note = $3, resolved_by = $4, resolved_at = $5
       WHERE id = $1 AND status = 'open'
       RETURNING ${COLUMNS}`,
      [id, resolution.status, resolution.note, resolution.resolvedBy, resolution.resolvedAt],
    );
    const [row] = returnedRows<OpsTaskRow>(result);
    return row && taskOf(row);
  }
}

function taskOf(row: OpsTaskRow): OpsTask {
  return {
    id: row.id,
    connectionId: row.connection_id,
    entityId: row.entity_id,
    jobId: row.job_id,
    type: row.type,
    payload: row.payload,
    status: row.status,
    dueDate: row.due_date,
    note: row.note,
    resolvedBy: row.resolved_by,
    resolvedAt: row.resolved_at === null ? null : new Date(row.resolved_at),
    createdAt: new Date(row.created_at),
  };
}
