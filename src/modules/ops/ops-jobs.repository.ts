import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Job, JobKind, JobStatus } from '../../domain/jobs/job';
import { JOB_COLUMNS as COLUMNS, JobRow, toJob as jobOf } from '../jobs/jobs.repository';

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
