import { DataSource } from 'typeorm';
import { employerRefOf } from '../../src/domain/providers/provider-port';
import { ManualClock } from '../../src/domain/shared/clock';
import { irsLimitsFor } from '../../src/domain/payroll/irs-limits';
import { taxTreatmentOf } from '../../src/domain/payroll/benefit-tax-treatment';
import { BenefitType } from '../../src/domain/payroll/payroll.types';
import { ConnectionsRepository } from '../../src/infrastructure/database/repositories/connections.repository';
import { SandboxEmployerStore } from '../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { JobSignal } from '../../src/modules/jobs/job-signal';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const OPS = { authorization: `Basic ${Buffer.from('ops:ops-password-for-tests').toString('base64')}` };
const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }, { match: 5_000, threshold: 500 }] };
const PLAN = 'Retirement 401(k)';

interface Employer {
  token: string;
  connectionId: string;
  entityId: string;
}

interface EmploymentBody {
  employment: { type: string };
  is_active: boolean;
  end_date: string | null;
  income: { unit: 'yearly' | 'hourly'; amount: number };
}

interface SandboxConfiguration {
  employee_deduction: { type: 'percent' | 'fixed'; amount: number } | null;
  annual_maximum: number | null;
}

interface Line {
  employee?: number;
  employer?: number;
}

/**
 * Reconciliation end to end on real PostgreSQL: sandbox pay runs (statements computed by the
 * sandbox payroll, and statements written to make payroll wrong), synced, reconciled by the job
 * each sync queues. Each result kind, the lifecycle across re-syncs, drift, the saga step.
 */
