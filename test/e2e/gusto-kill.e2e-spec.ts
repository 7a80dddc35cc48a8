import { randomBytes, randomUUID } from 'node:crypto';
import { FakeGusto, GUSTO_API_VERSION, GustoCompanyBenefit, GustoEmployeeBenefit } from '../fakes/gusto/fake-gusto';
import { describeWithPostgres } from '../setup/test-env';
import { bearer } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { connectThroughGusto, GustoConnection } from '../utils/gusto-connect';
import { ServiceProcess, startServiceProcess } from '../utils/service-process';
import { json } from '../utils/test-app';
import { createTestDatabase, TestDatabase } from '../utils/test-database';

/**
 * Under the adapter's own rate limit (180 calls a minute per grant, per process) for each of the
 * two processes, so neither waits for a window: the first makes the sync, the benefit and
 * KILL_AFTER creates; the second the rest.
 */
const EMPLOYEES = 240;
const KILL_AFTER = 90;
const CREATE = 'POST /v1/employees/{employee_id}/employee_benefits';
const CALLBACK = 'http://127.0.0.1:9/callback';
/** The employer match of the benefit: 100 % of the first 3 % of pay, 50 % of the next 2 %. */
const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }, { match: 5_000, threshold: 500 }] };

interface Asked {
  employee_deduction: { type: 'percent' | 'fixed'; amount: number };
  annual_maximum?: number;
  catch_up?: boolean;
}

/** Half percent (3 % to 10 %), half fixed (50.00 to 140.00 a paycheck, capped yearly, with catch-up). */
const configurationOf = (index: number): Asked =>
  index % 2 === 0
    ? { employee_deduction: { type: 'percent', amount: 300 + (index % 8) * 100 } }
    : { employee_deduction: { type: 'fixed', amount: 5_000 + (index % 10) * 1_000 }, annual_maximum: 2_000_000, catch_up: true };

/**
 * The service as a real process driving an enrollment into Gusto (the fake, in this process,
 * every exchange held to Gusto's document), SIGKILLed in the middle of the creates and started
 * again on the same database: every employee ends with exactly the one employee benefit asked
 * for, the company benefit exists once, and the job answers 200 for everyone.
 */
