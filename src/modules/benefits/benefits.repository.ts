import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Benefit } from '../../domain/benefits/benefit';
import { KnownBenefit } from '../../domain/benefits/benefit-visibility';
import { JobStatus } from '../../domain/jobs/job';
import { affectedCount } from '../../infrastructure/database/query-result';

interface BenefitRow {
  id: string;
  connection_id: string;
  entity_id: string;
  type: Benefit['type'];
  description: string;
  frequency: Benefit['frequency'];
  company_contribution: Benefit['companyContribution'];
  origin: Benefit['origin'];
  job_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, connection_id, entity_id, type, description, frequency, company_contribution, origin, job_id, created_at, updated_at`;
const prefixed = (alias: string) =>
  COLUMNS.split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The `benefits` table: the deductions the service knows per entity. */
@Injectable()
export class BenefitsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The benefit of this entity; undefined for another entity's, an unknown or a malformed id. */
  async findOfEntity(entityId: string, id: string, manager: EntityManager = this.dataSource.manager): Promise<Benefit | undefined> {
    if (!UUID.test(id)) return undefined;
    const rows: BenefitRow[] = await manager.query(`SELECT ${COLUMNS} FROM benefits WHERE entity_id = $1 AND id = $2`, [entityId, id]);
    return rows[0] && benefitOf(rows[0]);
  }

  /**
   * The create-dedupe key's benefit: same entity, type, frequency (null alike) and description;
   * the service's own creation first, then the oldest found at the provider.
   */
  async findByDedupeKey(
    key: Pick<Benefit, 'entityId' | 'type' | 'frequency' | 'description'>,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Benefit | undefined> {
    const rows: BenefitRow[] = await manager.query(
      `SELECT ${COLUMNS} FROM benefits
       WHERE entity_id = $1 AND type = $2 AND coalesce(frequency, '') = coalesce($3, '') AND description = $4
       ORDER BY (origin = 'provider'), created_at, id LIMIT 1`,
      [key.entityId, key.type, key.frequency, key.description],
    );
    return rows[0] && benefitOf(rows[0]);
  }

  /** Of these (entity, benefit) pairs, those the service knows, as `entity/benefit` (lower case). */
  async knownOfEntities(pairs: readonly { entityId: string; benefitId: string }[], manager: EntityManager = this.dataSource.manager): Promise<Set<string>> {
    const valid = pairs.filter((p) => UUID.test(p.benefitId));
    if (valid.length === 0) return new Set();
    const rows: { entity_id: string; id: string }[] = await manager.query(
      `SELECT b.entity_id, b.id FROM unnest($1::uuid[], $2::uuid[]) AS k(entity_id, id) JOIN benefits b ON b.entity_id = k.entity_id AND b.id = k.id`,
      [valid.map((p) => p.entityId), valid.map((p) => p.benefitId)],
    );
    return new Set(rows.map((r) => `${r.entity_id}/${r.id}`));
  }

  /** creationStatusOf for several benefits in one round trip, by benefit id (found there: absent). */
  async creationStatusesOf(benefitIds: readonly string[], manager: EntityManager = this.dataSource.manager): Promise<Map<string, JobStatus>> {
    if (benefitIds.length === 0) return new Map();
    const rows: { id: string; status: JobStatus }[] = await manager.query(
      `SELECT b.id, j.status FROM benefits b JOIN jobs j ON j.id = b.job_id WHERE b.id = ANY($1::uuid[])`,
      [[...new Set(benefitIds)]],
    );
    return new Map(rows.map((r) => [r.id, r.status]));
  }

  /** Status of the job that creates the benefit at the provider; undefined when none made it (found there). */
  async creationStatusOf(benefitId: string, manager: EntityManager = this.dataSource.manager): Promise<JobStatus | undefined> {
    const rows: { status: JobStatus }[] = await manager.query(`SELECT j.status FROM benefits b JOIN jobs j ON j.id = b.job_id WHERE b.id = $1`, [
      benefitId,
    ]);
    return rows[0]?.status;
  }

  private async findById(id: string, manager: EntityManager): Promise<Benefit | undefined> {
    const rows: BenefitRow[] = await manager.query(`SELECT ${COLUMNS} FROM benefits WHERE id = $1`, [id]);
    return rows[0] && benefitOf(rows[0]);
  }

  async listOfEntity(entityId: string, manager: EntityManager = this.dataSource.manager): Promise<Benefit[]> {
    const rows: BenefitRow[] = await manager.query(`SELECT ${COLUMNS} FROM benefits WHERE entity_id = $1 ORDER BY created_at, id`, [
      entityId,
    ]);
    return rows.map(benefitOf);
  }

  /**
   * Inserts the benefit unless it is already there: for the service's own creations, one with
   * its dedupe key (a concurrent create won); for a benefit found at the provider, its id (two
   * plans of one type and description stay two benefits). Returns the stored one and whether it
   * is the given one.
   */
  async insertOrFind(benefit: Benefit, manager: EntityManager): Promise<{ benefit: Benefit; created: boolean }> {
    const conflict = benefit.origin === 'provider' ? '(id)' : `(entity_id, type, coalesce(frequency, ''), description) WHERE origin <> 'provider'`;
    const inserted: BenefitRow[] = await manager.query(
      `INSERT INTO benefits (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11)
       ON CONFLICT ${conflict} DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        benefit.id,
        benefit.connectionId,
        benefit.entityId,
        benefit.type,
        benefit.description,
        benefit.frequency,
        benefit.companyContribution === null ? null : JSON.stringify(benefit.companyContribution),
        benefit.origin,
        benefit.jobId,
        benefit.createdAt,
        benefit.updatedAt,
      ],
    );
    if (inserted[0]) return { benefit: benefitOf(inserted[0]), created: true };
    const existing = benefit.origin === 'provider' ? await this.findById(benefit.id, manager) : await this.findByDedupeKey(benefit, manager);
    if (!existing) throw new Error(`benefit ${benefit.id} conflicted with a row that is gone`);
    return { benefit: existing, created: false };
  }

  /** The entity's benefits with the status of the job that created or registered each, oldest first. */
  async listKnownOfEntity(entityId: string, manager: EntityManager = this.dataSource.manager): Promise<KnownBenefit[]> {
    const rows: (BenefitRow & { creation_status: JobStatus | null })[] = await manager.query(
      `SELECT ${prefixed('b')}, j.status AS creation_status
       FROM benefits b LEFT JOIN jobs j ON j.id = b.job_id
       WHERE b.entity_id = $1 ORDER BY b.created_at, b.id`,
      [entityId],
    );
    return rows.map((row) => ({ benefit: benefitOf(row), creationStatus: row.creation_status }));
  }

  /** One benefit of the entity with its creation job's status, optionally locked for the caller's transaction. */
  async findKnownOfEntity(
    entityId: string,
    id: string,
    manager: EntityManager = this.dataSource.manager,
    { lock = false } = {},
  ): Promise<KnownBenefit | undefined> {
    if (!UUID.test(id)) return undefined;
    const rows: (BenefitRow & { creation_status: JobStatus | null })[] = await manager.query(
      `SELECT ${prefixed('b')}, j.status AS creation_status
       FROM benefits b LEFT JOIN jobs j ON j.id = b.job_id
       WHERE b.entity_id = $1 AND b.id = $2 ${lock ? 'FOR UPDATE OF b' : ''}`,
      [entityId, id],
    );
    return rows[0] && { benefit: benefitOf(rows[0]), creationStatus: rows[0].creation_status };
  }

  /** findKnownOfEntity for several (entity, benefit) pairs in one round trip, by `entity/benefit` (lower case). */
  async findKnownOfEntities(pairs: readonly { entityId: string; benefitId: string }[], manager: EntityManager = this.dataSource.manager): Promise<Map<string, KnownBenefit>> {
    const valid = pairs.filter((p) => UUID.test(p.benefitId));
    if (valid.length === 0) return new Map();
    const rows: (BenefitRow & { creation_status: JobStatus | null })[] = await manager.query(
      `SELECT ${prefixed('b')}, j.status AS creation_status
       FROM (SELECT DISTINCT * FROM unnest($1::uuid[], $2::uuid[]) AS k(entity_id, id)) k
         JOIN benefits b ON b.entity_id = k.entity_id AND b.id = k.id LEFT JOIN jobs j ON j.id = b.job_id`,
      [valid.map((p) => p.entityId), valid.map((p) => p.benefitId)],
    );
    return new Map(rows.map((row) => [`${row.entity_id}/${row.id}`, { benefit: benefitOf(row), creationStatus: row.creation_status }]));
  }

  /** Points the benefit at the job that creates (or re-creates) it. */
  async setJob(id: string, jobId: string, at: Date, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE benefits SET job_id = $2, updated_at = $3 WHERE id = $1`, [id, jobId, at]);
  }

  /**
   * Sets the description unless another benefit of the entity already holds the resulting
   * dedupe key (then nothing changes, rather than failing the caller's transaction); true when set.
   */
  async updateDescriptionUnlessTaken(id: string, description: string, at: Date, manager: EntityManager): Promise<boolean> {
    const result = await manager.query(
      `UPDATE benefits b SET description = $2, updated_at = $3
       WHERE b.id = $1 AND NOT EXISTS (
         SELECT 1 FROM benefits o
         WHERE o.entity_id = b.entity_id AND o.type = b.type AND coalesce(o.frequency, '') = coalesce(b.frequency, '')
           AND o.description = $2 AND o.id <> b.id)
       RETURNING b.id`,
      [id, description, at],
    );
    return affectedCount(result) === 1;
  }

  async updateDescription(id: string, description: string, at: Date, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE benefits SET description = $2, updated_at = $3 WHERE id = $1`, [id, description, at]);
  }
}

function benefitOf(row: BenefitRow): Benefit {
  return {
    id: row.id,
    connectionId: row.connection_id,
    entityId: row.entity_id,
    type: row.type,
    description: row.description,
    frequency: row.frequency,
    companyContribution: row.company_contribution,
    origin: row.origin,
    jobId: row.job_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
