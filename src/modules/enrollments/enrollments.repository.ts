import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { EnrollmentConfigurationParams } from '../../domain/benefits/benefit-job-params';
import { GroupState, IndividualResult } from '../../domain/benefits/enrollment-job';

export type EnrollmentStatus = 'pending' | 'enrolled' | 'unenrolled' | 'error';
export type GroupOperation = 'enroll' | 'unenroll';

export interface EnrollmentRecord {
  benefitId: string;
  individualId: string;
  configuration: EnrollmentConfigurationParams;
  effectiveDate: string;
  status: EnrollmentStatus;
  endedOn: string | null;
  jobId: string | null;
}

export interface EnrollmentGroup {
  id: string;
  jobId: string;
  benefitId: string;
  operation: GroupOperation;
  effectiveDate: string;
  /** enroll: `{individual_id, configuration}`; unenroll: `{individual_id}`. */
  items: { individual_id: string; configuration?: EnrollmentConfigurationParams }[];
  status: 'pending' | 'processed';
  results: IndividualResult[] | null;
}

interface GroupRow {
  id: string;
  job_id: string;
  benefit_id: string;
  operation: GroupOperation;
  effective_date: string;
  items: EnrollmentGroup['items'];
  status: EnrollmentGroup['status'];
  results: IndividualResult[] | null;
}

const GROUP_COLUMNS = `id, job_id, benefit_id, operation, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, items, status, results`;

const groupOf = (row: GroupRow): EnrollmentGroup => ({
  id: row.id,
  jobId: row.job_id,
  benefitId: row.benefit_id,
  operation: row.operation,
  effectiveDate: row.effective_date,
  items: row.items,
  status: row.status,
  results: row.results,
});

/**
 * The `enrollments` table (one row per benefit and individual: the latest requested
 * configuration and whether the provider has it) and `enrollment_groups` (one row per effective
 * date of an enrollment or unenrollment job, with its per-individual results).
 */