describeWithPostgres('Gusto enrollment across a SIGKILL of the service', () => {
  let database: TestDatabase;
  let fake: FakeGusto;
  let companyUuid: string;
  const processes: ServiceProcess[] = [];
  const application = { client_id: randomUUID(), client_secret: `secret-${randomBytes(16).toString('hex')}` };

  const start = async () => {
    const service = await startServiceProcess({
      name: 'gusto-kill',
      databaseUrl: database.url,
      env: {
        APP_CLIENT_ID: application.client_id,
        APP_CLIENT_SECRET: application.client_secret,
        APP_SANDBOX: 'false',
        APP_REDIRECT_URIS: CALLBACK,
        GUSTO_CLIENT_ID: fake.clientId,
        GUSTO_CLIENT_SECRET: fake.clientSecret,
        GUSTO_BASE_URL: fake.url,
        // The restart is this instance's successor: it frees what the killed one held as it starts.
        INSTANCE_ID: 'gusto-kill-1',
        INSTANCE_HEARTBEAT_MS: '250',
        INSTANCE_DEAD_AFTER_MS: '2000',
      },
    });
    processes.push(service);
    return service;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    fake = await new FakeGusto().start();
    companyUuid = fake.addCompany({ name: 'Gusty Bakery LLC', pay_schedule_type: 'single', join_date: '2024-01-01' }).uuid;
    fake.addEmployees(companyUuid, EMPLOYEES);
    fake.addPaySchedule(companyUuid);
  }, 60_000);
  afterAll(async () => {
    for (const p of processes) await p.kill('SIGKILL').catch(() => undefined);
    await fake?.stop();
    await database?.drop();
  });

  /** Reads Gusto's state back the way a client of Gusto would (the fake's rate limit is off); `paged`: page by page, as X-Total-Pages says. */
  async function fromGusto<T>(path: string, paged: boolean): Promise<T[]> {
    const { access_token } = fake.issueTokens(companyUuid);
    const items: T[] = [];
    for (let page = 1; page <= 20; page++) {
      const url = new URL(path, fake.url);
      if (paged) {
        url.searchParams.set('page', String(page));
        url.searchParams.set('per', '100');
      }
      const res = await fetch(url, { headers: { authorization: `Bearer ${access_token}`, 'x-gusto-api-version': GUSTO_API_VERSION } });
      expect(res.status).toBe(200);
      items.push(...((await res.json()) as T[]));
      if (!paged) return items;
      const totalPages = res.headers.get('x-total-pages');
      expect(totalPages).toEqual(expect.stringMatching(/^\d+$/));
      if (page >= Number(totalPages)) return items;
    }
    throw new Error(`${path} has more than 20 pages`);
  }

  async function jobOf(service: ServiceProcess, employer: GustoConnection, jobId: string, timeoutMs: number) {
    return expectEventually(async () => {
      const res = await service.request(`/jobs/automated/${jobId}`, { headers: bearer(employer.accessToken) });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('complete');
      return res.body;
    }, { timeoutMs });
  }

  it('loses no enrollment and doubles none: one employee benefit each, as asked, the company benefit once', async () => {
    const first = await start();
    const employer = await connectThroughGusto(first.url, application, fake, companyUuid, { customerId: 'gusty-bakery', redirectUri: CALLBACK });

    const created = await first.request(
      '/employer/benefits',
      json({ type: '401k', description: 'Retirement', frequency: 'every_paycheck', company_contribution: MATCH }, bearer(employer.accessToken)),
    );
    expect(created.status).toBe(200);
    await jobOf(first, employer, created.body.job_id, 20_000);
    const benefitId: string = created.body.benefit_id;

    const individuals: string[] = [];
    while (individuals.length < EMPLOYEES) {
      const res = await first.request(`/employer/directory?limit=100&offset=${individuals.length}`, { headers: bearer(employer.accessToken) });
      expect(res.status).toBe(200);
      expect(res.body.individuals.length).toBeGreaterThan(0);
      individuals.push(...res.body.individuals.map((i: { id: string }) => i.id));
    }
    expect(new Set(individuals).size).toBe(EMPLOYEES);

    const createsBefore = fake.requests.filter((r) => r.operation === CREATE).length;
    const enroll = await first.request(
      `/employer/benefits/${benefitId}/individuals`,
      json(individuals.map((individual_id, i) => ({ individual_id, configuration: configurationOf(i) })), bearer(employer.accessToken)),
    );
    expect(enroll.status).toBe(200);
    const jobId: string = enroll.body.job_id;

    const creates = () => fake.requests.filter((r) => r.operation === CREATE).length - createsBefore;
    await expectEventually(() => expect(creates()).toBeGreaterThanOrEqual(KILL_AFTER), { timeoutMs: 30_000, intervalMs: 2 });
    await first.kill('SIGKILL');
    const atKill = creates();
    // The kill landed in the middle: the rest is the restart's.
    expect(atKill).toBeLessThan(EMPLOYEES);

    const second = await start();
    const job = await jobOf(second, employer, jobId, 60_000);
    expect(job.type).toBe('benefit_enroll');
    expect([...job.body].sort((a, b) => a.individual_id.localeCompare(b.individual_id))).toEqual(
      [...individuals].sort().map((individual_id) => ({ individual_id, code: 200 })),
    );
    // One effective-date group (today: a group is due at midnight UTC of its date, a future one would wait for it).
    const [{ effective_date: effectiveDate }] = job.params.groups as { effective_date: string }[];
    expect(job.params.groups).toHaveLength(1);

    // Gusto's side: the one company benefit, and exactly the window asked for each employee.
    const retirement = (await fromGusto<GustoCompanyBenefit>(`/v1/companies/${companyUuid}/company_benefits`, false)).filter((b) => b.benefit_type === 5);
    expect(retirement).toHaveLength(1);
    expect(retirement[0]).toMatchObject({ description: 'Retirement', active: true });
    const windows = await fromGusto<GustoEmployeeBenefit>(`/v1/company_benefits/${retirement[0].uuid}/employee_benefits?include=all_benefits`, true);
    const dollars = (cents: number) => cents / 100;
    const number = (value: unknown) => (value === null || value === undefined ? null : Number(value));
    const found = individuals.map((id) => {
      // The adapter's individual ids are Gusto's employee uuids.
      const mine = windows.filter((w) => w.employee_uuid === id);
      const tiers = mine[0] && typeof mine[0].contribution?.value === 'object' ? mine[0].contribution.value.tiers : [];
      return {
        employee: id,
        windows: mine.length,
        effective_date: mine[0]?.effective_date,
        expiration_date: mine[0]?.expiration_date ?? null,
        active: mine[0]?.active,
        deduct_as_percentage: mine[0]?.deduct_as_percentage,
        employee_deduction: number(mine[0]?.employee_deduction),
        annual_maximum: number(mine[0]?.employee_deduction_annual_maximum),
        catch_up: mine[0]?.catch_up ?? false,
        contribution: mine[0]?.contribution?.type,
        tiers: tiers.map((t) => [Number(t.rate), Number(t.threshold)]),
      };
    });
    const expected = individuals.map((id, i) => {
      const asked = configurationOf(i);
      return {
        employee: id,
        windows: 1,
        effective_date: effectiveDate,
        expiration_date: null,
        active: true,
        deduct_as_percentage: asked.employee_deduction.type === 'percent',
        employee_deduction: dollars(asked.employee_deduction.amount),
        annual_maximum: asked.annual_maximum === undefined ? null : dollars(asked.annual_maximum),
        catch_up: asked.catch_up ?? false,
        contribution: 'tiered',
        tiers: MATCH.tiers.map((t) => [dollars(t.match), dollars(t.threshold)]),
      };
    });
    expect(found).toEqual(expected);
    expect(windows).toHaveLength(EMPLOYEES);
    expect(fake.violations).toEqual([]);

    const createsAfter = creates();
    process.stdout.write(`gusto kill: ${atKill} of ${EMPLOYEES} employee benefits created at the kill; ${createsAfter} creates in all, ${createsAfter - EMPLOYEES} more than the employees\n`);
  }, 150_000);
});
