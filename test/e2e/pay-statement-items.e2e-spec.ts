import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PayStatementItem } from '../../src/domain/employer/pay-statement-items';
import { PayStatementRecord } from '../../src/domain/employer/unified-records';
import { SnapshotBatch } from '../../src/domain/providers/provider-port';
import { ManualClock } from '../../src/domain/shared/clock';
import { EmployerDataRepository } from '../../src/infrastructure/database/repositories/employer-data.repository';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { SnapshotRows } from '../../src/modules/sync/snapshot-rows';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, connectEmployer, ConnectedEmployer, createApplication } from '../utils/connect';
import { json, startTestService, TestService } from '../utils/test-app';

const ITEMS = '/employer/pay-statement-item';
const RULES = '/employer/pay-statement-item/rule';

const usd = (amount: number) => ({ amount, currency: 'usd' });

/** A statement with the given lines; only the lines matter to items. */
function statement(
  lines: Partial<Pick<PayStatementRecord, 'earnings' | 'taxes' | 'employee_deductions' | 'employer_contributions'>>,
): PayStatementRecord {
  return {
    individual_id: randomUUID(),
    type: 'regular_payroll',
    payment_method: 'direct_deposit',
    total_hours: 80,
    gross_pay: usd(400_000),
    net_pay: usd(300_000),
    earnings: [],
    taxes: [],
    employee_deductions: [],
    employer_contributions: [],
    ...lines,
  };
}

const salary = { type: 'salary', name: 'Salary', amount: 400_000, currency: 'usd', hours: 80 };
const bonus = { type: 'bonus', name: 'Bonus', amount: 50_000, currency: 'usd', hours: null };
const federal = { type: 'federal' as const, name: 'Federal Income Tax', employer: false, amount: 60_000, currency: 'usd' };
const ficaEmployer = { type: 'fica' as const, name: 'FICA Employer', employer: true, amount: 30_000, currency: 'usd' };
const k401 = { name: '401(k)', amount: 20_000, currency: 'usd', pre_tax: true, type: '401k' };
const roth = { name: 'Roth 401(k)', amount: 10_000, currency: 'usd', pre_tax: false, type: '401k_roth' };
const match = { name: '401(k) Match', amount: 12_000, currency: 'usd', type: '401k' };

/** Three pay dates; each item's last pay date is noted beside the expected items below. */
const PAY_HISTORY: { payDate: string; statements: PayStatementRecord[] }[] = [
  {
    payDate: '2026-01-15',
    statements: [
      statement({ earnings: [salary], taxes: [federal, ficaEmployer], employee_deductions: [k401], employer_contributions: [match] }),
      statement({ earnings: [salary], taxes: [federal] }),
    ],
  },
  { payDate: '2026-02-15', statements: [statement({ earnings: [salary, bonus], taxes: [federal], employee_deductions: [k401] })] },
  { payDate: '2026-03-13', statements: [statement({ earnings: [salary], taxes: [federal], employee_deductions: [roth] })] },
];

const item = (category: PayStatementItem['category'], name: string, type: string, employer: boolean | null, preTax: boolean | null) => ({
  name,
  category,
  attributes: { type, employer, pre_tax: preTax, metadata: null as Record<string, unknown> | null },
});

// In item-key order (category, then name, byte order), as the endpoint lists them.
const BONUS = item('earnings', 'Bonus', 'bonus', null, null); // last 2026-02-15
const SALARY = item('earnings', 'Salary', 'salary', null, null); // last 2026-03-13
const K401 = item('employee_deductions', '401(k)', '401k', null, true); // last 2026-02-15
const ROTH = item('employee_deductions', 'Roth 401(k)', '401k_roth', null, false); // last 2026-03-13
const MATCH = item('employer_contributions', '401(k) Match', '401k', null, null); // last 2026-01-15
const FICA = item('taxes', 'FICA Employer', 'fica', true, null); // last 2026-01-15
const FEDERAL = item('taxes', 'Federal Income Tax', 'federal', false, null); // last 2026-03-13
const ALL_ITEMS = [BONUS, SALARY, K401, ROTH, MATCH, FICA, FEDERAL];

