import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { FAILED_JOB_STATUSES, Job, JobKind, JobStatus } from '../../domain/jobs/job';
import { JOB_COUNTS, keptCountRows } from '../../infrastructure/database/kept-counts';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';
import { jobColumns, JobRow, toJob as jobOf } from '../jobs/jobs.repository';

const QUALIFIED_COLUMNS = jobColumns('j');

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
   * else newest first. The failed ones are read from `failed_jobs` (migration 1798860000000), a
   * handful among every job there ever was.
   */
  async list(filter: OpsJobFilter, page: { limit: number; offset: number }): Promise<{ count: number; jobs: Job[] }> {
    const failed = filter.status !== undefined && (FAILED_JOB_STATUSES as readonly JobStatus[]).includes(filter.status);
    const where = new SqlFilter();
    if (filter.status) where.and((p) => `j.status = ${p}`, filter.status);
    if (filter.kind) where.and((p) => `j.kind = ${p}`, filter.kind);
    if (filter.type) where.and((p) => `j.type = ${p}`, filter.type);
    if (filter.connectionId) where.and((p) => `j.connection_id = ${p}`, filter.connectionId);
    const oldestFirst = filter.status === 'pending' || filter.status === 'in_progress';
    const from = failed ? 'failed_jobs f JOIN jobs j ON j.id = f.job_id' : 'jobs j';
    const orderBy = failed ? 'f.created_at DESC, f.seq DESC' : oldestFirst ? 'j.created_at, j.seq' : 'j.created_at DESC, j.seq DESC';
    const { count, rows } = await countedPage<JobRow>(
      this.dataSource,
      { from, select: `SELECT ${QUALIFIED_COLUMNS} FROM ${from}`, where, orderBy },
      page,
      filter.connectionId ? undefined : () => this.counted(filter),
    );
    return { count, jobs: rows.map(jobOf) };
  }

  /**
   * How many jobs have this status, kind and type (each undefined: any), from the kept counts
   * (migrations 1798870000000, 1798930000000), not a scan of `jobs`.
   */
  private async counted(filter: Omit<OpsJobFilter, 'connectionId'>): Promise<number> {
    const [{ n }] = await this.dataSource.query(
      `SELECT coalesce(sum(n), 0)::int AS n FROM (${keptCountRows(JOB_COUNTS)}) AS c
       WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR kind = $2) AND ($3::text IS NULL OR type = $3)`,
      [filter.status ?? null, filter.kind ?? null, filter.type ?? null],
    );
    return n;
  }
}
