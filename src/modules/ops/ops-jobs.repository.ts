import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Job, JobKind, JobStatus } from '../../domain/jobs/job';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';
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
    const where = new SqlFilter();
    if (filter.status) where.and((p) => `status = ${p}`, filter.status);
    if (filter.kind) where.and((p) => `kind = ${p}`, filter.kind);
    if (filter.type) where.and((p) => `type = ${p}`, filter.type);
    if (filter.connectionId) where.and((p) => `connection_id = ${p}`, filter.connectionId);
    const oldestFirst = filter.status === 'pending' || filter.status === 'in_progress';
    const orderBy = oldestFirst ? 'created_at, seq' : 'created_at DESC, seq DESC';
    const { count, rows } = await countedPage<JobRow>(
      this.dataSource,
      { from: 'jobs', select: `SELECT ${COLUMNS} FROM jobs`, where, orderBy },
      page,
    );
    return { count, jobs: rows.map(jobOf) };
  }
}
