import { DataSource } from 'typeorm';
import { PaymentRecord, PayStatementRecord } from '../../../src/domain/employer/unified-records';
import { EmployerRef } from '../../../src/domain/providers/provider-port';
import { ManualClock } from '../../../src/domain/shared/clock';
import { DomainError } from '../../../src/domain/shared/domain-error';
import { SandboxEmployerStore } from '../../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { addDays, payPeriodOf } from '../../../src/infrastructure/providers/sandbox/sandbox-pay-calendar';
import { isPaidInPeriod } from '../../../src/infrastructure/providers/sandbox/sandbox-pay-run';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { catalogue, fixedDeduction, sandboxEmployer, statementProblems, sum } from './sandbox-test-kit';

const TODAY = '2026-06-01';
const ALL_TIME = ['0001-01-01', '9999-12-31'] as const;

describeWithPostgres('sandbox employer store (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let clock: ManualClock;
  let store: SandboxEmployerStore;

  const newStore = () => new SandboxEmployerStore(dataSource, clock, catalogue);
  const count = async (table: string, entityId: string): Promise<number> =>
    (await dataSource.query(`SELECT count(*)::int AS n FROM ${table} WHERE entity_id = $1`, [entityId]))[0].n;
  const allStatements = async (ref: EmployerRef, paymentId: string): Promise<PayStatementRecord[]> =>
    (await store.payStatements(ref, paymentId, { limit: 10_000, offset: 0 }))!.items;
  const rejection = async (work: Promise<unknown>): Promise<DomainError> => {
    const error = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  };

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(8));
  });

  beforeEach(() => {
    clock = new ManualClock(`${TODAY}T12:00:00Z`);
    store = newStore();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('generates an employer exactly once, however many callers reach it at the same time', async () => {
    const ref = await sandboxEmployer(dataSource, { employeeSize: 40 });
    // Separate stores: no shared in-memory cache, only the database decides.
    await Promise.all(Array.from({ length: 6 }, () => newStore().ensureEmployer(ref)));
    expect(await count('sandbox_employers', ref.entityId)).toBe(1);
    expect(await count('sandbox_individuals', ref.entityId)).toBe(40);
    const payments = await store.payments(ref, ...ALL_TIME);
    expect(new Set(payments.map((p) => p.id)).size).toBe(payments.length);
    expect(payments.length).toBeGreaterThanOrEqual(14);
    expect(await count('sandbox_pay_statements', ref.entityId)).toBe(sum(payments.map((p) => p.individual_ids.length)));
  });

  it("names the company after the entity and gives it the entity id (the connection's company_id)", async () => {
    const ref = await sandboxEmployer(dataSource, { entityName: 'Globex LLC' });
    const company = await store.company(ref);
    expect(company.legal_name).toBe('Globex LLC');
    expect(company.id).toBe(ref.entityId);
    expect(company.ein).toMatch(/^\d{2}-\d{7}$/);
  });

  describe('pay history', () => {
    let ref: EmployerRef;
    let payments: PaymentRecord[];

    beforeAll(async () => {
      clock = new ManualClock(`${TODAY}T12:00:00Z`);
      ref = await sandboxEmployer(dataSource, { employeeSize: 60 });
      payments = await newStore().payments(ref, ...ALL_TIME);
    });

    it('holds six months of bi-weekly regular runs and one off-cycle run, all on or before today', async () => {
      const kinds = await Promise.all(payments.map(async (p) => (await allStatements(ref, p.id))[0].type));
      const regular = payments.filter((_, i) => kinds[i] === 'regular_payroll');
      expect(regular.length).toBeGreaterThanOrEqual(13);
      expect(regular.length).toBeLessThanOrEqual(14);
      expect(kinds.filter((k) => k === 'off_cycle_payroll')).toHaveLength(1);
      for (const payment of payments) {
        expect(payment.pay_date <= TODAY).toBe(true);
        expect(payment.pay_date >= addDays(TODAY, -186)).toBe(true);
        expect(payment.debit_date < payment.pay_date).toBe(true);
        expect(payment.pay_period.end_date < payment.pay_date).toBe(true);
      }
      expect(payments.map((p) => p.pay_date)).toEqual([...payments.map((p) => p.pay_date)].sort());
    });

    it('pays every employee employed in each regular period, and nobody else', async () => {
      const everyone = await store.employments(ref, (await store.directory(ref, { limit: 1000, offset: 0 })).items.map((d) => d.id));
      expect(everyone).toHaveLength(60);
      for (const payment of payments.filter((p) => p.pay_frequencies.includes('bi_weekly'))) {
        const expected = everyone.filter((e) => isPaidInPeriod(e, payPeriodOf(payment.pay_date))).map((e) => e.id).sort();
        expect(payment.individual_ids).toEqual(expected);
        expect((await allStatements(ref, payment.id)).map((s) => s.individual_id)).toEqual(expected);
      }
    });

    it('computes every statement: gross = Σ earnings, net = gross − employee taxes − deductions', async () => {
      const problems: string[] = [];
      for (const payment of payments) for (const statement of await allStatements(ref, payment.id)) problems.push(...statementProblems(statement));
      expect(problems).toEqual([]);
    });

    it('sums each payment from its statements; the company debit adds employer taxes and contributions', async () => {
      for (const payment of payments) {
        const statements = await allStatements(ref, payment.id);
        const taxes = statements.flatMap((s) => s.taxes);
        const gross = sum(statements.map((s) => s.gross_pay.amount));
        const employerTaxes = sum(taxes.filter((t) => t.employer).map((t) => t.amount));
        const contributions = sum(statements.flatMap((s) => s.employer_contributions.map((c) => c.amount)));
        expect(payment.gross_pay.amount).toBe(gross);
        expect(payment.net_pay.amount).toBe(sum(statements.map((s) => s.net_pay.amount)));
        expect(payment.employee_taxes.amount).toBe(sum(taxes.filter((t) => !t.employer).map((t) => t.amount)));
        expect(payment.employer_taxes.amount).toBe(employerTaxes);
        expect(payment.company_debit.amount).toBe(gross + employerTaxes + contributions);
        expect(payment.gross_pay.amount).toBeGreaterThan(0);
      }
    });

    it("shows enrolled employees' deductions and the company match on their statements", async () => {
      const latest = payments.filter((p) => p.pay_frequencies.includes('bi_weekly')).at(-1)!;
      const benefits = await store.benefits(ref);
      const medical = benefits.find((b) => b.type === 's125_medical')!;
      const retirement = benefits.find((b) => b.type === '401k')!;
      const statements = new Map((await allStatements(ref, latest.id)).map((s) => [s.individual_id, s]));
      const onMedical = (await store.enrollmentsInForce(ref, latest.pay_date, { benefitId: medical.benefit_id })).filter((e) =>
        statements.has(e.individual_id),
      );
      expect(onMedical.length).toBeGreaterThan(0);
      for (const enrollment of onMedical) {
        const line = statements.get(enrollment.individual_id)!.employee_deductions.find((d) => d.type === 's125_medical');
        expect(line).toEqual({
          name: medical.description,
          amount: enrollment.configuration.employee_deduction!.amount,
          currency: 'usd',
          pre_tax: true,
          type: 's125_medical',
        });
      }
      const notOnMedical = [...statements.keys()].filter((id) => !onMedical.some((e) => e.individual_id === id));
      for (const id of notOnMedical) expect(statements.get(id)!.employee_deductions.some((d) => d.type === 's125_medical')).toBe(false);
      const saving = [...statements.values()].filter((s) => s.employee_deductions.some((d) => d.type === '401k'));
      expect(saving.length).toBeGreaterThan(0);
      expect(saving.some((s) => s.employer_contributions.some((c) => c.type === '401k' && c.amount > 0))).toBe(true);
      expect(retirement.company_contribution?.type).toBe('match');
    });

    it('carries year-to-date totals: no 401(k) deduction goes past its annual maximum', async () => {
      const retirement = (await store.benefits(ref)).find((b) => b.type === '401k')!;
      const capped = (await store.enrollmentsInForce(ref, TODAY, { benefitId: retirement.benefit_id })).filter(
        (e) => e.configuration.annual_maximum !== null,
      );
      const thisYear = payments.filter((p) => p.pay_date.startsWith('2026'));
      const byPerson = new Map<string, number>();
      for (const payment of thisYear) {
        for (const statement of await allStatements(ref, payment.id)) {
          const taken = sum(statement.employee_deductions.filter((d) => d.type === '401k').map((d) => d.amount));
          byPerson.set(statement.individual_id, (byPerson.get(statement.individual_id) ?? 0) + taken);
        }
      }
      for (const enrollment of capped) expect(byPerson.get(enrollment.individual_id) ?? 0).toBeLessThanOrEqual(enrollment.configuration.annual_maximum!);
      const stored: { year: number; totals: { year: number } }[] = await dataSource.query(
        `SELECT year, totals FROM sandbox_year_to_date WHERE entity_id = $1`,
        [ref.entityId],
      );
      expect(stored.length).toBeGreaterThan(0);
      for (const row of stored) expect(row.totals.year).toBe(row.year);
    });
  });

  describe('runPayPeriod', () => {
    it('adds one payment for every employee paid in the period, 14 days after the latest regular run', async () => {
      const ref = await sandboxEmployer(dataSource, { employeeSize: 30 });
      const before = await store.payments(ref, ...ALL_TIME);
      const latestRegular = before.filter((p) => p.pay_frequencies.includes('bi_weekly')).at(-1)!;
      const payment = await store.runPayPeriod(ref);
      expect(payment.pay_date).toBe(addDays(latestRegular.pay_date, 14));
      const after = await store.payments(ref, ...ALL_TIME);
      expect(after).toHaveLength(before.length + 1);
      expect(after.at(-1)).toEqual(payment);
      const everyone = await store.employments(ref, (await store.directory(ref, { limit: 100, offset: 0 })).items.map((d) => d.id));
      const expected = everyone.filter((e) => isPaidInPeriod(e, payment.pay_period)).map((e) => e.id).sort();
      expect(payment.individual_ids).toEqual(expected);
      const statements = await allStatements(ref, payment.id);
      expect(statements.map((s) => s.individual_id)).toEqual(expected);
      expect(statements.flatMap(statementProblems)).toEqual([]);
      expect(statements.every((s) => s.type === 'regular_payroll')).toBe(true);
    });

    it('pays today when the next bi-weekly date is already past, and an off-cycle bonus on request', async () => {
      const ref = await sandboxEmployer(dataSource, { employeeSize: 10 });
      await store.ensureEmployer(ref);
      clock.set('2026-09-15T09:00:00Z');
      const regular = await store.runPayPeriod(ref);
      expect(regular.pay_date).toBe('2026-09-15');
      const bonus = await store.runPayPeriod(ref, { kind: 'off_cycle_payroll', payDate: '2026-09-16' });
      expect(bonus.pay_frequencies).toEqual(['other']);
      const statements = await allStatements(ref, bonus.id);
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        expect(statement.type).toBe('off_cycle_payroll');
        expect(statement.earnings.map((e) => e.type)).toEqual(['bonus']);
      }
    });

    it('pays chosen individuals given earnings, and refuses unknown, unpaid or malformed input without writing', async () => {
      const ref = await sandboxEmployer(dataSource, { employeeSize: 40 });
      const people = await store.employments(ref, (await store.directory(ref, { limit: 100, offset: 0 })).items.map((d) => d.id));
      const active = people.filter((e) => e.is_active && e.employment.type === 'employee');
      const contractor = people.find((e) => e.employment.type === 'contractor');
      const payment = await store.runPayPeriod(ref, {
        kind: 'one_time_payment',
        payDate: '2026-06-03',
        individualIds: [active[0].id, active[1].id],
        earnings: [{ type: 'commission', name: 'Commission', amount: 125_000, hours: null }],
      });
      expect(payment.individual_ids).toEqual([active[0].id, active[1].id].sort());
      const statements = await allStatements(ref, payment.id);
      expect(statements.map((s) => s.gross_pay.amount)).toEqual([125_000, 125_000]);

      const paymentsBefore = await count('sandbox_payments', ref.entityId);
      const statementsBefore = await count('sandbox_pay_statements', ref.entityId);
      const unknownId = '0b6f8a8e-3c1d-4e5f-8a9b-0c1d2e3f4a5b';
      expect((await rejection(store.runPayPeriod(ref, { individualIds: [active[0].id, unknownId] }))).message).toContain(unknownId);
      expect((await rejection(store.runPayPeriod(ref, { individualIds: ['not-a-uuid'] }))).message).toContain('not-a-uuid');
      if (contractor) {
        const error = await rejection(store.runPayPeriod(ref, { individualIds: [contractor.id] }));
        expect(error.message).toContain(contractor.id);
      }
      const badDate = await rejection(store.runPayPeriod(ref, { payDate: '2026-02-30' }));
      expect(badDate.family).toBe('invalid_request_error');
      expect(badDate.message).toContain('pay_date');
      const badEarnings = await rejection(
        store.runPayPeriod(ref, { kind: 'one_time_payment', earnings: [{ type: 'bonus', name: 'Bonus', amount: -5, hours: null }] }),
      );
      expect(badEarnings.family).toBe('invalid_request_error');
      expect(await count('sandbox_payments', ref.entityId)).toBe(paymentsBefore);
      expect(await count('sandbox_pay_statements', ref.entityId)).toBe(statementsBefore);
    });

    it('is atomic: a failure at the last write leaves no statement, no payment and no year-to-date change', async () => {
      const ref = await sandboxEmployer(dataSource, { employeeSize: 25 });
      await store.ensureEmployer(ref);
      const statementsBefore = await count('sandbox_pay_statements', ref.entityId);
      const ytdBefore = await dataSource.query(`SELECT individual_id, totals FROM sandbox_year_to_date WHERE entity_id = $1 ORDER BY 1`, [
        ref.entityId,
      ]);
      // The payment row is written after every statement and year-to-date row: fail exactly there.
      await dataSource.query(`
        CREATE FUNCTION fail_sandbox_payment() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'simulated crash'; END $$`);
      await dataSource.query(
        `CREATE TRIGGER fail_sandbox_payment BEFORE INSERT ON sandbox_payments FOR EACH ROW EXECUTE FUNCTION fail_sandbox_payment()`,
      );
      // TypeORM logs every failed query; this failure is the point of the test.
      const quiet = jest.spyOn(console, 'log').mockImplementation(() => undefined);
      try {
        await expect(store.runPayPeriod(ref)).rejects.toThrow('simulated crash');
      } finally {
        quiet.mockRestore();
        await dataSource.query(`DROP TRIGGER fail_sandbox_payment ON sandbox_payments`);
        await dataSource.query(`DROP FUNCTION fail_sandbox_payment()`);
      }
      expect(await count('sandbox_pay_statements', ref.entityId)).toBe(statementsBefore);
      expect(
        await dataSource.query(`SELECT individual_id, totals FROM sandbox_year_to_date WHERE entity_id = $1 ORDER BY 1`, [ref.entityId]),
      ).toEqual(ytdBefore);
      // And the next run succeeds.
      await expect(store.runPayPeriod(ref)).resolves.toMatchObject({ individual_ids: expect.any(Array) });
    });

    it('serialises concurrent runs of one employer: two default runs pay two consecutive periods', async () => {
      const ref = await sandboxEmployer(dataSource, { employeeSize: 15 });
      await store.ensureEmployer(ref);
      const [a, b] = await Promise.all([newStore().runPayPeriod(ref), newStore().runPayPeriod(ref)]);
      const dates = [a.pay_date, b.pay_date].sort();
      expect(dates[1]).toBe(addDays(dates[0], 14));
    });

    it('applies enrollments in force on the pay date: enroll, re-enroll with a new amount, unenroll', async () => {
      const ref = await sandboxEmployer(dataSource, { employeeSize: 30 });
      const medical = (await store.benefits(ref)).find((b) => b.type === 's125_medical')!;
      const enrolled = new Set((await store.enrollmentsInForce(ref, '2026-06-12', { benefitId: medical.benefit_id })).map((e) => e.individual_id));
      const people = await store.employments(ref, (await store.directory(ref, { limit: 100, offset: 0 })).items.map((d) => d.id));
      const newcomer = people.find((e) => e.is_active && e.employment.subtype === 'full_time' && !enrolled.has(e.id))!;
      const configuration = fixedDeduction;
      const medicalOf = async (payment: PaymentRecord) =>
        (await allStatements(ref, payment.id)).find((s) => s.individual_id === newcomer.id)!.employee_deductions.filter((d) => d.type === 's125_medical');

      await store.enroll(ref, medical.benefit_id, [{ individual_id: newcomer.id, effective_date: '2026-06-12', configuration: configuration(9_000) }]);
      expect(await medicalOf(await store.runPayPeriod(ref, { payDate: '2026-06-12' }))).toEqual([expect.objectContaining({ amount: 9_000 })]);
      // Re-enrolling from a later date overrides from that date on, and only then.
      await store.enroll(ref, medical.benefit_id, [{ individual_id: newcomer.id, effective_date: '2026-06-26', configuration: configuration(12_500) }]);
      expect(await medicalOf(await store.runPayPeriod(ref, { payDate: '2026-06-19' }))).toEqual([expect.objectContaining({ amount: 9_000 })]);
      expect(await medicalOf(await store.runPayPeriod(ref, { payDate: '2026-06-26' }))).toEqual([expect.objectContaining({ amount: 12_500 })]);
      expect(await store.unenroll(ref, medical.benefit_id, [newcomer.id], '2026-07-01')).toEqual([newcomer.id]);
      expect(await medicalOf(await store.runPayPeriod(ref, { payDate: '2026-07-10' }))).toEqual([]);
      expect(await store.enrollmentsInForce(ref, '2026-06-30', { benefitId: medical.benefit_id, individualIds: [newcomer.id] })).toHaveLength(1);
      expect(await store.enrollmentsInForce(ref, '2026-07-01', { benefitId: medical.benefit_id, individualIds: [newcomer.id] })).toEqual([]);

      const unknownId = '0b6f8a8e-3c1d-4e5f-8a9b-0c1d2e3f4a5b';
      const error = await rejection(
        store.enroll(ref, medical.benefit_id, [{ individual_id: unknownId, effective_date: '2026-07-01', configuration: configuration(1) }]),
      );
      expect(error.message).toContain(unknownId);
      expect((await rejection(store.enroll(ref, unknownId, []))).message).toContain(unknownId);
    });

    it('stores given statements as written, computes the rest, and counts the given ones in later runs’ limits', async () => {
      const ref = await sandboxEmployer(dataSource, { employeeSize: 30 });
      const period = { start_date: '2026-06-01', end_date: '2026-06-14' };
      const retirement = (await store.benefits(ref)).find((b) => b.type === '401k')!;
      const sharingTheLimit = new Set((await store.benefits(ref)).filter((b) => ['401k_roth', '403b', '403b_roth', 'simple', 'simple_ira'].includes(b.type)).map((b) => b.benefit_id));
      const people = await store.employments(ref, (await store.directory(ref, { limit: 100, offset: 0 })).items.map((d) => d.id));
      const paid = people.filter((e) => isPaidInPeriod(e, period));
      const inForce = await store.enrollmentsInForce(ref, '2026-06-26', { individualIds: paid.map((e) => e.id) });
      const saver = paid.find((e) => !inForce.some((x) => x.individual_id === e.id && sharingTheLimit.has(x.benefit_id)))!;
      await store.enroll(ref, retirement.benefit_id, [
        {
          individual_id: saver.id,
          effective_date: '2026-06-01',
          configuration: { employee_deduction: { type: 'fixed', amount: 100_000 }, company_contribution: null, annual_maximum: null, catch_up: false, hsa_contribution_limit: null },
        },
      ]);
      const totalsOf = async (id: string) =>
        (await dataSource.query(`SELECT totals FROM sandbox_year_to_date WHERE entity_id = $1 AND individual_id = $2`, [ref.entityId, id]))[0]?.totals;
      const before = await totalsOf(saver.id);
      const deferredBefore = before?.year === 2026 ? before.electiveDeferrals : 0;
      const planBefore = before?.year === 2026 ? (before.employeeByBenefit[retirement.benefit_id] ?? 0) : 0;
      // As written: all but $400 of what is left of the $24,500 402(g) limit, more than the election.
      const deferral = 2_450_000 - deferredBefore - 40_000;
      const money = (amount: number) => ({ amount, currency: 'usd' });
      const written: PayStatementRecord = {
        individual_id: saver.id,
        type: 'regular_payroll',
        payment_method: 'check',
        total_hours: 80,
        gross_pay: money(3_000_000),
        net_pay: money(3_000_000 - deferral - 1_000),
        earnings: [{ type: 'bonus', name: 'Year-end bonus', amount: 3_000_000, currency: 'usd', hours: null }],
        taxes: [{ type: 'local', name: 'City tax', employer: false, amount: 1_000, currency: 'usd' }],
        employee_deductions: [{ name: retirement.description, amount: deferral, currency: 'usd', pre_tax: true, type: '401k' }],
        employer_contributions: [],
      };

      const payment = await store.runPayPeriod(ref, { payDate: '2026-06-14', period, statements: [written] });
      expect(payment).toMatchObject({ pay_date: '2026-06-14', pay_period: period, pay_frequencies: ['bi_weekly'] });
      expect(payment.individual_ids).toEqual(paid.map((e) => e.id).sort());
      const statements = await allStatements(ref, payment.id);
      expect(statements.find((s) => s.individual_id === saver.id)).toEqual(written);
      const computed = statements.filter((s) => s.individual_id !== saver.id);
      expect(computed).toHaveLength(paid.length - 1);
      expect(computed.flatMap(statementProblems)).toEqual([]);
      expect(payment.gross_pay.amount).toBe(sum(statements.map((s) => s.gross_pay.amount)));

      const after = await totalsOf(saver.id);
      expect(after).toMatchObject({ year: 2026, electiveDeferrals: deferredBefore + deferral });
      expect(after.employeeByBenefit[retirement.benefit_id]).toBe(planBefore + deferral);
      // The next computed run takes only the $400 left of the $1,000 election.
      const next = await store.runPayPeriod(ref, { payDate: '2026-06-26' });
      const saverNext = (await allStatements(ref, next.id)).find((s) => s.individual_id === saver.id)!;
      expect(saverNext.employee_deductions.filter((d) => d.type === '401k')).toEqual([expect.objectContaining({ amount: 40_000 })]);
      expect((await totalsOf(saver.id)).electiveDeferrals).toBe(2_450_000);
    });

    it('pays a given period at its frequency, and refuses a period, statements or people it cannot pay, writing nothing', async () => {
      const ref = await sandboxEmployer(dataSource, { employeeSize: 20 });
      const people = await store.employments(ref, (await store.directory(ref, { limit: 100, offset: 0 })).items.map((d) => d.id));
      const week = { start_date: '2026-06-01', end_date: '2026-06-07' };
      const weekly = await store.runPayPeriod(ref, { payDate: '2026-06-12', period: week });
      expect(weekly).toMatchObject({ pay_period: week, pay_frequencies: ['weekly'] });
      const salaried = people.find((e) => isPaidInPeriod(e, week) && e.income.unit === 'yearly');
      if (salaried) {
        const statement = (await allStatements(ref, weekly.id)).find((s) => s.individual_id === salaried.id)!;
        expect(statement.earnings).toEqual([expect.objectContaining({ type: 'salary', amount: Math.round(salaried.income.amount / 52), hours: 40 })]);
      }

      const paymentsBefore = await count('sandbox_payments', ref.entityId);
      const ytdBefore = await dataSource.query(`SELECT individual_id, totals FROM sandbox_year_to_date WHERE entity_id = $1 ORDER BY 1`, [ref.entityId]);
      const someone = people.find((e) => isPaidInPeriod(e, week))!;
      const statement = (individualId: string): PayStatementRecord => ({
        individual_id: individualId,
        type: 'regular_payroll',
        payment_method: 'direct_deposit',
        total_hours: 0,
        gross_pay: { amount: 100, currency: 'usd' },
        net_pay: { amount: 100, currency: 'usd' },
        earnings: [],
        taxes: [],
        employee_deductions: [],
        employer_contributions: [],
      });
      const unknownId = '0b6f8a8e-3c1d-4e5f-8a9b-0c1d2e3f4a5b';
      expect((await rejection(store.runPayPeriod(ref, { payDate: '2026-06-20', period: { start_date: '2026-06-10', end_date: '2026-06-01' } }))).message).toContain('the start first');
      expect((await rejection(store.runPayPeriod(ref, { period: week }))).message).toContain('needs its pay date');
      expect((await rejection(store.runPayPeriod(ref, { payDate: '2026-06-12', period: week, statements: [statement(unknownId)] }))).message).toContain(unknownId);
      expect(
        (await rejection(store.runPayPeriod(ref, { payDate: '2026-06-12', period: week, statements: [statement(someone.id), statement(someone.id.toUpperCase())] }))).message,
      ).toContain('Two statements');
      expect((await rejection(store.runPayPeriod(ref, { payDate: '2026-06-12', individualIds: [someone.id], statements: [statement(someone.id)] }))).message).toContain(
        'not both',
      );
      const negative = { ...statement(someone.id), employee_deductions: [{ name: 'X', amount: -1, currency: 'usd', pre_tax: false, type: null }] };
      expect((await rejection(store.runPayPeriod(ref, { payDate: '2026-06-12', period: week, statements: [negative] }))).family).toBe('invalid_request_error');
      expect(await count('sandbox_payments', ref.entityId)).toBe(paymentsBefore);
      expect(await dataSource.query(`SELECT individual_id, totals FROM sandbox_year_to_date WHERE entity_id = $1 ORDER BY 1`, [ref.entityId])).toEqual(ytdBefore);
    });

    it('refuses a pay run for a provider that runs no payroll', async () => {
      const ref = await sandboxEmployer(dataSource, { providerId: 'bamboo_hr', employeeSize: 5 });
      expect(await store.payments(ref, ...ALL_TIME)).toEqual([]);
      expect((await rejection(store.runPayPeriod(ref))).message).toContain('runs no payroll');
    });
  });

  describe('reads and edits', () => {
    let ref: EmployerRef;

    beforeAll(async () => {
      ref = await sandboxEmployer(dataSource, { employeeSize: 25 });
    });

    it('pages the directory in a stable order with the total count', async () => {
      const all = await store.directory(ref, { limit: 100, offset: 0 });
      expect(all.count).toBe(25);
      expect(all.items).toHaveLength(25);
      const page = await store.directory(ref, { limit: 10, offset: 20 });
      expect(page).toEqual({ count: 25, offset: 20, items: all.items.slice(20) });
      expect(all.items[0].manager).toBeNull();
    });

    it('leaves unknown and malformed ids out of batch reads, and answers undefined for one unknown id', async () => {
      const [first] = (await store.directory(ref, { limit: 1, offset: 0 })).items;
      const unknownId = '0b6f8a8e-3c1d-4e5f-8a9b-0c1d2e3f4a5b';
      const individuals = await store.individuals(ref, [unknownId, first.id, 'nonsense', first.id.toUpperCase()]);
      expect(individuals.map((i) => i.id)).toEqual([first.id]);
      expect(individuals[0].ssn).toMatch(/^\d{3}-\d{2}-\d{4}$/);
      expect(await store.employments(ref, ['nonsense'])).toEqual([]);
      expect(await store.payStatements(ref, unknownId, { limit: 10, offset: 0 })).toBeUndefined();
      expect(await store.payStatements(ref, 'nonsense', { limit: 10, offset: 0 })).toBeUndefined();
      expect(await store.payGroup(ref, unknownId)).toBeUndefined();
      expect(await store.benefit(ref, 'nonsense')).toBeUndefined();
    });

    it('pages pay statements by individual id with the payment total as count', async () => {
      const [payment] = await store.payments(ref, ...ALL_TIME);
      const all = (await store.payStatements(ref, payment.id, { limit: 100, offset: 0 }))!;
      expect(all.count).toBe(payment.individual_ids.length);
      expect(all.items.map((s) => s.individual_id)).toEqual([...payment.individual_ids].sort());
      const page = (await store.payStatements(ref, payment.id, { limit: 3, offset: 2 }))!;
      expect(page).toEqual({ count: all.count, offset: 2, items: all.items.slice(2, 5) });
    });

    it('lists pay groups with their members; contractors are in none', async () => {
      const groups = await store.payGroups(ref);
      expect(groups.map((g) => g.name).sort()).toEqual(['Bi-weekly hourly', 'Bi-weekly salaried']);
      const employments = await store.employments(ref, (await store.directory(ref, { limit: 100, offset: 0 })).items.map((d) => d.id));
      for (const group of groups) {
        expect(group.pay_frequencies).toEqual(['bi_weekly']);
        expect([...group.individual_ids].sort()).toEqual(employments.filter((e) => e.pay_group_ids.includes(group.id)).map((e) => e.id).sort());
        expect(await store.payGroup(ref, group.id)).toEqual(group);
      }
    });

    it('updates the company, an individual (names copied to the employment) and an employment', async () => {
      const company = await store.updateCompany(ref, { legal_name: 'Renamed Inc', ein: '12-3456789' });
      expect(company).toMatchObject({ id: ref.entityId, legal_name: 'Renamed Inc', ein: '12-3456789' });
      expect(await store.company(ref)).toEqual(company);

      const [, second] = (await store.directory(ref, { limit: 2, offset: 0 })).items;
      const individual = await store.updateIndividual(ref, second.id, { first_name: 'Zelda', dob: '1990-01-02' });
      expect(individual).toMatchObject({ id: second.id, first_name: 'Zelda', dob: '1990-01-02' });
      const [employment] = await store.employments(ref, [second.id]);
      expect(employment.first_name).toBe('Zelda');
      const updated = await store.updateEmployment(ref, second.id, { title: 'Chief Tester', first_name: 'Ignored' } as never);
      expect(updated).toMatchObject({ title: 'Chief Tester', first_name: 'Zelda' });
      expect(await store.updateIndividual(ref, '0b6f8a8e-3c1d-4e5f-8a9b-0c1d2e3f4a5b', { first_name: 'X' })).toBeUndefined();
    });

    it('adds individuals at the end of the directory, and pays them in the next run', async () => {
      const [template] = await store.people(ref, [(await store.directory(ref, { limit: 1, offset: 0 })).items[0].id]);
      const { id: _i, ...individual } = template.individual;
      const { id: _e, first_name: _f, middle_name: _m, last_name: _l, ...employment } = template.employment;
      const [added] = await store.addIndividuals(ref, [
        {
          individual: { ...individual, first_name: 'New', last_name: 'Hire' },
          employment: { ...employment, start_date: TODAY, end_date: null, is_active: true, manager: null },
        },
      ]);
      expect(added.employment).toMatchObject({ id: added.individual.id, first_name: 'New', last_name: 'Hire' });
      const directory = await store.directory(ref, { limit: 100, offset: 0 });
      expect(directory.count).toBe(26);
      expect(directory.items.at(-1)!.id).toBe(added.individual.id);
      const payment = await store.runPayPeriod(ref, { payDate: '2026-06-12' });
      expect(payment.individual_ids).toContain(added.individual.id);
      const duplicate = await rejection(store.addIndividuals(ref, [{ ...added, id: added.individual.id }]));
      expect(duplicate.message).toContain(added.individual.id);
    });
  });
});
