import { Inject, Injectable } from '@nestjs/common';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { PAY_STATEMENT_ITEM_CATEGORIES } from '../../domain/employer/pay-statement-items';
import { RuleCondition } from '../../domain/employer/pay-statement-item-rules';
import { CLOCK, Clock } from '../../domain/shared/clock';
import { invalidRequest } from '../../domain/shared/domain-error';
import {
  ItemRuleFields,
  PayStatementItemRulesRepository,
  StoredItemRule,
} from '../../infrastructure/database/repositories/pay-statement-item-rules.repository';
import { CreateRuleDto, RuleConditionDto, UpdateRuleDto } from './dto/rule.dto';

/** The spec's Rule, as the wire carries it. */
export interface RuleResponse {
  id: string;
  priority: number;
  created_at: string;
  updated_at: string;
  effective_start_date: string | null;
  effective_end_date: string | null;
  conditions: RuleCondition[];
  attributes: { metadata: Record<string, unknown> };
  entity_type: 'pay_statement_item';
}

export function toRuleResponse(rule: StoredItemRule): RuleResponse {
  return {
    id: rule.id,
    priority: rule.priority,
    created_at: rule.createdAt.toISOString(),
    updated_at: rule.updatedAt.toISOString(),
    effective_start_date: rule.effectiveStartDate,
    effective_end_date: rule.effectiveEndDate,
    conditions: rule.conditions,
    attributes: { metadata: rule.metadata },
    entity_type: 'pay_statement_item',
  };
}

interface RuleScope {
  connectionId: string;
  entity: ConnectionEntity;
}

/** Create, list, update and delete the pay-statement-item rules of one entity. */
@Injectable()
export class RulesService {
  constructor(
    private readonly rules: PayStatementItemRulesRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async list({ entity }: RuleScope): Promise<RuleResponse[]> {
    return (await this.rules.list(entity.id)).map(toRuleResponse);
  }

  async create({ connectionId, entity }: RuleScope, body: CreateRuleDto): Promise<RuleResponse> {
    const fields = checkedFields({
      priority: body.priority ?? undefined,
      conditions: conditionsOf(body.conditions),
      metadata: body.attributes.metadata,
      effectiveStartDate: body.effective_start_date ?? null,
      effectiveEndDate: body.effective_end_date ?? null,
    });
    return toRuleResponse(await this.rules.create({ connectionId, entityId: entity.id }, fields, this.clock.now()));
  }

  async update({ entity }: RuleScope, ruleId: string, body: UpdateRuleDto): Promise<RuleResponse> {
    const updated = await this.rules.update(
      entity.id,
      ruleId,
      (current) =>
        checkedFields({
          priority: body.priority ?? undefined,
          conditions: body.conditions ? conditionsOf(body.conditions) : current.conditions,
          metadata: body.attributes?.metadata ?? current.metadata,
          // undefined keeps the current date; null clears it.
          effectiveStartDate: body.effective_start_date === undefined ? current.effectiveStartDate : body.effective_start_date,
          effectiveEndDate: body.effective_end_date === undefined ? current.effectiveEndDate : body.effective_end_date,
        }),
      this.clock.now(),
    );
    return toRuleResponse(updated);
  }

  async delete({ entity }: RuleScope, ruleId: string): Promise<RuleResponse & { deleted_at: string }> {
    const deleted = await this.rules.delete(entity.id, ruleId, this.clock.now());
    return { ...toRuleResponse(deleted), deleted_at: deleted.deletedAt!.toISOString() };
  }
}

function conditionsOf(conditions: RuleConditionDto[]): RuleCondition[] {
  const seen = new Set<string>();
  return conditions.map(({ field, operator, value }, index) => {
    if (seen.has(field))
      throw invalidRequest(`Invalid request: conditions[${index}].field: ${field} is already tested by another condition`);
    seen.add(field);
    if (field === 'category' && !(PAY_STATEMENT_ITEM_CATEGORIES as readonly string[]).includes(value)) {
      throw invalidRequest(`Invalid request: conditions[${index}].value: a category is one of ${PAY_STATEMENT_ITEM_CATEGORIES.join(', ')}`);
    }
    return { field, operator, value };
  });
}

function checkedFields(fields: ItemRuleFields): ItemRuleFields {
  const { effectiveStartDate: start, effectiveEndDate: end } = fields;
  if (start !== null && end !== null && start > end) {
    throw invalidRequest(`Invalid request: effective_start_date (${start}) must not be after effective_end_date (${end})`);
  }
  return fields;
}
