import { PayStatementItem } from './pay-statement-items';
import { ItemRule, metadataFor, ruleApplies, SeenItemsCollector, withRuleMetadata } from './pay-statement-item-rules';
import { PayStatementRecord } from './unified-records';

const k401: PayStatementItem = {
  name: '401(k)',
  category: 'employee_deductions',
  attributes: { type: '401k', employer: null, pre_tax: true, metadata: null },
};
const salary: PayStatementItem = {
  name: 'Salary',
  category: 'earnings',
  attributes: { type: 'salary', employer: null, pre_tax: null, metadata: null },
};

let sequence = 0;
function rule(overrides: Partial<ItemRule>): ItemRule {
  sequence += 1;
  return {
    id: `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    priority: 1,
    conditions: [{ field: 'type', operator: 'equals', value: '401k' }],
    metadata: {},
    effectiveStartDate: null,
    effectiveEndDate: null,
    ...overrides,
  };
}

describe('pay-statement item rules', () => {
  describe('ruleApplies', () => {
    it('needs every condition to equal the item field', () => {
      const both = rule({
        conditions: [
          { field: 'category', operator: 'equals', value: 'employee_deductions' },
          { field: 'name', operator: 'equals', value: '401(k)' },
        ],
      });
      expect(ruleApplies(both, k401, '2026-03-01')).toBe(true);
      expect(ruleApplies(both, { ...k401, name: '401(k) loan' }, '2026-03-01')).toBe(false);
      expect(ruleApplies(both, salary, '2026-03-01')).toBe(false);
    });

    it('compares values exactly (case matters) and never matches a null type', () => {
      expect(ruleApplies(rule({ conditions: [{ field: 'name', operator: 'equals', value: 'salary' }] }), salary, '2026-03-01')).toBe(false);
      const untyped = { ...salary, attributes: { ...salary.attributes, type: null } };
      expect(ruleApplies(rule({ conditions: [{ field: 'type', operator: 'equals', value: '' }] }), untyped, '2026-03-01')).toBe(false);
    });

    it('applies only when the last pay date is inside the effective window, both ends inclusive', () => {
      const window = rule({ effectiveStartDate: '2026-02-01', effectiveEndDate: '2026-02-28' });
      expect(ruleApplies(window, k401, '2026-01-31')).toBe(false);
      expect(ruleApplies(window, k401, '2026-02-01')).toBe(true);
      expect(ruleApplies(window, k401, '2026-02-28')).toBe(true);
      expect(ruleApplies(window, k401, '2026-03-01')).toBe(false);
      expect(ruleApplies(rule({ effectiveStartDate: '2026-02-01' }), k401, '2099-12-31')).toBe(true);
      expect(ruleApplies(rule({ effectiveEndDate: '2026-02-01' }), k401, '1999-01-01')).toBe(true);
    });
  });

  describe('metadataFor', () => {
    it('is null when no rule applies', () => {
      expect(metadataFor(salary, '2026-03-01', [rule({ metadata: { gl: '100' } })])).toBeNull();
    });

    it('merges the metadata of every applying rule, the highest priority winning a shared key', () => {
      const rules = [
        rule({ priority: 5, metadata: { gl_code: 'HIGH', owner: 'benefits' } }),
        rule({ priority: 1, metadata: { gl_code: 'LOW', plan: { id: 7 } } }),
        rule({ priority: 9, metadata: { owner: 'payroll' }, conditions: [{ field: 'name', operator: 'equals', value: 'Salary' }] }),
      ];
      expect(metadataFor(k401, '2026-03-01', rules)).toEqual({ gl_code: 'HIGH', owner: 'benefits', plan: { id: 7 } });
    });

    it('ignores a higher-priority rule whose window has passed', () => {
      const rules = [
        rule({ priority: 10, metadata: { gl_code: 'EXPIRED' }, effectiveEndDate: '2025-12-31' }),
        rule({ priority: 1, metadata: { gl_code: 'CURRENT' } }),
      ];
      expect(metadataFor(k401, '2026-03-01', rules)).toEqual({ gl_code: 'CURRENT' });
      expect(metadataFor(k401, '2025-12-31', rules)).toEqual({ gl_code: 'EXPIRED' });
    });

    it('keeps unusual keys as plain data', () => {
      const metadata = JSON.parse('{"__proto__": {"polluted": true}, "constructor": 1}');
      const merged = metadataFor(k401, '2026-03-01', [rule({ metadata })])!;
      expect(Object.keys(merged).sort()).toEqual(['__proto__', 'constructor']);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe('SeenItemsCollector', () => {
    const statement = (over: Partial<PayStatementRecord>): PayStatementRecord => ({
      individual_id: '00000000-0000-4000-8000-000000000001',
      type: 'regular_payroll',
      payment_method: 'direct_deposit',
      total_hours: 80,
      gross_pay: { amount: 100_000, currency: 'usd' },
      net_pay: { amount: 80_000, currency: 'usd' },
      earnings: [{ type: 'salary', name: 'Salary', amount: 100_000, currency: 'usd', hours: 80 }],
      taxes: [{ type: 'federal', name: 'Federal Income Tax', employer: false, amount: 15_000, currency: 'usd' }],
      employee_deductions: [{ name: '401(k)', amount: 5_000, currency: 'usd', pre_tax: true, type: '401k' }],
      employer_contributions: [],
      ...over,
    });

    it('keeps each distinct item once with the latest pay date it was seen on, in key order', () => {
      const collector = new SeenItemsCollector();
      collector.add('2026-02-13', statement({}));
      collector.add('2026-01-30', statement({ employee_deductions: [] }));
      collector.add('2026-02-27', statement({ employee_deductions: [] }));
      const seen = collector.items();
      expect(seen.map((s) => [s.item.category, s.item.name, s.lastPayDate])).toEqual([
        ['earnings', 'Salary', '2026-02-27'],
        ['employee_deductions', '401(k)', '2026-02-13'],
        ['taxes', 'Federal Income Tax', '2026-02-27'],
      ]);
    });

    it('applies the date range and the category, name and type filters', () => {
      const collector = new SeenItemsCollector({
        startDate: '2026-02-01',
        endDate: '2026-02-20',
        categories: ['employee_deductions', 'earnings'],
        type: '401k',
      });
      collector.add('2026-01-30', statement({}));
      collector.add('2026-02-13', statement({}));
      collector.add('2026-02-27', statement({}));
      expect(collector.items()).toEqual([{ item: k401, lastPayDate: '2026-02-13' }]);
      const byName = new SeenItemsCollector({ name: 'Salary' });
      byName.add('2026-02-13', statement({}));
      expect(byName.items().map((s) => s.item)).toEqual([salary]);
    });
  });

  it('withRuleMetadata attaches metadata per item and leaves the rest of the item as it was', () => {
    const rules = [rule({ metadata: { gl_code: '401' } })];
    expect(
      withRuleMetadata(
        [
          { item: k401, lastPayDate: '2026-02-13' },
          { item: salary, lastPayDate: '2026-02-13' },
        ],
        rules,
      ),
    ).toEqual([{ ...k401, attributes: { ...k401.attributes, metadata: { gl_code: '401' } } }, salary]);
    expect(k401.attributes.metadata).toBeNull();
  });
});
