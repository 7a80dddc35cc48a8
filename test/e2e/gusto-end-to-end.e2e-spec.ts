import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/domain/shared/clock';
import { GustoWebhookSubscriptions } from '../../src/infrastructure/providers/gusto/gusto-webhook-subscriptions';
import { ProviderBenefitLinks } from '../../src/infrastructure/providers/provider-benefit-links';
import { ProviderGrants } from '../../src/infrastructure/providers/provider-grants';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { JobSignal } from '../../src/modules/jobs/job-signal';
import { FakeGusto, GUSTO_API_VERSION, GustoCompany, GustoEmployee, GustoEmployeeBenefit, GustoPayrollBenefit, GustoPaySchedule } from '../fakes/gusto/fake-gusto';
import { describeWithKafka, testEnv } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';
import { formTo, ParsedForm } from '../utils/html-forms';

const CALLBACK = 'http://127.0.0.1:4999/callback';
const DAY = 86_400_000;
const POST_EMPLOYEE_BENEFIT = 'POST /v1/employees/{employee_id}/employee_benefits';
const PUT_EMPLOYEE_BENEFIT = 'PUT /v1/employee_benefits/{employee_benefit_id}';
const POST_COMPANY_BENEFIT = 'POST /v1/companies/{company_id}/company_benefits';
/** 100 % of the first 3 % of pay, 50 % of the next 2 % (basis points). */
const MATCH = { type: 'tiered', tiers: [{ match: 10_000, threshold: 300 }, { match: 5_000, threshold: 500 }] };
const PLAN = 'Gusty 401(k)';

/** The service's clock: real time, moved forward at will, so future-dated groups come due while retries still wait in real time. */
class JumpingClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  jumpTo(at: string): void {
    this.offsetMs = Date.parse(at) - Date.now();
  }
}

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const addDays = (date: string, days: number) => dateOf(Date.parse(`${date}T00:00:00Z`) + days * DAY);

/** What one enrollment asks for, and what Gusto must then hold for the person. */
interface Ask {
  employee: GustoEmployee;
  kind: 'percent' | 'fixed';
  /** Basis points (percent) or cents (fixed). */
  amount: number;
  annualMaximum: number | null;
  catchUp: boolean;
  effectiveDate: string;
  /** Enrolled in Gusto by an admin before the job (2 % since 2025-01-01): that window must end the day before ours. */
  enrolledInGusto: boolean;
}

/**
 * The issue's end-to-end scenario for Gusto on real PostgreSQL and Kafka, against the fake Gusto
 * (every request and answer held to Gusto's document): connect through the connect page's OAuth
 * step, sync and read, create a 401(k) with a tiered match, enroll 500 people through Gusto's
 * conflicts, 429s, a 500 and an expiring token, a ContributionChanged from Kafka, and a signed
 * `payroll.paid` webhook bringing pay statements with the deductions, reconciled against what was
 * enrolled. One service for the file.
 */
