import { PayStatementRecord } from './unified-records';

/** The four line-item lists of a pay statement, as `GET /employer/pay-statement-item` names them. */
export const PAY_STATEMENT_ITEM_CATEGORIES = ['earnings', 'taxes', 'employee_deductions', 'employer_contributions'] as const;
export type PayStatementItemCategory = (typeof PAY_STATEMENT_ITEM_CATEGORIES)[number];

/**
 * One distinct line item across pay statements (wire shape). `attributes.metadata` is filled
 * by matching rules at read time; the other attributes come from the statement line.
 */
export interface PayStatementItem {
  name: string;
  category: PayStatementItemCategory;
  attributes: {
    type: string | null;
    employer: boolean | null;
    pre_tax: boolean | null;
    metadata: Record<string, unknown> | null;
  };
}

/** The distinct items of one statement (an item repeated in a statement appears once). */
export function payStatementItemsOf(statement: PayStatementRecord): PayStatementItem[] {
  const items = new Map<string, PayStatementItem>();
  const add = (item: PayStatementItem) => items.set(payStatementItemKey(item), item);
  for (const e of statement.earnings) add(item('earnings', e.name, e.type, null, null));
  for (const t of statement.taxes) add(item('taxes', t.name, t.type, t.employer, null));
  for (const d of statement.employee_deductions) add(item('employee_deductions', d.name, d.type, null, d.pre_tax));
  for (const c of statement.employer_contributions) add(item('employer_contributions', c.name, c.type, null, null));
  return [...items.values()];
}

/** What makes two items the same item: category, name and the attributes that describe it. */
export function payStatementItemKey(item: PayStatementItem): string {
  const a = item.attributes;
  return JSON.stringify([item.category, item.name, a.type, a.employer, a.pre_tax]);
}

function item(
  category: PayStatementItemCategory,
  name: string,
  type: string | null,
  employer: boolean | null,
  preTax: boolean | null,
): PayStatementItem {
  return { name, category, attributes: { type, employer, pre_tax: preTax, metadata: null } };
}
