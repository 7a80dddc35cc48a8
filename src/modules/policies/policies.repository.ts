import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { AutoEnrollmentPolicy, PolicyConfiguration, PolicyEscalation } from '../../domain/policies/auto-enrollment-policy';
import { BenefitType } from '../../domain/providers/provider';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';

/** A policy as stored, with its benefit's type (which decides the configuration's fields). */
export interface StoredPolicy extends AutoEnrollmentPolicy {
  benefitType: BenefitType;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewPolicy extends AutoEnrollmentPolicy {
  createdBy: string;
  createdAt: Date;
}

/** The fields an update may change. */
export type PolicyChange = Pick<AutoEnrollmentPolicy, 'configuration' | 'waitingPeriodDays' | 'escalation' | 'active'>;

export interface PolicyFilter {
  connectionId?: string;
  entityId?: string;
  active?: boolean;
}

interface PolicyRow {
  id: string;
  connection_id: string;
  entity_id: string;
  benefit_id: string;
  benefit_type: BenefitType;
  configuration: PolicyConfiguration;
  waiting_period_days: number;
  escalation: PolicyEscalation | null;
  active: boolean;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

const SELECT_POLICY = `
  SELECT p.id, p.connection_id, p.entity_id, p.benefit_id, b.type AS benefit_type, p.configuration, p.waiting_period_days,
         p.escalation, p.active, p.created_by, p.created_at, p.updated_at
  FROM enrollment_policies p JOIN benefits b ON b.id = p.benefit_id`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The `enrollment_policies` table: auto-enrollment of new hires, one policy per (entity, benefit). */
@Injectable()
export class PoliciesRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly uow: UnitOfWork,
  ) {}

  /** Inserts the policy; false when the entity already has one for the benefit (nothing written). */
  async insert(policy: NewPolicy, manager: EntityManager): Promise<boolean> {
    const rows: { id: string }[] = await manager.query(
      `INSERT INTO enrollment_policies
         (id, connection_id, entity_id, benefit_id, configuration, waiting_period_days, escalation, active, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb, $8, $9, $10, $10)
       ON CONFLICT (entity_id, benefit_id) DO NOTHING
       RETURNING id`,
      [
        policy.id,
        policy.connectionId,
        policy.entityId,
        policy.benefitId,
        JSON.stringify(policy.configuration),
        policy.waitingPeriodDays,
        policy.escalation === null ? null : JSON.stringify(policy.escalation),
        policy.active,
        policy.createdBy,
        policy.createdAt,
      ],
    );
    return rows.length === 1;
  }

  /** The policy; undefined for an unknown or malformed id. `lock` holds it for the caller's transaction. */
  async find(id: string, manager: EntityManager = this.dataSource.manager, { lock = false } = {}): Promise<StoredPolicy | undefined> {
    if (!UUID.test(id)) return undefined;
    const rows: PolicyRow[] = await manager.query(`${SELECT_POLICY} WHERE p.id = $1 ${lock ? 'FOR UPDATE OF p' : ''}`, [id]);
    return rows[0] && policyOf(rows[0]);
  }

  async findOfBenefit(entityId: string, benefitId: string, manager: EntityManager = this.dataSource.manager): Promise<StoredPolicy | undefined> {
    const rows: PolicyRow[] = await manager.query(`${SELECT_POLICY} WHERE p.entity_id = $1 AND p.benefit_id = $2`, [entityId, benefitId]);
    return rows[0] && policyOf(rows[0]);
  }

  /** Oldest first, with the total for paging. */
  async list(filter: PolicyFilter, page: { limit: number; offset: number }): Promise<{ count: number; policies: StoredPolicy[] }> {
    const where = new SqlFilter();
    if (filter.connectionId !== undefined) where.and((p) => `p.connection_id = ${p}`, filter.connectionId);
    if (filter.entityId !== undefined) where.and((p) => `p.entity_id = ${p}`, filter.entityId);
    if (filter.active !== undefined) where.and((p) => `p.active = ${p}`, filter.active);
    const { count, rows } = await countedPage<PolicyRow>(
      this.dataSource,
      { from: 'enrollment_policies p', select: SELECT_POLICY, where, orderBy: 'p.created_at, p.id' },
      page,
    );
    return { count, policies: rows.map(policyOf) };
  }

  /**
   * The active policies of these entities, oldest first, by entity: what their new hires are
   * enrolled by. Read in the ambient unit of work, with the new hires' other work.
   */
  async activeForEntities(entities: readonly { connectionId: string; entityId: string }[]): Promise<Map<string, StoredPolicy[]>> {
    const byEntity = new Map<string, StoredPolicy[]>(entities.map((e) => [e.entityId, []]));
    if (entities.length === 0) return byEntity;
    const rows: PolicyRow[] = await this.uow.manager.query(
      `${SELECT_POLICY} JOIN (SELECT DISTINCT * FROM unnest($1::uuid[], $2::uuid[]) AS k(connection_id, entity_id)) k
         ON k.connection_id = p.connection_id AND k.entity_id = p.entity_id
       WHERE p.active ORDER BY p.created_at, p.id`,
      [entities.map((e) => e.connectionId), entities.map((e) => e.entityId)],
    );
    for (const policy of rows.map(policyOf)) byEntity.get(policy.entityId)?.push(policy);
    return byEntity;
  }

  async update(id: string, change: PolicyChange, at: Date, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE enrollment_policies
       SET configuration = $2::jsonb, waiting_period_days = $3, escalation = $4::jsonb, active = $5, updated_at = $6
       WHERE id = $1`,
      [
        id,
        JSON.stringify(change.configuration),
        change.waitingPeriodDays,
        change.escalation === null ? null : JSON.stringify(change.escalation),
        change.active,
        at,
      ],
    );
  }
}

function policyOf(row: PolicyRow): StoredPolicy {
  return {
    id: row.id,
    connectionId: row.connection_id,
    entityId: row.entity_id,
    benefitId: row.benefit_id,
    benefitType: row.benefit_type,
    configuration: row.configuration,
    waitingPeriodDays: row.waiting_period_days,
    escalation: row.escalation,
    active: row.active,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
