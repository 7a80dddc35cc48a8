import { randomUUID } from 'node:crypto';
import Finch from '@tryfinch/finch-api';
import { FakeGusto, GustoEmployee } from '../fakes/gusto/fake-gusto';
import { describeWithPostgres } from '../setup/test-env';
import { createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { connectThroughGusto, GustoConnection } from '../utils/gusto-connect';
import { DEVIATIONS, publicValidatorWith } from '../utils/public-api-deviations';
import { loadPublicDocument, PublicResponseValidator } from '../utils/public-openapi';
import { startTestService, TestResponse, TestService } from '../utils/test-app';

const CALLBACK = 'http://127.0.0.1:9/callback';
const EMPLOYEES = 6;
const MATCH = { type: 'match' as const, tiers: [{ match: 10_000, threshold: 300 }] };

/**
 * The public-API conformance check and the official SDK's flow, for a real Gusto connection (the
 * fake Gusto, every exchange held to Gusto's document) as test/e2e/public-api-conformance.e2e-spec.ts
 * does them for sandbox connections: the employer reads and deductions answer in the shapes of
 * the public OpenAPI document (with the same contract-decided deviations, test/utils/public-api-deviations.ts),
 * and the SDK, pointed at the service, reads and writes a Gusto company.
 */
describeWithPostgres('public API and the official SDK for a Gusto connection', () => {
  let fake: FakeGusto;
  let service: TestService;
  let validator: PublicResponseValidator;
  let companyUuid: string;
  let employees: GustoEmployee[];
  let employer: GustoConnection;

  beforeAll(async () => {
    validator = publicValidatorWith(loadPublicDocument(), DEVIATIONS);
    fake = await new FakeGusto().start();
    companyUuid = fake.addCompany({ name: 'Gusty Bakery LLC', pay_schedule_type: 'single', join_date: '2024-01-01' }).uuid;
    employees = fake.addEmployees(companyUuid, EMPLOYEES);
    const schedule = fake.addPaySchedule(companyUuid);
    // Deductions Gusto already takes, so that its processed payroll has benefit lines to map.
    const medical = fake.addCompanyBenefit(companyUuid, { benefit_type: 1, description: 'Medical' });
    for (const e of employees) fake.addEmployeeBenefit(e.uuid, medical.uuid, { employee_deduction: '85.00', company_contribution: '120.00', contribution: { type: 'amount', value: '120.00' } });
    fake.addProcessedPayroll(companyUuid, { payScheduleUuid: schedule.uuid });
    service = await startTestService({ env: { GUSTO_CLIENT_ID: fake.clientId, GUSTO_CLIENT_SECRET: fake.clientSecret, GUSTO_BASE_URL: fake.url } });
    const application = await createApplication(service, { sandbox: false, redirectUris: [CALLBACK] });
    employer = await connectThroughGusto(service.url, application, fake, companyUuid, { customerId: 'gusty-bakery', redirectUri: CALLBACK });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await fake?.stop();
  });

  /** The headers an official client SDK sends: the bearer token and its own version header name. */
  const sdkHeaders = () => ({ authorization: `Bearer ${employer.accessToken}`, 'finch-api-version': '2020-09-17' });

  /** Calls, expects the status, and expects the body to conform to the public document. */
  async function conforming(operation: string, path: string, status: number, body?: unknown): Promise<TestResponse> {
    const [method] = operation.split(' ');
    const init: RequestInit = { method, headers: sdkHeaders() };
    if (body !== undefined) init.headers = { ...sdkHeaders(), 'content-type': 'application/json' };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await service.request(path, init);
    expect({ operation, status: res.status, body: res.status === status ? undefined : res.body }).toEqual({ operation, status, body: undefined });
    const check = validator.check(operation, res.status, res.body);
    expect({ operation, status, errors: check.errors, body: check.errors.length > 0 ? res.body : undefined }).toEqual({ operation, status, errors: [], body: undefined });
    return res;
  }

  async function jobCompletes(jobId: string) {
    return expectEventually(async () => {
      const res = await conforming('GET /jobs/automated/{job_id}', `/jobs/automated/${jobId}`, 200);
      expect(res.body.status).toBe('complete');
      return res.body;
    }, { timeoutMs: 20_000 });
  }

  describe('conformance to the public document', () => {
    it('introspect and providers', async () => {
      const introspect = await conforming('GET /introspect', '/introspect', 200);
      expect(introspect.body).toMatchObject({ connection_id: employer.connectionId, client_type: 'production', provider_id: 'gusto' });
      const providers = await conforming('GET /providers', '/providers', 200);
      expect(providers.body.map((p: { id: string }) => p.id)).toContain('gusto');
    });

    it('company, directory, individual, employment: Gusto’s company and employees', async () => {
      const company = await conforming('GET /employer/company', '/employer/company', 200);
      expect(company.body).toMatchObject({ id: companyUuid, legal_name: 'Gusty Bakery LLC' });
      const directory = await conforming('GET /employer/directory', '/employer/directory', 200);
      const ids = directory.body.individuals.map((i: { id: string }) => i.id);
      expect([...ids].sort()).toEqual(employees.map((e) => e.uuid).sort());
      const requests = [...ids.map((individual_id: string) => ({ individual_id })), { individual_id: randomUUID() }];
      const individuals = await conforming('POST /employer/individual', '/employer/individual', 200, { requests, options: { include: ['ssn'] } });
      expect(individuals.body.responses.filter((r: { code: number }) => r.code === 200)).toHaveLength(EMPLOYEES);
      const employment = await conforming('POST /employer/employment', '/employer/employment', 200, { requests });
      expect(employment.body.responses.filter((r: { code: number }) => r.code === 200)).toHaveLength(EMPLOYEES);
    });

    it('payments, pay statements, pay-statement items and pay groups', async () => {
      const payments = await conforming('GET /employer/payment', '/employer/payment?start_date=2000-01-01&end_date=2100-12-31', 200);
      expect(payments.body).toHaveLength(1);
      const statements = await conforming('POST /employer/pay-statement', '/employer/pay-statement', 200, {
        requests: [{ payment_id: payments.body[0].id, limit: 3 }, { payment_id: randomUUID() }],
      });
      expect(statements.body.responses[0].body.pay_statements).toHaveLength(3);
      await conforming('GET /employer/pay-statement-item', '/employer/pay-statement-item?start_date=2000-01-01&end_date=2100-12-31', 200);
      const groups = await conforming('GET /employer/pay-groups', '/employer/pay-groups', 200);
      expect(groups.body.length).toBeGreaterThan(0);
      await conforming('GET /employer/pay-groups/{pay_group_id}', `/employer/pay-groups/${groups.body[0].id}`, 200);
    });

    it('data-sync jobs', async () => {
      const job = await conforming('POST /jobs/automated', '/jobs/automated', 201, { type: 'data_sync_all' });
      await jobCompletes(job.body.job_id);
      await conforming('GET /jobs/automated', '/jobs/automated', 200);
    });

    it('deductions: create, read, update, enroll, unenroll, meta, and a type Gusto cannot hold', async () => {
      const [first, second] = employees.map((e) => e.uuid);
      const created = await conforming('POST /employer/benefits', '/employer/benefits', 200, {
        type: '401k',
        description: 'Retirement',
        frequency: 'every_paycheck',
        company_contribution: MATCH,
      });
      const benefitId = created.body.benefit_id;
      await jobCompletes(created.body.job_id);
      await conforming('POST /employer/benefits', '/employer/benefits', 422, { type: '457', description: 'Unsupported', frequency: 'every_paycheck' });
      await conforming('GET /employer/benefits', '/employer/benefits', 200);
      await conforming('GET /employer/benefits/{benefit_id}', `/employer/benefits/${benefitId}`, 200);
      await conforming('GET /employer/benefits/{benefit_id}', `/employer/benefits/${randomUUID()}`, 404);
      await conforming('GET /employer/benefits/meta', '/employer/benefits/meta', 200);
      const updated = await conforming('POST /employer/benefits/{benefit_id}', `/employer/benefits/${benefitId}`, 200, { description: 'Retirement plan' });
      await jobCompletes(updated.body.job_id);

      const enroll = await conforming('POST /employer/benefits/{benefit_id}/individuals', `/employer/benefits/${benefitId}/individuals`, 200, [
        { individual_id: first, configuration: { employee_deduction: { type: 'percent', amount: 500 } } },
        { individual_id: second, configuration: { employee_deduction: { type: 'fixed', amount: 10_000 } } },
      ]);
      expect((await jobCompletes(enroll.body.job_id)).body).toEqual(expect.arrayContaining([{ individual_id: first, code: 200 }, { individual_id: second, code: 200 }]));
      await conforming('GET /employer/benefits/{benefit_id}/enrolled', `/employer/benefits/${benefitId}/enrolled`, 200);
      const individuals = await conforming('GET /employer/benefits/{benefit_id}/individuals', `/employer/benefits/${benefitId}/individuals`, 200);
      expect(individuals.body.map((i: { individual_id: string }) => i.individual_id).sort()).toEqual([first, second].sort());
      const unenroll = await conforming('DELETE /employer/benefits/{benefit_id}/individuals', `/employer/benefits/${benefitId}/individuals`, 200, {
        individual_ids: [second],
      });
      await jobCompletes(unenroll.body.job_id);
    });
  });

  describe('the official SDK, pointed at the service', () => {
    let finch: Finch;
    beforeAll(() => {
      finch = new Finch({ accessToken: employer.accessToken, baseURL: service.url, maxRetries: 0 });
    });

    async function sdkJobCompletes(jobId: string) {
      return expectEventually(async () => {
        const job = await finch.jobs.automated.retrieve(jobId);
        expect(job.status).toBe('complete');
        return job;
      }, { timeoutMs: 20_000 });
    }

    it('company, directory, individual, employment', async () => {
      const company = await finch.hris.company.retrieve();
      expect(company).toMatchObject({ id: companyUuid, legal_name: 'Gusty Bakery LLC' });
      const ids: string[] = [];
      for await (const person of finch.hris.directory.list({ limit: 4 })) ids.push(person.id);
      expect([...ids].sort()).toEqual(employees.map((e) => e.uuid).sort());
      const people = [];
      for await (const response of finch.hris.individuals.retrieveMany({ requests: ids.map((individual_id) => ({ individual_id })) })) people.push(response);
      expect(people.map((r) => [r.individual_id, r.code]).sort()).toEqual(ids.map((id) => [id, 200]).sort());
      const employments = [];
      for await (const response of finch.hris.employments.retrieveMany({ requests: ids.map((individual_id) => ({ individual_id })) })) employments.push(response);
      expect(employments.map((r) => r.code)).toEqual(ids.map(() => 200));
    });

    it('payments and pay statements, with the deductions Gusto took', async () => {
      const payments = [];
      for await (const payment of finch.hris.payments.list({ start_date: '2000-01-01', end_date: '2100-12-31' })) payments.push(payment);
      expect(payments).toHaveLength(1);
      const responses = [];
      for await (const response of finch.hris.payStatements.retrieveMany({ requests: [{ payment_id: payments[0].id }] })) responses.push(response);
      expect(responses).toHaveLength(1);
      const statements = (responses[0].body as { pay_statements: { individual_id: string; employee_deductions: { type: string | null }[] }[] }).pay_statements;
      expect(statements.map((s) => s.individual_id).sort()).toEqual(employees.map((e) => e.uuid).sort());
      for (const statement of statements) expect(statement.employee_deductions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 's125_medical', amount: 8_500 })]));
    });

    it('benefits: create, list, read, update, enroll, read enrollments, unenroll; Gusto holds the result', async () => {
      const [, , third, fourth] = employees.map((e) => e.uuid);
      const created = await finch.hris.benefits.create({ type: '403b', description: 'SDK retirement', frequency: 'every_paycheck', company_contribution: MATCH });
      await sdkJobCompletes(created.job_id);
      const benefitId = created.benefit_id;
      const listed = [];
      for await (const benefit of finch.hris.benefits.list()) listed.push(benefit);
      expect(listed.map((b) => b.benefit_id)).toContain(benefitId);
      expect(await finch.hris.benefits.retrieve(benefitId)).toMatchObject({ benefit_id: benefitId, type: '403b', description: 'SDK retirement' });
      const updated = await finch.hris.benefits.update(benefitId, { description: 'SDK retirement plan' });
      await sdkJobCompletes(updated.job_id!);

      const enrolled = await finch.hris.benefits.individuals.enrollMany(benefitId, {
        individuals: [
          { individual_id: third, configuration: { employee_deduction: { type: 'percent', amount: 400 } } },
          { individual_id: fourth, configuration: { employee_deduction: { type: 'fixed', amount: 7_500 } } },
        ],
      });
      await sdkJobCompletes(enrolled.job_id);
      expect((await finch.hris.benefits.individuals.enrolledIDs(benefitId)).individual_ids.sort()).toEqual([third, fourth].sort());
      const details = [];
      for await (const d of finch.hris.benefits.individuals.retrieveManyBenefits(benefitId)) details.push(d);
      expect(details.map((d) => d.individual_id).sort()).toEqual([third, fourth].sort());

      // At Gusto: the two employee benefits asked for were created.
      const atGusto = fake.requests.filter((r) => r.operation === 'POST /v1/employees/{employee_id}/employee_benefits' && r.status === 201);
      expect(atGusto.map((r) => r.path)).toEqual(expect.arrayContaining([third, fourth].map((id) => `/v1/employees/${id}/employee_benefits`)));

      const unenrolled = await finch.hris.benefits.individuals.unenrollMany(benefitId, { individual_ids: [fourth] });
      await sdkJobCompletes(unenrolled.job_id!);
      expect((await finch.hris.benefits.individuals.enrolledIDs(benefitId)).individual_ids).toEqual([third]);
    });
  });

  describe('afterwards', () => {
    it('held every exchange with Gusto to its document', () => {
      expect(fake.violations).toEqual([]);
    });
  });
});