describeWithKafka('Gusto end to end (fake Gusto, PostgreSQL, Kafka)', () => {
  const clock = new JumpingClock();
  const today = dateOf(Date.now());
  const laterA = addDays(today, 3);
  const laterB = addDays(today, 10);
  let fake: FakeGusto;
  let company: GustoCompany;
  let employees: GustoEmployee[];
  let terminated: GustoEmployee[];
  let schedule: GustoPaySchedule;
  let service: TestService;
  let production: IssuedCredentials;
  let producer: Producer;
  let db: DataSource;

  // What the scenario builds, step by step.
  let token: string;
  let connectionId: string;
  let entityId: string;
  let benefitId: string;
  let companyBenefitUuid: string;
  let asks: Ask[];
  /** The payroll step 6 paid, and each person's plan lines in it. */
  let paid: { payrollId: string; lines: Map<string, GustoPayrollBenefit[]> } | undefined;

  beforeAll(async () => {
    fake = await new FakeGusto().start();
    company = fake.addCompany({ name: 'Gusty Bakery LLC', pay_schedule_type: 'single' });
    employees = fake.addEmployees(company.uuid, 500);
    terminated = fake.addEmployees(company.uuid, 2, { terminated: true });
    schedule = fake.addPaySchedule(company.uuid);
    service = await startTestService({
      kafka: true,
      clock,
      env: {
        GUSTO_CLIENT_ID: fake.clientId,
        GUSTO_CLIENT_SECRET: fake.clientSecret,
        GUSTO_BASE_URL: fake.url,
        // At 180 a minute, 500 people take three minutes: the limiter's window is its spec's and the
        // bench's business. Gusto's 429s are injected below and must still be honoured.
        GUSTO_REQUESTS_PER_MINUTE: '100000',
      },
    });
    db = service.app.get(DataSource);
    production = await createApplication(service, { sandbox: false, redirectUris: [CALLBACK] });
    producer = new Kafka({ clientId: 'gusto-e2e', brokers: testEnv.kafkaBrokers!.split(','), logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
  }, 60_000);

  afterAll(async () => {
    await producer?.disconnect();
    await service?.close();
    await fake?.stop();
  });

  const api = (path: string, body?: unknown): Promise<TestResponse> =>
    body === undefined ? service.request(path, { headers: bearer(token) }) : service.request(path, json(body, bearer(token)));
  const get = (path: string) => fetch(`${service.url}${path}`, { redirect: 'manual' });
  const submit = (form: ParsedForm, button: [string, string]) => {
    const body = new URLSearchParams(form.fields);
    body.append(...button);
    return fetch(`${service.url}${form.action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
  };
  const job = async (id: string) => {
    const res = await api(`/jobs/automated/${id}`);
    expect(res.status).toBe(200);
    return res.body;
  };
  const ended = (id: string, timeoutMs = 60_000) =>
    expectEventually(
      async () => {
        const body = await job(id);
        expect(['complete', 'error']).toContain(body.status);
        return body;
      },
      { timeoutMs, intervalMs: 100 },
    );
  /** What Gusto holds for a person in the plan, oldest window first (read as anyone with a token would). */
  const windowsOf = async (employeeUuid: string, access: string): Promise<GustoEmployeeBenefit[]> => {
    const res = await fetch(`${fake.url}/v1/employees/${employeeUuid}/employee_benefits`, {
      headers: { authorization: `Bearer ${access}`, 'x-gusto-api-version': GUSTO_API_VERSION, accept: 'application/json' },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as GustoEmployeeBenefit[])
      .filter((b) => b.company_benefit_uuid === companyBenefitUuid)
      .sort((a, b) => a.effective_date.localeCompare(b.effective_date));
  };
  const count = (from: number, operation: string, status?: number) =>
    fake.requests.slice(from).filter((r) => r.operation === operation && (status === undefined || r.status === status)).length;

  it('1. connects a Gusto company through the connect page and exchanges the code for a token', async () => {
    const session = await service.request(
      '/connect/sessions',
      json(
        { customer_id: 'gusty-bakery', customer_name: 'Gusty Bakery', products: ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement', 'benefits'], redirect_uri: CALLBACK },
        basic(production),
      ),
    );
    expect(session.status).toBe(201);
    const link = new URL(session.body.connect_url);
    const start = await get(`${link.pathname}${link.search}&state=e2e`);
    expect(start.status).toBe(200);
    const chosen = await submit(formTo(await start.text(), '/connect/provider'), ['provider', 'gusto']);
    expect(chosen.status).toBe(303);
    const authorize = new URL(chosen.headers.get('location')!);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${fake.url}/oauth/authorize`);

    // The employer grants the company at Gusto; Gusto sends the browser back with a code.
    authorize.searchParams.set('company_uuid', company.uuid);
    const granted = await fetch(authorize, { redirect: 'manual' });
    expect(granted.status).toBe(302);
    const back = new URL(granted.headers.get('location')!);
    const review = await get(`${back.pathname}${back.search}`);
    expect(review.status).toBe(200);
    const allowed = await submit(formTo(await review.text(), '/connect/consent'), ['decision', 'allow']);
    expect(allowed.status).toBe(303);
    const code = new URL(allowed.headers.get('location')!).searchParams.get('code')!;

    const exchanged = await service.request('/auth/token', json({ client_id: production.client_id, client_secret: production.client_secret, code, redirect_uri: CALLBACK }));
    expect(exchanged.status).toBe(200);
    expect(exchanged.body).toMatchObject({ provider_id: 'gusto', entity_ids: [expect.any(String)] });
    token = exchanged.body.access_token;
    connectionId = exchanged.body.connection_id;
    entityId = exchanged.body.entity_ids[0];
    expect(await service.app.get(ProviderGrants).find(connectionId)).toMatchObject({ providerId: 'gusto', accountRef: company.uuid, generation: 1 });
  });

  it('2. syncs, and reads the company, directory, individuals, employments and pay groups as Gusto has them', async () => {
    const requested = await api('/jobs/automated', { type: 'data_sync_all' });
    expect(requested.status).toBe(201);
    expect((await ended(requested.body.job_id)).status).toBe('complete');

    expect((await api('/employer/company')).body).toMatchObject({ id: company.uuid, legal_name: 'Gusty Bakery LLC', ein: company.ein });

    const everyone = [...employees, ...terminated];
    const listed: { id: string; first_name: string; last_name: string; is_active: boolean }[] = [];
    for (let offset = 0; offset < everyone.length; offset += 100) {
      const page = await api(`/employer/directory?limit=100&offset=${offset}`);
      expect(page.status).toBe(200);
      expect(page.body.paging.count).toBe(502);
      listed.push(...page.body.individuals);
    }
    const byId = new Map(listed.map((p) => [p.id, p]));
    expect([...byId.keys()].sort()).toEqual(everyone.map((e) => e.uuid).sort());
    for (const e of everyone) expect(byId.get(e.uuid)).toMatchObject({ first_name: e.first_name, last_name: e.last_name, is_active: !e.terminated });

    const sample = [employees[0], employees[250], employees[499], terminated[0]];
    const people = await api('/employer/individual', { requests: sample.map((e) => ({ individual_id: e.uuid })) });
    expect(people.status).toBe(200);
    expect(people.body.responses.map((r: { individual_id: string; code: number; body: { first_name: string; dob: string } }) => [r.individual_id, r.code, r.body.first_name, r.body.dob])).toEqual(
      sample.map((e) => [e.uuid, 200, e.first_name, e.date_of_birth]),
    );
    const employment = await api('/employer/employment', { requests: sample.map((e) => ({ individual_id: e.uuid })) });
    expect(employment.status).toBe(200);
    const [active, , , gone] = employment.body.responses;
    expect(active.body).toMatchObject({ id: employees[0].uuid, title: 'Engineer', is_active: true, income: { unit: 'yearly', amount: 5_200_000, currency: 'usd' } });
    expect(gone.body).toMatchObject({ id: terminated[0].uuid, is_active: false });

    const groups = await api('/employer/pay-groups');
    expect(groups.body).toEqual([{ id: schedule.uuid, name: 'Every other Friday', pay_frequencies: ['bi_weekly'] }]);
    const group = await api(`/employer/pay-groups/${schedule.uuid}`);
    expect([...group.body.individual_ids].sort()).toEqual(employees.map((e) => e.uuid).sort());
    // No payroll yet: the synced reads say so.
    expect((await api(`/employer/payment?start_date=${addDays(today, -60)}&end_date=${today}`)).body).toEqual([]);
  });

  it('3. creates a 401(k) with a tiered match: a Gusto company benefit, once', async () => {
    const from = fake.requests.length;
    const res = await api('/employer/benefits', { type: '401k', description: PLAN, frequency: 'every_paycheck', company_contribution: MATCH });
    expect(res.status).toBe(200);
    expect((await ended(res.body.job_id)).status).toBe('complete');
    benefitId = res.body.benefit_id;
    const link = await service.app.get(ProviderBenefitLinks).find(connectionId, entityId, benefitId);
    companyBenefitUuid = link!.externalId;
    expect(fake.companyBenefit(companyBenefitUuid)).toMatchObject({ company_uuid: company.uuid, benefit_type: 5, description: PLAN, active: true });
    expect(count(from, POST_COMPANY_BENEFIT)).toBe(1);
    expect((await api(`/employer/benefits/${benefitId}`)).body).toMatchObject({
      benefit_id: benefitId,
      type: '401k',
      company_contribution: { type: 'match', tiers: MATCH.tiers },
    });
  });

  it('4. enrolls 500 through a 409, a burst of 429s, a 500 and an expiring token: exactly what was asked, once, windows never overlapping', async () => {
    asks = employees.map((employee, i) => ({
      employee,
      kind: i % 2 === 0 ? 'percent' : 'fixed',
      amount: i % 2 === 0 ? 300 + (i % 8) * 100 : 5_000 + (i % 10) * 1_000,
      annualMaximum: i % 2 === 0 ? null : 2_000_000,
      catchUp: i % 4 === 1,
      effectiveDate: i % 10 === 3 ? laterA : i % 10 === 7 ? laterB : today,
      enrolledInGusto: i >= 200 && i < 240,
    }));
    // An admin enrolled 40 people in Gusto itself before: the service must read and close those windows, never overwrite them.
    for (const ask of asks.filter((a) => a.enrolledInGusto)) {
      fake.addEmployeeBenefit(ask.employee.uuid, companyBenefitUuid, { employee_deduction: '2.0', deduct_as_percentage: true, effective_date: '2025-01-01' });
    }

    // Gusto's faults, placed by how far the job is (POSTs of employee benefits seen).
    let posts = 0;
    let expiredAt: number | undefined;
    const past = (n: number) => (r: { operation?: string }) => r.operation === POST_EMPLOYEE_BENEFIT && posts >= n;
    // Not a fault: counts the creates and, at the 100th, lets two hours pass at Gusto, so the access token expires mid-job.
    fake.failNext(1, { status: 500 }, (r) => {
      if (r.operation === POST_EMPLOYEE_BENEFIT && ++posts === 100) {
        expiredAt = fake.requests.length;
        fake.advanceTime(2 * 3_600 + 60);
      }
      return false;
    });
    fake.failNext(1, { status: 409 }, (r) => r.operation === PUT_EMPLOYEE_BENEFIT && posts >= 150);
    fake.failNext(3, { status: 429, retryAfterSeconds: 1 }, past(250));
    fake.failNext(1, { status: 500 }, past(330));

    const grants = service.app.get(ProviderGrants);
    const generation = (await grants.find(connectionId))!.generation;
    const refreshes = fake.refreshCount;
    const from = fake.requests.length;
    const body = asks.map((a) => ({
      individual_id: a.employee.uuid,
      configuration: {
        employee_deduction: { type: a.kind, amount: a.amount },
        ...(a.annualMaximum === null ? {} : { annual_maximum: a.annualMaximum }),
        catch_up: a.catchUp,
        ...(a.effectiveDate === today ? {} : { effective_date: a.effectiveDate }),
      },
    }));
    const res = await api(`/employer/benefits/${benefitId}/individuals`, body);
    expect(res.status).toBe(200);
    const jobId: string = res.body.job_id;

    // Today's group goes at once; the later ones wait for their dates.
    const dueToday = asks.filter((a) => a.effectiveDate === today).length;
    await expectEventually(async () => expect((await job(jobId)).body).toHaveLength(dueToday), { timeoutMs: 90_000, intervalMs: 200 });
    expect((await job(jobId)).status).toBe('pending');
    for (const date of [laterA, laterB]) {
      clock.jumpTo(`${date}T00:00:05Z`);
      service.app.get(JobSignal).nudge();
      const due = asks.filter((a) => a.effectiveDate <= date).length;
      await expectEventually(async () => expect((await job(jobId)).body).toHaveLength(due), { timeoutMs: 30_000, intervalMs: 100 });
    }
    const done = await ended(jobId);
    expect(done.status).toBe('complete');
    expect(done.body.filter((r: { code: number }) => r.code !== 200)).toEqual([]);
    expect(done.body.map((r: { individual_id: string }) => r.individual_id).sort()).toEqual(employees.map((e) => e.uuid).sort());

    // Every fault happened, each as planned: the 409 read again and reapplied, the 429s waited out,
    // the 500 on a create failed the call and the job's retry created nothing twice.
    expect(posts).toBeGreaterThanOrEqual(330);
    expect(count(from, PUT_EMPLOYEE_BENEFIT, 409)).toBe(1);
    // The 409 was answered by reading that person again (never by writing blind).
    expect(count(from, 'GET /v1/employees/{employee_id}/employee_benefits', 200)).toBeGreaterThanOrEqual(1);
    expect(count(from, POST_EMPLOYEE_BENEFIT, 429)).toBe(3);
    expect(count(from, POST_EMPLOYEE_BENEFIT, 500)).toBe(1);
    // The token expired once mid-job: refreshed once, whatever was in flight.
    expect(expiredAt).toBeDefined();
    expect(fake.requests.slice(expiredAt).filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(1);
    expect(fake.refreshCount - refreshes).toBe(1);
    expect((await grants.find(connectionId))!.generation).toBe(generation + 1);
    // One create per person, none twice.
    expect(count(from, POST_EMPLOYEE_BENEFIT, 201)).toBe(500);

    const access = fake.issueTokens(company.uuid).access_token;
    for (let at = 0; at < asks.length; at += 50) {
      const slice = asks.slice(at, at + 50);
      const held = await Promise.all(slice.map((a) => windowsOf(a.employee.uuid, access)));
      slice.forEach((ask, i) => expectHeld(ask, held[i]));
    }
  }, 240_000);

  /** The windows Gusto holds for one person: exactly the asked configuration from its date, an admin's earlier window closed the day before, no overlap. */
  function expectHeld(ask: Ask, windows: GustoEmployeeBenefit[]): void {
    const label = `${ask.employee.uuid} (${ask.kind} ${ask.amount} from ${ask.effectiveDate})`;
    const ours = windows[windows.length - 1];
    expect({ label, windows: windows.length }).toEqual({ label, windows: ask.enrolledInGusto ? 2 : 1 });
    expect({ label, ...pick(ours) }).toEqual({
      label,
      active: true,
      effective_date: ask.effectiveDate,
      expiration_date: null,
      deduct_as_percentage: ask.kind === 'percent',
      employee_deduction: ask.kind === 'percent' ? ask.amount / 100 : ask.amount / 100,
      employee_deduction_annual_maximum: ask.annualMaximum === null ? null : ask.annualMaximum / 100,
      catch_up: ask.catchUp,
      contribution: { type: 'tiered', tiers: [{ rate: 100, threshold: 3 }, { rate: 50, threshold: 5 }] },
    });
    if (ask.enrolledInGusto) {
      expect({ label, ...pick(windows[0]) }).toMatchObject({
        label,
        effective_date: '2025-01-01',
        expiration_date: addDays(ask.effectiveDate, -1),
        deduct_as_percentage: true,
        employee_deduction: 2,
      });
    }
    for (let i = 1; i < windows.length; i++) expect(windows[i - 1].expiration_date! < windows[i].effective_date).toBe(true);
  }

  /** An employee benefit with its decimal strings as numbers: "5.0" and "5.00" are the same 5 %. */
  function pick(b: GustoEmployeeBenefit) {
    const tiers = b.contribution.type === 'tiered' && typeof b.contribution.value === 'object' ? b.contribution.value.tiers : [];
    return {
      active: b.active,
      effective_date: b.effective_date,
      expiration_date: b.expiration_date,
      deduct_as_percentage: b.deduct_as_percentage,
      employee_deduction: Number(b.employee_deduction),
      employee_deduction_annual_maximum: b.employee_deduction_annual_maximum === null ? null : Number(b.employee_deduction_annual_maximum),
      catch_up: b.catch_up,
      contribution: b.contribution.type === 'tiered' ? { type: 'tiered', tiers: tiers.map((t) => ({ rate: Number(t.rate), threshold: Number(t.threshold) })) } : b.contribution,
    };
  }

  it('5. a ContributionChanged on Kafka reaches Gusto: that person’s deduction changes, nobody else’s', async () => {
    const ask = asks[0];
    const before = await windowsOf(ask.employee.uuid, fake.issueTokens(company.uuid).access_token);
    const from = fake.requests.length;
    const now = clock.now();
    const event = {
      id: randomUUID(),
      type: 'ContributionChanged',
      version: 1,
      occurred_at: now.toISOString(),
      connection_id: connectionId,
      entity_id: entityId,
      data: { individual_id: ask.employee.uuid, benefit_id: benefitId, configuration: { employee_deduction: { type: 'percent', amount: 900 } } },
    };
    await producer.send({ topic: `${service.topicPrefix}hris.events`, messages: [{ key: connectionId, value: JSON.stringify(event) }] });

    const changedFrom = dateOf(now.getTime());
    const windows = await expectEventually(
      async () => {
        const held = await windowsOf(ask.employee.uuid, fake.issueTokens(company.uuid).access_token);
        expect(held.map((w) => [w.effective_date, w.expiration_date, Number(w.employee_deduction), w.deduct_as_percentage])).toEqual([
          [ask.effectiveDate, addDays(changedFrom, -1), ask.amount / 100, true],
          [changedFrom, null, 9, true],
        ]);
        return held;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(windows[0].uuid).toBe(before[0].uuid);
    // Only that person was written to.
    const writes = fake.requests.slice(from).filter((r) => r.operation === POST_EMPLOYEE_BENEFIT || r.operation === PUT_EMPLOYEE_BENEFIT);
    expect(writes.map((r) => r.status)).toEqual(expect.arrayContaining([200, 201]));
    expect(writes.every((r) => r.path.includes(ask.employee.uuid) || r.path.includes(before[0].uuid))).toBe(true);
    const [saga] = await db.query(`SELECT outcome FROM sagas WHERE source_event_id = $1`, [event.id]);
    expect(saga).toBeDefined();
  }, 90_000);

  it('6. a signed payroll.paid webhook brings pay statements with the 401(k) deductions and employer contributions', async () => {
    // Subscribed as the upkeep does with PUBLIC_BASE_URL set; Gusto posts the verification token, the service verifies with it.
    const subscriptions = service.app.get(GustoWebhookSubscriptions);
    const subscription = await subscriptions.ensure(`${service.url}/providers/gusto/webhooks`);
    await fake.idle();
    await expectEventually(async () => expect((await subscriptions.find(subscription.uuid))?.status).toBe('verified'));
    expect(fake.webhookSubscriptions().map((s) => s.status)).toEqual(['verified']);

    // A payroll paid today, of everyone, with the plan's lines as Gusto computes them from each person's window in force.
    const gross = 2_000;
    const inForce = new Map(asks.map((a) => [a.employee.uuid, a]));
    const lines = (uuid: string): GustoPayrollBenefit[] => {
      const ask = inForce.get(uuid)!;
      // Who starts later than today still pays the admin's 2 % if they had it; else nothing yet.
      if (ask.effectiveDate > today && !ask.enrolledInGusto) return [];
      const percent = ask.effectiveDate > today ? 2 : ask.kind === 'percent' ? ask.amount / 100 : (ask.amount / 100 / gross) * 100;
      const deduction = Math.round(gross * percent) / 100;
      const match = ask.effectiveDate > today ? 0 : Math.round(gross * (Math.min(percent, 3) + Math.min(Math.max(percent - 3, 0), 2) * 0.5)) / 100;
      return [{ name: PLAN, employee_deduction: deduction, company_contribution: match, imputed: false }];
    };
    const payroll = fake.addProcessedPayroll(company.uuid, {
      payScheduleUuid: schedule.uuid,
      startDate: addDays(today, -16),
      endDate: addDays(today, -3),
      checkDate: today,
      employees: employees.map((e) => ({ employeeUuid: e.uuid, grossPay: gross, benefits: lines(e.uuid) })),
    });
    paid = { payrollId: payroll.uuid, lines: new Map(employees.map((e) => [e.uuid, lines(e.uuid)])) };
    const before = (await api(`/employer/pay-statement`, { requests: [{ payment_id: payroll.uuid }] })).body.responses[0];
    expect(before.code).toBe(404);

    const [delivery] = await fake.deliver({ event_type: 'payroll.paid', entity_type: 'Payroll', entity_uuid: payroll.uuid, resource_uuid: company.uuid });
    expect(delivery).toMatchObject({ status: 200, signature: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const payments = await expectEventually(
      async () => {
        const res = await api(`/employer/payment?start_date=${addDays(today, -30)}&end_date=${today}`);
        expect(res.body.map((p: { id: string }) => p.id)).toEqual([payroll.uuid]);
        return res.body;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(payments[0]).toMatchObject({ pay_date: today, gross_pay: { amount: 500 * gross * 100, currency: 'usd' }, pay_group_ids: [schedule.uuid] });

    const pages = await api('/employer/pay-statement', { requests: [0, 100, 200, 300, 400].map((offset) => ({ payment_id: payroll.uuid, limit: 100, offset })) });
    expect(pages.status).toBe(200);
    const statements: { individual_id: string; employee_deductions: unknown[]; employer_contributions: unknown[] }[] = pages.body.responses.flatMap(
      (r: { code: number; body: { pay_statements: unknown[] } }) => {
        expect(r.code).toBe(200);
        return r.body.pay_statements;
      },
    );
    expect(statements.map((s) => s.individual_id).sort()).toEqual(employees.map((e) => e.uuid).sort());
    for (const statement of statements) {
      const [line] = lines(statement.individual_id);
      const cents = (dollars: number) => Math.round(dollars * 100);
      expect({ id: statement.individual_id, deductions: statement.employee_deductions, contributions: statement.employer_contributions }).toEqual({
        id: statement.individual_id,
        deductions: line ? [{ name: PLAN, amount: cents(line.employee_deduction), currency: 'usd', pre_tax: true, type: '401k' }] : [],
        contributions: line && line.company_contribution > 0 ? [{ name: PLAN, amount: cents(line.company_contribution), currency: 'usd', type: '401k' }] : [],
      });
    }
  }, 90_000);

  it("7. reconciles that payroll: every deduction as enrolled, and the admin's windows still in force where ours start later found unexpected", async () => {
    const { payrollId, lines } = paid!;
    // The sync the webhook started queues the entity's reconciliation; it reads Gusto's statements through the adapter.
    const run = await expectEventually(
      async () => {
        // The run that read statements: a sync of an event before the payroll may have queued one that read none.
        const [job] = await db.query(
          `SELECT status, result FROM jobs WHERE type = 'deduction_reconciliation' AND entity_id = $1 AND status = 'complete' AND (result->>'statements')::int > 0`,
          [entityId],
        );
        expect(job).toBeDefined();
        return job;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const results: { individual_id: string; result: string; ee: number; oe: number; er: number; oer: number }[] = await db.query(
      `SELECT individual_id, result, expected_employee::int AS ee, observed_employee::int AS oe, expected_employer::int AS er, observed_employer::int AS oer
       FROM reconciliation_results WHERE payment_id = $1 AND benefit_id = $2`,
      [payrollId, benefitId],
    );
    expect(results.map((r) => r.individual_id).sort()).toEqual(employees.map((e) => e.uuid).sort());
    const cents = (dollars: number) => Math.round(dollars * 100);
    const unexpected = new Set(asks.filter((a) => a.enrolledInGusto && a.effectiveDate > today).map((a) => a.employee.uuid));
    expect(unexpected.size).toBeGreaterThan(0);
    for (const r of results) {
      const [line] = lines.get(r.individual_id)!;
      const observed = { employee: line ? cents(line.employee_deduction) : 0, employer: line ? cents(line.company_contribution) : 0 };
      // Ours not begun yet: the service expects nothing, while Gusto still deducts the admin's 2 %.
      const expected = unexpected.has(r.individual_id) ? { employee: 0, employer: 0 } : observed;
      expect(r).toEqual({
        individual_id: r.individual_id,
        result: unexpected.has(r.individual_id) ? 'unexpected' : 'matched',
        ee: expected.employee,
        oe: observed.employee,
        er: expected.employer,
        oer: observed.employer,
      });
    }
    expect(run.result).toMatchObject({ results: employees.length, statements: employees.length, opened: unexpected.size });
    const open = await db.query(`SELECT individual_id, kind FROM deduction_discrepancies WHERE entity_id = $1 AND status = 'open'`, [entityId]);
    expect(open.map((d: { individual_id: string }) => d.individual_id).sort()).toEqual([...unexpected].sort());
    expect(new Set(open.map((d: { kind: string }) => d.kind))).toEqual(new Set(['unexpected']));
  }, 90_000);

  it('held every exchange with Gusto to its document', () => {
    expect(fake.violations).toEqual([]);
  });
});
