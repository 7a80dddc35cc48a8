import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { DueState, OpsTask, OpsTaskStatus } from '../../domain/assisted/ops-task';
import { BenefitJobType } from '../../domain/benefits/benefit-job-params';
import { returnedRows } from '../../infrastructure/database/query-result';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';

interface OpsTaskRow {
  id: string;
  connection_id: string;
  entity_id: string;
  job_id: string;
  group_id: string | null;
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
const COLUMNS = `id, connection_id, entity_id, job_id, group_id, type, payload, status, to_char(due_date, 'YYYY-MM-DD') AS due_date, note,
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

/** The `ops_tasks` table. */
@Injectable()
export class OpsTasksRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Opens tasks, in one statement. */
  async insertOpen(tasks: readonly Pick<OpsTask, 'id' | 'connectionId' | 'entityId' | 'jobId' | 'groupId' | 'type' | 'payload' | 'dueDate' | 'createdAt'>[], manager: EntityManager): Promise<void> {
    if (tasks.length === 0) return;
    await manager.query(
      `INSERT INTO ops_tasks (id, connection_id, entity_id, job_id, group_id, type, payload, status, due_date, created_at)
       SELECT u.id, u.connection_id, u.entity_id, u.job_id, u.group_id, u.type, u.payload, 'open', u.due_date, u.created_at
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::jsonb[], $8::date[], $9::timestamptz[])
         AS u(id, connection_id, entity_id, job_id, group_id, type, payload, due_date, created_at)`,
      [
        tasks.map((t) => t.id),
        tasks.map((t) => t.connectionId),
        tasks.map((t) => t.entityId),
        tasks.map((t) => t.jobId),
        tasks.map((t) => t.groupId),
        tasks.map((t) => t.type),
        tasks.map((t) => JSON.stringify(t.payload)),
        tasks.map((t) => t.dueDate),
        tasks.map((t) => t.createdAt),
      ],
    );
  }

  /** The open tasks of these groups. */
  async openOfGroups(groupIds: readonly string[], manager: EntityManager): Promise<OpsTask[]> {
    if (groupIds.length === 0) return [];
    const rows: OpsTaskRow[] = await manager.query(`SELECT ${COLUMNS} FROM ops_tasks WHERE group_id = ANY($1::uuid[]) AND status = 'open'`, [groupIds]);
    return rows.map(taskOf);
  }

  /** New work for open tasks (individuals taken out of them), in one statement. */
  async setPayloads(payloads: readonly { id: string; payload: Record<string, unknown> }[], manager: EntityManager): Promise<void> {
    if (payloads.length === 0) return;
    await manager.query(
      `UPDATE ops_tasks t SET payload = u.payload FROM unnest($1::uuid[], $2::jsonb[]) AS u(id, payload) WHERE t.id = u.id AND t.status = 'open'`,
      [payloads.map((p) => p.id), payloads.map((p) => JSON.stringify(p.payload))],
    );
  }

  async find(id: string, manager: EntityManager = this.dataSource.manager): Promise<OpsTask | undefined> {
    const rows: OpsTaskRow[] = await manager.query(`SELECT ${COLUMNS} FROM ops_tasks WHERE id = $1`, [id]);
    return rows[0] && taskOf(rows[0]);
  }

  /** Soonest due first (then oldest), with the total for paging. */
  async list(filter: OpsTaskFilter, page: { limit: number; offset: number }): Promise<{ count: number; tasks: OpsTask[] }> {
    const where = new SqlFilter();
    if (filter.status) where.and((p) => `status = ${p}`, filter.status);
    if (filter.connectionId) where.and((p) => `connection_id = ${p}`, filter.connectionId);
    if (filter.type) where.and((p) => `type = ${p}`, filter.type);
    if (filter.dueState) {
      const compare = { on_time: '>', due_today: '=', overdue: '<' }[filter.dueState];
      where.and(`status = 'open'`);
      where.and((p) => `due_date ${compare} ${p}::date`, filter.today);
    }
    const { count, rows } = await countedPage<OpsTaskRow>(
      this.dataSource,
      { from: 'ops_tasks', select: `SELECT ${COLUMNS} FROM ops_tasks`, where, orderBy: 'ops_tasks.due_date, created_at, id' },
      page,
    );
    return { count, tasks: rows.map(taskOf) };
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
    groupId: row.group_id,
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
