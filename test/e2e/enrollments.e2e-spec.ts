import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../src/config/app-config';
import { ManualClock } from '../../src/domain/shared/clock';
import { ProviderEnrollmentConfiguration } from '../../src/domain/providers/provider-port';
import { SandboxProviderAdapter } from '../../src/infrastructure/providers/sandbox/sandbox-provider.adapter';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { BenefitsRepository } from '../../src/modules/benefits/benefits.repository';
import { JobSignal } from '../../src/modules/jobs/job-signal';
import { JobWorker } from '../../src/modules/jobs/job-worker';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

interface Employer {
  token: string;
  connectionId: string;
  entityId: string;
}

type EnrollCall = { benefitId: string; elements: { individual_id: string; effective_date: string; configuration: ProviderEnrollmentConfiguration | null }[] };

const percent = (amount: number) => ({ type: 'percent', amount });
const fixed = (amount: number) => ({ type: 'fixed', amount });
const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }, { match: 5_000, threshold: 500 }] };

describeWithPostgres('enrollments', () => {
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  let service: TestService;
  let app: IssuedCredentials;
  let employer: Employer;
  let people: string[];
  let retirement: string;
  let section125: string;
  let hsa: string;
  /** Every provider call the service made that enrolled someone, in order (the adapter instance, wrapped). */
  const enrollCalls: EnrollCall[] = [];

  beforeAll(async () => {
    service = await startTestService({ clock });
    app = await createApplication(service);
    // Count provider calls on the one adapter instance PROVIDER_PORT resolves to.
    const adapter = service.app.get(SandboxProviderAdapter);
    const applyChanges = adapter.applyChanges.bind(adapter);
    adapter.applyChanges = async (ref, benefitId, changes) => {
      const elements = changes.filter((c) => c.configuration !== null);
      if (elements.length > 0) enrollCalls.push({ benefitId, elements });
      return applyChanges(ref, benefitId, changes);
    };
    employer = await sandboxEmployer();
    people = await employeeIds(employer);
    expect(people.length).toBeGreaterThanOrEqual(9);
    retirement = await createBenefit(employer, { type: '401k', description: '401(k)', frequency: 'every_paycheck', company_contribution: MATCH });
    section125 = await createBenefit(employer, { type: 's125_medical', description: 'Medical', frequency: 'every_paycheck' });
    hsa = await createBenefit(employer, { type: 'hsa_pre', description: 'HSA', frequency: 'every_paycheck' });
  });
  afterAll(() => service?.close());

  async function sandboxEmployer(providerId = 'sandbox_automated', products = ['benefits', 'directory', 'payment', 'pay_statement']): Promise<Employer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: providerId, employee_size: 20, products }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  /** Employees paid by the latest pay run (contractors are not), oldest id first. */
  async function employeeIds(of: Employer): Promise<string[]> {
    const res = await service.request('/employer/payment?start_date=2026-01-01&end_date=2026-06-01', { headers: bearer(of.token) });
    expect(res.status).toBe(200);
    const regular = res.body.filter((p: { individual_ids: string[] }) => p.individual_ids.length > 1);
    return [...regular[regular.length - 1].individual_ids].sort();
  }

  async function createBenefit(of: Employer, body: Record<string, unknown>): Promise<string> {
    const res = await service.request('/employer/benefits', json(body, bearer(of.token)));
    if (res.status !== 200) throw new Error(`create benefit failed: ${res.text}`);
    await waitForJob(of, res.body.job_id, ['complete']);
    return res.body.benefit_id;
  }

  function enroll(of: Employer, benefitId: string, body: unknown, headers: Record<string, string> = bearer(of.token)) {
    return service.request(`/employer/benefits/${benefitId}/individuals`, json(body, headers));
  }

  function unenroll(of: Employer, benefitId: string, body: unknown) {
    return service.request(`/employer/benefits/${benefitId}/individuals`, { ...json(body, bearer(of.token)), method: 'DELETE' });
  }

  const getJob = (of: Employer, id: string) => service.request(`/jobs/automated/${id}`, { headers: bearer(of.token) });

  async function waitForJob(of: Employer, id: string, statuses: string[]) {
    return expectEventually(async () => {
      const res = await getJob(of, id);
      expect(res.status).toBe(200);
      expect(statuses).toContain(res.body.status);
      return res.body;
    });
  }

  const db = () => service.app.get(DataSource);
  const counts = async () => {
    const [row] = await db().query(
      `SELECT (SELECT count(*) FROM jobs)::int AS jobs, (SELECT count(*) FROM enrollments)::int AS enrollments,
              (SELECT count(*) FROM enrollment_groups)::int AS groups, (SELECT count(*) FROM outbox_messages)::int AS outbox`,
    );
    return row;
  };

  describe('POST /employer/benefits/{id}/individuals: bad requests change nothing', () => {
    const element = (configuration: unknown, individualId: string = randomUUID()) => ({ individual_id: individualId, configuration });

    it.each<[string, () => unknown, number, string, string | undefined, RegExp]>([
      ['an object body', () => ({ individuals: [] }), 400, 'bad_request_error', 'malformed_request', /^Expected array but received object$/],
      ['an empty array', () => [], 400, 'invalid_request_error', 'invalid_request', /1 to 10000 elements \(received 0\)/],
      [
        'more than 10,000 elements',
        () => Array.from({ length: 10_001 }, () => element({})),
        400,
        'invalid_request_error',
        'invalid_request',
        /received 10001/,
      ],
      ['a bad individual_id', () => [element({}, 'not-a-uuid')], 400, 'invalid_request_error', 'invalid_request', /\[0\]\.individual_id: individual_id must be a UUID/],
      ['no configuration', () => [{ individual_id: randomUUID() }], 400, 'invalid_request_error', 'invalid_request', /\[0\]\.configuration: configuration is required/],
      ['an unknown element field', () => [{ ...element({}), extra: 1 }], 400, 'invalid_request_error', 'invalid_request', /\[0\]\.extra: unknown field/],
      [
        'a negative fixed amount',
        () => [element({ employee_deduction: fixed(-1) })],
        400,
        'invalid_request_error',
        'invalid_request',
        /\[0\]\.configuration\.employee_deduction\.amount: a fixed amount must be a whole number of cents/,
      ],
      [
        'a fractional amount',
        () => [element({ company_contribution: fixed(10.5) })],
        400,
        'invalid_request_error',
        'invalid_request',
        /configuration\.company_contribution\.amount: a fixed amount must be a whole number/,
      ],
      [
        'more than 10,000 basis points',
        () => [element({ employee_deduction: percent(10_001) })],
        400,
        'invalid_request_error',
        'invalid_request',
        /employee_deduction\.amount: a percent amount must be a whole number of basis points from 0 to 10000/,
      ],
      [
        'an amount given as a string',
        () => [element({ employee_deduction: { type: 'percent', amount: '500' } })],
        400,
        'invalid_request_error',
        'invalid_request',
        /employee_deduction\.amount: a percent amount must be a whole number/,
      ],
      [
        'an unknown deduction type',
        () => [element({ employee_deduction: { type: 'match', amount: 1 } })],
        400,
        'invalid_request_error',
        'invalid_request',
        /employee_deduction\.type: must be one of fixed, percent/,
      ],
      [
        'annual_contribution_limit on a 401(k)',
        () => [element({ annual_contribution_limit: 'family' })],
        400,
        'invalid_request_error',
        'invalid_request',
        /configuration\.annual_contribution_limit: not accepted for a retirement benefit/,
      ],
      [
        'an invalid effective_date',
        () => [element({ effective_date: '2026-02-30' })],
        400,
        'invalid_request_error',
        'invalid_request',
        /\[0\]\.configuration\.effective_date must be YYYY-MM-DD, MM\/DD\/YYYY or an ISO 8601 date-time/,
      ],
      [
        'an individual named twice',
        () => {
          const id = randomUUID();
          return [element({}, id), element({}, id.toUpperCase())];
        },
        400,
        'invalid_request_error',
        'invalid_request',
        /each individual may appear once per effective date/,
      ],
    ])('%s → its error', async (_name, body, status, name, serviceCode, message) => {
      const before = await counts();
      const res = await enroll(employer, retirement, body());
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ code: status, name, ...(serviceCode && { service_code: serviceCode }), message: expect.stringMatching(message) });
      expect(await counts()).toEqual(before);
    });

    it.each([
      ['catch_up', true],
      ['annual_maximum', 100_000],
      ['annual_contribution_limit', 'individual'],
    ])('refuses %s on a Section 125 benefit, naming the field', async (field, value) => {
      const res = await enroll(employer, section125, [element({ employee_deduction: fixed(5_000), [field]: value })]);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain(`[0].configuration.${field}: not accepted for a Section 125, FSA, commuter, loan or custom benefit`);
    });

    it('accepts the HSA fields on an HSA benefit', async () => {
      const res = await enroll(employer, hsa, [
        element({ employee_deduction: fixed(10_000), catch_up: true, annual_maximum: 400_000, annual_contribution_limit: 'family' }, people[people.length - 1]),
      ]);
      expect(res.status).toBe(200);
      expect((await waitForJob(employer, res.body.job_id, ['complete'])).body).toEqual([{ individual_id: people[people.length - 1], code: 200 }]);
    });

    it('answers 404 benefit_not_found for an unknown benefit and another connection’s benefit, 400 for a malformed id', async () => {
      const other = await sandboxEmployer();
      const foreign = await createBenefit(other, { type: '401k', description: 'Theirs' });
      for (const id of [randomUUID(), foreign]) {
        const res = await enroll(employer, id, [element({})]);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ code: 404, name: 'not_found_error', service_code: 'benefit_not_found', message: expect.any(String) });
      }
      const malformed = await enroll(employer, 'nope', [element({})]);
      expect(malformed.status).toBe(400);
      expect(malformed.body.message).toContain('benefit_id must be a UUID');
    });

    it('answers 401 without a token, 400 without the version header, 403 without the benefits product', async () => {
      const noToken = await service.request(`/employer/benefits/${retirement}/individuals`, json([element({})], { 'service-api-version': '2020-09-17' }));
      expect(noToken.status).toBe(401);
      expect(noToken.body.name).toBe('authentication_error');
      const { 'service-api-version': _dropped, ...withoutVersion } = bearer(employer.token);
      const noVersion = await enroll(employer, retirement, [element({})], withoutVersion);
      expect(noVersion.status).toBe(400);
      expect(noVersion.body.service_code).toBe('missing_version_header');
      const reader = await sandboxEmployer('sandbox_automated', ['directory']);
      const noProduct = await enroll(reader, retirement, [element({})]);
      expect(noProduct.status).toBe(403);
      expect(noProduct.body.service_code).toBe('product_not_granted');
    });
  });

  describe('unsupported by the provider → 422 unprocessable_parameters', () => {
    it('catch_up on Paylocity (no catch-up), percent on Justworks (flat amounts only)', async () => {
      const paylocity = await sandboxEmployer('paylocity');
      const plan = await createBenefit(paylocity, { type: '401k', description: '401(k)' });
      const catchUp = await enroll(paylocity, plan, [{ individual_id: randomUUID(), configuration: { employee_deduction: percent(500), catch_up: true } }]);
      expect(catchUp.status).toBe(422);
      expect(catchUp.body).toEqual({
        code: 422,
        name: 'unprocessable_request_error',
        service_code: 'unprocessable_parameters',
        message: 'Unsupported by the provider: Paylocity does not support catch_up for 401k',
      });
      // The same plan without catch-up is fine.
      const ok = await enroll(paylocity, plan, [{ individual_id: randomUUID(), configuration: { employee_deduction: percent(500) } }]);
      expect(ok.status).toBe(200);

      const justworks = await sandboxEmployer('justworks');
      const flat = await createBenefit(justworks, { type: '401k', description: '401(k)', frequency: 'every_paycheck' });
      const pct = await enroll(justworks, flat, [{ individual_id: randomUUID(), configuration: { employee_deduction: percent(500) } }]);
      expect(pct.status).toBe(422);
      expect(pct.body.message).toBe('Unsupported by the provider: Justworks does not support percent employee deductions for 401k');
    });

    it('HSA enrollment on Namely (no HSA), a company contribution on a 401(k) loan', async () => {
      const namely = await sandboxEmployer('namely');
      // Namely refuses to create an HSA, so the benefit is one the service already knew (e.g. found at the provider).
      const hsaId = randomUUID();
      const now = clock.now();
      await db().transaction((manager) =>
        service.app.get(BenefitsRepository).insertOrFind(
          {
            id: hsaId,
            connectionId: namely.connectionId,
            entityId: namely.entityId,
            type: 'hsa_pre',
            description: 'HSA',
            frequency: null,
            companyContribution: null,
            origin: 'provider',
            jobId: null,
            createdAt: now,
            updatedAt: now,
          },
          manager,
        ),
      );
      const before = await counts();
      const res = await enroll(namely, hsaId, [{ individual_id: randomUUID(), configuration: { employee_deduction: fixed(100) } }]);
      expect(res.status).toBe(422);
      expect(res.body.service_code).toBe('unprocessable_parameters');
      expect(res.body.message).toBe('Unsupported by the provider: Namely does not support hsa_pre benefits');
      expect(await counts()).toEqual(before);

      const loan = await createBenefit(employer, { type: '401k_loan', description: 'Loan' });
      const contribution = await enroll(employer, loan, [{ individual_id: people[0], configuration: { company_contribution: fixed(100) } }]);
      expect(contribution.status).toBe(422);
      expect(contribution.body.message).toContain('does not support fixed company contributions for 401k_loan');
    });
  });

  describe('enroll, overwrite, read, unenroll', () => {
    it('enrolls, reports each individual on the job, and an unknown individual is a per-individual 404', async () => {
      const stranger = randomUUID();
      const res = await enroll(employer, retirement, [
        { individual_id: people[0], configuration: { employee_deduction: percent(300) } },
        { individual_id: stranger, configuration: { employee_deduction: percent(300) } },
      ]);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ job_id: expect.any(String) });
      const job = await waitForJob(employer, res.body.job_id, ['complete']);
      expect(job).toMatchObject({ job_id: res.body.job_id, type: 'benefit_enroll', status: 'complete', completed_at: expect.any(String) });
      expect(job.params.groups).toEqual([{ effective_date: '2026-06-01', items: expect.any(Array) }]);
      expect(job.body).toEqual([
        { individual_id: people[0], code: 200 },
        { individual_id: stranger, code: 404, message: expect.stringContaining(stranger) },
      ]);
      const rows = await db().query(`SELECT individual_id, status FROM enrollments WHERE benefit_id = $1 ORDER BY status`, [retirement]);
      expect(rows).toEqual([
        { individual_id: people[0], status: 'enrolled' },
        { individual_id: stranger, status: 'error' },
      ]);
    });

    it('overwrites: enrolling again keeps one enrollment with the new amounts, at the service and the provider', async () => {
      const first = await enroll(employer, retirement, [{ individual_id: people[1], configuration: { employee_deduction: percent(400), effective_date: null } }]);
      await waitForJob(employer, first.body.job_id, ['complete']);
      const second = await enroll(employer, retirement, [
        { individual_id: people[1], configuration: { employee_deduction: percent(700), company_contribution: fixed(2_500), catch_up: true } },
      ]);
      await waitForJob(employer, second.body.job_id, ['complete']);

      const rows = await db().query(`SELECT configuration, status, job_id FROM enrollments WHERE benefit_id = $1 AND individual_id = $2`, [
        retirement,
        people[1],
      ]);
      expect(rows).toEqual([
        {
          configuration: {
            employee_deduction: percent(700),
            company_contribution: fixed(2_500),
            annual_maximum: null,
            catch_up: true,
            hsa_contribution_limit: null,
          },
          status: 'enrolled',
          job_id: second.body.job_id,
        },
      ]);
      const atProvider = await db().query(`SELECT configuration FROM sandbox_enrollments WHERE benefit_id = $1 AND individual_id = $2`, [
        retirement,
        people[1],
      ]);
      expect(atProvider).toHaveLength(1);
      expect(atProvider[0].configuration.employee_deduction).toEqual(percent(700));

      const read = await service.request(`/employer/benefits/${retirement}/individuals?individual_ids=${people[1]}`, { headers: bearer(employer.token) });
      expect(read.status).toBe(200);
      expect(read.body).toEqual([
        {
          individual_id: people[1],
          code: 200,
          body: {
            employee_deduction: percent(700),
            company_contribution: fixed(2_500),
            annual_maximum: null,
            catch_up: true,
            hsa_contribution_limit: null,
          },
        },
      ]);
    });

    it('GET …/enrolled and GET …/individuals read the provider’s enrollments in force, per item', async () => {
      const enrolled = await service.request(`/employer/benefits/${retirement}/enrolled`, { headers: bearer(employer.token) });
      expect(enrolled.status).toBe(200);
      expect(enrolled.body).toEqual({ benefit_id: retirement, individual_ids: expect.arrayContaining([people[0], people[1]]) });
      expect(enrolled.body.individual_ids).toHaveLength(2);

      const stranger = randomUUID();
      const items = await service.request(`/employer/benefits/${retirement}/individuals?individual_ids=${people[0]},${stranger},bad-id`, {
        headers: bearer(employer.token),
      });
      expect(items.status).toBe(200);
      expect(items.body).toEqual([
        { individual_id: people[0], code: 200, body: expect.objectContaining({ employee_deduction: percent(300) }) },
        { individual_id: stranger, code: 404, body: { code: 404, name: 'not_found_error', service_code: 'enrollment_not_found', message: expect.any(String) } },
        { individual_id: 'bad-id', code: 400, body: expect.objectContaining({ code: 400, name: 'invalid_request_error' }) },
      ]);
      const all = await service.request(`/employer/benefits/${retirement}/individuals`, { headers: bearer(employer.token) });
      expect(all.body.map((i: { individual_id: string }) => i.individual_id).sort()).toEqual([people[0], people[1]].sort());

      for (const path of ['enrolled', 'individuals']) {
        const unknown = await service.request(`/employer/benefits/${randomUUID()}/${path}`, { headers: bearer(employer.token) });
        expect(unknown.status).toBe(404);
        expect(unknown.body.service_code).toBe('benefit_not_found');
      }
    });

    it('DELETE unenrolls from today on; an individual without an enrollment is a per-individual 404; none done → error', async () => {
      const before = await counts();
      for (const body of [{}, { individual_ids: [] }, { individual_ids: ['nope'] }, [people[0]]]) {
        const bad = await unenroll(employer, retirement, body);
        expect(bad.status).toBe(400);
      }
      expect(await counts()).toEqual(before);

      const stranger = randomUUID();
      const res = await unenroll(employer, retirement, { individual_ids: [people[0], stranger] });
      expect(res.status).toBe(200);
      const job = await waitForJob(employer, res.body.job_id, ['complete']);
      expect(job).toMatchObject({ type: 'benefit_unenroll', params: { benefit_id: retirement, effective_date: '2026-06-01' } });
      expect(job.body).toEqual([
        { individual_id: people[0], code: 200 },
        { individual_id: stranger, code: 404, message: expect.any(String) },
      ]);
      const [row] = await db().query(`SELECT status, to_char(ended_on, 'YYYY-MM-DD') AS ended_on FROM enrollments WHERE benefit_id = $1 AND individual_id = $2`, [
        retirement,
        people[0],
      ]);
      expect(row).toEqual({ status: 'unenrolled', ended_on: '2026-06-01' });
      const enrolled = await service.request(`/employer/benefits/${retirement}/enrolled`, { headers: bearer(employer.token) });
      expect(enrolled.body.individual_ids).toEqual([people[1]]);

      const none = await unenroll(employer, retirement, { individual_ids: [stranger] });
      expect((await waitForJob(employer, none.body.job_id, ['complete', 'error'])).status).toBe('error');
      const unknown = await unenroll(employer, randomUUID(), { individual_ids: [stranger] });
      expect(unknown.status).toBe(404);
    });

    it('internal group jobs are neither found nor listed under /jobs/automated', async () => {
      const [internal] = await db().query(`SELECT id FROM jobs WHERE kind = 'internal' AND connection_id = $1 LIMIT 1`, [employer.connectionId]);
      expect(internal).toBeDefined();
      expect((await getJob(employer, internal.id)).status).toBe(404);
      const list = await service.request('/jobs/automated?limit=100', { headers: bearer(employer.token) });
      expect(list.body.data.map((j: { type: string }) => j.type)).not.toContain('benefit_enrollment_group');
    });
  });

  describe('Assisted providers', () => {
    it('open a manual job instead of provider calls; the service’s rows wait for ops; reads come from the service', async () => {
      const assisted = await sandboxEmployer('sandbox_assisted');
      const created = await service.request('/employer/benefits', json({ type: '401k', description: '401(k)' }, bearer(assisted.token)));
      expect(created.status).toBe(200);
      const calls = enrollCalls.length;
      const person = randomUUID();
      const res = await enroll(assisted, created.body.benefit_id, [{ individual_id: person, configuration: { employee_deduction: percent(500) } }]);
      expect(res.status).toBe(200);
      const [job] = await db().query(`SELECT kind, type, status FROM jobs WHERE id = $1`, [res.body.job_id]);
      expect(job).toEqual({ kind: 'manual', type: 'benefit_enroll', status: 'pending' });
      // The same lifecycle as an Automated provider's: one group, handed to ops as a task (its date is today).
      expect(await db().query(`SELECT state FROM enrollment_groups WHERE job_id = $1`, [res.body.job_id])).toEqual([{ state: 'in_ops' }]);
      expect(await db().query(`SELECT type, status, group_id IS NOT NULL AS of_group FROM ops_tasks WHERE job_id = $1`, [res.body.job_id])).toEqual([
        { type: 'benefit_enroll', status: 'open', of_group: true },
      ]);
      expect(await db().query(`SELECT individual_id, status, job_id FROM enrollments WHERE benefit_id = $1`, [created.body.benefit_id])).toEqual([
        { individual_id: person, status: 'pending', job_id: res.body.job_id },
      ]);
      expect((await getJob(assisted, res.body.job_id)).status).toBe(404);
      const enrolled = await service.request(`/employer/benefits/${created.body.benefit_id}/enrolled`, { headers: bearer(assisted.token) });
      expect(enrolled.body).toEqual({ benefit_id: created.body.benefit_id, individual_ids: [] });
      expect(enrollCalls.length).toBe(calls);
    });
  });

  describe('end to end: a 401(k) with a match reaches the pay statements', () => {
    it('takes 5 % and matches per the tiers, to the cent', async () => {
      const company = await sandboxEmployer();
      const staff = await employeeIds(company);
      const plan = await createBenefit(company, { type: '401k', description: 'Retirement', frequency: 'every_paycheck', company_contribution: MATCH });
      const chosen = staff.slice(0, 3);
      const res = await enroll(
        company,
        plan,
        chosen.map((id) => ({ individual_id: id, configuration: { employee_deduction: percent(500) } })),
      );
      expect(res.status).toBe(200);
      await waitForJob(company, res.body.job_id, ['complete']);

      const payment = await service.request('/sandbox/payment', json({}, bearer(company.token)));
      expect(payment.status).toBe(200);
      const statements = await service.request(
        '/employer/pay-statement',
        json({ requests: [{ payment_id: payment.body.payment_id }] }, bearer(company.token)),
      );
      expect(statements.status).toBe(200);
      const byPerson = new Map<string, { gross_pay: { amount: number }; employee_deductions: { name: string; type: string; amount: number }[]; employer_contributions: { name: string; type: string; amount: number }[] }>(
        statements.body.responses[0].body.pay_statements.map((s: { individual_id: string }) => [s.individual_id, s]),
      );
      for (const id of chosen) {
        const statement = byPerson.get(id)!;
        expect(statement).toBeDefined();
        const gross = statement.gross_pay.amount;
        expect(gross).toBeGreaterThan(0);
        const deferral = roundHalfUp(BigInt(gross) * 500n, 10_000n);
        // 100 % of the deferral on the first 3 % of pay, 50 % between 3 % and 5 % (all in cents × bp).
        const d = BigInt(deferral) * 10_000n;
        const firstBand = min(d, BigInt(gross) * 300n);
        const secondBand = min(max(d - BigInt(gross) * 300n, 0n), BigInt(gross) * 200n);
        const match = roundHalfUp(firstBand * 10_000n + secondBand * 5_000n, 100_000_000n);
        // The generated employer runs plans of its own: this plan's lines carry its description.
        expect(statement.employee_deductions.filter((d) => d.name === 'Retirement').map((d) => [d.type, d.amount])).toEqual([['401k', deferral]]);
        expect(statement.employer_contributions.filter((c) => c.name === 'Retirement').map((c) => [c.type, c.amount])).toEqual([['401k', match]]);
        // 5 % deferred is fully matched on 3 % and half on 2 %: 4 % of pay, give or take rounding.
        expect(Math.abs(match - gross * 0.04)).toBeLessThanOrEqual(1);
      }
      for (const [id, statement] of byPerson) {
        if (chosen.includes(id)) continue;
        expect(statement.employee_deductions.filter((d) => d.name === 'Retirement')).toEqual([]);
      }
    });
  });

  describe('effective dates: one group per date, submitted on its date', () => {
    it('stays pending until the latest date passes, with one provider call per date', async () => {
      const plan = await createBenefit(employer, { type: '403b', description: '403(b)' });
      const callsBefore = enrollCalls.length;
      const [a, b, c, d] = people.slice(4, 8);
      const res = await enroll(employer, plan, [
        { individual_id: a, configuration: { employee_deduction: percent(100), effective_date: '08/01/2026' } },
        { individual_id: b, configuration: { employee_deduction: percent(200) } },
        { individual_id: c, configuration: { employee_deduction: percent(300), effective_date: '2026-07-01T00:00:00.000Z' } },
        { individual_id: d, configuration: { employee_deduction: percent(400), effective_date: '2026-07-01' } },
      ]);
      expect(res.status).toBe(200);
      const jobId = res.body.job_id;
      const callsOf = () => enrollCalls.slice(callsBefore).filter((call) => call.benefitId === plan);

      // Today's group goes at once; the job waits for the others.
      const first = await expectEventually(async () => {
        const job = (await getJob(employer, jobId)).body;
        expect(job.body).toHaveLength(1);
        return job;
      });
      expect(first.status).toBe('pending');
      expect(first.body).toEqual([{ individual_id: b, code: 200 }]);
      expect(callsOf().map((call) => call.elements.map((e) => [e.individual_id, e.effective_date]))).toEqual([[[b, '2026-06-01']]]);

      // A minute before the next date, a lease round finds nothing due.
      clock.set('2026-06-30T23:59:00Z');
      expect(await service.app.get(JobWorker).leaseRound()).toBe(0);
      expect(callsOf()).toHaveLength(1);
      expect((await getJob(employer, jobId)).body.body).toHaveLength(1);

      clock.set('2026-07-01T00:00:00Z');
      service.app.get(JobSignal).nudge();
      const second = await expectEventually(async () => {
        const job = (await getJob(employer, jobId)).body;
        expect(job.body).toHaveLength(3);
        return job;
      });
      expect(second.status).toBe('pending');
      expect(second.completed_at).toBeNull();
      expect(callsOf()).toHaveLength(2);
      expect(callsOf()[1].elements.map((e) => [e.individual_id, e.effective_date])).toEqual([
        [c, '2026-07-01'],
        [d, '2026-07-01'],
      ]);

      clock.set('2026-08-01T06:00:00Z');
      service.app.get(JobSignal).nudge();
      const done = await waitForJob(employer, jobId, ['complete']);
      expect(done.body).toEqual([
        { individual_id: b, code: 200 },
        { individual_id: c, code: 200 },
        { individual_id: d, code: 200 },
        { individual_id: a, code: 200 },
      ]);
      expect(done.completed_at).toBe('2026-08-01T06:00:00.000Z');
      expect(callsOf()).toHaveLength(3);
      expect(callsOf()[2].elements.map((e) => [e.individual_id, e.effective_date])).toEqual([[a, '2026-08-01']]);

      const perDate = await db().query(
        `SELECT to_char(effective_date, 'YYYY-MM-DD') AS date, count(*)::int AS n FROM sandbox_enrollments WHERE benefit_id = $1 GROUP BY 1 ORDER BY 1`,
        [plan],
      );
      expect(perDate).toEqual([
        { date: '2026-06-01', n: 1 },
        { date: '2026-07-01', n: 2 },
        { date: '2026-08-01', n: 1 },
      ]);
      const events = await db().query(
        `SELECT type FROM outbox_messages WHERE payload->'data'->>'job_id' = $1 ORDER BY id`,
        [jobId],
      );
      expect(events.map((e: { type: string }) => e.type)).toEqual([
        'EnrollmentJobCreated.v1',
        'EnrollmentGroupProcessed.v1',
        'EnrollmentGroupProcessed.v1',
        'EnrollmentGroupProcessed.v1',
        'EnrollmentJobCompleted.v1',
      ]);

      // The saga that followed the request: one row, its steps on the clock's dates, ended with the job.
      const [saga] = await db().query(
        `SELECT s.type, s.state, s.outcome, s.steps FROM sagas s JOIN saga_jobs sj ON sj.saga_id = s.id WHERE sj.job_id = $1`,
        [jobId],
      );
      expect(saga).toMatchObject({ type: 'enrollment', state: 'completed', outcome: 'jobs_complete' });
      expect(saga.steps.map((step: { name: string; at: string }) => [step.name, step.at])).toEqual([
        ['enroll_requested', '2026-06-01T12:00:00.000Z'],
        ['group_processed', '2026-06-01T12:00:00.000Z'],
        ['group_processed', '2026-07-01T00:00:00.000Z'],
        ['group_processed', '2026-08-01T06:00:00.000Z'],
        ['job_complete', '2026-08-01T06:00:00.000Z'],
      ]);
    });
  });

  describe('a later request takes individuals over from its effective date', () => {
    const nudgeAt = async (at: string) => {
      clock.set(at);
      service.app.get(JobSignal).nudge();
    };
    const atProvider = (plan: string) =>
      db().query(
        `SELECT individual_id, to_char(effective_date, 'YYYY-MM-DD') AS date, configuration->'employee_deduction'->>'amount' AS amount
         FROM sandbox_enrollments WHERE benefit_id = $1 ORDER BY date, individual_id`,
        [plan],
      );

    it('unenrolling cancels a waiting future-dated enrollment; re-enrolling earlier replaces it; earlier groups still apply', async () => {
      await nudgeAt('2026-09-01T12:00:00Z');
      const plan = await createBenefit(employer, { type: '457', description: '457(b)' });
      const callsBefore = enrollCalls.length;
      const [e, f, g] = people.slice(0, 3);

      // g: enrolled today, then a raise waiting for October 1.
      const today = await enroll(employer, plan, [{ individual_id: g, configuration: { employee_deduction: percent(100) } }]);
      await waitForJob(employer, today.body.job_id, ['complete']);
      const raise = await enroll(employer, plan, [{ individual_id: g, configuration: { employee_deduction: percent(200), effective_date: '2026-10-01' } }]);
      // e and f: both waiting for October 1 in one job.
      const october = await enroll(employer, plan, [
        { individual_id: e, configuration: { employee_deduction: percent(100), effective_date: '2026-10-01' } },
        { individual_id: f, configuration: { employee_deduction: percent(100), effective_date: '2026-10-01' } },
      ]);
      expect([raise.status, october.status]).toEqual([200, 200]);

      // Unenroll e and g today; re-enroll f from September 15 at 3 %.
      const out = await unenroll(employer, plan, { individual_ids: [e, g] });
      const earlier = await enroll(employer, plan, [{ individual_id: f, configuration: { employee_deduction: percent(300), effective_date: '2026-09-15' } }]);
      expect([out.status, earlier.status]).toEqual([200, 200]);

      // The October job lost every individual: it ends now, complete (replaced work is no failure), each one superseded.
      const superseded = await waitForJob(employer, october.body.job_id, ['complete']);
      expect(superseded.body).toEqual([
        { individual_id: e, code: 409, message: expect.stringContaining(`Superseded by job ${out.body.job_id}`) },
        { individual_id: f, code: 409, message: expect.stringContaining(`Superseded by job ${earlier.body.job_id}`) },
      ]);
      const raiseJob = await waitForJob(employer, raise.body.job_id, ['complete']);
      expect(raiseJob.body).toEqual([{ individual_id: g, code: 409, message: expect.stringContaining(out.body.job_id) }]);
      // e had only the cancelled October enrollment: nothing to end at the provider, and that is done, not an error.
      const unenrolled = await waitForJob(employer, out.body.job_id, ['complete']);
      expect(unenrolled.body).toEqual([
        { individual_id: e, code: 200, message: expect.stringContaining(`the waiting enrollment of job ${october.body.job_id} was cancelled`) },
        { individual_id: g, code: 200 },
      ]);

      await nudgeAt('2026-09-15T00:00:00Z');
      await waitForJob(employer, earlier.body.job_id, ['complete']);
      await nudgeAt('2026-10-01T00:00:00Z');
      expect(await service.app.get(JobWorker).leaseRound()).toBe(0);

      // The provider: g's enrollment of September 1 (ended by the unenroll), f from September 15 at 3 %, nothing on October 1.
      expect(await atProvider(plan)).toEqual([
        { individual_id: g, date: '2026-09-01', amount: '100' },
        { individual_id: f, date: '2026-09-15', amount: '300' },
      ]);
      const calls = enrollCalls.slice(callsBefore).filter((call) => call.benefitId === plan);
      expect(calls.map((call) => call.elements.map((el) => [el.individual_id, el.effective_date]))).toEqual([[[g, '2026-09-01']], [[f, '2026-09-15']]]);
      const enrolledNow = await service.request(`/employer/benefits/${plan}/enrolled`, { headers: bearer(employer.token) });
      expect(enrolledNow.body.individual_ids).toEqual([f]);
      const rows = await db().query(`SELECT individual_id, status FROM enrollments WHERE benefit_id = $1 ORDER BY individual_id`, [plan]);
      expect(Object.fromEntries(rows.map((r: { individual_id: string; status: string }) => [r.individual_id, r.status]))).toEqual({
        [e]: 'unenrolled',
        [f]: 'enrolled',
        [g]: 'unenrolled',
      });
    });
  });

  describe('provider calls', () => {
    it('folds the groups due together into calls of at most PROVIDER_CALL_MAX_CHANGES changes, never splitting a group', async () => {
      const config = service.app.get(AppConfig);
      const bound = config.PROVIDER_CALL_MAX_CHANGES;
      config.PROVIDER_CALL_MAX_CHANGES = 3;
      try {
        clock.set('2026-10-10T12:00:00Z');
        const plan = await createBenefit(employer, { type: '401k', description: 'Folded calls' });
        const callsBefore = enrollCalls.length;
        const [a, b, c, d, ...rest] = people;
        const crowd = rest.slice(0, 4);
        const onThe20th = (id: string) => ({ individual_id: id, configuration: { employee_deduction: percent(100), effective_date: '2026-10-20' } });
        // Five requests, five groups due on one date: four of one individual, one of four (over the bound).
        const requests = [[a], [b], [c], [d], crowd].map((ids) => enroll(employer, plan, ids.map(onThe20th)));
        const jobs = [];
        for (const request of requests) {
          const res = await request;
          expect(res.status).toBe(200);
          jobs.push(res.body.job_id as string);
        }
        expect(enrollCalls.slice(callsBefore).filter((call) => call.benefitId === plan)).toEqual([]);

        clock.set('2026-10-20T00:00:00Z');
        service.app.get(JobSignal).nudge();
        for (const job of jobs) expect((await waitForJob(employer, job, ['complete'])).body.every((r: { code: number }) => r.code === 200)).toBe(true);

        const calls = enrollCalls.slice(callsBefore).filter((call) => call.benefitId === plan).map((call) => call.elements.map((e) => e.individual_id).sort());
        // The group of four goes whole and alone; the four single groups fill two calls of at most three.
        expect(calls.filter((ids) => ids.length > 3)).toEqual([[...crowd].sort()]);
        const singles = calls.filter((ids) => ids.length <= 3);
        expect(singles).toHaveLength(2);
        expect(singles.flat().sort()).toEqual([a, b, c, d].sort());
        expect(calls.flat()).toHaveLength(8);
      } finally {
        config.PROVIDER_CALL_MAX_CHANGES = bound;
      }
    });
  });
});

function roundHalfUp(numerator: bigint, denominator: bigint): number {
  return Number((numerator * 2n + denominator) / (denominator * 2n));
}
const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);
