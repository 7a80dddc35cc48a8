import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Benefit } from '../../domain/benefits/benefit';
import { KnownBenefit } from '../../domain/benefits/benefit-visibility';
import { JobStatus } from '../../domain/jobs/job';

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

  /** The create-dedupe key's benefit: same entity, type, frequency (null alike) and description. */
  async findByDedupeKey(
    key: Pick<Benefit, 'entityId' | 'type' | 'frequency' | 'description'>,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Benefit | undefined> {
    const rows: BenefitRow[] = await manager.query(
      `SELECT ${COLUMNS} FROM benefits
       WHERE entity_id = $1 AND type = $2 AND coalesce(frequency, '') = coalesce($3, '') AND description = $4`,
      [key.entityId, key.type, key.frequency, key.description],
    );
    return rows[0] && benefitOf(rows[0]);
  }

  async listOfEntity(entityId: string, manager: EntityManager = this.dataSource.manager): Promise<Benefit[]> {
    const rows: BenefitRow[] = await manager.query(`SELECT ${COLUMNS} FROM benefits WHERE entity_id = $1 ORDER BY created_at, id`, [
      entityId,
    ]);
    return rows.map(benefitOf);
  }

  /**
   * Inserts the benefit unless one with its dedupe key exists (a concurrent create won):
   * returns the stored one and whether it is the given one.
   */
  async insertOrFind(benefit: Benefit, manager: EntityManager): Promise<{ benefit: Benefit; created: boolean }> {
    const inserted: BenefitRow[] = await manager.query(
      `INSERT INTO benefits (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11)
       ON CONFLICT (entity_id, type, coalesce(frequency, ''), description) DO NOTHING
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
    const existing = await this.findByDedupeKey(benefit, manager);
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
    // UPDATE … RETURNING answers [rows, count] through TypeORM's postgres driver.
    return Array.isArray(result) && result[1] === 1;
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
