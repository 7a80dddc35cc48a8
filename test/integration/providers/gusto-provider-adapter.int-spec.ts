import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../../src/config/app-config';
import { Connection } from '../../../src/domain/connections/connection';
import { EmployerRef, employerRefOf, ProviderBenefit, ProviderEnrollmentConfiguration } from '../../../src/domain/providers/provider-port';
import { SystemClock } from '../../../src/domain/shared/clock';
import { GustoAccess } from '../../../src/infrastructure/providers/gusto/gusto-access';
import { GustoHttp } from '../../../src/infrastructure/providers/gusto/gusto-http';
import { GustoOAuth } from '../../../src/infrastructure/providers/gusto/gusto-oauth';
import { GustoProviderAdapter } from '../../../src/infrastructure/providers/gusto/gusto-provider.adapter';
import { GustoRateLimiter } from '../../../src/infrastructure/providers/gusto/gusto-rate-limiter';
import { ProviderBenefitLinks } from '../../../src/infrastructure/providers/provider-benefit-links';
import { ProviderGrants } from '../../../src/infrastructure/providers/provider-grants';
import { SealingKey } from '../../../src/infrastructure/secrets/sealing-key';
import { FakeGusto, GUSTO_API_VERSION, GustoCompany, GustoEmployee, GustoEmployeeBenefit, GustoPaySchedule } from '../../fakes/gusto/fake-gusto';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createConnection } from '../sync/sync-test-kit';

const HOUR = 3_600_000;
const LISTING = 'GET /v1/company_benefits/{company_benefit_id}/employee_benefits';
const POST_EMPLOYEE_BENEFIT = 'POST /v1/employees/{employee_id}/employee_benefits';
const PUT_EMPLOYEE_BENEFIT = 'PUT /v1/employee_benefits/{employee_benefit_id}';
const DELETE_EMPLOYEE_BENEFIT = 'DELETE /v1/employee_benefits/{employee_benefit_id}';

const percent = (basisPoints: number): ProviderEnrollmentConfiguration => ({
  employee_deduction: { type: 'percent', amount: basisPoints },
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
});
const fixed = (cents: number): ProviderEnrollmentConfiguration => ({
  employee_deduction: { type: 'fixed', amount: cents },
  company_contribution: null,
  annual_maximum: 2_000_000,
  catch_up: true,
  hsa_contribution_limit: null,
});
const MATCH: ProviderBenefit['company_contribution'] = {
  type: 'match',
  tiers: [
    { match: 10_000, threshold: 300 },
    { match: 5_000, threshold: 500 },
  ],
};

/**
 * The Gusto adapter of the provider port, against the fake Gusto (held to Gusto's document both
 * ways) and real PostgreSQL for the grant and the benefit links: reads into unified records,
 * idempotent benefit and enrollment writes, Gusto's conflicts, refusals and faults.
 */
