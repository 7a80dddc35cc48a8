import { PayStatementItem, PayStatementItemCategory, payStatementItemKey, payStatementItemsOf } from './pay-statement-items';
import { PayStatementRecord } from './unified-records';

/** Item fields a rule condition may test (the item's `name`, `category` and `attributes.type`). */
export const RULE_CONDITION_FIELDS = ['name', 'category', 'type'] as const;
export type RuleConditionField = (typeof RULE_CONDITION_FIELDS)[number];

export const RULE_CONDITION_OPERATORS = ['equals'] as const;
export type RuleConditionOperator = (typeof RULE_CONDITION_OPERATORS)[number];

export interface RuleCondition {
  field: RuleConditionField;
  operator: RuleConditionOperator;
  value: string;
}

/** What matching needs of a rule; dates are `YYYY-MM-DD`, null means open-ended. */
export interface ItemRule {
  id: string;
  /** Unique among an entity's rules (the store enforces it), so ranks never tie. */
  priority: number;
  conditions: RuleCondition[];
  metadata: Record<string, unknown>;
  effectiveStartDate: string | null;
  effectiveEndDate: string | null;
}

/** Highest priority first; the id only keeps the order total should priorities ever tie. */
export function compareRulesByRank(a: ItemRule, b: ItemRule): number {
  return b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function fieldOf(item: PayStatementItem, field: RuleConditionField): string | null {
  if (field === 'type') return item.attributes.type;
  return item[field];
}

/** `YYYY-MM-DD` strings compare as dates. */
export function isWithinEffectiveWindow(rule: Pick<ItemRule, 'effectiveStartDate' | 'effectiveEndDate'>, date: string): boolean {
  return (
    (rule.effectiveStartDate === null || rule.effectiveStartDate <= date) &&
    (rule.effectiveEndDate === null || date <= rule.effectiveEndDate)
  );
}

/**
 * A rule applies to an item when every condition equals the item's field and the item's last
 * pay date (the latest statement it was seen on) lies within the rule's effective window.
 */
export function ruleApplies(rule: ItemRule, item: PayStatementItem, lastPayDate: string): boolean {
  return (
    isWithinEffectiveWindow(rule, lastPayDate) &&
    rule.conditions.every((c) => c.operator === 'equals' && fieldOf(item, c.field) === c.value)
  );
}

/**
 * The metadata of every applying rule merged key by key, lowest rank first so the highest
 * priority wins a conflicting key. Null when no rule applies.
 */
export function metadataFor(item: PayStatementItem, lastPayDate: string, rules: readonly ItemRule[]): Record<string, unknown> | null {
  const applying = rules
    .filter((rule) => ruleApplies(rule, item, lastPayDate))
    .sort(compareRulesByRank)
    .reverse();
  if (applying.length === 0) return null;
  // Spread (not Object.assign) keeps every key an own data property, whatever its name.
  return applying.reduce<Record<string, unknown>>((merged, rule) => ({ ...merged, ...rule.metadata }), {});
}

/** An item seen on statements, with the latest pay date it was seen on. */
export interface SeenPayStatementItem {
  item: PayStatementItem;
  lastPayDate: string;
}

/** The filters of `GET /employer/pay-statement-item`; absent ones do not filter. */
export interface PayStatementItemFilter {
  categories?: readonly PayStatementItemCategory[];
  /** Pay-date range, inclusive, `YYYY-MM-DD`. */
  startDate?: string;
  endDate?: string;
  name?: string;
  type?: string;
}

/**
 * Collects the distinct items of statements, each with the latest pay date it was seen on,
 * as a sync does; the live path feeds it statements straight from the provider. Items come
 * out ordered by `payStatementItemKey`, the order synced reads use.
 */
export class SeenItemsCollector {
  private readonly seen = new Map<string, SeenPayStatementItem>();

  constructor(private readonly filter: PayStatementItemFilter = {}) {}

  add(payDate: string, statement: PayStatementRecord): void {
    if (this.filter.startDate !== undefined && payDate < this.filter.startDate) return;
    if (this.filter.endDate !== undefined && payDate > this.filter.endDate) return;
    for (const item of payStatementItemsOf(statement)) {
      if (!matchesItemFilter(item, this.filter)) continue;
      const key = payStatementItemKey(item);
      const known = this.seen.get(key);
      if (!known || known.lastPayDate < payDate) this.seen.set(key, { item, lastPayDate: payDate });
    }
  }

  items(): SeenPayStatementItem[] {
    return [...this.seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, seen]) => seen);
  }
}

function matchesItemFilter(item: PayStatementItem, filter: PayStatementItemFilter): boolean {
  return (
    (filter.categories === undefined || filter.categories.includes(item.category)) &&
    (filter.name === undefined || item.name === filter.name) &&
    (filter.type === undefined || item.attributes.type === filter.type)
  );
}

/** Items with their rules' metadata attached (the shape `GET /employer/pay-statement-item` returns). */
export function withRuleMetadata(seen: readonly SeenPayStatementItem[], rules: readonly ItemRule[]): PayStatementItem[] {
  return seen.map(({ item, lastPayDate }) => ({
    ...item,
    attributes: { ...item.attributes, metadata: metadataFor(item, lastPayDate, rules) },
  }));
}
