import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PayStatementRecord } from '../../src/domain/employer/unified-records';
import { YearToDate } from '../../src/domain/payroll/payroll.types';
import { EmployerRef, employerRefOf } from '../../src/domain/providers/provider-port';
import { ManualClock } from '../../src/domain/shared/clock';
import { ConnectionsRepository } from '../../src/infrastructure/database/repositories/connections.repository';
import { SandboxEmployerStore } from '../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { payPeriodOf } from '../../src/infrastructure/providers/sandbox/sandbox-pay-calendar';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, connectEmployer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const TODAY = '2026-06-01';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const OPS = { authorization: `Basic ${Buffer.from('ops:ops-password-for-tests').toString('base64')}` };
const PRODUCTS = ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement', 'benefits'];

const fixed = (amount: number) => ({ type: 'fixed', amount });
const percent = (amount: number) => ({ type: 'percent', amount });
/** A configuration as the service stores it: every field present. */
const stored = (fields: Record<string, unknown>) => ({
  employee_deduction: null,
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
  ...fields,
});

interface SandboxEmployer {
  token: string;
  connectionId: string;
  entityId: string;
}

type Line = { name: string; amount: number; type: string | null; pre_tax?: boolean };

/**
 * Payroll made wrong at the sandbox provider, for reconciliation: a payroll admin's edit of an
 * enrollment that bypasses the service's records, and adjustments (skip, change, keep) of the
 * next regular pay run, each seen in the synced pay statements of that run and not in the next.
 */
