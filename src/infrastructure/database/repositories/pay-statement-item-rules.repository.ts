import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ItemRule, RuleCondition } from '../../../domain/employer/pay-statement-item-rules';
import { DomainError } from '../../../domain/shared/domain-error';
import { returnedRows } from '../query-result';

/** A stored rule of one entity. */
export interface StoredItemRule extends ItemRule {
  connectionId: string;
  entityId: string;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

/** The fields a caller sets; dates `YYYY-MM-DD` or null. */
export interface ItemRuleFields {
  priority: number | undefined;
  conditions: RuleCondition[];
  metadata: Record<string, unknown>;
  effectiveStartDate: string | null;
  effectiveEndDate: string | null;
}

interface RuleRow {
  id: string;
  connection_id: string;
  entity_id: string;
  priority: number;
  conditions: RuleCondition[];
  attributes: { metadata: Record<string, unknown> };
  effective_start_date: string | null;
  effective_end_date: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

// Dates as text: node-pg would turn a `date` into a local-midnight Date and shift it by the zone.
const COLUMNS = `id, connection_id, entity_id, priority, conditions, attributes,
  effective_start_date::text AS effective_start_date, effective_end_date::text AS effective_end_date,
  created_at, updated_at, deleted_at`;

function toRule(row: RuleRow): StoredItemRule {
  return {
    id: row.id,
    connectionId: row.connection_id,
    entityId: row.entity_id,
    priority: row.priority,
    conditions: row.conditions,
    metadata: row.attributes.metadata,
    effectiveStartDate: row.effective_start_date,
    effectiveEndDate: row.effective_end_date,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    deletedAt: row.deleted_at === null ? null : new Date(row.deleted_at),
  };
}

const ruleNotFound = (id: string) =>
  new DomainError('not_found_error', `No pay-statement item rule ${id} for this entity`, { serviceCode: 'rule_not_found' });

/**
 * Pay-statement-item rules. Writes of one entity serialize on its `connection_entities` row,
 * so "priority = highest + 1" and the one-rule-per-priority check cannot race.
 */
@Injectable()
export class PayStatementItemRulesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Live rules of the entity, highest priority first. */
  async list(entityId: string): Promise<StoredItemRule[]> {
    const rows: RuleRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM pay_statement_item_rules WHERE entity_id = $1 AND deleted_at IS NULL ORDER BY priority DESC, id`,
      [entityId],
    );
    return rows.map(toRule);
  }

  async create(scope: { connectionId: string; entityId: string }, fields: ItemRuleFields, now: Date): Promise<StoredItemRule> {
    return this.dataSource.transaction(async (manager) => {
      await lockEntity(manager, scope.entityId);
      const priority = fields.priority ?? (await nextPriority(manager, scope.entityId));
      await assertPriorityFree(manager, scope.entityId, priority, null);
      const [row]: RuleRow[] = await manager.query(
        `INSERT INTO pay_statement_item_rules (id, connection_id, entity_id, priority, conditions, attributes,
           effective_start_date, effective_end_date, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
         RETURNING ${COLUMNS}`,
        [
          randomUUID(),
          scope.connectionId,
          scope.entityId,
          priority,
          JSON.stringify(fields.conditions),
          JSON.stringify({ metadata: fields.metadata }),
          fields.effectiveStartDate,
          fields.effectiveEndDate,
          now,
        ],
      );
      return toRule(row);
    });
  }

  /**
   * Applies `change` to the live rule and stores the result; `change` sees the current rule
   * and may throw (e.g. a date window that no longer holds). Unknown or deleted → 404.
   */
  async update(entityId: string, id: string, change: (current: StoredItemRule) => ItemRuleFields, now: Date): Promise<StoredItemRule> {
    return this.dataSource.transaction(async (manager) => {
      await lockEntity(manager, entityId);
      const current = await findLive(manager, entityId, id);
      const fields = change(current);
      const priority = fields.priority ?? current.priority;
      await assertPriorityFree(manager, entityId, priority, id);
      const [row] = returnedRows<RuleRow>(
        await manager.query(
          `UPDATE pay_statement_item_rules
           SET priority = $3, conditions = $4, attributes = $5, effective_start_date = $6, effective_end_date = $7, updated_at = $8
           WHERE entity_id = $1 AND id = $2
           RETURNING ${COLUMNS}`,
          [
            entityId,
            id,
            priority,
            JSON.stringify(fields.conditions),
            JSON.stringify({ metadata: fields.metadata }),
            fields.effectiveStartDate,
            fields.effectiveEndDate,
            now,
          ],
        ),
      );
      return toRule(row);
    });
  }

  /** Marks the live rule deleted and returns it as it now is. Unknown or deleted → 404. */
  async delete(entityId: string, id: string, now: Date): Promise<StoredItemRule> {
    const [row] = returnedRows<RuleRow>(
      await this.dataSource.query(
        `UPDATE pay_statement_item_rules SET deleted_at = $3
         WHERE entity_id = $1 AND id = $2 AND deleted_at IS NULL
         RETURNING ${COLUMNS}`,
        [entityId, id, now],
      ),
    );
    if (!row) throw ruleNotFound(id);
    return toRule(row);
  }
}

async function lockEntity(manager: EntityManager, entityId: string): Promise<void> {
  // NO KEY UPDATE: serializes rule writers without blocking inserts that reference the entity.
  await manager.query(`SELECT 1 FROM connection_entities WHERE id = $1 FOR NO KEY UPDATE`, [entityId]);
}

async function nextPriority(manager: EntityManager, entityId: string): Promise<number> {
  const [{ next }] = await manager.query(
    `SELECT coalesce(max(priority), 0) + 1 AS next FROM pay_statement_item_rules WHERE entity_id = $1 AND deleted_at IS NULL`,
    [entityId],
  );
  return Number(next);
}

async function assertPriorityFree(manager: EntityManager, entityId: string, priority: number, self: string | null): Promise<void> {
  const [taken] = await manager.query(
    `SELECT id FROM pay_statement_item_rules
     WHERE entity_id = $1 AND priority = $2 AND deleted_at IS NULL AND ($3::uuid IS NULL OR id <> $3::uuid)`,
    [entityId, priority, self],
  );
  if (taken) {
    throw new DomainError('conflict_error', `priority ${priority} is already taken by rule ${taken.id}; priorities are unique per entity`, {
      serviceCode: 'priority_conflict',
    });
  }
}

async function findLive(manager: EntityManager, entityId: string, id: string): Promise<StoredItemRule> {
  const [row]: RuleRow[] = await manager.query(
    `SELECT ${COLUMNS} FROM pay_statement_item_rules WHERE entity_id = $1 AND id = $2 AND deleted_at IS NULL`,
    [entityId, id],
  );
  if (!row) throw ruleNotFound(id);
  return toRule(row);
}