describeWithPostgres('reconciliation of pay statements against enrollments', () => {
  const clock = new ManualClock('2026-03-02T15:00:00Z');
  let service: TestService;
  let app: IssuedCredentials;
  let employer: Employer;
  let people: { id: string; dob: string }[];
  let planId: string;

  const db = () => service.app.get(DataSource);
  const api = (path: string, body?: unknown, method?: string, of: Employer = employer): Promise<TestResponse> =>
    body === undefined && method === undefined
      ? service.request(path, { headers: bearer(of.token) })
      : service.request(path, { ...json(body ?? {}, bearer(of.token)), ...(method ? { method } : {}) });
  const sandbox = (path: string, body: unknown, method = 'POST', of: Employer = employer) =>
    service.request(path, { ...json(body, { authorization: `Bearer ${of.token}` }), method });
  const ended = (path: string, of: Employer = employer) =>
    expectEventually(async () => {
      const res = await api(path, undefined, undefined, of);
      expect(['complete', 'error']).toContain(res.body.status);
      return res.body;
    });

  async function sandboxEmployer(providerId = 'sandbox_automated', size = 10): Promise<Employer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: providerId, employee_size: size }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  async function sync(of: Employer = employer): Promise<string> {
    const res = await api('/jobs/automated', { type: 'data_sync_all' }, undefined, of);
    expect(res.status).toBe(201);
    expect((await ended(`/jobs/automated/${res.body.job_id}`, of)).status).toBe('complete');
    return res.body.job_id;
  }

  /** Waits for the reconciliation the sync queued to have committed. */
  const reconciledAfter = (syncJobId: string) =>
    expectEventually(async () => {
      const [run] = await db().query(`SELECT statements FROM reconciliation_runs WHERE sync_job_id = $1`, [syncJobId]);
      expect(run).toBeDefined();
      return run.statements as number;
    });

  /** A pay run (statements written for some people, computed for the rest), synced and reconciled. */
  async function payRun(payDate: string, written: Record<string, Line> = {}, of: Employer = employer): Promise<string> {
    clock.set(`${payDate}T15:00:00Z`);
    const statements = Object.entries(written).map(([individualId, line]) => statementOf(individualId, line));
    const res = await sandbox('/sandbox/payment', { pay_date: payDate, ...(statements.length > 0 && { start_date: periodStart(payDate), end_date: payDate, pay_statements: statements }) }, 'POST', of);
    expect([res.status, res.status === 200 ? '' : res.text]).toEqual([200, '']);
    expect(res.body.sync_status).toBe('complete');
    await reconciledAfter(res.body.sync_job_id);
    return res.body.payment_id;
  }

  const periodStart = (payDate: string) => new Date(Date.parse(`${payDate}T00:00:00Z`) - 13 * 86_400_000).toISOString().slice(0, 10);

  /** Gross 4,000.00, so 5 % is 200.00 and the match (100 % of 3 %, 50 % of the next 2 %) 160.00. */
  function statementOf(individualId: string, line: Line) {
    return {
      individual_id: individualId,
      type: 'regular_payroll',
      payment_method: 'direct_deposit',
      total_hours: 80,
      gross_pay: 400_000,
      net_pay: 280_000 - (line.employee ?? 0),
      earnings: [{ type: 'salary', name: 'Salary', amount: 400_000, hours: 80 }],
      taxes: [{ type: 'federal', name: 'Federal Income Tax', employer: false, amount: 120_000 }],
      employee_deductions: line.employee === undefined ? [] : [{ name: PLAN, amount: line.employee, type: '401k', pre_tax: true }],
      employer_contributions: line.employer === undefined ? [] : [{ name: PLAN, amount: line.employer, type: '401k' }],
    };
  }

  const resultsOf = async (paymentId: string): Promise<Map<string, { result: string; expected_employee: number; observed_employee: number }>> => {
    const rows = await db().query(
      `SELECT individual_id, result, expected_employee::int, observed_employee::int FROM reconciliation_results WHERE payment_id = $1 AND benefit_id = $2`,
      [paymentId, planId],
    );
    return new Map(rows.map((r: { individual_id: string }) => [r.individual_id, r]));
  };
  /** The discrepancy events a connection's outbox holds, counted by type. */
  const discrepancyEvents = (connectionId: string) =>
    db().query(
      `SELECT type, count(*)::int AS n FROM outbox_messages WHERE type LIKE 'DeductionDiscrepancy%' AND message_key = $1 GROUP BY type ORDER BY type`,
      [connectionId],
    );
  const discrepancies = async (individualId: string) =>
    db().query(
      `SELECT id, kind, status, occurrences, resolution, expected, observed FROM deduction_discrepancies WHERE individual_id = $1 ORDER BY opened_at, kind`,
      [individualId],
    );

  beforeAll(async () => {
    service = await startTestService({ clock });
    app = await createApplication(service);
    employer = await sandboxEmployer('sandbox_automated', 16);
    await sync();
    const directory = await api('/employer/directory');
    const ids: string[] = directory.body.individuals.map((i: { id: string }) => i.id);
    const employments = await api('/employer/employment', { requests: ids.map((individual_id) => ({ individual_id })) });
    // People payroll pays through the whole test: employees, active, hired before it starts.
    const paid = new Set<string>(
      employments.body.responses
        .filter((r: { body: { employment: { type: string }; is_active: boolean; start_date: string } }) => r.body.employment.type === 'employee' && r.body.is_active && r.body.start_date < '2026-03-01')
        .map((r: { individual_id: string }) => r.individual_id),
    );
    const individuals = await api('/employer/individual', { requests: ids.filter((id) => paid.has(id)).map((individual_id) => ({ individual_id })) });
    people = individuals.body.responses.map((r: { individual_id: string; body: { dob: string } }) => ({ id: r.individual_id, dob: r.body.dob }));
    expect(people.length).toBeGreaterThanOrEqual(9);

    const created = await api('/employer/benefits', { type: '401k', description: PLAN, frequency: 'every_paycheck', company_contribution: MATCH });
    expect(created.status).toBe(200);
    expect((await ended(`/jobs/automated/${created.body.job_id}`)).status).toBe('complete');
    planId = created.body.benefit_id;
  });
  afterAll(() => service?.close());

  it('matches every statement the sandbox payroll computed from what the service enrolled, and confirms the saga', async () => {
    const enrolled = people.slice(0, 6).map((p) => ({ individual_id: p.id, configuration: { employee_deduction: { type: 'percent', amount: 500 } } }));
    const job = await api(`/employer/benefits/${planId}/individuals`, enrolled);
    expect(job.status).toBe(200);
    expect((await ended(`/jobs/automated/${job.body.job_id}`)).status).toBe('complete');

    const paymentId = await payRun('2026-03-13');
    const results = await resultsOf(paymentId);
    for (const { individual_id } of enrolled) {
      expect(results.get(individual_id)).toMatchObject({ result: 'matched' });
      expect(results.get(individual_id)!.observed_employee).toBeGreaterThan(0);
    }
    // The job records what it did. Its run row commits before the job's own end (the worker's
    // next transaction), so the job is waited for.
    const job2 = await expectEventually(async () => {
      const [row] = await db().query(
        `SELECT result FROM jobs WHERE type = 'deduction_reconciliation' AND entity_id = $1 AND status = 'complete' ORDER BY completed_at DESC LIMIT 1`,
        [employer.entityId],
      );
      expect(row).toBeDefined();
      return row;
    });
    expect(job2.result).toMatchObject({ opened: 0, configurations_read: 1 });
    expect(job2.result.results).toBeGreaterThanOrEqual(enrolled.length);
    expect(job2.result.statements).toBeGreaterThanOrEqual(job2.result.results);
    // People never enrolled and not deducted give no result.
    expect(results.has(people[8].id)).toBe(false);
    const [open] = await db().query(`SELECT count(*)::int AS n FROM deduction_discrepancies WHERE entity_id = $1`, [employer.entityId]);
    expect(open.n).toBe(0);

    // The enrollment's job records when its change was first seen on a pay statement.
    const steps = await db().query(
      `SELECT s.steps FROM sagas s JOIN saga_jobs sj ON sj.saga_id = s.id WHERE sj.job_id = $1`,
      [job.body.job_id],
    );
    for (const { steps: list } of steps) {
      expect(list.filter((s: { name: string }) => s.name === 'confirmed_in_payroll')).toHaveLength(1);
    }
  });

  it('finds missing, amount_mismatch, match_mismatch and unexpected on a wrong pay run, once, and resolves them when payroll agrees', async () => {
    const [a, b, c, d] = people.slice(0, 4).map((p) => p.id);
    // d is unenrolled from before the next pay date; the written statement keeps deducting.
    const unenroll = await api(`/employer/benefits/${planId}/individuals`, { individual_ids: [d] }, 'DELETE');
    expect(unenroll.status).toBe(200);
    expect((await ended(`/jobs/automated/${unenroll.body.job_id}`)).status).toBe('complete');

    const wrong = { [a]: {}, [b]: { employee: 15_000, employer: 12_000 }, [c]: { employee: 20_000, employer: 20_000 }, [d]: { employee: 20_000, employer: 16_000 } };
    const first = await payRun('2026-03-27', wrong);
    const results = await resultsOf(first);
    expect(results.get(a)).toMatchObject({ result: 'missing', expected_employee: 20_000, observed_employee: 0 });
    expect(results.get(b)).toMatchObject({ result: 'amount_mismatch', expected_employee: 20_000, observed_employee: 15_000 });
    expect(results.get(c)).toMatchObject({ result: 'match_mismatch' });
    expect(results.get(d)).toMatchObject({ result: 'unexpected', expected_employee: 0, observed_employee: 20_000 });

    // The same problems on the next run: updated, not opened again.
    const second = await payRun('2026-04-10', wrong);
    expect((await resultsOf(second)).get(a)).toMatchObject({ result: 'missing' });
    for (const [id, kind] of [[a, 'missing'], [b, 'amount_mismatch'], [c, 'match_mismatch'], [d, 'unexpected']]) {
      const found = await discrepancies(id);
      expect(found).toEqual([expect.objectContaining({ kind, status: 'open', occurrences: 2 })]);
    }
    // A re-sync that brings the same statements changes nothing.
    const again = await sync();
    expect(await reconciledAfter(again)).toBe(0);
    expect((await discrepancies(a))[0].occurrences).toBe(2);

    // Payroll deducts as enrolled again (computed statements): every discrepancy resolves, once.
    await payRun('2026-04-24');
    for (const id of [a, b, c, d]) {
      const found = await discrepancies(id);
      expect(found).toEqual([expect.objectContaining({ status: 'resolved', resolution: 'agreed' })]);
    }
    expect(await discrepancyEvents(employer.connectionId)).toEqual([
      { type: 'DeductionDiscrepancyOpened.v1', n: 4 },
      { type: 'DeductionDiscrepancyResolved.v1', n: 4 },
    ]);
  });

  it('is over_limit past the annual maximum and matched when the cap is applied, and honours catch-up over 50', async () => {
    clock.set('2026-05-01T15:00:00Z');
    const limits = irsLimitsFor(2026);
    const capped = people[6].id;
    // 54 at the end of 2026, paid 1,000,000.00 a year: half the 402(g) limit fits in one paycheck.
    const over50 = people[7].id;
    expect((await sandbox(`/sandbox/individual/${over50}`, { dob: '1972-02-02' }, 'PUT')).status).toBe(200);
    expect((await sandbox(`/sandbox/employment/${over50}`, { income: { unit: 'yearly', amount: 100_000_000 } }, 'PUT')).status).toBe(200);
    const job = await api(`/employer/benefits/${planId}/individuals`, [
      { individual_id: capped, configuration: { employee_deduction: { type: 'fixed', amount: 30_000 }, annual_maximum: 50_000 } },
      { individual_id: over50, configuration: { employee_deduction: { type: 'fixed', amount: limits.electiveDeferral / 2 }, catch_up: true } },
    ]);
    expect([job.status, job.text]).toEqual([200, expect.anything()]);
    expect((await ended(`/jobs/automated/${job.body.job_id}`)).status).toBe('complete');

    const first = await payRun('2026-05-08', { [capped]: { employee: 30_000, employer: 16_000 } });
    expect((await resultsOf(first)).get(capped)).toMatchObject({ result: 'matched', expected_employee: 30_000 });
    // The second deduction may take only 200.00; 300.00 is over the annual maximum.
    const second = await payRun('2026-05-22', { [capped]: { employee: 30_000, employer: 16_000 } });
    expect((await resultsOf(second)).get(capped)).toMatchObject({ result: 'over_limit', expected_employee: 20_000 });
    expect(await discrepancies(capped)).toEqual([expect.objectContaining({ kind: 'over_limit', status: 'open' })]);
    // Computed by the sandbox from here on: the cap is reached, nothing is due, and none is taken.
    const third = await payRun('2026-06-05');
    expect((await resultsOf(third)).get(capped)).toMatchObject({ result: 'matched', expected_employee: 0, observed_employee: 0 });
    expect((await discrepancies(capped))[0]).toMatchObject({ status: 'resolved' });

    // The third run takes the age-50 catch-up on top of the 402(g) limit (the sandbox computes it): all matched.
    const rows = await db().query(
      `SELECT result, observed_employee::int FROM reconciliation_results WHERE individual_id = $1 AND benefit_id = $2 ORDER BY pay_date`,
      [over50, planId],
    );
    expect(rows.map((r: { result: string }) => r.result)).toEqual(['matched', 'matched', 'matched']);
    // What every 401(k) line of the year took (the employer's own plan's too) ends at the 402(g) limit plus the catch-up.
    const [{ taken }] = await db().query(
      `SELECT coalesce(sum((l->>'amount')::bigint), 0)::bigint AS taken FROM employer_data d CROSS JOIN jsonb_array_elements(d.body->'employee_deductions') l
       WHERE d.entity_id = $1 AND d.generation = (SELECT generation FROM employer_syncs WHERE entity_id = $1) AND d.kind = 'pay_statement'
         AND d.sort_key = $2 AND d.pay_date >= '2026-01-01' AND l->>'type' = '401k'`,
      [employer.entityId, over50],
    );
    expect(Number(taken)).toBe(limits.electiveDeferral + limits.catchUpAge50);
  });

  it('expects a deduction from the first pay date on or after an effective date in the middle of a pay period', async () => {
    const person = people[8].id;
    clock.set('2026-06-08T15:00:00Z');
    // Effective on the Wednesday of the period 2026-06-06 – 2026-06-19 (paid on the 19th).
    const job = await api(`/employer/benefits/${planId}/individuals`, [
      { individual_id: person, configuration: { effective_date: '2026-06-10', employee_deduction: { type: 'percent', amount: 400 } } },
    ]);
    expect(job.status).toBe(200);
    clock.set('2026-06-10T15:00:00Z');
    await expectEventually(async () => {
      service.app.get(JobSignal).nudge();
      expect((await api(`/jobs/automated/${job.body.job_id}`)).body.status).toBe('complete');
    });
    const paymentId = await payRun('2026-06-19');
    const result = (await resultsOf(paymentId)).get(person);
    expect(result).toMatchObject({ result: 'matched' });
    expect(result!.expected_employee).toBeGreaterThan(0);
    expect(result!.observed_employee).toBe(result!.expected_employee);
    // The run before the effective date gave this person no result for the plan.
    const [{ n }] = await db().query(
      `SELECT count(*)::int AS n FROM reconciliation_results WHERE individual_id = $1 AND benefit_id = $2 AND pay_date < '2026-06-10'`,
      [person, planId],
    );
    expect(n).toBe(0);
  });

  it('opens configuration drift when the provider holds another configuration, and resolves it when it agrees again', async () => {
    const person = people[4].id;
    const connection = (await service.app.get(ConnectionsRepository).find(employer.connectionId))!;
    const ref = employerRefOf(connection, connection.entities[0]);
    const store = service.app.get(SandboxEmployerStore);
    const today = clock.now().toISOString().slice(0, 10);
    const base = { company_contribution: null, annual_maximum: null, catch_up: false, hsa_contribution_limit: null };
    // A payroll admin changes the deduction in the provider's own screens.
    await store.enroll(ref, planId, [{ individual_id: person, effective_date: today, configuration: { ...base, employee_deduction: { type: 'percent', amount: 800 } } }]);
    await reconciledAfter(await sync());
    const [drift] = await discrepancies(person).then((all) => all.filter((d: { kind: string }) => d.kind === 'configuration_drift'));
    expect(drift).toMatchObject({ status: 'open' });
    expect(drift.expected.configuration.employee_deduction).toEqual({ type: 'percent', amount: 500 });
    expect(drift.observed.configuration.employee_deduction).toEqual({ type: 'percent', amount: 800 });

    // Read again, still different: the same discrepancy.
    await reconciledAfter(await sync());
    expect((await discrepancies(person)).filter((d: { kind: string }) => d.kind === 'configuration_drift')).toHaveLength(1);

    await store.enroll(ref, planId, [{ individual_id: person, effective_date: today, configuration: { ...base, employee_deduction: { type: 'percent', amount: 500 } } }]);
    await reconciledAfter(await sync());
    const after = (await discrepancies(person)).filter((d: { kind: string }) => d.kind === 'configuration_drift');
    expect(after).toEqual([expect.objectContaining({ id: drift.id, status: 'resolved', resolution: 'agreed' })]);
  });

  it('reconciles an Assisted provider’s weekly data: two pay runs arrive in one sync, oldest first', async () => {
    clock.set('2026-06-08T15:00:00Z');
    const assisted = await sandboxEmployer('sandbox_assisted', 4);
    await syncAssisted(assisted);
    const benefit = await api('/employer/benefits', { type: '401k', description: PLAN, frequency: 'every_paycheck', company_contribution: MATCH }, undefined, assisted);
    await completeTask(benefit.body.job_id);
    expect((await ended(`/jobs/manual/${benefit.body.job_id}`, assisted)).status).toBe('complete');
    const plan = benefit.body.benefit_id;
    const directory = await api('/employer/directory', undefined, undefined, assisted);
    const person = directory.body.individuals[0].id;
    const job = await api(`/employer/benefits/${plan}/individuals`, [{ individual_id: person, configuration: { employee_deduction: { type: 'fixed', amount: 10_000 }, annual_maximum: 15_000 } }], undefined, assisted);
    await completeTask(job.body.job_id);
    expect((await ended(`/jobs/manual/${job.body.job_id}`, assisted)).status).toBe('complete');

    // Two runs paid before the week's sync: the second may take only 50.00 of the maximum.
    const store = service.app.get(SandboxEmployerStore);
    const connection = (await service.app.get(ConnectionsRepository).find(assisted.connectionId))!;
    const ref = employerRefOf(connection, connection.entities[0]);
    await store.runPayPeriod(ref, { payDate: '2026-06-12' });
    await store.runPayPeriod(ref, { payDate: '2026-06-26' });
    clock.set('2026-06-29T15:00:00Z');
    await syncAssisted(assisted);
    await expectEventually(async () => {
      const [run] = await db().query(`SELECT statements FROM reconciliation_runs WHERE entity_id = $1`, [assisted.entityId]);
      expect(run?.statements).toBeGreaterThanOrEqual(2);
    });
    const rows = await db().query(
      `SELECT to_char(pay_date, 'YYYY-MM-DD') AS pay_date, result, expected_employee::int FROM reconciliation_results WHERE benefit_id = $1 AND individual_id = $2 ORDER BY pay_date`,
      [plan, person],
    );
    expect(rows).toEqual([
      { pay_date: '2026-06-12', result: 'matched', expected_employee: 10_000 },
      { pay_date: '2026-06-26', result: 'matched', expected_employee: 5_000 },
    ]);
  });

  it('opens, resolves and opens again a problem whose pay runs arrive in one sync: two discrepancies, the first resolved', async () => {
    clock.set('2026-06-29T15:00:00Z');
    const own = await sandboxEmployer('sandbox_automated', 6);
    await sync(own);
    const benefit = await api('/employer/benefits', { type: '401k', description: PLAN, frequency: 'every_paycheck' }, undefined, own);
    expect((await ended(`/jobs/automated/${benefit.body.job_id}`, own)).status).toBe('complete');
    const plan: string = benefit.body.benefit_id;
    const directory = await api('/employer/directory', undefined, undefined, own);
    const employments = await api('/employer/employment', { requests: directory.body.individuals.map((i: { id: string }) => ({ individual_id: i.id })) }, undefined, own);
    const person = await leastDeferringEmployee(own, employments.body.responses);
    const job = await api(`/employer/benefits/${plan}/individuals`, [{ individual_id: person, configuration: { employee_deduction: { type: 'percent', amount: 500 } } }], undefined, own);
    expect((await ended(`/jobs/automated/${job.body.job_id}`, own)).status).toBe('complete');

    // Three regular runs paid before the next sync: skipped, deducted, skipped again.
    const store = service.app.get(SandboxEmployerStore);
    const connection = (await service.app.get(ConnectionsRepository).find(own.connectionId))!;
    const ref = employerRefOf(connection, connection.entities[0]);
    const skipNextRun = async () =>
      expect((await sandbox('/sandbox/payroll/adjustments', { adjustments: [{ individual_id: person, benefit_id: plan, action: 'skip' }] }, 'POST', own)).status).toBe(200);
    await skipNextRun();
    await store.runPayPeriod(ref, { payDate: '2026-07-03' });
    await store.runPayPeriod(ref, { payDate: '2026-07-17' });
    await skipNextRun();
    await store.runPayPeriod(ref, { payDate: '2026-07-31' });
    clock.set('2026-08-01T15:00:00Z');
    await reconciledAfter(await sync(own));

    // Each missing run points at the discrepancy it opened, not at the one live at the end.
    const results = await db().query(
      `SELECT to_char(r.pay_date, 'YYYY-MM-DD') AS pay_date, r.result, to_char(d.first_pay_date, 'YYYY-MM-DD') AS discrepancy_of
       FROM reconciliation_results r LEFT JOIN deduction_discrepancies d ON d.id = r.discrepancy_id
       WHERE r.benefit_id = $1 AND r.individual_id = $2 ORDER BY r.pay_date`,
      [plan, person],
    );
    expect(results).toEqual([
      { pay_date: '2026-07-03', result: 'missing', discrepancy_of: '2026-07-03' },
      { pay_date: '2026-07-17', result: 'matched', discrepancy_of: null },
      { pay_date: '2026-07-31', result: 'missing', discrepancy_of: '2026-07-31' },
    ]);
    const discrepanciesOfPerson = () =>
      db().query(
        `SELECT kind, status, resolution, to_char(first_pay_date, 'YYYY-MM-DD') AS first_pay_date, resolved_at IS NOT NULL AS resolved
         FROM deduction_discrepancies WHERE benefit_id = $1 AND individual_id = $2 ORDER BY first_pay_date`,
        [plan, person],
      );
    expect(await discrepanciesOfPerson()).toEqual([
      { kind: 'missing', status: 'resolved', resolution: 'agreed', first_pay_date: '2026-07-03', resolved: true },
      { kind: 'missing', status: 'open', resolution: null, first_pay_date: '2026-07-31', resolved: false },
    ]);
    expect(await discrepancyEvents(own.connectionId)).toEqual([
      { type: 'DeductionDiscrepancyOpened.v1', n: 2 },
      { type: 'DeductionDiscrepancyResolved.v1', n: 1 },
    ]);

    // The next sync brings a deducted run and a skipped one: the stored open discrepancy is
    // resolved, and the same kind opened again.
    await store.runPayPeriod(ref, { payDate: '2026-08-14' });
    await skipNextRun();
    await store.runPayPeriod(ref, { payDate: '2026-08-28' });
    clock.set('2026-08-29T15:00:00Z');
    await reconciledAfter(await sync(own));
    // Every run owed a deduction (no limit reached): what the lifecycle rests on.
    const owed = await db().query(
      `SELECT to_char(pay_date, 'YYYY-MM-DD') AS pay_date, expected_employee > 0 AS owed FROM reconciliation_results WHERE benefit_id = $1 AND individual_id = $2 ORDER BY pay_date`,
      [plan, person],
    );
    expect(owed).toEqual(['2026-07-03', '2026-07-17', '2026-07-31', '2026-08-14', '2026-08-28'].map((payDate) => ({ pay_date: payDate, owed: true })));
    expect(await discrepanciesOfPerson()).toEqual([
      { kind: 'missing', status: 'resolved', resolution: 'agreed', first_pay_date: '2026-07-03', resolved: true },
      { kind: 'missing', status: 'resolved', resolution: 'agreed', first_pay_date: '2026-07-31', resolved: true },
      { kind: 'missing', status: 'open', resolution: null, first_pay_date: '2026-08-28', resolved: false },
    ]);
  });

  /**
   * Of the employer's active employees, the one whose elective deferrals in a year (the generated
   * retirement enrollments in force at the provider, each at its rate or its annual maximum, and
   * the test's 5 %, on a year's pay and a 5 % bonus) are the smallest, and under the 402(g) limit.
   * A person who reaches the limit (a high earner already saving 10 %) is deducted less, then
   * nothing, and a skipped run that owes nothing matches: the lifecycle under test would not run.
   */
  async function leastDeferringEmployee(of: Employer, employments: { individual_id: string; body: EmploymentBody }[]): Promise<string> {
    const enrollments: { individual_id: string; type: BenefitType; configuration: SandboxConfiguration }[] = await db().query(
      `SELECT e.individual_id::text AS individual_id, b.type, e.configuration FROM sandbox_enrollments e
       JOIN sandbox_benefits b ON b.entity_id = e.entity_id AND b.id = e.benefit_id
       WHERE e.entity_id = $1 AND e.ended_on IS NULL`,
      [of.entityId],
    );
    const yearly = (body: EmploymentBody) => (body.income.unit === 'yearly' ? body.income.amount : body.income.amount * 2_080) * 1.05;
    const deferralsOf = ({ individual_id, body }: { individual_id: string; body: EmploymentBody }) =>
      enrollments
        .filter((e) => e.individual_id === individual_id.toLowerCase() && ['elective_deferral', 'simple'].includes(taxTreatmentOf(e.type).limit ?? ''))
        .reduce((sum, { configuration: { employee_deduction: deduction, annual_maximum } }) => {
          const atRate = !deduction ? 0 : deduction.type === 'percent' ? (deduction.amount / 10_000) * yearly(body) : deduction.amount * 26;
          return sum + Math.min(atRate, annual_maximum ?? Infinity);
        }, 0.05 * yearly(body));
    const [least] = employments
      .filter((r) => r.body.employment.type === 'employee' && r.body.is_active && !r.body.end_date)
      .map((r) => ({ id: r.individual_id, deferrals: deferralsOf(r) }))
      .sort((a, b) => a.deferrals - b.deferrals);
    // The entity id seeds the employer: it names the data of a failure.
    expect([of.entityId, least.deferrals < irsLimitsFor(2026).electiveDeferral]).toEqual([of.entityId, true]);
    return least.id;
  }

  /** An Assisted connection syncs through the internal job POST /sandbox/jobs starts (no job id to poll). */
  async function syncAssisted(of: Employer): Promise<void> {
    const before = await db().query(`SELECT job_id FROM employer_syncs WHERE entity_id = $1`, [of.entityId]);
    expect((await sandbox('/sandbox/jobs', { type: 'data_sync_all' }, 'POST', of)).status).toBe(200);
    await expectEventually(async () => {
      const [now] = await db().query(`SELECT job_id FROM employer_syncs WHERE entity_id = $1`, [of.entityId]);
      expect(now).toBeDefined();
      expect(now.job_id).not.toEqual(before[0]?.job_id);
    });
  }

  async function completeTask(jobId: string): Promise<void> {
    const [task] = await expectEventually(async () => {
      const rows = await db().query(`SELECT id FROM ops_tasks WHERE job_id = $1 AND status = 'open'`, [jobId]);
      expect(rows).toHaveLength(1);
      return rows;
    });
    expect((await service.request(`/ops/api/tasks/${task.id}/complete`, json({}, OPS))).status).toBe(200);
  }
});