const withMetadata = (base: ReturnType<typeof item>, metadata: Record<string, unknown> | null) => ({
  ...base,
  attributes: { ...base.attributes, metadata },
});

describeWithPostgres('pay-statement items', () => {
  let service: TestService;
  let app: IssuedCredentials;
  const clock = new ManualClock('2026-06-01T12:00:00Z');

  beforeAll(async () => {
    service = await startTestService({ clock });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  const get = (path: string, token: string) => service.request(path, { headers: bearer(token) });
  const createRule = async (token: string, body: unknown) => {
    const res = await service.request(RULES, json(body, bearer(token)));
    expect(res.status).toBe(201);
    return res.body;
  };

  /** Stores a completed sync of `history` for the employer's entity, as a data sync writes it. */
  async function installSync(employer: ConnectedEmployer, history = PAY_HISTORY): Promise<void> {
    const repository = service.app.get(EmployerDataRepository, { strict: false });
    const rows = new SnapshotRows();
    const batches: SnapshotBatch[] = history.map(({ payDate, statements }) => {
      const paymentId = randomUUID();
      return { kind: 'pay_statement', records: statements.map((s) => ({ payment_id: paymentId, pay_date: payDate, statement: s })) };
    });
    const entityId = employer.entityIds[0];
    const generation = await repository.nextGeneration();
    for (const batch of batches) await repository.insertRows(entityId, generation, rows.rowsOf(batch));
    await service.app
      .get(DataSource)
      .transaction((manager) =>
        repository.switchGeneration(
          { entityId, connectionId: employer.connectionId, generation, jobId: null, completedAt: clock.now() },
          manager,
        ),
      );
  }

  async function syncedEmployer(): Promise<ConnectedEmployer> {
    const employer = await connectEmployer(service, app);
    await installSync(employer);
    return employer;
  }

  describe('access', () => {
    it('needs a token, the version header and the pay_statement product', async () => {
      const employer = await connectEmployer(service, app);
      const anonymous = await service.request(ITEMS, { headers: { 'service-api-version': '2020-09-17' } });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.name).toBe('authentication_error');
      const unversioned = await service.request(ITEMS, { headers: { authorization: `Bearer ${employer.accessToken}` } });
      expect(unversioned.status).toBe(400);
      expect(unversioned.body.service_code).toBe('missing_version_header');
      const limited = await connectEmployer(service, app, { products: ['payment'] });
      const forbidden = await get(ITEMS, limited.accessToken);
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.service_code).toBe('product_not_granted');
    });

    it('reads one entity at a time, only of the token’s connection', async () => {
      const twoEntities = await connectEmployer(service, app, { entityNames: ['A', 'B'] });
      const stranger = await syncedEmployer();
      const unscoped = await get(ITEMS, twoEntities.accessToken);
      expect(unscoped.status).toBe(400);
      expect(unscoped.body.message).toMatch(/entity_ids is required/);
      const foreign = await get(`${ITEMS}?entity_ids=${stranger.entityIds[0]}`, twoEntities.accessToken);
      expect(foreign.status).toBe(403);
      expect(foreign.body.service_code).toBe('entity_not_authorized');
    });
  });

  describe('from the latest sync', () => {
    it('lists each distinct item once, in item order, without metadata when no rule matches', async () => {
      const employer = await syncedEmployer();
      const res = await get(ITEMS, employer.accessToken);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ responses: ALL_ITEMS });
    });

    it.each([
      ['start_date=2026-02-01', [BONUS, SALARY, K401, ROTH, FEDERAL]],
      ['end_date=2026-01-31', [SALARY, K401, MATCH, FICA, FEDERAL]],
      ['start_date=2026-02-15&end_date=2026-02-15', [BONUS, SALARY, K401, FEDERAL]],
      ['start_date=2027-01-01', []],
      ['categories[]=taxes', [FICA, FEDERAL]],
      ['categories[]=taxes&categories[]=earnings', [BONUS, SALARY, FICA, FEDERAL]],
      ['categories=employee_deductions,employer_contributions', [K401, ROTH, MATCH]],
      ['type=401k', [K401, MATCH]],
      ['name=Salary', [SALARY]],
      ['name=Salary&categories[]=taxes', []],
      ['type=401k&end_date=2026-01-31&categories[]=employer_contributions', [MATCH]],
    ])('filters with %s', async (query, expected) => {
      const employer = await syncedEmployer();
      const res = await get(`${ITEMS}?${query}`, employer.accessToken);
      expect(res.status).toBe(200);
      expect(res.body.responses).toEqual(expected);
    });

    it('attaches the metadata of matching rules, merged with the highest priority winning a key', async () => {
      const employer = await syncedEmployer();
      const token = employer.accessToken;
      const byType = await createRule(token, {
        priority: 1,
        conditions: [{ field: 'type', operator: 'equals', value: '401k' }],
        attributes: { metadata: { gl_code: 'TYPE', from_type: true } },
      });
      await createRule(token, {
        priority: 2,
        conditions: [{ field: 'category', operator: 'equals', value: 'employee_deductions' }],
        attributes: { metadata: { gl_code: 'CATEGORY', from_category: true } },
      });
      await createRule(token, {
        priority: 3,
        conditions: [
          { field: 'category', operator: 'equals', value: 'taxes' },
          { field: 'name', operator: 'equals', value: 'Federal Income Tax' },
        ],
        attributes: { metadata: { irs: { form: 'W-2', box: 2 } } },
      });
      const res = await get(ITEMS, token);
      expect(res.body.responses).toEqual([
        BONUS,
        SALARY,
        withMetadata(K401, { gl_code: 'CATEGORY', from_type: true, from_category: true }),
        withMetadata(ROTH, { gl_code: 'CATEGORY', from_category: true }),
        withMetadata(MATCH, { gl_code: 'TYPE', from_type: true }),
        FICA,
        withMetadata(FEDERAL, { irs: { form: 'W-2', box: 2 } }),
      ]);

      // Raising the type rule above the category rule flips the shared key.
      const raised = await service.request(`${RULES}/${byType.id}`, {
        method: 'PUT',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify({ priority: 10 }),
      });
      expect(raised.status).toBe(200);
      const after = await get(`${ITEMS}?categories[]=employee_deductions`, token);
      expect(after.body.responses).toEqual([
        withMetadata(K401, { gl_code: 'TYPE', from_type: true, from_category: true }),
        withMetadata(ROTH, { gl_code: 'CATEGORY', from_category: true }),
      ]);

      // A deleted rule no longer applies.
      const deleted = await service.request(`${RULES}/${byType.id}`, { method: 'DELETE', headers: bearer(token) });
      expect(deleted.status).toBe(200);
      const withoutIt = await get(`${ITEMS}?type=401k`, token);
      expect(withoutIt.body.responses).toEqual([withMetadata(K401, { gl_code: 'CATEGORY', from_category: true }), MATCH]);
    });

    it('applies a rule when the item’s last pay date in the requested range is inside its effective window', async () => {
      const employer = await syncedEmployer();
      const token = employer.accessToken;
      // 401(k) was last paid 2026-02-15, the match 2026-01-15.
      await createRule(token, {
        conditions: [{ field: 'type', operator: 'equals', value: '401k' }],
        effective_end_date: '2026-02-14',
        attributes: { metadata: { plan_year: 2025 } },
      });
      // The Roth deduction was last paid 2026-03-13, the 401(k) deduction 2026-02-15.
      await createRule(token, {
        conditions: [{ field: 'category', operator: 'equals', value: 'employee_deductions' }],
        effective_start_date: '2026-03-01',
        attributes: { metadata: { new_plan: true } },
      });
      const all = await get(ITEMS, token);
      expect(all.body.responses.filter((i: { attributes: { metadata: unknown } }) => i.attributes.metadata !== null)).toEqual([
        withMetadata(ROTH, { new_plan: true }),
        withMetadata(MATCH, { plan_year: 2025 }),
      ]);
      // Within January only, the 401(k) deduction was last paid 2026-01-15: inside the window.
      const january = await get(`${ITEMS}?end_date=2026-01-31&type=401k`, token);
      expect(january.body.responses).toEqual([withMetadata(K401, { plan_year: 2025 }), withMetadata(MATCH, { plan_year: 2025 })]);
      // Boundaries are inclusive.
      await createRule(token, {
        conditions: [{ field: 'name', operator: 'equals', value: 'Bonus' }],
        effective_start_date: '2026-02-15',
        effective_end_date: '2026-02-15',
        attributes: { metadata: { one_day: true } },
      });
      expect((await get(`${ITEMS}?name=Bonus`, token)).body.responses).toEqual([withMetadata(BONUS, { one_day: true })]);
    });

    it('serves the new sync once it completes', async () => {
      const employer = await syncedEmployer();
      await installSync(employer, [{ payDate: '2026-04-10', statements: [statement({ earnings: [salary] })] }]);
      expect((await get(ITEMS, employer.accessToken)).body.responses).toEqual([SALARY]);
    });
  });

  describe('live from the provider, before the first sync', () => {
    let token: string;

    beforeAll(async () => {
      const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 25 }, basic(app)));
      expect(res.status).toBe(200);
      token = res.body.access_token;
    });

    it('derives the items from the provider’s pay statements', async () => {
      const res = await get(ITEMS, token);
      expect(res.status).toBe(200);
      const items: PayStatementItem[] = res.body.responses;
      const categories = new Set(items.map((i) => i.category));
      expect(categories).toEqual(new Set(['earnings', 'taxes', 'employee_deductions', 'employer_contributions']));
      const keys = items.map((i) => JSON.stringify([i.category, i.name, i.attributes.type, i.attributes.employer, i.attributes.pre_tax]));
      expect(new Set(keys).size).toBe(keys.length);
      expect([...keys].sort()).toEqual(keys);
      for (const i of items) expect(i.attributes.metadata).toBeNull();
      const taxes = await get(`${ITEMS}?categories[]=taxes`, token);
      expect(taxes.body.responses).toEqual(items.filter((i) => i.category === 'taxes'));
      const nothing = await get(`${ITEMS}?end_date=1999-12-31`, token);
      expect(nothing.body.responses).toEqual([]);
    });

    it('attaches rule metadata on the live path too', async () => {
      await createRule(token, {
        conditions: [{ field: 'category', operator: 'equals', value: 'taxes' }],
        attributes: { metadata: { ledger: 'taxes' } },
      });
      const res = await get(ITEMS, token);
      for (const i of res.body.responses as PayStatementItem[]) {
        expect(i.attributes.metadata).toEqual(i.category === 'taxes' ? { ledger: 'taxes' } : null);
      }
    });
  });

  describe('bad input', () => {
    it.each([
      ['categories[]=bonuses', 'categories[]'],
      ['categories=taxes,bonuses', 'categories'],
      ['start_date=2026-02-30', 'start_date'],
      ['end_date=yesterday', 'end_date'],
      ['start_date=2026-03-01&end_date=2026-02-01', 'must not be after end_date'],
      ['name=', 'name'],
      ['name=a%00b', 'query.name: text must not contain U+0000'],
      ['type=a&type=b', 'type'],
      ['limit=10', 'limit: unknown field'],
    ])('refuses %s with 400 naming the parameter', async (query, field) => {
      const employer = await syncedEmployer();
      const res = await get(`${ITEMS}?${query}`, employer.accessToken);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error', service_code: 'invalid_request' });
      expect(res.body.message).toContain(field);
    });
  });
});
