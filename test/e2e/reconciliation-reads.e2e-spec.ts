import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DISCREPANCY_KINDS } from '../../src/domain/reconciliation/reconciliation.types';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, connectEmployer, createApplication } from '../utils/connect';
import {
  DiscrepancyFixture,
  parseCsv,
  ReconciliationFixtures,
  ReconciliationTarget,
  StoredResult,
} from '../utils/reconciliation-fixtures';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

/**
 * The client reads of payroll reconciliation over HTTP, on rows written with SQL as the
 * reconciliation job writes them: filters and paging, scoping to the token's connection and
 * entity, year-to-date contributions, the CSV export and every bad input.
 */

interface Employer {
  token: string;
  target: ReconciliationTarget;
}

/** Code-unit order: what `COLLATE "C"` gives for the ASCII ids here. */
const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const iso = (at: string | null | undefined) => (at === null || at === undefined ? null : new Date(at).toISOString());

const CSV_COLUMNS = [
  'pay_date',
  'payment_id',
  'individual_id',
  'benefit_id',
  'benefit_type',
  'benefit_description',
  'employee_pre_tax',
  'employee_roth',
  'employee_after_tax',
  'employer',
  'ytd_employee_pre_tax',
  'ytd_employee_roth',
  'ytd_employee_after_tax',
  'ytd_employer',
];

// Amounts of the fixtures, in cents.
const PREV_YEAR_401K = { employee: 10_000, employer: 5_000 };
const JAN_401K = { employee: 2_000, employer: 1_000 };
const FEB_401K = { employee: 2_000, employer: 1_000 };
const FEB_BONUS_401K = { employee: 400, employer: 200 };
const MAR_401K = { employee: 2_000, employer: 1_000 };
const ROTH = 1_500;
const AFTER_TAX = 700;