@Injectable()
export class EnrollmentsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Serializes enrollment writes of one benefit (requests and group commits). */
  async lockBenefit(benefitId: string, manager: EntityManager): Promise<void> {
    await manager.query(`SELECT id FROM benefits WHERE id = $1 FOR UPDATE`, [benefitId]);
  }

  /**
   * Overwrite: one row per (benefit, individual). A new request replaces the configuration and
   * date, ends nothing, and points the row at its job; the row waits (pending) for that job.
   */
  async upsertRequested(
    rows: { benefitId: string; entityId: string; individualId: string; configuration: EnrollmentConfigurationParams; effectiveDate: string }[],
    jobId: string,
    at: Date,
    manager: EntityManager,
  ): Promise<void> {
    const CHUNK = 1_000;
    for (let start = 0; start < rows.length; start += CHUNK) {
      const chunk = rows.slice(start, start + CHUNK);
      await manager.query(
        `INSERT INTO enrollments (benefit_id, individual_id, entity_id, configuration, effective_date, status, ended_on, job_id, updated_at)
         SELECT r.benefit_id, r.individual_id, r.entity_id, r.configuration, r.effective_date, 'pending', NULL, $2, $3
         FROM jsonb_to_recordset($1::jsonb)
           AS r(benefit_id uuid, individual_id uuid, entity_id uuid, configuration jsonb, effective_date date)
         ON CONFLICT (benefit_id, individual_id) DO UPDATE
           SET configuration = EXCLUDED.configuration, effective_date = EXCLUDED.effective_date, status = 'pending',
               ended_on = NULL, job_id = EXCLUDED.job_id, updated_at = EXCLUDED.updated_at`,
        [
          JSON.stringify(
            chunk.map((r) => ({
              benefit_id: r.benefitId,
              individual_id: r.individualId.toLowerCase(),
              entity_id: r.entityId,
              configuration: r.configuration,
              effective_date: r.effectiveDate,
            })),
          ),
          jobId,
          at,
        ],
      );
    }
  }

  /** Records how the provider answered an enroll group: rows still waiting for this job only. */
  async recordEnrolled(benefitId: string, jobId: string, results: IndividualResult[], at: Date, manager: EntityManager): Promise<void> {
    const ok = results.filter((r) => r.code === 200).map((r) => r.individual_id.toLowerCase());
    const failed = results.filter((r) => r.code !== 200).map((r) => r.individual_id.toLowerCase());
    await manager.query(
      `UPDATE enrollments SET status = CASE WHEN individual_id = ANY($3::uuid[]) THEN 'enrolled' ELSE 'error' END, updated_at = $5
       WHERE benefit_id = $1 AND job_id = $2 AND status = 'pending' AND individual_id = ANY($3::uuid[] || $4::uuid[])`,
      [benefitId, jobId, ok, failed, at],
    );
  }

  /** Ends the enrollments the provider ended (a row the service never had is left alone). */
  async recordUnenrolled(benefitId: string, jobId: string, results: IndividualResult[], endedOn: string, at: Date, manager: EntityManager) {
    const ok = results.filter((r) => r.code === 200).map((r) => r.individual_id.toLowerCase());
    await manager.query(
      `UPDATE enrollments SET status = 'unenrolled', ended_on = $3::date, job_id = $4, updated_at = $5
       WHERE benefit_id = $1 AND individual_id = ANY($2::uuid[])`,
      [benefitId, ok, endedOn, jobId, at],
    );
  }

  async listOfBenefit(
    benefitId: string,
    filter: { statuses?: EnrollmentStatus[]; individualIds?: string[] } = {},
    manager: EntityManager = this.dataSource.manager,
  ): Promise<EnrollmentRecord[]> {
    const rows: {
      benefit_id: string;
      individual_id: string;
      configuration: EnrollmentConfigurationParams;
      effective_date: string;
      status: EnrollmentStatus;
      ended_on: string | null;
      job_id: string | null;
    }[] = await manager.query(
      `SELECT benefit_id, individual_id, configuration, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, status,
              to_char(ended_on, 'YYYY-MM-DD') AS ended_on, job_id
       FROM enrollments
       WHERE benefit_id = $1 AND ($2::text[] IS NULL OR status = ANY($2::text[])) AND ($3::uuid[] IS NULL OR individual_id = ANY($3::uuid[]))
       ORDER BY individual_id`,
      [benefitId, filter.statuses ?? null, filter.individualIds?.map((id) => id.toLowerCase()) ?? null],
    );
    return rows.map((r) => ({
      benefitId: r.benefit_id,
      individualId: r.individual_id,
      configuration: r.configuration,
      effectiveDate: r.effective_date,
      status: r.status,
      endedOn: r.ended_on,
      jobId: r.job_id,
    }));
  }

  /** Status of the job that creates the benefit at the provider; undefined when none made it. */
  async creationStatusOf(benefitId: string): Promise<string | undefined> {
    const rows: { status: string }[] = await this.dataSource.query(
      `SELECT j.status FROM benefits b JOIN jobs j ON j.id = b.job_id WHERE b.id = $1`,
      [benefitId],
    );
    return rows[0]?.status;
  }

  // ---- groups ----

  async insertGroup(group: Omit<EnrollmentGroup, 'status' | 'results'>, manager: EntityManager): Promise<void> {
    await manager.query(
      `INSERT INTO enrollment_groups (id, job_id, benefit_id, operation, effective_date, items, status)
       VALUES ($1, $2, $3, $4, $5::date, $6::jsonb, 'pending')`,
      [group.id, group.jobId, group.benefitId, group.operation, group.effectiveDate, JSON.stringify(group.items)],
    );
  }

  async findGroup(id: string, manager: EntityManager = this.dataSource.manager): Promise<EnrollmentGroup | undefined> {
    const rows: GroupRow[] = await manager.query(`SELECT ${GROUP_COLUMNS} FROM enrollment_groups WHERE id = $1`, [id]);
    return rows[0] && groupOf(rows[0]);
  }

  /** Marks the group processed; false when another run already did (nothing written then). */
  async markProcessed(id: string, results: IndividualResult[], at: Date, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query(
      `UPDATE enrollment_groups SET status = 'processed', results = $2::jsonb, processed_at = $3
       WHERE id = $1 AND status = 'pending' RETURNING id`,
      [id, JSON.stringify(results), at],
    );
    // UPDATE … RETURNING answers [rows, count] through TypeORM's postgres driver.
    return Array.isArray(rows) && rows[1] === 1;
  }

  async groupStatesOfJob(jobId: string, manager: EntityManager): Promise<GroupState[]> {
    const rows: GroupRow[] = await manager.query(`SELECT ${GROUP_COLUMNS} FROM enrollment_groups WHERE job_id = $1 ORDER BY effective_date`, [
      jobId,
    ]);
    return rows.map((r) => ({ effectiveDate: r.effective_date, processed: r.status === 'processed', results: r.results }));
  }

  // ---- the parent (automated) job, which no worker leases: its groups' commits move it ----

  /** Locks the parent job row, so two groups finishing at once recompute its status in turn. */
  async lockJob(jobId: string, manager: EntityManager): Promise<{ status: string; connectionId: string; entityId: string | null } | undefined> {
    const rows: { status: string; connection_id: string; entity_id: string | null }[] = await manager.query(
      `SELECT status, connection_id, entity_id FROM jobs WHERE id = $1 FOR UPDATE`,
      [jobId],
    );
    return rows[0] && { status: rows[0].status, connectionId: rows[0].connection_id, entityId: rows[0].entity_id };
  }

  async updateParentJob(
    jobId: string,
    update: { status: string; result: Record<string, unknown>; startedAt: Date; completedAt: Date | null },
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `UPDATE jobs SET status = $2, result = $3::jsonb, started_at = coalesce(started_at, $4), completed_at = $5 WHERE id = $1`,
      [jobId, update.status, JSON.stringify(update.result), update.startedAt, update.completedAt],
    );
  }
}