describeWithPostgres('sandbox payroll faults', () => {
  const clock = new ManualClock(`${TODAY}T12:00:00Z`);
  let service: TestService;
  let app: IssuedCredentials;
  let employer: SandboxEmployer;
  let ref: EmployerRef;
  /** Active employees with no end date, paid by every run below. */
  let people: string[];
  let k401: string;
  let medical: string;
  /** What each of people[1..5] was enrolled with through the API: a fixed deduction and a fixed contribution. */
  const deductionOf = (index: number) => 10_000 + index * 1_000;
  const CONTRIBUTION = 2_500;

  beforeAll(async () => {
    service = await startTestService({ clock, env: { OPS_SIGN_IN_MAX_FAILURES: '1000' } });
    app = await createApplication(service);
    employer = await sandboxEmployer('sandbox_automated', 16);
    ref = await refOf(employer);
    people = await activeEmployees(employer);
    expect(people.length).toBeGreaterThanOrEqual(7);
    k401 = await createBenefit(employer, { type: '401k', description: 'Faults 401(k)', frequency: 'every_paycheck' });
    medical = await createBenefit(employer, { type: 's125_medical', description: 'Faults medical', frequency: 'every_paycheck' });
    await enrollThroughApi(employer, k401, [
      { individual_id: people[0], configuration: { employee_deduction: percent(300) } },
      ...[1, 2, 3, 4, 5].map((index) => ({
        individual_id: people[index],
        configuration: { employee_deduction: fixed(deductionOf(index)), company_contribution: fixed(CONTRIBUTION) },
      })),
    ]);
    await syncNow(employer);
  });
  afterAll(() => service?.close());

  // ---- helpers -------------------------------------------------------------------------------

  async function sandboxEmployer(providerId: string, employeeSize = 8): Promise<SandboxEmployer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: providerId, employee_size: employeeSize, products: PRODUCTS }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  async function refOf(of: SandboxEmployer): Promise<EmployerRef> {
    const connection = (await service.app.get(ConnectionsRepository).find(of.connectionId))!;
    return employerRefOf(connection, connection.entities.find((e) => e.id === of.entityId)!);
  }

  /** Employees without an end date who started well before today, in directory order. */
  async function activeEmployees(of: SandboxEmployer): Promise<string[]> {
    const store = service.app.get(SandboxEmployerStore);
    const employerRef = await refOf(of);
    const directory = await store.directory(employerRef, { limit: 1000, offset: 0 });
    return (await store.employments(employerRef, directory.items.map((p) => p.id)))
      .filter((e) => e.employment.type === 'employee' && e.end_date === null && e.is_active && e.start_date < '2026-03-01')
      .map((e) => e.id);
  }

  /** The API's calls (version header); the sandbox's take the token alone. */
  const api = (path: string, body?: unknown, token = employer.token) =>
    body === undefined ? service.request(path, { headers: bearer(token) }) : service.request(path, json(body, bearer(token)));
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const sandbox = (method: string, path: string, body?: unknown, token = employer.token) =>
    body === undefined
      ? service.request(path, { method, headers: auth(token) })
      : service.request(path, { ...json(body, auth(token)), method });
  const editEnrollment = (benefitId: string, individualId: string, body: unknown, token = employer.token) =>
    sandbox('PUT', `/sandbox/benefits/${benefitId}/individuals/${individualId}`, body, token);
  const endEnrollment = (benefitId: string, individualId: string, query = '', token = employer.token) =>
    sandbox('DELETE', `/sandbox/benefits/${benefitId}/individuals/${individualId}${query}`, undefined, token);
  const adjust = (body: unknown, token = employer.token) => sandbox('POST', '/sandbox/payroll/adjustments', body, token);
  const pending = async () => {
    const res = await sandbox('GET', '/sandbox/payroll/adjustments');
    expect(res.status).toBe(200);
    return res.body.adjustments;
  };

  async function waitForJob(of: SandboxEmployer, jobId: string) {
    return expectEventually(async () => {
      const res = await api(`/jobs/automated/${jobId}`, undefined, of.token);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('complete');
      return res.body;
    });
  }

  async function createBenefit(of: SandboxEmployer, body: Record<string, unknown>): Promise<string> {
    const res = await api('/employer/benefits', body, of.token);
    if (res.status !== 200) throw new Error(`create benefit failed: ${res.text}`);
    await waitForJob(of, res.body.job_id);
    return res.body.benefit_id;
  }

  async function enrollThroughApi(of: SandboxEmployer, benefitId: string, elements: unknown[]): Promise<void> {
    const res = await api(`/employer/benefits/${benefitId}/individuals`, elements, of.token);
    expect(res.status).toBe(200);
    const job = await waitForJob(of, res.body.job_id);
    expect(job.body.every((r: { code: number }) => r.code === 200)).toBe(true);
  }

  async function syncNow(of: SandboxEmployer): Promise<void> {
    const started = await api('/jobs/automated', { type: 'data_sync_all' }, of.token);
    expect(started.status).toBe(201);
    await waitForJob(of, started.body.job_id);
  }

  /** The next regular pay run, which starts a sync and waits for it: synced reads show it. */
  async function runPayment(): Promise<string> {
    const res = await sandbox('POST', '/sandbox/payment', {});
    expect(res.status).toBe(200);
    expect(res.body.sync_status).toBe('complete');
    return res.body.payment_id;
  }

  /** The individual's statement of a payment, as the synced `POST /employer/pay-statement` reads it. */
  async function statementOf(paymentId: string, individualId: string): Promise<PayStatementRecord> {
    const res = await api('/employer/pay-statement', { requests: [{ payment_id: paymentId, limit: 1000 }] });
    expect(res.status).toBe(200);
    expect(res.body.responses[0].code).toBe(200);
    const statement = (res.body.responses[0].body.pay_statements as PayStatementRecord[]).find((s) => s.individual_id === individualId);
    expect(statement).toBeDefined();
    return statement!;
  }

  const lineOf = (lines: Line[], name: string) => lines.filter((l) => l.name === name);
  const deduction = (s: PayStatementRecord, name: string) => lineOf(s.employee_deductions, name);
  const contribution = (s: PayStatementRecord, name: string) => lineOf(s.employer_contributions, name);
  const sum = (lines: { amount: number }[]) => lines.reduce((total, line) => total + line.amount, 0);
  /** Taxes as computed, deductions as shown: what the statement's net pay must be. */
  const netOf = (s: PayStatementRecord) => s.gross_pay.amount - sum(s.taxes.filter((t) => !t.employer)) - sum(s.employee_deductions);

  async function yearToDate(individualId: string): Promise<YearToDate> {
    const [row] = await service.app.get(DataSource).query(`SELECT totals FROM sandbox_year_to_date WHERE entity_id = $1 AND individual_id = $2`, [
      employer.entityId,
      individualId,
    ]);
    return row.totals;
  }
  const countedIn = (totals: YearToDate, benefitId: string) => totals.employeeByBenefit[benefitId] ?? 0;

  function expectError(res: TestResponse, status: number, name: string, serviceCode: string | undefined, ...fragments: string[]) {
    expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { code: status, name, message: expect.any(String) } });
    if (serviceCode !== undefined) expect(res.body.service_code).toBe(serviceCode);
    for (const fragment of fragments) expect(res.body.message).toContain(fragment);
  }
  const expectInvalid = (res: TestResponse, ...fragments: string[]) => expectError(res, 400, 'invalid_request_error', 'invalid_request', ...fragments);

  // ---- a payroll admin's edit ------------------------------------------------------------------

  describe('PUT /sandbox/benefits/{benefit_id}/individuals/{individual_id}', () => {
    it('changes the next statement’s deduction while the service’s enrollment record keeps its configuration', async () => {
      const person = people[0];
      const before = await statementOf(await runPayment(), person);
      const [percentLine] = deduction(before, 'Faults 401(k)');
      expect(Math.abs(percentLine.amount - (before.gross_pay.amount * 300) / 10_000)).toBeLessThanOrEqual(0.5);

      const adminAmount = percentLine.amount + 4_321;
      const res = await editEnrollment(k401, person.toUpperCase(), { configuration: { employee_deduction: fixed(adminAmount), company_contribution: fixed(1_500) } });
      expect(res.status).toBe(200);
      const configuration = stored({ employee_deduction: fixed(adminAmount), company_contribution: fixed(1_500) });
      expect(res.body).toEqual({
        benefit_id: k401,
        individual_id: person,
        effective_date: TODAY,
        configuration,
        ended_on: null,
        sync_job_id: expect.stringMatching(UUID),
        sync_status: 'complete',
      });
      expect(res.headers.get('sync-job-id')).toBe(res.body.sync_job_id);

      // The provider holds the admin's configuration; the service's record is what the API enrolled.
      expect(await service.app.get(SandboxEmployerStore).enrollmentsInForce(ref, TODAY, { benefitId: k401, individualIds: [person] })).toEqual([
        { benefit_id: k401, individual_id: person, effective_date: TODAY, configuration, ended_on: null },
      ]);
      const records = await service.app.get(DataSource).query(`SELECT configuration FROM enrollments WHERE benefit_id = $1 AND individual_id = $2`, [k401, person]);
      expect(records).toEqual([{ configuration: stored({ employee_deduction: percent(300) }) }]);

      const after = await statementOf(await runPayment(), person);
      expect(deduction(after, 'Faults 401(k)')).toEqual([{ name: 'Faults 401(k)', amount: adminAmount, currency: 'usd', pre_tax: true, type: '401k' }]);
      expect(contribution(after, 'Faults 401(k)').map((l) => l.amount)).toEqual([1_500]);
    });

    it('takes the enroll body’s configuration as it is, its own effective_date included, and a date ahead', async () => {
      const res = await editEnrollment(medical, people[6], { configuration: { employee_deduction: fixed(2_000), effective_date: '07/01/2026' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ effective_date: '2026-07-01', configuration: stored({ employee_deduction: fixed(2_000) }), ended_on: null });
      const ahead = await editEnrollment(medical, people[6], { effective_date: '2026-08-01', configuration: { employee_deduction: fixed(2_500) } });
      expect(ahead.body).toMatchObject({ effective_date: '2026-08-01', configuration: stored({ employee_deduction: fixed(2_500) }) });
      const store = service.app.get(SandboxEmployerStore);
      const inForce = async (date: string) => (await store.enrollmentsInForce(ref, date, { benefitId: medical, individualIds: [people[6]] })).map((e) => e.configuration.employee_deduction);
      expect(await inForce('2026-06-30')).toEqual([]);
      expect(await inForce('2026-07-15')).toEqual([fixed(2_000)]);
      expect(await inForce('2026-08-15')).toEqual([fixed(2_500)]);

      // DELETE ends it from the date given; scheduled rows after it go.
      const ended = await endEnrollment(medical, people[6], '?effective_date=2026-07-20');
      expect(ended.status).toBe(200);
      expect(ended.body).toEqual({ benefit_id: medical, individual_id: people[6], ended_on: '2026-07-20', sync_job_id: expect.stringMatching(UUID), sync_status: 'complete' });
      expect(await inForce('2026-07-15')).toEqual([fixed(2_000)]);
      expect(await inForce('2026-07-20')).toEqual([]);
      expect(await inForce('2026-08-15')).toEqual([]);
      expectError(await endEnrollment(medical, people[6], '?effective_date=2026-07-25'), 404, 'not_found_error', 'enrollment_not_found');
    });

    it('refuses bad ids, dates and configurations with the error object, and changes nothing', async () => {
      const person = people[6];
      const before = await service.app.get(DataSource).query(`SELECT * FROM sandbox_enrollments WHERE individual_id = $1 ORDER BY benefit_id, effective_date`, [person]);
      const good = { configuration: { employee_deduction: fixed(100) } };
      expectInvalid(await editEnrollment('not-a-uuid', person, good), 'benefit_id must be a UUID');
      expectInvalid(await editEnrollment(k401, 'not-a-uuid', good), 'individual_id must be a UUID');
      expectError(await editEnrollment(randomUUID(), person, good), 404, 'not_found_error', 'benefit_not_found');
      expectError(await editEnrollment(k401, randomUUID(), good), 404, 'not_found_error', 'individual_not_found');
      expectInvalid(await editEnrollment(k401, person, {}), 'configuration: configuration is required');
      expectInvalid(await editEnrollment(k401, person, { configuration: 'fixed' }), 'configuration must be an object');
      expectInvalid(await editEnrollment(k401, person, { ...good, extra: 1 }), 'extra: unknown field');
      expectInvalid(await editEnrollment(k401, person, { configuration: { employee_deduction: fixed(-1) } }), 'configuration.employee_deduction.amount');
      expectInvalid(await editEnrollment(k401, person, { configuration: { employee_deduction: percent(10_001) } }), 'basis points');
      expectInvalid(await editEnrollment(k401, person, { configuration: { bogus: true } }), 'configuration.bogus: unknown field');
      expectInvalid(await editEnrollment(medical, person, { configuration: { catch_up: true } }), 'configuration.catch_up: not accepted');
      expectInvalid(await editEnrollment(k401, person, { ...good, effective_date: '2026-02-30' }), 'effective_date must be a date YYYY-MM-DD');
      expectInvalid(await editEnrollment(k401, person, { ...good, effective_date: null }), 'effective_date');
      expectInvalid(await editEnrollment(k401, person, { ...good, effective_date: '2028-06-02' }), 'within two years');
      expectInvalid(
        await editEnrollment(k401, person, { effective_date: '2026-07-01', configuration: { employee_deduction: fixed(100), effective_date: '2026-08-01' } }),
        'differs from effective_date',
      );
      expectInvalid(await editEnrollment(k401, person, { configuration: { effective_date: 'soon' } }), 'configuration.effective_date');
      const unparsable = await service.request(`/sandbox/benefits/${k401}/individuals/${person}`, { ...json('{"configuration":', auth(employer.token)), method: 'PUT' });
      expectError(unparsable, 400, 'bad_request_error', 'malformed_request');
      const list = await editEnrollment(k401, person, [good]);
      expect(list.status).toBe(400);
      expect(list.body).toMatchObject({ code: 400, message: expect.any(String) });
      expect(await service.app.get(DataSource).query(`SELECT * FROM sandbox_enrollments WHERE individual_id = $1 ORDER BY benefit_id, effective_date`, [person])).toEqual(before);
    });

    it('refuses what the provider does not support with 422 unprocessable_parameters', async () => {
      const justworks = await sandboxEmployer('justworks', 4);
      const plan = await createBenefit(justworks, { type: '401k', description: 'Flat 401(k)', frequency: 'every_paycheck' });
      const [someone] = await activeEmployees(justworks);
      const res = await editEnrollment(plan, someone, { configuration: { employee_deduction: percent(300) } }, justworks.token);
      expectError(res, 422, 'unprocessable_request_error', 'unprocessable_parameters', 'does not support percent employee deductions');
      const flat = await editEnrollment(plan, someone, { configuration: { employee_deduction: fixed(300) } }, justworks.token);
      expect(flat.status).toBe(200);
    });
  });

  describe('DELETE /sandbox/benefits/{benefit_id}/individuals/{individual_id}', () => {
    it('answers 404 without an enrollment in force or scheduled, 404/400 for unknown or malformed ids and dates', async () => {
      expectError(await endEnrollment(medical, people[1]), 404, 'not_found_error', 'enrollment_not_found');
      expectError(await endEnrollment(randomUUID(), people[1]), 404, 'not_found_error', 'benefit_not_found');
      expectError(await endEnrollment(k401, randomUUID()), 404, 'not_found_error', 'individual_not_found');
      expectInvalid(await endEnrollment('x', people[1]), 'benefit_id must be a UUID');
      expectInvalid(await endEnrollment(k401, people[1], '?effective_date=tomorrow'), 'effective_date must be a date YYYY-MM-DD');
      expectInvalid(await endEnrollment(k401, people[1], '?effective_date=2030-01-01'), 'within two years');
      expectInvalid(await endEnrollment(k401, people[1], '?when=2026-06-01'), 'when: unknown field');
      // Still enrolled, at the provider and at the service.
      expect(await service.app.get(SandboxEmployerStore).enrollmentsInForce(ref, TODAY, { benefitId: k401, individualIds: [people[1]] })).toHaveLength(1);
    });
  });

  // ---- adjustments of the next pay run --------------------------------------------------------

  describe('adjustments of the next regular pay run', () => {
    beforeEach(async () => {
      const cleared = await sandbox('DELETE', '/sandbox/payroll/adjustments');
      expect(cleared.status).toBe(200);
      expect(cleared.body).toEqual({ adjustments: [], deleted: expect.any(Number) });
    });

    it('skip: the next run shows neither the deduction nor the contribution, net pay and year to date follow; the run after is as enrolled', async () => {
      const person = people[1];
      const added = await adjust({ adjustments: [{ individual_id: person.toUpperCase(), benefit_id: k401, action: 'skip' }] });
      expect(added.status).toBe(200);
      const skip = { individual_id: person, benefit_id: k401, action: 'skip', employee_amount: null, employer_amount: null };
      expect(added.body).toEqual({ adjustments: [skip] });
      expect(await pending()).toEqual([skip]);
      const totalsBefore = await yearToDate(person);

      const skipped = await statementOf(await runPayment(), person);
      expect(deduction(skipped, 'Faults 401(k)')).toEqual([]);
      expect(contribution(skipped, 'Faults 401(k)')).toEqual([]);
      expect(skipped.net_pay.amount).toBe(netOf(skipped));
      expect(countedIn(await yearToDate(person), k401)).toBe(countedIn(totalsBefore, k401));
      expect(await pending()).toEqual([]);

      const next = await statementOf(await runPayment(), person);
      expect(deduction(next, 'Faults 401(k)').map((l) => l.amount)).toEqual([deductionOf(1)]);
      expect(contribution(next, 'Faults 401(k)').map((l) => l.amount)).toEqual([CONTRIBUTION]);
      expect(countedIn(await yearToDate(person), k401)).toBe(countedIn(totalsBefore, k401) + deductionOf(1));
      // The same pay; net pay is again gross less the taxes computed and the deductions shown.
      expect(next.gross_pay).toEqual(skipped.gross_pay);
      expect(next.net_pay.amount).toBe(netOf(next));
    });

    it('change: amounts replace the lines, absent lines are added, 0 removes one; a later request replaces a pending one', async () => {
      const [changed, added, zeroed] = [people[2], people[3], people[4]];
      expect((await adjust({ adjustments: [{ individual_id: changed, benefit_id: k401, action: 'skip' }] })).status).toBe(200);
      const res = await adjust({
        adjustments: [
          { individual_id: changed, benefit_id: k401, action: 'change', employee_amount: 7_777 },
          { individual_id: added, benefit_id: medical, action: 'change', employee_amount: 3_333, employer_amount: 4_444 },
          { individual_id: zeroed, benefit_id: k401, action: 'change', employer_amount: 0, employee_amount: null },
        ],
      });
      expect(res.status).toBe(200);
      const expected = [
        { individual_id: changed, benefit_id: k401, action: 'change', employee_amount: 7_777, employer_amount: null },
        { individual_id: added, benefit_id: medical, action: 'change', employee_amount: 3_333, employer_amount: 4_444 },
        { individual_id: zeroed, benefit_id: k401, action: 'change', employee_amount: null, employer_amount: 0 },
      ].sort((a, b) => a.individual_id.localeCompare(b.individual_id) || a.benefit_id.localeCompare(b.benefit_id));
      expect(res.body).toEqual({ adjustments: expected });
      expect(await pending()).toEqual(expected);
      const totalsBefore = await yearToDate(changed);

      const paymentId = await runPayment();
      const first = await statementOf(paymentId, changed);
      expect(deduction(first, 'Faults 401(k)').map((l) => l.amount)).toEqual([7_777]);
      expect(contribution(first, 'Faults 401(k)').map((l) => l.amount)).toEqual([CONTRIBUTION]);
      expect(first.net_pay.amount).toBe(netOf(first));
      expect(countedIn(await yearToDate(changed), k401)).toBe(countedIn(totalsBefore, k401) + 7_777);
      const second = await statementOf(paymentId, added);
      expect(deduction(second, 'Faults medical')).toEqual([{ name: 'Faults medical', amount: 3_333, currency: 'usd', pre_tax: true, type: 's125_medical' }]);
      expect(contribution(second, 'Faults medical')).toEqual([{ name: 'Faults medical', amount: 4_444, currency: 'usd', type: 's125_medical' }]);
      expect(second.net_pay.amount).toBe(netOf(second));
      const third = await statementOf(paymentId, zeroed);
      expect(contribution(third, 'Faults 401(k)')).toEqual([]);
      expect(deduction(third, 'Faults 401(k)').map((l) => l.amount)).toEqual([deductionOf(4)]);
      expect(await pending()).toEqual([]);

      const nextId = await runPayment();
      expect(deduction(await statementOf(nextId, changed), 'Faults 401(k)').map((l) => l.amount)).toEqual([deductionOf(2)]);
      const nextAdded = await statementOf(nextId, added);
      expect([...deduction(nextAdded, 'Faults medical'), ...contribution(nextAdded, 'Faults medical')]).toEqual([]);
      expect(contribution(await statementOf(nextId, zeroed), 'Faults 401(k)').map((l) => l.amount)).toEqual([CONTRIBUTION]);
    });

    it('keep after an unenroll: the next run deducts with the ended configuration, the run after does not', async () => {
      const person = people[5];
      const removed = await service.request(`/employer/benefits/${k401}/individuals`, { ...json({ individual_ids: [person] }, bearer(employer.token)), method: 'DELETE' });
      expect(removed.status).toBe(200);
      await waitForJob(employer, removed.body.job_id);
      const unenrolled = await statementOf(await runPayment(), person);
      expect(deduction(unenrolled, 'Faults 401(k)')).toEqual([]);

      const res = await adjust({ adjustments: [{ individual_id: person, benefit_id: k401, action: 'keep' }] });
      expect(res.status).toBe(200);
      expect(res.body.adjustments).toEqual([{ individual_id: person, benefit_id: k401, action: 'keep', employee_amount: null, employer_amount: null }]);
      const totalsBefore = await yearToDate(person);
      const kept = await statementOf(await runPayment(), person);
      expect(deduction(kept, 'Faults 401(k)').map((l) => l.amount)).toEqual([deductionOf(5)]);
      expect(contribution(kept, 'Faults 401(k)').map((l) => l.amount)).toEqual([CONTRIBUTION]);
      expect(kept.net_pay.amount).toBe(netOf(kept));
      expect(countedIn(await yearToDate(person), k401)).toBe(countedIn(totalsBefore, k401) + deductionOf(5));

      const after = await statementOf(await runPayment(), person);
      expect([...deduction(after, 'Faults 401(k)'), ...contribution(after, 'Faults 401(k)')]).toEqual([]);
    });

    it('keep after a termination: the final paycheck still deducts though the enrollment ended with the employment', async () => {
      const store = service.app.get(SandboxEmployerStore);
      const person = people[4];
      const payDate = await store.nextPayDate(ref);
      const lastDay = payPeriodOf(payDate).start_date;
      expect((await sandbox('PUT', `/sandbox/employment/${person}`, { end_date: lastDay, is_active: false })).status).toBe(200);
      const ended = await endEnrollment(k401, person, `?effective_date=${lastDay}`);
      expect(ended.status).toBe(200);
      expect(ended.body).toMatchObject({ benefit_id: k401, individual_id: person, ended_on: lastDay });

      expect((await adjust({ adjustments: [{ individual_id: person, benefit_id: k401, action: 'keep' }] })).status).toBe(200);
      const paymentId = await runPayment();
      const final = await statementOf(paymentId, person);
      expect((await store.payment(ref, paymentId))!.pay_date).toBe(payDate);
      expect(deduction(final, 'Faults 401(k)').map((l) => l.amount)).toEqual([deductionOf(4)]);
      expect(contribution(final, 'Faults 401(k)').map((l) => l.amount)).toEqual([CONTRIBUTION]);

      const next = await runPayment();
      expect((await store.payment(ref, next))!.individual_ids).not.toContain(person);
    });

    it('the next regular run consumes them all, those of people it does not pay too; an off-cycle run leaves them', async () => {
      const store = service.app.get(SandboxEmployerStore);
      const leaver = people[6];
      const ended = await sandbox('PUT', `/sandbox/employment/${leaver}`, { end_date: '2026-03-01', is_active: false });
      expect(ended.status).toBe(200);
      const body = {
        adjustments: [
          { individual_id: leaver, benefit_id: k401, action: 'change', employee_amount: 100 },
          { individual_id: people[1], benefit_id: medical, action: 'change', employee_amount: 200 },
        ],
      };
      expect((await adjust(body)).status).toBe(200);
      const offCycle = await store.runPayPeriod(ref, { kind: 'off_cycle_payroll', payDate: await store.nextPayDate(ref) });
      expect((await store.payStatements(ref, offCycle.id, { limit: 1000, offset: 0 }))!.items.flatMap((s) => deduction(s, 'Faults medical'))).toEqual([]);
      expect(await pending()).toHaveLength(2);

      const paymentId = await runPayment();
      expect(await pending()).toEqual([]);
      const payment = await store.payment(ref, paymentId);
      expect(payment!.individual_ids).not.toContain(leaver);
      expect(deduction(await statementOf(paymentId, people[1]), 'Faults medical').map((l) => l.amount)).toEqual([200]);
    });

    it('refuses bad adjustments with the error object, naming each, and keeps the pending ones', async () => {
      const kept = { individual_id: people[1], benefit_id: k401, action: 'skip' };
      expect((await adjust({ adjustments: [kept] })).status).toBe(200);
      const before = await pending();
      const one = (fields: Record<string, unknown>) => ({ adjustments: [{ individual_id: people[2], benefit_id: k401, action: 'skip', ...fields }] });
      expectInvalid(await adjust({}), 'adjustments must be an array');
      expectInvalid(await adjust({ adjustments: [] }), 'at least 1');
      expectInvalid(await adjust({ adjustments: Array.from({ length: 1_001 }, () => kept) }), 'at most 1000');
      expectInvalid(await adjust({ adjustments: [null] }), 'adjustments');
      expectInvalid(await adjust({ ...one({}), extra: true }), 'extra: unknown field');
      expectInvalid(await adjust(one({ action: 'double' })), 'adjustments[0].action: action must be one of: skip, change, keep');
      expectInvalid(await adjust(one({ individual_id: 'x' })), 'adjustments[0].individual_id: individual_id must be a UUID');
      expectInvalid(await adjust(one({ action: 'change' })), 'adjustments[0]: change needs employee_amount, employer_amount or both');
      expectInvalid(await adjust(one({ employee_amount: 5 })), 'adjustments[0]: skip takes no amounts');
      expectInvalid(await adjust(one({ action: 'change', employee_amount: -1 })), 'adjustments[0].employee_amount');
      expectInvalid(await adjust(one({ action: 'change', employer_amount: 1.5 })), 'adjustments[0].employer_amount');
      expectInvalid(await adjust(one({ action: 'change', employer_amount: '100' })), 'adjustments[0].employer_amount');
      expectInvalid(await adjust({ adjustments: [kept, { ...kept, action: 'keep' }] }), 'adjustments[1]', 'already adjusted by adjustments[0]');
      expectInvalid(await adjust(one({ individual_id: randomUUID() })), 'adjustments[0].individual_id: no individual');
      expectInvalid(await adjust(one({ benefit_id: randomUUID() })), 'adjustments[0].benefit_id: no benefit');
      expectInvalid(await adjust(one({ benefit_id: medical, action: 'keep' })), 'nothing to keep');
      expectError(await service.request('/sandbox/payroll/adjustments', json('{"adjustments":[', auth(employer.token))), 400, 'bad_request_error', 'malformed_request');
      const list = await adjust([kept]);
      expect(list.status).toBe(400);
      expect(list.body).toMatchObject({ code: 400, message: expect.any(String) });
      expect(await pending()).toEqual(before);
    });
  });

  describe('every new route', () => {
    const routes = (benefitId: string, individualId: string): [string, (token: string) => Promise<TestResponse>][] => [
      ['PUT enrollment', (token) => editEnrollment(benefitId, individualId, { configuration: { employee_deduction: fixed(100) } }, token)],
      ['DELETE enrollment', (token) => endEnrollment(benefitId, individualId, '', token)],
      ['POST adjustments', (token) => adjust({ adjustments: [{ individual_id: individualId, benefit_id: benefitId, action: 'skip' }] }, token)],
      ['GET adjustments', (token) => sandbox('GET', '/sandbox/payroll/adjustments', undefined, token)],
      ['DELETE adjustments', (token) => sandbox('DELETE', '/sandbox/payroll/adjustments', undefined, token)],
    ];

    it('needs an access token: 401 with the error object', async () => {
      for (const [name, call] of routes(k401, people[1])) {
        const res = await call('not-a-token');
        expect({ name, status: res.status, code: res.body?.service_code }).toEqual({ name, status: 401, code: 'invalid_access_token' });
      }
    });

    it('works only on sandbox connections: 403 sandbox_connection_required', async () => {
      const productionApp = await createApplication(service, { sandbox: false });
      const production = await connectEmployer(service, productionApp, { providerId: 'gusto' });
      for (const [name, call] of routes(randomUUID(), randomUUID())) {
        const res = await call(production.accessToken);
        expect({ name, status: res.status, body: res.body }).toMatchObject({
          name,
          status: 403,
          body: { code: 403, name: 'forbidden_error', service_code: 'sandbox_connection_required' },
        });
      }
    });
  });

  // ---- where the service reads its own records ------------------------------------------------

  describe('on an Assisted provider, whose enrollment reads are the service’s records', () => {
    it('the admin’s edit changes the statement while GET …/individuals still shows the service’s configuration', async () => {
      const assisted = await sandboxEmployer('sandbox_assisted', 6);
      const ops = (path: string) => service.request(path, json({}, OPS));
      const completeTaskOf = async (jobId: string) => {
        const tasks = await service.request(`/ops/api/tasks?status=open&connection_id=${assisted.connectionId}`, { headers: OPS });
        const task = tasks.body.data.find((t: { job_id: string }) => t.job_id === jobId);
        expect(task).toBeDefined();
        expect((await ops(`/ops/api/tasks/${task.task_id}/complete`)).status).toBe(200);
        await expectEventually(async () => expect((await api(`/jobs/manual/${jobId}`, undefined, assisted.token)).body.status).toBe('complete'));
      };
      const created = await api('/employer/benefits', { type: '401k', description: 'Assisted 401(k)', frequency: 'every_paycheck' }, assisted.token);
      expect(created.status).toBe(200);
      const benefitId = created.body.benefit_id;
      await completeTaskOf(created.body.job_id);
      const [person] = await activeEmployees(assisted);
      const enrolled = await api(`/employer/benefits/${benefitId}/individuals`, [{ individual_id: person, configuration: { employee_deduction: percent(400) } }], assisted.token);
      expect(enrolled.status).toBe(200);
      await completeTaskOf(enrolled.body.job_id);
      const serviceView = async () => (await api(`/employer/benefits/${benefitId}/individuals?individual_ids=${person}`, undefined, assisted.token)).body;
      const asEnrolled = [{ individual_id: person, code: 200, body: stored({ employee_deduction: percent(400) }) }];
      expect(await serviceView()).toEqual(asEnrolled);

      const edit = await editEnrollment(benefitId, person, { configuration: { employee_deduction: fixed(9_876) } }, assisted.token);
      expect(edit.status).toBe(200);
      expect(edit.body.configuration).toEqual(stored({ employee_deduction: fixed(9_876) }));
      expect(await serviceView()).toEqual(asEnrolled);

      const run = await sandbox('POST', '/sandbox/payment', {}, assisted.token);
      expect(run.status).toBe(200);
      const store = service.app.get(SandboxEmployerStore);
      const statement = (await store.payStatements(await refOf(assisted), run.body.payment_id, { limit: 100, offset: 0 }))!.items.find((s) => s.individual_id === person)!;
      expect(deduction(statement, 'Assisted 401(k)').map((l) => l.amount)).toEqual([9_876]);
    });
  });
});
