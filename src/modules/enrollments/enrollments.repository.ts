import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { EnrollmentConfigurationParams } from '../../domain/benefits/benefit-job-params';
import { GroupState, IndividualResult } from '../../domain/benefits/enrollment-job';
import { SagasRepository } from '../saga-state/saga-state.repository';

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
  constructor(
    private readonly dataSource: DataSource,
    private readonly sagas: SagasRepository,
  ) {}

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
    occurredAt: Date = at,
  ): Promise<void> {
    const CHUNK = 1_000;
    for (let start = 0; start < rows.length; start += CHUNK) {
      const chunk = rows.slice(start, start + CHUNK);
      await manager.query(
        `INSERT INTO enrollments (benefit_id, individual_id, entity_id, configuration, effective_date, status, ended_on, job_id, updated_at, occurred_at)
         SELECT r.benefit_id, r.individual_id, r.entity_id, r.configuration, r.effective_date, 'pending', NULL, $2, $3, $4
         FROM jsonb_to_recordset($1::jsonb)
           AS r(benefit_id uuid, individual_id uuid, entity_id uuid, configuration jsonb, effective_date date)
         ON CONFLICT (benefit_id, individual_id) DO UPDATE
           SET configuration = EXCLUDED.configuration, effective_date = EXCLUDED.effective_date, status = 'pending',
               ended_on = NULL, job_id = EXCLUDED.job_id, updated_at = EXCLUDED.updated_at,
               occurred_at = greatest(enrollments.occurred_at, EXCLUDED.occurred_at)`,
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
          occurredAt,
        ],
      );
    }
  }

  /** Individuals (of `ids`) whose enrollment reflects a change that happened after `occurredAt`. */
  async changedAfter(benefitId: string, ids: string[], occurredAt: Date, manager: EntityManager): Promise<string[]> {
    const rows: { individual_id: string }[] = await manager.query(
      `SELECT individual_id FROM enrollments WHERE benefit_id = $1 AND individual_id = ANY($2::uuid[]) AND occurred_at > $3`,
      [benefitId, ids.map((id) => id.toLowerCase()), occurredAt],
    );
    return rows.map((r) => r.individual_id);
  }

  /** Rows still waiting for `jobId` end from `endedOn`: a later unenroll took those individuals over. */
  async endWaitingRows(benefitId: string, jobId: string, ids: string[], endedOn: string, at: Date, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE enrollments SET status = 'unenrolled', ended_on = $4::date, updated_at = $5
       WHERE benefit_id = $1 AND job_id = $2 AND status = 'pending' AND individual_id = ANY($3::uuid[])`,
      [benefitId, jobId, ids, endedOn, at],
    );
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

  /** Benefits of the entity the individual is enrolled in, or waiting to be, through this service. */
  async benefitsEnrolling(entityId: string, individualId: string, manager: EntityManager): Promise<string[]> {
    const rows: { benefit_id: string }[] = await manager.query(
      `SELECT benefit_id FROM enrollments
       WHERE entity_id = $1 AND individual_id = $2 AND status IN ('pending', 'enrolled') ORDER BY benefit_id`,
      [entityId, individualId.toLowerCase()],
    );
    return rows.map((r) => r.benefit_id);
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

  /**
   * Enroll groups of the benefit still waiting to be submitted, dated `fromDate` or later, that name any
   * of `ids` (other jobs than `exceptJobId`), locked. A group whose job a worker is running right
   * now is left out: its provider call is already under way.
   */
  async waitingGroupsNaming(benefitId: string, ids: string[], fromDate: string, exceptJobId: string, manager: EntityManager): Promise<EnrollmentGroup[]> {
    const rows: GroupRow[] = await manager.query(
      `SELECT ${GROUP_COLUMNS} FROM enrollment_groups g
       WHERE g.benefit_id = $1 AND g.operation = 'enroll' AND g.status = 'pending' AND g.effective_date >= $3::date AND g.job_id <> $4
         AND EXISTS (SELECT 1 FROM jsonb_array_elements(g.items) e WHERE (e->>'individual_id') = ANY($2::text[]))
         AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.type = 'benefit_enrollment_group' AND j.params->>'group_id' = g.id::text AND j.status = 'in_progress')
       ORDER BY g.effective_date, g.id
       FOR UPDATE OF g`,
      [benefitId, ids.map((id) => id.toLowerCase()), fromDate, exceptJobId],
    );
    return rows.map(groupOf);
  }

  /**
   * A group of an earlier request of the benefit, still waiting, dated no later than `group`,
   * naming any of its individuals: `group` must not reach the provider before it, or the older
   * change would land last.
   */
  async earlierWaitingGroup(group: EnrollmentGroup, manager: EntityManager = this.dataSource.manager): Promise<{ id: string; jobId: string } | undefined> {
    const rows: { id: string; job_id: string }[] = await manager.query(
      `SELECT g.id, g.job_id FROM enrollment_groups g JOIN jobs parent ON parent.id = g.job_id
       WHERE g.benefit_id = $1 AND g.status = 'pending' AND g.id <> $2 AND g.effective_date <= $3::date
         AND parent.seq < (SELECT seq FROM jobs WHERE id = $4)
         AND EXISTS (SELECT 1 FROM jsonb_array_elements(g.items) e WHERE (e->>'individual_id') = ANY($5::text[]))
         -- A group whose job ended without processing it (its commit failed) will never go first.
         AND EXISTS (SELECT 1 FROM jobs j WHERE j.type = 'benefit_enrollment_group' AND j.params->>'group_id' = g.id::text
                       AND j.status IN ('pending', 'in_progress'))
       ORDER BY parent.seq LIMIT 1`,
      [group.benefitId, group.id, group.effectiveDate, group.jobId, group.items.map((i) => i.individual_id.toLowerCase())],
    );
    return rows[0] && { id: rows[0].id, jobId: rows[0].job_id };
  }

  /** Takes items out of a waiting group with their results; a group left empty is processed, and its job ends. */
  async shrinkGroup(id: string, remaining: EnrollmentGroup['items'], results: IndividualResult[], at: Date, manager: EntityManager) {
    await manager.query(
      `UPDATE enrollment_groups SET items = $2::jsonb, results = coalesce(results, '[]'::jsonb) || $3::jsonb,
              status = CASE WHEN jsonb_array_length($2::jsonb) = 0 THEN 'processed' ELSE status END,
              processed_at = CASE WHEN jsonb_array_length($2::jsonb) = 0 THEN $4 ELSE processed_at END
       WHERE id = $1 AND status = 'pending'`,
      [id, JSON.stringify(remaining), JSON.stringify(results), at],
    );
    if (remaining.length === 0) {
      // Nothing left to submit: its job ends with it instead of waking up on the date for nothing.
      await manager.query(
        `UPDATE jobs SET status = 'complete', completed_at = $2, result = $3::jsonb
         WHERE type = 'benefit_enrollment_group' AND params->>'group_id' = $1 AND status = 'pending'`,
        [id, at, JSON.stringify({ group_id: id, superseded: true })],
      );
    }
  }

  async findGroup(id: string, manager: EntityManager = this.dataSource.manager): Promise<EnrollmentGroup | undefined> {
    const rows: GroupRow[] = await manager.query(`SELECT ${GROUP_COLUMNS} FROM enrollment_groups WHERE id = $1`, [id]);
    return rows[0] && groupOf(rows[0]);
  }

  /**
   * Marks the group processed, after the results of individuals superseded while it waited;
   * false when another run already did (nothing written then).
   */
  async markProcessed(id: string, results: IndividualResult[], at: Date, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query(
      `UPDATE enrollment_groups SET status = 'processed', results = coalesce(results, '[]'::jsonb) || $2::jsonb, processed_at = $3
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
    /** How the job ended for its sagas, when not its status (`superseded`). */
    sagaStatus: string = update.status,
  ): Promise<void> {
    await manager.query(
      `UPDATE jobs SET status = $2, result = $3::jsonb, started_at = coalesce(started_at, $4), completed_at = $5 WHERE id = $1`,
      [jobId, update.status, JSON.stringify(update.result), update.startedAt, update.completedAt],
    );
    if (update.completedAt !== null) await this.sagas.jobEnded(manager, jobId, sagaStatus, update.completedAt);
  }
}