describeWithPostgres('GustoProviderAdapter (fake Gusto, PostgreSQL)', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let grants: ProviderGrants;
  let links: ProviderBenefitLinks;

  let fake: FakeGusto;
  let company: GustoCompany;
  let employees: GustoEmployee[];
  let schedule: GustoPaySchedule;
  let connection: Connection;
  let ref: EmployerRef;
  let adapter: GustoProviderAdapter;
  /** Runs before each request the adapter sends: a change made in Gusto at that moment. */
  let beforeSend: ((method: string, url: string) => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource());
    const config = Object.assign(new AppConfig(), { DATABASE_URL: 'postgres://set', WEBHOOK_SECRETS_KEY: 'gusto-adapter-test-key-of-at-least-32-chars' });
    grants = new ProviderGrants(dataSource, new SealingKey(config));
    links = new ProviderBenefitLinks(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  beforeEach(async () => {
    fake = await new FakeGusto().start();
    company = fake.addCompany({ pay_schedule_type: 'single', join_date: '2024-01-01' });
    employees = fake.addEmployees(company.uuid, 120);
    schedule = fake.addPaySchedule(company.uuid);
    connection = await createConnection(dataSource, { providerId: 'gusto', sandbox: false });
    ref = employerRefOf(connection, connection.entities[0]);
    const tokens = fake.issueTokens(company.uuid);
    await grants.save({
      connectionId: connection.id,
      providerId: 'gusto',
      accountRef: company.uuid,
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      expiresAt: new Date(Date.now() + 2 * HOUR),
    });
    beforeSend = undefined;
    const http = new GustoHttp({
      baseUrl: fake.url,
      apiVersion: GUSTO_API_VERSION,
      // Gusto's limit is the fake's business here (429s injected); the client-side window would only slow the run.
      limiter: new GustoRateLimiter({ limit: 100_000 }),
      backoffBaseMs: 20,
      fetch: async (input, init) => {
        await beforeSend?.(init?.method ?? 'GET', String(input));
        return fetch(input, init);
      },
    });
    const oauth = new GustoOAuth({ http, clientId: fake.clientId, clientSecret: fake.clientSecret, redirectUri: 'http://127.0.0.1/callback' });
    const access = new GustoAccess(grants, oauth, new SystemClock(), async () => undefined);
    adapter = new GustoProviderAdapter(http, access, links, { maxConflictRetries: 3 });
  });
  afterEach(async () => {
    await fake.stop();
  });

  /** Requests the fake received from `from` on, as `OPERATION STATUS`. */
  const sentSince = (from: number) => fake.requests.slice(from).map((r) => `${r.operation ?? `${r.method} ${r.path}`} ${r.status}`);
  const count = (lines: string[], operation: string) => lines.filter((line) => line.startsWith(`${operation} `)).length;

  /** A change made by someone in Gusto (its own grant), not by the adapter. */
  async function inGusto<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { access_token } = fake.issueTokens(company.uuid);
    const response = await fetch(`${fake.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${access_token}`, 'x-gusto-api-version': GUSTO_API_VERSION, 'content-type': 'application/json', accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(response.status).toBeLessThan(300);
    return (await response.json()) as T;
  }

  async function employeeBenefitsOf(employee: GustoEmployee): Promise<GustoEmployeeBenefit[]> {
    return inGusto<GustoEmployeeBenefit[]>('GET', `/v1/employees/${employee.uuid}/employee_benefits`);
  }

  function aBenefit(overrides: Partial<ProviderBenefit> = {}): ProviderBenefit {
    return { benefit_id: randomUUID(), type: '401k', description: 'Acme 401(k)', frequency: 'every_paycheck', company_contribution: MATCH, ...overrides };
  }

  describe('reads', () => {
    it('reads the company, pages the directory over Gusto pages, and reads individuals, employments and pay groups', async () => {
      const record = await adapter.company(ref);
      expect(record).toMatchObject({ id: company.uuid, legal_name: company.name, ein: company.ein, entity: { type: 'llc' }, primary_email: 'admin@example.com' });
      expect(record.locations).toEqual([{ line1: '525 20th St', line2: null, city: 'San Francisco', state: 'CA', postal_code: '94107', country: 'US' }]);

      const from = fake.requests.length;
      const slice = await adapter.directory(ref, { limit: 20, offset: 90 });
      expect(slice.count).toBe(120);
      expect(slice.items.map((e) => e.id)).toEqual(employees.slice(90, 110).map((e) => e.uuid));
      // Offsets 90–109 lie on Gusto's pages 1 and 2 of 100.
      expect(sentSince(from)).toEqual(['GET /v1/companies/{company_id}/employees 200', 'GET /v1/companies/{company_id}/employees 200']);
      const tail = await adapter.directory(ref, { limit: 50, offset: 100 });
      expect([tail.count, tail.items.length, tail.items[0]]).toEqual([
        120,
        20,
        { id: employees[100].uuid, first_name: employees[100].first_name, middle_name: null, last_name: employees[100].last_name, manager: null, department: null, is_active: true },
      ]);

      const people = await adapter.individuals(ref, [employees[3].uuid, randomUUID(), 'not-a-uuid', employees[7].uuid.toUpperCase()]);
      expect(people.map((p) => [p.id, p.first_name, p.dob])).toEqual([
        [employees[3].uuid, employees[3].first_name, '1990-01-01'],
        [employees[7].uuid, employees[7].first_name, '1990-01-01'],
      ]);

      const [employment] = await adapter.employments(ref, [employees[3].uuid]);
      expect(employment).toMatchObject({
        id: employees[3].uuid,
        title: 'Engineer',
        employment: { type: 'employee', subtype: 'full_time' },
        is_active: true,
        income: { unit: 'yearly', amount: 5_200_000, currency: 'usd' },
        pay_group_ids: [schedule.uuid],
      });

      const groups = await adapter.payGroups(ref);
      expect(groups).toEqual([{ id: schedule.uuid, name: 'Every other Friday', pay_frequencies: ['bi_weekly'], individual_ids: employees.map((e) => e.uuid) }]);
      expect(await adapter.payGroup(ref, schedule.uuid)).toEqual(groups[0]);
      expect(await adapter.payGroup(ref, randomUUID())).toBeUndefined();
      expect(fake.violations).toEqual([]);
    });

    it('reads a processed payroll into a payment and paged pay statements with a benefit’s deductions and contributions, and a whole snapshot', async () => {
      const retirement = fake.addCompanyBenefit(company.uuid, { benefit_type: 5, description: 'Acme 401(k)' });
      const enrolled = employees.slice(0, 10);
      for (const e of enrolled) fake.addEmployeeBenefit(e.uuid, retirement.uuid, { employee_deduction: '100.00', contribution: { type: 'amount', value: '50.00' } });
      const payroll = fake.addProcessedPayroll(company.uuid, { payScheduleUuid: schedule.uuid, startDate: '2026-01-01', endDate: '2026-01-14', checkDate: '2026-01-16' });
      fake.addProcessedPayroll(company.uuid, { payScheduleUuid: schedule.uuid, startDate: '2024-03-01', endDate: '2024-03-14', checkDate: '2024-03-18' });

      const payments = await adapter.payments(ref, '2026-01-01', '2026-01-31');
      expect(payments).toHaveLength(1);
      expect(payments[0]).toMatchObject({
        id: payroll.uuid,
        pay_date: '2026-01-16',
        pay_period: { start_date: '2026-01-01', end_date: '2026-01-14' },
        gross_pay: { amount: 120 * 200_000, currency: 'usd' },
        pay_group_ids: [schedule.uuid],
        pay_frequencies: ['bi_weekly'],
      });
      expect(payments[0].individual_ids).toEqual(employees.map((e) => e.uuid).sort());
      // More than a year, Gusto's longest window: read in windows, oldest first.
      expect((await adapter.payments(ref, '2023-06-01', '2026-02-01')).map((p) => p.pay_date)).toEqual(['2024-03-18', '2026-01-16']);
      expect(await adapter.payments(ref, '2025-01-01', '2025-12-31')).toEqual([]);

      const page = await adapter.payStatements(ref, payroll.uuid, { limit: 50, offset: 100 });
      expect([page?.count, page?.offset, page?.items.length]).toEqual([120, 100, 20]);
      const ordered = employees.map((e) => e.uuid).sort();
      expect(page?.items.map((s) => s.individual_id)).toEqual(ordered.slice(100));
      const all = (await adapter.payStatements(ref, payroll.uuid, { limit: 500, offset: 0 }))!.items;
      const statement = all.find((s) => s.individual_id === enrolled[0].uuid)!;
      expect(statement.employee_deductions).toEqual([{ name: 'Acme 401(k)', amount: 10_000, currency: 'usd', pre_tax: true, type: '401k' }]);
      expect(statement.employer_contributions).toEqual([{ name: 'Acme 401(k)', amount: 5_000, currency: 'usd', type: '401k' }]);
      expect(statement).toMatchObject({ type: 'regular_payroll', payment_method: 'direct_deposit', gross_pay: { amount: 200_000, currency: 'usd' } });
      expect(all.find((s) => s.individual_id === employees[50].uuid)?.employee_deductions).toEqual([]);
      expect(await adapter.payStatements(ref, randomUUID(), { limit: 10, offset: 0 })).toBeUndefined();

      const kinds = new Map<string, number>();
      for await (const batch of adapter.snapshot(ref)) kinds.set(batch.kind, (kinds.get(batch.kind) ?? 0) + batch.records.length);
      expect(Object.fromEntries(kinds)).toEqual({ company: 1, individual: 120, employment: 120, pay_group: 1, payment: 2, pay_statement: 240 });
      expect(fake.violations).toEqual([]);
    });

    it('refreshes the token through Gusto’s token endpoint when Gusto stops taking it (401), and carries on', async () => {
      const before = (await grants.find(connection.id))!.generation;
      fake.advanceTime(2 * 3_600 + 60);
      expect((await adapter.company(ref)).id).toBe(company.uuid);
      expect(fake.refreshCount).toBe(1);
      expect((await grants.find(connection.id))?.generation).toBe(before + 1);
      expect(sentSince(0)).toEqual(['GET /v1/companies/{company_id} 401', 'POST /oauth/token 200', 'GET /v1/companies/{company_id} 200']);
      expect(fake.violations).toEqual([]);
    });

    it('forwards a request to Gusto’s API with the connection’s token, Gusto’s refusals included', async () => {
      const answer = await adapter.forward(ref, { method: 'GET', route: `/v1/companies/${company.uuid}/employees`, params: { page: 2, per: 50 } });
      expect([answer.status_code, (answer.data as unknown[]).length, answer.headers['x-total-count']]).toEqual([200, 50, '120']);
      const missing = await adapter.forward(ref, { method: 'GET', route: `/v1/employees/${randomUUID()}` });
      expect(missing.status_code).toBe(404);
      await expect(adapter.forward(ref, { method: 'POST', route: '/oauth/token', data: {} })).rejects.toMatchObject({ family: 'invalid_request_error' });
      expect(fake.violations).toEqual([]);
    });
  });

  describe('company benefits', () => {
    it('creates a benefit once however often asked, keeps the match on the link, and updates it through a version conflict', async () => {
      const benefit = aBenefit();
      const from = fake.requests.length;
      const created = await adapter.createBenefit(ref, benefit);
      expect(created).toEqual(benefit);
      expect(await adapter.createBenefit(ref, benefit)).toEqual(benefit);
      expect(count(sentSince(from), 'POST /v1/companies/{company_id}/company_benefits')).toBe(1);
      const link = await links.find(connection.id, ref.entityId, benefit.benefit_id);
      expect(link?.settings).toEqual({ company_contribution: MATCH });
      expect(fake.companyBenefit(link!.externalId)).toMatchObject({ benefit_type: 5, description: 'Acme 401(k)', active: true });

      expect(await adapter.benefits(ref)).toEqual([benefit]);
      expect(await adapter.benefit(ref, benefit.benefit_id)).toEqual(benefit);
      expect(await adapter.benefit(ref, randomUUID())).toBeUndefined();

      // Someone's change in Gusto moved the version after our read: 409, read again, apply again.
      fake.failNext(1, { status: 409 }, { method: 'PUT', path: `/v1/company_benefits/${link!.externalId}` });
      const before = fake.requests.length;
      expect(await adapter.updateBenefit(ref, benefit.benefit_id, { description: 'Acme Safe Harbor 401(k)' })).toEqual({ ...benefit, description: 'Acme Safe Harbor 401(k)' });
      expect(sentSince(before)).toEqual([
        'GET /v1/company_benefits/{company_benefit_id} 200',
        'PUT /v1/company_benefits/{company_benefit_id} 409',
        'GET /v1/company_benefits/{company_benefit_id} 200',
        'PUT /v1/company_benefits/{company_benefit_id} 200',
      ]);
      expect(fake.companyBenefit(link!.externalId)?.description).toBe('Acme Safe Harbor 401(k)');
      expect(await adapter.updateBenefit(ref, randomUUID(), { description: 'x' })).toBeUndefined();
      expect(fake.violations).toEqual([]);
    });

    it('after a lost answer, links the company benefit Gusto made instead of creating another', async () => {
      // Refused before it was applied (the fake fails before it acts): transient, and the retry creates it once.
      const first = aBenefit({ description: 'Plan A' });
      fake.failNext(1, { status: 500 }, { method: 'POST', path: `/v1/companies/${company.uuid}/company_benefits` });
      await expect(adapter.createBenefit(ref, first)).rejects.toMatchObject({ family: 'provider_error', outcomeUnknown: true });
      expect(await links.find(connection.id, ref.entityId, first.benefit_id)).toBeUndefined();
      expect(await adapter.createBenefit(ref, first)).toEqual(first);

      // Applied, answer lost: Gusto has it, we have no link. The retry finds it by type and description.
      const lost = fake.addCompanyBenefit(company.uuid, { benefit_type: 5, description: 'Plan B' });
      const second = aBenefit({ description: 'Plan B' });
      const from = fake.requests.length;
      expect(await adapter.createBenefit(ref, second)).toEqual(second);
      expect(count(sentSince(from), 'POST /v1/companies/{company_id}/company_benefits')).toBe(0);
      expect((await links.find(connection.id, ref.entityId, second.benefit_id))?.externalId).toBe(lost.uuid);

      // A benefit of the same type and description that is already another benefit's is not taken.
      const third = aBenefit({ description: 'Plan B' });
      await adapter.createBenefit(ref, third);
      expect(count(sentSince(from), 'POST /v1/companies/{company_id}/company_benefits')).toBe(1);
      expect((await links.find(connection.id, ref.entityId, third.benefit_id))?.externalId).not.toBe(lost.uuid);
      await expect(adapter.createBenefit(ref, aBenefit({ type: '457' }))).rejects.toMatchObject({ family: 'unprocessable_request_error' });
      expect(fake.violations).toEqual([]);
    });
  });

  describe('enrollments', () => {
    let benefit: ProviderBenefit;
    let companyBenefitUuid: string;
    const people = () => employees.slice(0, 50);
    const elementsFor = (list: GustoEmployee[], date = '2026-01-01') =>
      list.map((e, i) => ({ individual_id: e.uuid, effective_date: date, configuration: i % 2 === 0 ? percent(500) : fixed(10_000) }));

    beforeEach(async () => {
      benefit = aBenefit();
      await adapter.createBenefit(ref, benefit);
      companyBenefitUuid = (await links.find(connection.id, ref.entityId, benefit.benefit_id))!.externalId;
    });

    it('enrolls 50 (percent and fixed, with the match) with one read and one create each; enrolling again writes nothing', async () => {
      const unknown = randomUUID();
      const from = fake.requests.length;
      const results = await adapter.enroll(ref, benefit.benefit_id, [...elementsFor(people()), { individual_id: unknown, effective_date: '2026-01-01', configuration: percent(300) }]);
      expect(results.slice(0, 50)).toEqual(people().map((e) => ({ individual_id: e.uuid, code: 200 })));
      expect(results[50]).toMatchObject({ individual_id: unknown, code: 404 });
      const sent = sentSince(from);
      expect([count(sent, LISTING), count(sent, POST_EMPLOYEE_BENEFIT), count(sent, PUT_EMPLOYEE_BENEFIT)]).toEqual([1, 51, 0]);

      const [percentOne] = await employeeBenefitsOf(people()[0]);
      expect(percentOne).toMatchObject({
        company_benefit_uuid: companyBenefitUuid,
        active: true,
        deduct_as_percentage: true,
        employee_deduction: '5.0',
        effective_date: '2026-01-01',
        expiration_date: null,
        elective: true,
      });
      expect(percentOne.contribution).toEqual({
        type: 'tiered',
        value: { tiers: [{ rate: '100.0', threshold: '3.0', threshold_delta: '3' }, { rate: '50.0', threshold: '5.0', threshold_delta: '2' }] },
      });
      const [fixedOne] = await employeeBenefitsOf(people()[1]);
      expect(fixedOne).toMatchObject({ deduct_as_percentage: false, employee_deduction: '100.00', employee_deduction_annual_maximum: '20000.00', catch_up: true });

      const again = fake.requests.length;
      expect(await adapter.enroll(ref, benefit.benefit_id, elementsFor(people()))).toEqual(people().map((e) => ({ individual_id: e.uuid, code: 200 })));
      expect(sentSince(again)).toEqual([`${LISTING} 200`]);

      const inForce = await adapter.enrollments(ref, benefit.benefit_id, '2026-02-01');
      expect(inForce).toHaveLength(50);
      expect(inForce.find((e) => e.individual_id === people()[0].uuid)).toEqual({
        benefit_id: benefit.benefit_id,
        individual_id: people()[0].uuid,
        effective_date: '2026-01-01',
        configuration: percent(500),
        ended_on: null,
      });
      expect(inForce.find((e) => e.individual_id === people()[1].uuid)?.configuration).toEqual(fixed(10_000));
      expect(await adapter.enrollments(ref, benefit.benefit_id, '2025-12-31')).toEqual([]);
      await expect(adapter.enroll(ref, randomUUID(), elementsFor(people().slice(0, 1)))).rejects.toMatchObject({ family: 'invalid_request_error' });
      expect(fake.violations).toEqual([]);
    });

    it('a version moved in Gusto between our read and our write: reads that employee again and applies on the new version', async () => {
      await adapter.enroll(ref, benefit.benefit_id, elementsFor(people().slice(0, 3)));
      const target = people()[1];
      const [window] = await employeeBenefitsOf(target);
      // The moment our PUT leaves, an admin changes the same employee benefit in Gusto.
      beforeSend = async (method, url) => {
        if (method !== 'PUT' || !url.endsWith(`/v1/employee_benefits/${window.uuid}`)) return;
        beforeSend = undefined;
        await inGusto('PUT', `/v1/employee_benefits/${window.uuid}`, { version: window.version, employee_deduction: '77.00' });
      };
      const from = fake.requests.length;
      const changed = elementsFor(people().slice(0, 3)).map((e) => ({ ...e, configuration: percent(700) }));
      expect(await adapter.enroll(ref, benefit.benefit_id, changed)).toEqual(people().slice(0, 3).map((e) => ({ individual_id: e.uuid, code: 200 })));
      const sent = sentSince(from);
      // Ours for the three, the admin's, ours refused (409), ours again on the version read anew.
      expect(count(sent, PUT_EMPLOYEE_BENEFIT)).toBe(5);
      expect(sent.filter((line) => line === `${PUT_EMPLOYEE_BENEFIT} 409`)).toHaveLength(1);
      expect(count(sent, 'GET /v1/employees/{employee_id}/employee_benefits')).toBe(1);
      const [after] = await employeeBenefitsOf(target);
      expect(after).toMatchObject({ uuid: window.uuid, employee_deduction: '7.0', deduct_as_percentage: true });
      expect(fake.violations).toEqual([]);
    });

    it('honours a burst of 429s, retries a PUT after a 500, and after a POST’s lost answer a retried call creates nothing twice', async () => {
      await adapter.enroll(ref, benefit.benefit_id, elementsFor(people().slice(0, 5)));
      fake.failNext(3, { status: 429, retryAfterSeconds: 1 }, { operation: LISTING });
      fake.failNext(1, { status: 500 }, { operation: PUT_EMPLOYEE_BENEFIT });
      const from = fake.requests.length;
      const started = Date.now();
      const changed = elementsFor(people().slice(0, 5)).map((e) => ({ ...e, configuration: percent(600) }));
      expect((await adapter.enroll(ref, benefit.benefit_id, changed)).map((r) => r.code)).toEqual([200, 200, 200, 200, 200]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
      const sent = sentSince(from);
      expect(sent.slice(0, 4)).toEqual([`${LISTING} 429`, `${LISTING} 429`, `${LISTING} 429`, `${LISTING} 200`]);
      expect([count(sent, PUT_EMPLOYEE_BENEFIT), sent.filter((l) => l === `${PUT_EMPLOYEE_BENEFIT} 500`).length]).toEqual([6, 1]);
      for (const e of people().slice(0, 5)) expect((await employeeBenefitsOf(e)).map((b) => b.employee_deduction)).toEqual(['6.0']);

      // A POST is never repeated blindly: the call fails as transient, and its retry reads before writing.
      const newcomer = people()[10];
      fake.failNext(1, { status: 500 }, { operation: POST_EMPLOYEE_BENEFIT });
      await expect(adapter.enroll(ref, benefit.benefit_id, elementsFor([newcomer]))).rejects.toMatchObject({ family: 'provider_error' });
      expect(await adapter.enroll(ref, benefit.benefit_id, elementsFor([newcomer]))).toEqual([{ individual_id: newcomer.uuid, code: 200 }]);
      expect(await adapter.enroll(ref, benefit.benefit_id, elementsFor([newcomer]))).toEqual([{ individual_id: newcomer.uuid, code: 200 }]);
      expect(await employeeBenefitsOf(newcomer)).toHaveLength(1);
      expect(fake.violations).toEqual([]);
    });

    it('a 422 for one individual carries Gusto’s message to that individual; the others are enrolled', async () => {
      const refused = people()[4];
      const errors = [{ error_key: 'employee_deduction', category: 'invalid_attribute_value', message: 'Employee deduction exceeds the annual contribution limit' }];
      fake.failNext(1, { status: 422, errors }, { method: 'POST', path: `/v1/employees/${refused.uuid}/employee_benefits` });
      const results = await adapter.enroll(ref, benefit.benefit_id, elementsFor(people().slice(0, 10)));
      expect(results[4]).toEqual({
        individual_id: refused.uuid,
        code: 422,
        message: 'Gusto refused the change: employee_deduction: Employee deduction exceeds the annual contribution limit',
      });
      expect(results.filter((r) => r.code === 200)).toHaveLength(9);
      expect(await employeeBenefitsOf(refused)).toEqual([]);
      expect(await employeeBenefitsOf(people()[5])).toHaveLength(1);
      expect(fake.violations).toEqual([]);
    });

    it('a change from a later date closes the current window and opens one; an end expires the window the day before, once; enrollments follow', async () => {
      const [changes, ends, never] = [people()[0], people()[1], people()[40]];
      await adapter.enroll(ref, benefit.benefit_id, elementsFor(people().slice(0, 4)));
      const from = fake.requests.length;
      const results = await adapter.applyChanges(ref, benefit.benefit_id, [
        { individual_id: changes.uuid, effective_date: '2026-07-01', configuration: percent(800) },
        { individual_id: ends.uuid, effective_date: '2026-07-01', configuration: null },
        { individual_id: never.uuid, effective_date: '2026-07-01', configuration: null },
      ]);
      expect(results).toEqual([
        { individual_id: changes.uuid, code: 200, effective_date: '2026-07-01' },
        { individual_id: ends.uuid, code: 200, effective_date: '2026-07-01' },
        { individual_id: never.uuid, code: 404, message: `Individual ${never.uuid} has no enrollment in this benefit`, effective_date: '2026-07-01' },
      ]);
      // One read; the change: close + create; the end: one PUT of its expiration; nothing deleted.
      const sent = sentSince(from);
      expect([count(sent, LISTING), count(sent, PUT_EMPLOYEE_BENEFIT), count(sent, POST_EMPLOYEE_BENEFIT), count(sent, DELETE_EMPLOYEE_BENEFIT)]).toEqual([1, 2, 1, 0]);
      const windows = (await employeeBenefitsOf(changes)).map((b) => [b.effective_date, b.expiration_date, b.employee_deduction]);
      expect(windows).toEqual([
        ['2026-01-01', '2026-06-30', '5.0'],
        ['2026-07-01', null, '8.0'],
      ]);
      expect((await employeeBenefitsOf(ends)).map((b) => [b.effective_date, b.expiration_date])).toEqual([['2026-01-01', '2026-06-30']]);

      // On a day of the first window: the change continues it (no end), the end ends it.
      const spring = await adapter.enrollments(ref, benefit.benefit_id, '2026-03-01', [changes.uuid, ends.uuid]);
      expect(Object.fromEntries(spring.map((e) => [e.individual_id, [e.configuration.employee_deduction?.amount, e.effective_date, e.ended_on]]))).toEqual({
        [changes.uuid]: [500, '2026-01-01', null],
        [ends.uuid]: [10_000, '2026-01-01', '2026-07-01'],
      });
      const summer = await adapter.enrollments(ref, benefit.benefit_id, '2026-08-01');
      expect(summer.map((e) => e.individual_id).sort()).toEqual([changes.uuid, people()[2].uuid, people()[3].uuid].sort());
      expect(summer.find((e) => e.individual_id === changes.uuid)).toMatchObject({ effective_date: '2026-07-01', configuration: percent(800), ended_on: null });

      // Ended already on that date: done, not missing, and nothing written.
      const again = fake.requests.length;
      expect(await adapter.unenroll(ref, benefit.benefit_id, [ends.uuid], '2026-07-01')).toEqual([{ individual_id: ends.uuid, code: 200 }]);
      expect(sentSince(again)).toEqual([`${LISTING} 200`]);

      // A scheduled window that has not begun is deleted when the enrollment ends before it.
      expect((await adapter.unenroll(ref, benefit.benefit_id, [changes.uuid, people()[2].uuid], '2026-05-01')).map((r) => r.code)).toEqual([200, 200]);
      expect((await employeeBenefitsOf(changes)).map((b) => [b.effective_date, b.expiration_date])).toEqual([['2026-01-01', '2026-04-30']]);
      expect(await adapter.enrollments(ref, benefit.benefit_id, '2026-08-01')).toEqual([expect.objectContaining({ individual_id: people()[3].uuid })]);
      expect(await adapter.unenroll(ref, randomUUID(), [changes.uuid], '2026-05-01')).toEqual([
        { individual_id: changes.uuid, code: 404, message: `Individual ${changes.uuid} has no enrollment in this benefit` },
      ]);
      expect(fake.violations).toEqual([]);
    });
  });
});