describeWithPostgres('reconciliation reads', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let fixtures: ReconciliationFixtures;
  let a: Employer;
  let b: Employer;
  let c: { token: string; east: ReconciliationTarget; west: ReconciliationTarget };

  // Payments: two of the same pay date (ordered by id), the year before, and ones nobody reconciled.
  const [febA, febB] = [randomUUID(), randomUUID()].sort(byBytes);
  const P = { prevYear: randomUUID(), jan: randomUUID(), febA, febB, mar: randomUUID(), empty: randomUUID(), onlyB: randomUUID(), unknown: randomUUID(), big: randomUUID() };
  const [p1, p2, p3] = [randomUUID(), randomUUID(), randomUUID()];
  const benefits = { k401: '', roth: '', after: '', medical: '', otherB: '', west: '' };
  const descriptions = { k401: 'Acme "Gold" 401(k), safe harbor', roth: 'Roth 401(k)', after: '=HYPERLINK("https://attacker.example/","After-tax savings")', medical: 'Medical, PPO' };
  const D = { missing: randomUUID(), mismatch: randomUUID(), drift: randomUUID(), overLimit: randomUUID(), unexpected: randomUUID(), ofB: randomUUID(), ofWest: randomUUID() };
  const discrepanciesOfA = new Map<string, DiscrepancyFixture>();
  let resultsOfA: StoredResult[] = [];
  let resultsOfB: StoredResult[] = [];
  const runOfA = { syncJobId: randomUUID(), statements: 11, reconciledAt: '2026-03-13T10:00:00.000Z' };

  const sandbox = async (body: Record<string, unknown> = {}): Promise<Employer> => {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 2, ...body }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, target: { connectionId: res.body.connection_id, entityId: res.body.entity_id } };
  };
  const get = (path: string, token: string, headers: Record<string, string> = {}) => service.request(path, { headers: bearer(token, headers) });
  const ok = async (path: string, token = a.token, headers: Record<string, string> = {}) => {
    const res = await get(path, token, headers);
    expect({ path, status: res.status, body: res.status === 200 ? undefined : res.body }).toEqual({ path, status: 200, body: undefined });
    return res;
  };
  const discrepancyOfA = async (d: DiscrepancyFixture & { id: string }) => {
    discrepanciesOfA.set(d.id, d);
    return fixtures.discrepancy(a.target, d);
  };

  beforeAll(async () => {
    service = await startTestService();
    app = await createApplication(service);
    fixtures = new ReconciliationFixtures(service.app.get(DataSource));
    [a, b] = [await sandbox(), await sandbox()];
    const connected = await connectEmployer(service, app, { entityNames: ['East', 'West'] });
    c = {
      token: connected.accessToken,
      east: { connectionId: connected.connectionId, entityId: connected.entityIds[0] },
      west: { connectionId: connected.connectionId, entityId: connected.entityIds[1] },
    };

    benefits.k401 = await fixtures.benefit(a.target, { type: '401k', description: descriptions.k401 });
    benefits.roth = await fixtures.benefit(a.target, { type: '401k_roth', description: descriptions.roth });
    benefits.after = await fixtures.benefit(a.target, { type: 'custom_post_tax', description: descriptions.after });
    benefits.medical = await fixtures.benefit(a.target, { type: 's125_medical', description: descriptions.medical });
    benefits.otherB = await fixtures.benefit(b.target, { type: '401k', description: 'Other 401(k)' });
    benefits.west = await fixtures.benefit(c.west, { type: '403b', description: 'West 403(b)' });

    await discrepancyOfA({
      id: D.missing,
      benefitId: benefits.k401,
      individualId: p3,
      kind: 'missing',
      status: 'open',
      firstPaymentId: P.jan,
      firstPayDate: '2026-01-15',
      lastPaymentId: P.jan,
      lastPayDate: '2026-01-15',
      expected: { employee: 3_000, employer: 1_500, limit_room: null },
      observed: { employee: 0, employer: 0 },
      openedAt: '2026-01-16T10:00:00Z',
    });
    // Two opened at the same instant: ordered by id.
    await discrepancyOfA({
      id: D.mismatch,
      benefitId: benefits.k401,
      individualId: p2,
      kind: 'amount_mismatch',
      status: 'acknowledged',
      firstPaymentId: P.febA,
      firstPayDate: '2026-02-12',
      lastPaymentId: P.febA,
      lastPayDate: '2026-02-12',
      occurrences: 1,
      expected: { employee: 3_000, employer: 1_500, limit_room: 250_000 },
      observed: { employee: 2_500, employer: 1_500 },
      openedAt: '2026-02-13T09:00:00Z',
      updatedAt: '2026-02-14T08:00:00Z',
      acknowledgedAt: '2026-02-14T08:00:00Z',
      acknowledgedBy: 'ops-alice',
      note: 'Payroll corrects it next run',
    });
    await discrepancyOfA({
      id: D.unexpected,
      benefitId: benefits.medical,
      individualId: p2,
      kind: 'unexpected',
      status: 'open',
      firstPaymentId: P.febA,
      firstPayDate: '2026-02-12',
      lastPaymentId: P.febA,
      lastPayDate: '2026-02-12',
      openedAt: '2026-02-13T09:00:00Z',
    });
    await discrepancyOfA({
      id: D.drift,
      benefitId: benefits.roth,
      individualId: p1,
      kind: 'configuration_drift',
      status: 'resolved',
      expected: { configuration: { employee_deduction: { type: 'percent', amount: 500 } } },
      observed: { configuration: { employee_deduction: { type: 'percent', amount: 400 } } },
      openedAt: '2026-01-05T12:00:00Z',
      updatedAt: '2026-01-20T12:00:00Z',
      resolvedAt: '2026-01-20T12:00:00Z',
      resolution: 'agreed',
      reapplyJobId: randomUUID(),
    });
    await discrepancyOfA({
      id: D.overLimit,
      benefitId: benefits.k401,
      individualId: p1,
      kind: 'over_limit',
      status: 'open',
      firstPaymentId: P.mar,
      firstPayDate: '2026-03-12',
      lastPaymentId: P.mar,
      lastPayDate: '2026-03-12',
      occurrences: 2,
      openedAt: '2026-03-13T09:00:00Z',
    });

    resultsOfA = await fixtures.results(a.target, [
      { paymentId: P.prevYear, payDate: '2025-12-31', individualId: p1, benefitId: benefits.k401, observedEmployee: PREV_YEAR_401K.employee, observedEmployer: PREV_YEAR_401K.employer },
      { paymentId: P.jan, payDate: '2026-01-15', individualId: p1, benefitId: benefits.k401, observedEmployee: JAN_401K.employee, observedEmployer: JAN_401K.employer },
      { paymentId: P.jan, payDate: '2026-01-15', individualId: p1, benefitId: benefits.roth, observedEmployee: ROTH, taxTreatment: 'roth' },
      { paymentId: P.jan, payDate: '2026-01-15', individualId: p2, benefitId: benefits.k401, observedEmployee: 3_000, observedEmployer: 1_500, limitRoom: 2_300_000 },
      { paymentId: P.jan, payDate: '2026-01-15', individualId: p2, benefitId: benefits.after, observedEmployee: AFTER_TAX, taxTreatment: 'after_tax' },
      { paymentId: P.jan, payDate: '2026-01-15', individualId: p3, benefitId: benefits.k401, result: 'missing', expectedEmployee: 3_000, expectedEmployer: 1_500, discrepancyId: D.missing },
      { paymentId: P.febA, payDate: '2026-02-12', individualId: p1, benefitId: benefits.k401, observedEmployee: FEB_401K.employee, observedEmployer: FEB_401K.employer },
      { paymentId: P.febA, payDate: '2026-02-12', individualId: p1, benefitId: benefits.roth, observedEmployee: ROTH, taxTreatment: 'roth' },
      {
        paymentId: P.febA,
        payDate: '2026-02-12',
        individualId: p2,
        benefitId: benefits.k401,
        result: 'amount_mismatch',
        expectedEmployee: 3_000,
        observedEmployee: 2_500,
        observedEmployer: 1_500,
        discrepancyId: D.mismatch,
      },
      { paymentId: P.febA, payDate: '2026-02-12', individualId: p2, benefitId: benefits.medical, result: 'unexpected', expectedEmployee: 0, observedEmployee: 4_500, discrepancyId: D.unexpected },
      { paymentId: P.febA, payDate: '2026-02-12', individualId: p3, benefitId: benefits.k401, observedEmployee: 3_000, observedEmployer: 1_500 },
      { paymentId: P.febB, payDate: '2026-02-12', individualId: p1, benefitId: benefits.k401, observedEmployee: FEB_BONUS_401K.employee, observedEmployer: FEB_BONUS_401K.employer },
      { paymentId: P.febB, payDate: '2026-02-12', individualId: p2, benefitId: benefits.after, taxTreatment: 'after_tax' },
      {
        paymentId: P.mar,
        payDate: '2026-03-12',
        individualId: p1,
        benefitId: benefits.k401,
        result: 'over_limit',
        expectedEmployee: 1_500,
        observedEmployee: MAR_401K.employee,
        observedEmployer: MAR_401K.employer,
        limitRoom: 1_500,
        discrepancyId: D.overLimit,
      },
    ]);
    await fixtures.statement(a.target, { paymentId: P.empty, individualId: p1, payDate: '2026-04-01' });
    await fixtures.run(a.target, runOfA);

    // Another connection: the same payment id and person, even A's benefit id, with other amounts.
    resultsOfB = await fixtures.results(b.target, [
      { paymentId: P.jan, payDate: '2026-01-15', individualId: p1, benefitId: benefits.k401, observedEmployee: 99_900, observedEmployer: 99_900 },
      { paymentId: P.jan, payDate: '2026-01-15', individualId: p1, benefitId: benefits.otherB, result: 'missing', expectedEmployee: 100, discrepancyId: D.ofB },
      { paymentId: P.onlyB, payDate: '2026-01-29', individualId: p1, benefitId: benefits.otherB, observedEmployee: 100 },
    ]);
    await fixtures.discrepancy(b.target, {
      id: D.ofB,
      benefitId: benefits.otherB,
      individualId: p1,
      kind: 'missing',
      status: 'open',
      firstPaymentId: P.jan,
      firstPayDate: '2026-01-15',
      lastPaymentId: P.jan,
      lastPayDate: '2026-01-15',
      openedAt: '2026-01-16T10:00:00Z',
    });
    await fixtures.run(b.target, { syncJobId: randomUUID(), statements: 2, reconciledAt: '2026-01-16T10:00:00Z' });

    // Another entity of a third connection.
    await fixtures.discrepancy(c.west, { id: D.ofWest, benefitId: benefits.west, individualId: p1, kind: 'match_mismatch', status: 'open', openedAt: '2026-02-01T00:00:00Z' });
    await fixtures.results(c.west, [{ paymentId: P.jan, payDate: '2026-01-15', individualId: p1, benefitId: benefits.west, observedEmployee: 800, discrepancyId: D.ofWest }]);
    await fixtures.run(c.west, { syncJobId: null, statements: 1, reconciledAt: '2026-02-01T00:00:00Z' });
  });
  afterAll(() => service?.close());

  // -------------------------------------------------------------------------------------------
  // The model the answers are checked against, computed from the fixtures.

  const discrepancyView = (id: string) => {
    const d = discrepanciesOfA.get(id)!;
    return {
      id,
      kind: d.kind,
      status: d.status,
      benefit_id: d.benefitId,
      individual_id: d.individualId,
      first_payment_id: d.firstPaymentId ?? null,
      first_pay_date: d.firstPayDate ?? null,
      last_payment_id: d.lastPaymentId ?? null,
      last_pay_date: d.lastPayDate ?? null,
      occurrences: d.occurrences ?? 1,
      expected: d.expected ?? null,
      observed: d.observed ?? null,
      opened_at: iso(d.openedAt),
      updated_at: iso(d.updatedAt ?? d.openedAt),
      acknowledged_at: iso(d.acknowledgedAt),
      acknowledged_by: d.acknowledgedBy ?? null,
      note: d.note ?? null,
      resolved_at: iso(d.resolvedAt),
      resolution: d.resolution ?? null,
      reapply_job_id: d.reapplyJobId ?? null,
    };
  };

  /** A's discrepancies matching `keep`, newest opened first, then by id. */
  const expectedDiscrepancyIds = (keep: (id: string, d: DiscrepancyFixture) => boolean = () => true) =>
    [...discrepanciesOfA.entries()]
      .filter(([id, d]) => keep(id, d))
      .sort(([idA, x], [idB, y]) => Date.parse(y.openedAt) - Date.parse(x.openedAt) || byBytes(idA, idB))
      .map(([id]) => id);

  const fedBy = (paymentId: string) => new Set(resultsOfA.filter((r) => r.paymentId === paymentId && r.discrepancyId).map((r) => r.discrepancyId));
  const byPersonAndBenefit = (x: StoredResult, y: StoredResult) => byBytes(x.individualId, y.individualId) || byBytes(x.benefitId, y.benefitId);
  const payDateOf = (paymentId: string) => resultsOfA.find((r) => r.paymentId === paymentId)!.payDate;

  const split = (r: StoredResult) => ({
    employee_pre_tax: r.taxTreatment === 'pre_tax' ? r.observedEmployee : 0,
    employee_roth: r.taxTreatment === 'roth' ? r.observedEmployee : 0,
    employee_after_tax: r.taxTreatment === 'after_tax' ? r.observedEmployee : 0,
    employer: r.observedEmployer,
  });

  /** The contributions of a payment: non-zero results, with sums of the same year up to (pay date, payment id). */
  const expectedContributions = (paymentId: string, results: StoredResult[] = resultsOfA) =>
    results
      .filter((r) => r.paymentId === paymentId && (r.observedEmployee !== 0 || r.observedEmployer !== 0))
      .sort(byPersonAndBenefit)
      .map((r) => {
        const year = results.filter(
          (h) =>
            h.individualId === r.individualId &&
            h.benefitId === r.benefitId &&
            h.payDate.slice(0, 4) === r.payDate.slice(0, 4) &&
            (h.payDate < r.payDate || (h.payDate === r.payDate && h.paymentId <= r.paymentId)),
        );
        const sum = (pick: (x: ReturnType<typeof split>) => number) => year.reduce((total, h) => total + pick(split(h)), 0);
        const kind = Object.entries(benefits).find(([, id]) => id === r.benefitId)![0] as keyof typeof descriptions;
        return {
          individual_id: r.individualId,
          benefit_id: r.benefitId,
          benefit_type: { k401: '401k', roth: '401k_roth', after: 'custom_post_tax', medical: 's125_medical' }[kind],
          benefit_description: descriptions[kind],
          ...split(r),
          year_to_date: {
            employee_pre_tax: sum((x) => x.employee_pre_tax),
            employee_roth: sum((x) => x.employee_roth),
            employee_after_tax: sum((x) => x.employee_after_tax),
            employer: sum((x) => x.employer),
          },
        };
      });

  const expectError = (res: TestResponse, status: number, name: string, serviceCode?: string, message?: RegExp) => {
    expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({ status, type: 'application/json; charset=utf-8' });
    expect(res.body).toEqual({ code: status, name, message: expect.any(String), ...(serviceCode === undefined ? {} : { service_code: serviceCode }) });
    if (message) expect(res.body.message).toMatch(message);
  };

  // -------------------------------------------------------------------------------------------

  describe('GET /reconciliation/discrepancies', () => {
    it('lists the entity’s discrepancies newest opened first, ties by id, every field as written', async () => {
      const res = await ok('/reconciliation/discrepancies');
      const ids = expectedDiscrepancyIds();
      expect(res.body.paging).toEqual({ count: ids.length, offset: 0 });
      expect(res.body.discrepancies.map((d: { id: string }) => d.id)).toEqual(ids);
      expect(res.body.discrepancies).toEqual(ids.map(discrepancyView));
    });

    it.each([
      ['kind=missing,over_limit', (_: string, d: DiscrepancyFixture) => ['missing', 'over_limit'].includes(d.kind)],
      ['kind[]=unexpected&kind[]=configuration_drift', (_: string, d: DiscrepancyFixture) => ['unexpected', 'configuration_drift'].includes(d.kind)],
      ['kind=missing&kind=amount_mismatch', (_: string, d: DiscrepancyFixture) => ['missing', 'amount_mismatch'].includes(d.kind)],
      ['status=open', (_: string, d: DiscrepancyFixture) => d.status === 'open'],
      ['status=acknowledged,resolved', (_: string, d: DiscrepancyFixture) => d.status !== 'open'],
      ['status=', () => true],
      ['kind=amount_mismatch&status=open', () => false],
    ])('filters by %s', async (query, keep) => {
      const res = await ok(`/reconciliation/discrepancies?${query}`);
      const ids = expectedDiscrepancyIds(keep);
      expect(res.body.discrepancies.map((d: { id: string }) => d.id)).toEqual(ids);
      expect(res.body.paging.count).toBe(ids.length);
    });

    it('filters by benefit, individual (any case) and the payment whose results fed them', async () => {
      const cases: [string, (id: string, d: DiscrepancyFixture) => boolean][] = [
        [`benefit_id=${benefits.k401}`, (_, d) => d.benefitId === benefits.k401],
        [`benefit_id=${benefits.roth.toUpperCase()}`, (_, d) => d.benefitId === benefits.roth],
        [`individual_id=${p2.toUpperCase()}`, (_, d) => d.individualId === p2],
        [`individual_id=${p1}&status=open`, (_, d) => d.individualId === p1 && d.status === 'open'],
        [`payment_id=${P.jan}`, (id) => fedBy(P.jan).has(id)],
        [`payment_id=${P.febA.toUpperCase()}`, (id) => fedBy(P.febA).has(id)],
        [`payment_id=${P.febA}&kind=unexpected`, (id, d) => fedBy(P.febA).has(id) && d.kind === 'unexpected'],
        [`payment_id=${P.febB}`, (id) => fedBy(P.febB).has(id)],
      ];
      for (const [query, keep] of cases) {
        const res = await ok(`/reconciliation/discrepancies?${query}`);
        expect({ query, ids: res.body.discrepancies.map((d: { id: string }) => d.id) }).toEqual({ query, ids: expectedDiscrepancyIds(keep) });
      }
      // The model is not empty where it matters, so the comparisons above can tell.
      expect(fedBy(P.febA).size).toBe(2);
      expect(expectedDiscrepancyIds((_, d) => d.individualId === p2)).toHaveLength(2);
    });

    it('pages: count is the whole query, offset where the page starts', async () => {
      const all = expectedDiscrepancyIds();
      const page = await ok('/reconciliation/discrepancies?limit=2&offset=1');
      expect(page.body.paging).toEqual({ count: all.length, offset: 1 });
      expect(page.body.discrepancies.map((d: { id: string }) => d.id)).toEqual(all.slice(1, 3));
      const past = await ok(`/reconciliation/discrepancies?offset=${all.length}`);
      expect(past.body).toEqual({ paging: { count: all.length, offset: all.length }, discrepancies: [] });
      const filtered = await ok('/reconciliation/discrepancies?status=open&limit=1&offset=1');
      const open = expectedDiscrepancyIds((_, d) => d.status === 'open');
      expect(filtered.body.paging).toEqual({ count: open.length, offset: 1 });
      expect(filtered.body.discrepancies.map((d: { id: string }) => d.id)).toEqual(open.slice(1, 2));
    });
  });

  describe('GET /reconciliation/discrepancies/:discrepancy_id', () => {
    it('reads one of the entity’s, by its id in any case', async () => {
      for (const id of [D.drift, D.mismatch]) expect((await ok(`/reconciliation/discrepancies/${id}`)).body).toEqual(discrepancyView(id));
      expect((await ok(`/reconciliation/discrepancies/${D.overLimit.toUpperCase()}`)).body).toEqual(discrepancyView(D.overLimit));
    });

    it('answers 404 for another connection’s, another entity’s or an unknown id', async () => {
      for (const id of [D.ofB, D.ofWest, randomUUID()]) {
        expectError(await get(`/reconciliation/discrepancies/${id}`, a.token), 404, 'not_found_error', 'discrepancy_not_found', new RegExp(id));
      }
      // The owners do see theirs.
      expect((await ok(`/reconciliation/discrepancies/${D.ofB}`, b.token)).body).toMatchObject({ id: D.ofB, kind: 'missing', individual_id: p1 });
      expect((await ok(`/reconciliation/discrepancies/${D.ofWest}?entity_ids=${c.west.entityId}`, c.token)).body.id).toBe(D.ofWest);
    });
  });

  describe('GET /reconciliation/payments/:payment_id/results', () => {
    const resultView = (r: StoredResult) => ({
      individual_id: r.individualId,
      benefit_id: r.benefitId,
      result: r.result,
      expected_employee: r.expectedEmployee,
      observed_employee: r.observedEmployee,
      expected_employer: r.expectedEmployer,
      observed_employer: r.observedEmployer,
      limit_room: r.limitRoom,
      tax_treatment: r.taxTreatment,
      discrepancy_id: r.discrepancyId,
    });
    const resultsOf = (paymentId: string, keep: (r: StoredResult) => boolean = () => true) =>
      resultsOfA.filter((r) => r.paymentId === paymentId && keep(r)).sort(byPersonAndBenefit).map(resultView);

    it('answers every result of the payment by individual, then benefit, with the pay date', async () => {
      for (const paymentId of [P.jan, P.febA, P.mar]) {
        const res = await ok(`/reconciliation/payments/${paymentId}/results`);
        const expected = resultsOf(paymentId);
        expect(res.body).toEqual({ payment_id: paymentId, pay_date: payDateOf(paymentId), paging: { count: expected.length, offset: 0 }, results: expected });
      }
      // Another connection's results of the same payment id stay out.
      expect(resultsOfB.some((r) => r.paymentId === P.jan)).toBe(true);
    });

    it('filters by result (lists), benefit and individual, and pages', async () => {
      const cases: [string, (r: StoredResult) => boolean][] = [
        ['result=missing,amount_mismatch', (r) => ['missing', 'amount_mismatch'].includes(r.result)],
        ['result[]=matched', (r) => r.result === 'matched'],
        [`benefit_id=${benefits.k401}`, (r) => r.benefitId === benefits.k401],
        [`individual_id=${p1.toUpperCase()}`, (r) => r.individualId === p1],
        [`individual_id=${p2}&result=matched`, (r) => r.individualId === p2 && r.result === 'matched'],
      ];
      for (const [query, keep] of cases) {
        const res = await ok(`/reconciliation/payments/${P.jan}/results?${query}`);
        const expected = resultsOf(P.jan, keep);
        expect({ query, count: res.body.paging.count, results: res.body.results }).toEqual({ query, count: expected.length, results: expected });
      }
      const all = resultsOf(P.jan);
      const page = await ok(`/reconciliation/payments/${P.jan}/results?limit=2&offset=2`);
      expect(page.body.paging).toEqual({ count: all.length, offset: 2 });
      expect(page.body.results).toEqual(all.slice(2, 4));
    });

    it('answers a reconciled payment without results with none, and 404 for one the entity has no reconciled statement of', async () => {
      const empty = await ok(`/reconciliation/payments/${P.empty}/results`);
      expect(empty.body).toEqual({ payment_id: P.empty, pay_date: '2026-04-01', paging: { count: 0, offset: 0 }, results: [] });
      for (const paymentId of [P.unknown, P.onlyB]) {
        expectError(await get(`/reconciliation/payments/${paymentId}/results`, a.token), 404, 'not_found_error', 'payment_not_reconciled', new RegExp(paymentId));
      }
      expect((await ok(`/reconciliation/payments/${P.onlyB}/results`, b.token)).body.results).toHaveLength(1);
    });
  });

  describe('GET /reconciliation/payments/:payment_id/contributions', () => {
    it('answers the non-zero contributions split by tax treatment, with year-to-date sums of the calendar year up to the payment', async () => {
      for (const paymentId of [P.prevYear, P.jan, P.febA, P.febB, P.mar]) {
        const res = await ok(`/reconciliation/payments/${paymentId}/contributions`);
        const expected = expectedContributions(paymentId);
        expect({ paymentId, pay_date: res.body.pay_date, paging: res.body.paging, contributions: res.body.contributions }).toEqual({
          paymentId,
          pay_date: payDateOf(paymentId),
          paging: { count: expected.length, offset: 0 },
          contributions: expected,
        });
      }
    });

    it('sums a year across payments, the same pay date by payment id, and never across years', async () => {
      const k401Of = async (paymentId: string) =>
        (await ok(`/reconciliation/payments/${paymentId}/contributions?benefit_id=${benefits.k401}`)).body.contributions.find(
          (x: { individual_id: string }) => x.individual_id === p1,
        );
      const prevYear = await k401Of(P.prevYear);
      expect(prevYear.year_to_date).toEqual({ employee_pre_tax: PREV_YEAR_401K.employee, employee_roth: 0, employee_after_tax: 0, employer: PREV_YEAR_401K.employer });
      // January starts a new year: December's 401(k) is not in it.
      const jan = await k401Of(P.jan);
      expect(jan.year_to_date).toEqual({ employee_pre_tax: JAN_401K.employee, employee_roth: 0, employee_after_tax: 0, employer: JAN_401K.employer });
      // Two payments of one year; the bonus paid the same day comes after (its id sorts later).
      const febA = await k401Of(P.febA);
      expect(febA).toMatchObject({ employee_pre_tax: FEB_401K.employee, employer: FEB_401K.employer });
      expect(febA.year_to_date).toEqual({
        employee_pre_tax: JAN_401K.employee + FEB_401K.employee,
        employee_roth: 0,
        employee_after_tax: 0,
        employer: JAN_401K.employer + FEB_401K.employer,
      });
      const febB = await k401Of(P.febB);
      expect(febB.year_to_date.employee_pre_tax).toBe(JAN_401K.employee + FEB_401K.employee + FEB_BONUS_401K.employee);
      const mar = await k401Of(P.mar);
      expect(mar.year_to_date.employer).toBe(JAN_401K.employer + FEB_401K.employer + FEB_BONUS_401K.employer + MAR_401K.employer);
    });

    it('puts the employee amount under its tax treatment, for the payment and the year', async () => {
      const res = await ok(`/reconciliation/payments/${P.febA}/contributions?limit=100`);
      const of = (person: string, benefit: string) =>
        res.body.contributions.find((x: { individual_id: string; benefit_id: string }) => x.individual_id === person && x.benefit_id === benefit);
      expect(of(p1, benefits.roth)).toMatchObject({
        benefit_type: '401k_roth',
        employee_pre_tax: 0,
        employee_roth: ROTH,
        employee_after_tax: 0,
        employer: 0,
        year_to_date: { employee_pre_tax: 0, employee_roth: 2 * ROTH, employee_after_tax: 0, employer: 0 },
      });
      expect(of(p2, benefits.medical)).toMatchObject({ employee_pre_tax: 4_500, employee_roth: 0, employee_after_tax: 0 });
      const jan = await ok(`/reconciliation/payments/${P.jan}/contributions?benefit_id=${benefits.after}`);
      expect(jan.body.contributions).toEqual([
        expect.objectContaining({ individual_id: p2, employee_pre_tax: 0, employee_roth: 0, employee_after_tax: AFTER_TAX, year_to_date: expect.objectContaining({ employee_after_tax: AFTER_TAX }) }),
      ]);
    });

    it('leaves out zero lines, filters by benefit and pages', async () => {
      const all = expectedContributions(P.jan);
      expect(all.some((x) => x.individual_id === p3)).toBe(false);
      const page = await ok(`/reconciliation/payments/${P.jan}/contributions?limit=1&offset=1`);
      expect(page.body.paging).toEqual({ count: all.length, offset: 1 });
      expect(page.body.contributions).toEqual(all.slice(1, 2));
      const k401 = await ok(`/reconciliation/payments/${P.jan}/contributions?benefit_id=${benefits.k401.toUpperCase()}`);
      expect(k401.body.contributions).toEqual(all.filter((x) => x.benefit_id === benefits.k401));
      const febB = await ok(`/reconciliation/payments/${P.febB}/contributions`);
      expect(febB.body.contributions.map((x: { individual_id: string }) => x.individual_id)).toEqual([p1]);
    });

    it('is reconciled when no open discrepancy was fed by the payment’s results (of the benefit asked for)', async () => {
      const openFedBy = (paymentId: string, benefitId?: string) =>
        new Set(
          resultsOfA
            .filter((r) => r.paymentId === paymentId && (benefitId === undefined || r.benefitId === benefitId) && r.discrepancyId)
            .filter((r) => discrepanciesOfA.get(r.discrepancyId!)!.status === 'open')
            .map((r) => r.discrepancyId),
        ).size;
      const cases: [string, string, number][] = [
        [P.jan, '', openFedBy(P.jan)],
        [P.febA, '', openFedBy(P.febA)],
        [P.febB, '', openFedBy(P.febB)],
        [P.mar, '', openFedBy(P.mar)],
        [P.jan, `?benefit_id=${benefits.roth}`, openFedBy(P.jan, benefits.roth)],
        [P.empty, '', 0],
      ];
      // Both outcomes occur, and the acknowledged one of February does not count.
      expect(cases.map(([, , n]) => n)).toEqual([1, 1, 0, 1, 0, 0]);
      for (const [paymentId, query, open] of cases) {
        const res = await ok(`/reconciliation/payments/${paymentId}/contributions${query}`);
        expect({ paymentId, query, reconciled: res.body.reconciled, open: res.body.open_discrepancies }).toEqual({ paymentId, query, reconciled: open === 0, open });
      }
      // Another connection's open discrepancy fed by its result of the same payment id does not count.
      expect((await ok(`/reconciliation/payments/${P.jan}/contributions`, b.token)).body).toMatchObject({ reconciled: false, open_discrepancies: 1 });
      expect((await ok(`/reconciliation/payments/${P.jan}/contributions?entity_ids=${c.west.entityId}`, c.token)).body).toMatchObject({
        reconciled: false,
        open_discrepancies: 1,
      });
    });

    it('turns reconciled once the discrepancy its results fed is resolved', async () => {
      const db = service.app.get(DataSource);
      const { n } = (await db.query(`SELECT count(*)::int AS n FROM deduction_discrepancies WHERE id = $1 AND status = 'open'`, [D.overLimit]))[0];
      expect(n).toBe(1);
      expect((await ok(`/reconciliation/payments/${P.mar}/contributions`)).body).toMatchObject({ reconciled: false, open_discrepancies: 1 });
      await db.query(`UPDATE deduction_discrepancies SET status = 'resolved', resolved_at = now(), resolution = 'agreed' WHERE id = $1`, [D.overLimit]);
      try {
        expect((await ok(`/reconciliation/payments/${P.mar}/contributions`)).body).toMatchObject({ reconciled: true, open_discrepancies: 0 });
      } finally {
        await db.query(`UPDATE deduction_discrepancies SET status = 'open', resolved_at = NULL, resolution = NULL WHERE id = $1`, [D.overLimit]);
      }
    });

    it('sees only the token’s connection and entity', async () => {
      const ofB = await ok(`/reconciliation/payments/${P.jan}/contributions`, b.token);
      expect(ofB.body.contributions).toEqual(
        resultsOfB
          .filter((r) => r.paymentId === P.jan && r.observedEmployee !== 0)
          .map((r) => expect.objectContaining({ individual_id: r.individualId, benefit_id: r.benefitId, employee_pre_tax: r.observedEmployee, benefit_type: null })),
      );
      expectError(await get(`/reconciliation/payments/${P.onlyB}/contributions`, a.token), 404, 'not_found_error', 'payment_not_reconciled');
      expectError(await get(`/reconciliation/payments/${P.unknown}/contributions`, a.token), 404, 'not_found_error', 'payment_not_reconciled');
    });

    describe('as CSV', () => {
      const csvRowsOf = (paymentId: string, contributions: ReturnType<typeof expectedContributions>) =>
        contributions.map((x) =>
          [
            payDateOf(paymentId),
            paymentId,
            x.individual_id,
            x.benefit_id,
            x.benefit_type,
            // A text a spreadsheet would run as a formula is written as text (leading apostrophe).
            /^[=+\-@\t\r]/.test(x.benefit_description) ? `'${x.benefit_description}` : x.benefit_description,
            x.employee_pre_tax,
            x.employee_roth,
            x.employee_after_tax,
            x.employer,
            x.year_to_date.employee_pre_tax,
            x.year_to_date.employee_roth,
            x.year_to_date.employee_after_tax,
            x.year_to_date.employer,
          ].map(String),
        );

      it('answers the whole payment with Accept: text/csv, as an attachment that parses back to the JSON answer', async () => {
        for (const paymentId of [P.jan, P.febA, P.febB]) {
          const res = await ok(`/reconciliation/payments/${paymentId}/contributions?limit=1`, a.token, { accept: 'text/csv' });
          expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
          expect(res.headers.get('content-disposition')).toBe(`attachment; filename="contributions-${paymentId}.csv"`);
          const [header, ...rows] = parseCsv(res.text);
          expect(header).toEqual(CSV_COLUMNS);
          expect(rows).toEqual(csvRowsOf(paymentId, expectedContributions(paymentId)));
          // The same as the JSON answer, all of it.
          const asJson = await ok(`/reconciliation/payments/${paymentId}/contributions`);
          expect(rows).toEqual(csvRowsOf(paymentId, asJson.body.contributions));
        }
      });

      it('writes a description a spreadsheet would run as a formula as text, with a leading apostrophe; JSON keeps it as stored', async () => {
        const res = await ok(`/reconciliation/payments/${P.jan}/contributions?format=csv&benefit_id=${benefits.after}`);
        const [header, ...rows] = parseCsv(res.text);
        expect(rows.length).toBeGreaterThan(0);
        for (const row of rows) expect(row[header.indexOf('benefit_description')]).toBe(`'${descriptions.after}`);
        expect(res.text).not.toMatch(/(^|,)"?=HYPERLINK/m);
        const asJson = await ok(`/reconciliation/payments/${P.jan}/contributions?benefit_id=${benefits.after}`);
        expect(asJson.body.contributions.map((x: { benefit_description: string }) => x.benefit_description)).toEqual(rows.map(() => descriptions.after));
      });

      it('quotes a description holding a comma and quotes (RFC 4180)', async () => {
        const res = await ok(`/reconciliation/payments/${P.jan}/contributions?format=csv&benefit_id=${benefits.k401}`);
        expect(res.text).toContain(`,"${descriptions.k401.replace(/"/g, '""')}",`);
        const [header, ...rows] = parseCsv(res.text);
        const description = header.indexOf('benefit_description');
        expect(rows.length).toBeGreaterThan(0);
        for (const row of rows) {
          expect(row).toHaveLength(CSV_COLUMNS.length);
          expect(row[description]).toBe(descriptions.k401);
        }
        expect(rows).toEqual(csvRowsOf(P.jan, expectedContributions(P.jan).filter((x) => x.benefit_id === benefits.k401)));
        const medical = parseCsv((await ok(`/reconciliation/payments/${P.febA}/contributions?format=csv&benefit_id=${benefits.medical}`)).text);
        expect(medical.slice(1).map((row) => row[description])).toEqual([descriptions.medical]);
      });

      it('follows format= over Accept, and answers errors as the error object', async () => {
        const asJson = await ok(`/reconciliation/payments/${P.jan}/contributions?format=json`, a.token, { accept: 'text/csv' });
        expect(asJson.headers.get('content-type')).toMatch(/^application\/json/);
        expect(asJson.body.contributions).toEqual(expectedContributions(P.jan));
        const preferred = await ok(`/reconciliation/payments/${P.jan}/contributions`, a.token, { accept: 'application/json;q=0.5, text/csv' });
        expect(preferred.headers.get('content-type')).toBe('text/csv; charset=utf-8');
        const notAsked = await ok(`/reconciliation/payments/${P.jan}/contributions`, a.token, { accept: '*/*' });
        expect(notAsked.headers.get('content-type')).toMatch(/^application\/json/);
        expectError(await get(`/reconciliation/payments/${P.unknown}/contributions`, a.token, { accept: 'text/csv' }), 404, 'not_found_error', 'payment_not_reconciled');
        expectError(await get(`/reconciliation/payments/${P.onlyB}/contributions?format=csv`, a.token), 404, 'not_found_error', 'payment_not_reconciled');
        const empty = await ok(`/reconciliation/payments/${P.empty}/contributions?format=csv`);
        expect(parseCsv(empty.text)).toEqual([CSV_COLUMNS]);
      });

      it('exports 10,000 rows whole, in order, past any page size', async () => {
        const count = 10_000;
        const big = { employee: 1_234, employer: 617 };
        await fixtures.bulkResults(a.target, { paymentId: P.big, payDate: '2026-05-14', benefitId: benefits.k401, count, ...big });
        const page = await ok(`/reconciliation/payments/${P.big}/contributions?limit=100&offset=9950`);
        expect(page.body.paging).toEqual({ count, offset: 9_950 });
        expect(page.body.contributions).toHaveLength(50);

        const res = await ok(`/reconciliation/payments/${P.big}/contributions`, a.token, { accept: 'text/csv' });
        const [header, ...rows] = parseCsv(res.text);
        expect(header).toEqual(CSV_COLUMNS);
        expect(rows).toHaveLength(count);
        const people = rows.map((row) => row[2]);
        expect(new Set(people).size).toBe(count);
        expect(people).toEqual([...people].sort(byBytes));
        const expectedLine = [String(big.employee), '0', '0', String(big.employer), String(big.employee), '0', '0', String(big.employer)];
        for (const row of rows) expect(row.slice(6)).toEqual(expectedLine);
        // The last JSON page is the tail of the file.
        expect(page.body.contributions.map((x: { individual_id: string }) => x.individual_id)).toEqual(people.slice(9_950));
      });
    });
  });

  describe('GET /reconciliation/status', () => {
    const openByKind = (keep: (d: DiscrepancyFixture) => boolean) =>
      Object.fromEntries(DISCREPANCY_KINDS.map((kind) => [kind, [...discrepanciesOfA.values()].filter((d) => d.kind === kind && keep(d)).length]));

    it('answers the last run and the live discrepancies by kind', async () => {
      const res = await ok('/reconciliation/status');
      expect(res.body).toEqual({
        entity_id: a.target.entityId,
        sync_job_id: runOfA.syncJobId,
        reconciled_at: runOfA.reconciledAt,
        statements: runOfA.statements,
        open: openByKind((d) => d.status === 'open'),
        acknowledged: [...discrepanciesOfA.values()].filter((d) => d.status === 'acknowledged').length,
      });
      expect(Object.values(res.body.open).reduce((x: number, y) => x + (y as number), 0)).toBeGreaterThan(1);
    });

    it('answers nulls and zeros before the first run, and each entity its own', async () => {
      const east = await ok(`/reconciliation/status?entity_ids=${c.east.entityId}`, c.token);
      expect(east.body).toEqual({
        entity_id: c.east.entityId,
        sync_job_id: null,
        reconciled_at: null,
        statements: null,
        open: Object.fromEntries(DISCREPANCY_KINDS.map((kind) => [kind, 0])),
        acknowledged: 0,
      });
      const west = await ok(`/reconciliation/status?entity_ids=${c.west.entityId}`, c.token);
      expect(west.body).toMatchObject({ entity_id: c.west.entityId, sync_job_id: null, statements: 1, open: { match_mismatch: 1, missing: 0 }, acknowledged: 0 });
      const ofB = await ok('/reconciliation/status', b.token);
      expect(ofB.body).toMatchObject({ entity_id: b.target.entityId, statements: 2, open: { missing: 1, over_limit: 0 }, acknowledged: 0 });
    });
  });

  describe('scoping', () => {
    it('shows another connection nothing of this one', async () => {
      const res = await ok('/reconciliation/discrepancies', b.token);
      expect(res.body).toEqual({ paging: { count: 1, offset: 0 }, discrepancies: [expect.objectContaining({ id: D.ofB })] });
      const results = await ok(`/reconciliation/payments/${P.jan}/results`, b.token);
      expect(results.body.results.map((r: { benefit_id: string }) => r.benefit_id).sort()).toEqual([benefits.k401, benefits.otherB].sort());
      expect(results.body.results.find((r: { benefit_id: string }) => r.benefit_id === benefits.k401).observed_employee).toBe(99_900);
    });

    it('reads the entity entity_ids names, as the employer reads do', async () => {
      const west = await ok(`/reconciliation/discrepancies?entity_ids=${c.west.entityId}`, c.token);
      expect(west.body.discrepancies.map((d: { id: string }) => d.id)).toEqual([D.ofWest]);
      const bracketed = await ok(`/reconciliation/discrepancies?entity_ids[]=${c.west.entityId}`, c.token);
      expect(bracketed.body.paging.count).toBe(1);
      const east = await ok(`/reconciliation/discrepancies?entity_ids=${c.east.entityId}`, c.token);
      expect(east.body).toEqual({ paging: { count: 0, offset: 0 }, discrepancies: [] });
      expectError(await get(`/reconciliation/discrepancies/${D.ofWest}?entity_ids=${c.east.entityId}`, c.token), 404, 'not_found_error', 'discrepancy_not_found');
      expectError(await get(`/reconciliation/payments/${P.jan}/results?entity_ids=${c.east.entityId}`, c.token), 404, 'not_found_error', 'payment_not_reconciled');
      // Several entities and none named: which one is not guessed.
      expectError(await get('/reconciliation/status', c.token), 400, 'invalid_request_error', 'invalid_request', /entity_ids is required/);
      expectError(await get(`/reconciliation/status?entity_ids=${c.east.entityId},${c.west.entityId}`, c.token), 400, 'invalid_request_error', 'invalid_request', /exactly one/);
      for (const path of ['/reconciliation/discrepancies', '/reconciliation/status', `/reconciliation/payments/${P.jan}/contributions`]) {
        expectError(await get(`${path}?entity_ids=${c.west.entityId}`, a.token), 403, 'forbidden_error', 'entity_not_authorized');
      }
    });
  });

  describe('bad input', () => {
    it.each([
      ['/reconciliation/discrepancies?kind=bogus', /kind must be one of missing, amount_mismatch/],
      ['/reconciliation/discrepancies?kind=missing,bogus', /kind must be one of/],
      ['/reconciliation/discrepancies?kind[]=nope', /kind\[\] must be one of/],
      ['/reconciliation/discrepancies?status=closed', /status must be one of open, acknowledged, resolved/],
      ['/reconciliation/discrepancies?limit=0', /limit must not be less than 1/],
      ['/reconciliation/discrepancies?limit=101', /limit must not be greater than 100/],
      ['/reconciliation/discrepancies?limit=ten', /limit must be a whole number/],
      ['/reconciliation/discrepancies?limit=2.5', /limit must be a whole number/],
      ['/reconciliation/discrepancies?offset=-1', /offset must not be less than 0/],
      ['/reconciliation/discrepancies?offset=1e20', /offset must be at most/],
      ['/reconciliation/discrepancies?benefit_id=not-a-uuid', /benefit_id must be a UUID/],
      ['/reconciliation/discrepancies?individual_id=42', /individual_id must be a UUID/],
      ['/reconciliation/discrepancies?payment_id=x', /payment_id must be a UUID/],
      [`/reconciliation/discrepancies?benefit_id=${randomUUID()}&benefit_id=${randomUUID()}`, /benefit_id must be a UUID/],
      ['/reconciliation/discrepancies?sort=opened_at', /sort: unknown field/],
      ['/reconciliation/discrepancies/not-a-uuid', /discrepancy_id must be a UUID/],
      ['/reconciliation/discrepancies/%27%3B%20drop', /discrepancy_id must be a UUID/],
      [`/reconciliation/discrepancies/${randomUUID()}?limit=1`, /limit: unknown field/],
      ['/reconciliation/payments/nope/results', /payment_id must be a UUID/],
      ['/reconciliation/payments/PLACEHOLDER/results?result=great', /result must be one of matched, missing/],
      ['/reconciliation/payments/PLACEHOLDER/results?limit=1000', /limit must not be greater than 100/],
      ['/reconciliation/payments/PLACEHOLDER/results?kind=missing', /kind: unknown field/],
      ['/reconciliation/payments/nope/contributions', /payment_id must be a UUID/],
      ['/reconciliation/payments/PLACEHOLDER/contributions?format=xml', /format must be one of json, csv/],
      ['/reconciliation/payments/PLACEHOLDER/contributions?benefit_id=x', /benefit_id must be a UUID/],
      ['/reconciliation/payments/PLACEHOLDER/contributions?individual_id=x', /individual_id: unknown field/],
      ['/reconciliation/status?verbose=true', /verbose: unknown field/],
    ])('refuses %s with 400 naming the parameter', async (path, message) => {
      const res = await get(path.replace('PLACEHOLDER', P.jan), a.token);
      expectError(res, 400, 'invalid_request_error', 'invalid_request', message);
    });

    it('refuses a bad query even with Accept: text/csv, as the error object', async () => {
      expectError(await get(`/reconciliation/payments/${P.jan}/contributions?limit=0`, a.token, { accept: 'text/csv' }), 400, 'invalid_request_error', 'invalid_request', /limit/);
    });

    it('refuses a missing token, a connection without the benefits product, and a missing version header', async () => {
      const limited = await sandbox({ products: ['company', 'pay_statement'] });
      for (const path of ['/reconciliation/discrepancies', `/reconciliation/discrepancies/${D.missing}`, `/reconciliation/payments/${P.jan}/results`, `/reconciliation/payments/${P.jan}/contributions`, '/reconciliation/status']) {
        expectError(await service.request(path, { headers: { 'service-api-version': '2020-09-17' } }), 401, 'authentication_error', 'missing_access_token');
        expectError(await get(path, limited.token), 403, 'forbidden_error', 'product_not_granted', /benefits/);
        expectError(await service.request(path, { headers: { authorization: `Bearer ${a.token}` } }), 400, 'invalid_request_error', 'missing_version_header');
      }
    });
  });
});
