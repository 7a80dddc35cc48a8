import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../src/config/app-config';
import { AssistedProvider } from '../../src/modules/assisted/assisted-provider';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { JobWorker } from '../../src/modules/jobs/job-worker';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';
import { endJobs } from '../utils/job-queue';

const WITH_BENEFITS = ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement', 'benefits'];
const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }, { match: 5_000, threshold: 500 }] };

interface Employer {
  token: string;
  connectionId: string;
  entityId: string;
}

/**
 * Deductions over HTTP on the sandbox's Automated provider (Assisted create/register/update are
 * tested with the Assisted work): create with dedupe, register's refusal, reads live from the
 * provider, update by job, meta from the catalogue, and every bad input and error row.
 */
describeWithPostgres('benefits (deductions)', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let config: AppConfig;
  let db: DataSource;
  let employer: Employer;

  beforeAll(async () => {
    service = await startTestService();
    app = await createApplication(service);
    config = service.app.get(AppConfig);
    db = service.app.get(DataSource);
    employer = await sandbox();
  });
  afterAll(() => service?.close());
  afterEach(() => Object.assign(config, { PROVIDER_FAILURE_RATE: 0, PROVIDER_TIMEOUT_RATE: 0 }));

  async function sandbox(providerId = 'sandbox_automated', products = WITH_BENEFITS): Promise<Employer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: providerId, employee_size: 4, products }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  const get = (path: string, token = employer.token) => service.request(path, { headers: bearer(token) });
  const post = (path: string, body: unknown, token = employer.token) => service.request(path, json(body, bearer(token)));
  const create = (body: unknown, token = employer.token) => post('/employer/benefits', body, token);

  async function jobCompletes(jobId: string, token = employer.token) {
    return expectEventually(async () => {
      const res = await get(`/jobs/automated/${jobId}`, token);
      expect(res.body.status).toBe('complete');
      return res.body;
    }, { timeoutMs: 20_000 });
  }

  const benefitRows = (entityId: string) => db.query(`SELECT * FROM benefits WHERE entity_id = $1`, [entityId]);
  const atSandbox = (entityId: string, id: string) =>
    db.query(`SELECT id, type, description, frequency, company_contribution FROM sandbox_benefits WHERE entity_id = $1 AND id = $2`, [entityId, id]);
  const eventsOf = (type: string, benefitId: string) =>
    db.query(`SELECT payload FROM outbox_messages WHERE type = $1 AND payload->'data'->>'benefit_id' = $2`, [type, benefitId]);

  describe('POST /employer/benefits', () => {
    it('creates the deduction at the provider through an automated job, with its event', async () => {
      const res = await create({ type: '401k', description: 'Retirement plan', frequency: 'every_paycheck', company_contribution: MATCH });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ benefit_id: expect.stringMatching(/^[0-9a-f-]{36}$/), job_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      const { benefit_id: benefitId, job_id: jobId } = res.body;

      const job = await jobCompletes(jobId);
      expect(job).toMatchObject({ job_id: jobId, type: 'benefit_create', status: 'complete', params: { benefit_id: benefitId, type: '401k' } });
      expect(await atSandbox(employer.entityId, benefitId)).toEqual([
        { id: benefitId, type: '401k', description: 'Retirement plan', frequency: 'every_paycheck', company_contribution: MATCH },
      ]);
      const expected = { benefit_id: benefitId, type: '401k', description: 'Retirement plan', frequency: 'every_paycheck', company_contribution: MATCH };
      expect((await get('/employer/benefits')).body).toContainEqual(expected);
      expect((await get(`/employer/benefits/${benefitId}`)).body).toEqual(expected);

      const [event] = await eventsOf('BenefitCreated.v1', benefitId);
      expect(event.payload).toMatchObject({
        type: 'BenefitCreated',
        version: 1,
        connection_id: employer.connectionId,
        entity_id: employer.entityId,
        data: { benefit_id: benefitId, type: '401k', description: 'Retirement plan', frequency: 'every_paycheck', company_contribution: MATCH, origin: 'created', job_id: jobId },
      });
    });

    it('takes a match under its public name, tiered, and stores and returns it as match', async () => {
      const res = await create({ type: '403b', description: 'Tiered match', frequency: 'every_paycheck', company_contribution: { ...MATCH, type: 'tiered' } });
      expect(res.status).toBe(200);
      await jobCompletes(res.body.job_id);
      const expected = { benefit_id: res.body.benefit_id, type: '403b', description: 'Tiered match', frequency: 'every_paycheck', company_contribution: MATCH };
      expect((await get(`/employer/benefits/${res.body.benefit_id}`)).body).toEqual(expected);
      expect((await get('/employer/benefits')).body).toContainEqual(expected);
      expect(await atSandbox(employer.entityId, res.body.benefit_id)).toEqual([{ id: res.body.benefit_id, type: '403b', description: 'Tiered match', frequency: 'every_paycheck', company_contribution: MATCH }]);
      // The same benefit under either name: the dedupe key has no company_contribution.
      const again = await create({ type: '403b', description: 'Tiered match', frequency: 'every_paycheck', company_contribution: MATCH });
      expect(again.body).toEqual(res.body);
      const other = await create({ type: '403b', description: 'Other match', company_contribution: { ...MATCH, type: 'fixed' } });
      expect(other.status).toBe(400);
      expect(other.body.message).toContain('company_contribution.type: type must be one of: match, tiered');
    });

    it('takes frequency and company_contribution as optional (absent or null)', async () => {
      const res = await create({ type: 'commuter', description: 'Transit pass' });
      expect(res.status).toBe(200);
      await jobCompletes(res.body.job_id);
      expect((await get(`/employer/benefits/${res.body.benefit_id}`)).body).toEqual({
        benefit_id: res.body.benefit_id,
        type: 'commuter',
        description: 'Transit pass',
        frequency: null,
        company_contribution: null,
      });
      const nulls = await create({ type: 'commuter', description: 'Transit pass', frequency: null, company_contribution: null });
      expect(nulls.body).toEqual(res.body);
    });

    it('answers the existing benefit for the same type, frequency and description, creating nothing', async () => {
      const body = { type: 'hsa_pre', description: 'Dedupe HSA', frequency: 'monthly' };
      const first = await create(body);
      const again = await create(body);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      // A different description, frequency or type is another benefit.
      const others = await Promise.all([
        create({ ...body, description: 'Dedupe HSA ' }),
        create({ ...body, frequency: 'every_paycheck' }),
        create({ ...body, type: 'hsa_post' }),
      ]);
      expect(new Set([first.body.benefit_id, ...others.map((r) => r.body.benefit_id)]).size).toBe(4);
      const rows = await db.query(`SELECT id FROM benefits WHERE entity_id = $1 AND description = 'Dedupe HSA'`, [employer.entityId]);
      // The first, and the other frequency and the other type; the repeat added none.
      expect(rows).toHaveLength(3);
      expect(await eventsOf('BenefitCreated.v1', first.body.benefit_id)).toHaveLength(1);
      const jobs = await db.query(`SELECT id FROM jobs WHERE type = 'benefit_create' AND params->>'benefit_id' = $1`, [first.body.benefit_id]);
      expect(jobs).toHaveLength(1);
    });

    it('makes one benefit of concurrent identical creates', async () => {
      const body = { type: 's125_dental', description: 'Dental', frequency: 'every_paycheck' };
      const answers = await Promise.all(Array.from({ length: 6 }, () => create(body)));
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
      expect(new Set(answers.map((r) => r.body.benefit_id)).size).toBe(1);
      expect(new Set(answers.map((r) => r.body.job_id)).size).toBe(1);
      const rows = await db.query(`SELECT id FROM benefits WHERE entity_id = $1 AND description = 'Dental'`, [employer.entityId]);
      expect(rows).toHaveLength(1);
      const jobs = await db.query(`SELECT id FROM jobs WHERE type = 'benefit_create' AND params->>'benefit_id' = $1`, [rows[0].id]);
      expect(jobs).toHaveLength(1);
      await jobCompletes(answers[0].body.job_id);
      expect(await atSandbox(employer.entityId, rows[0].id)).toHaveLength(1);
    });

    it('answers a plan the provider already runs under the same key, with a completed job', async () => {
      const fresh = await sandbox();
      await get('/employer/company', fresh.token); // generates the sandbox employer and its plans
      const [plan] = await db.query(`SELECT id, type, description, frequency FROM sandbox_benefits WHERE entity_id = $1 ORDER BY created_at, id`, [
        fresh.entityId,
      ]);
      expect(plan).toBeDefined();
      const res = await create({ type: plan.type, description: plan.description, frequency: plan.frequency }, fresh.token);
      expect(res.status).toBe(200);
      expect(res.body.benefit_id).toBe(plan.id);
      const job = await get(`/jobs/automated/${res.body.job_id}`, fresh.token);
      expect(job.body).toMatchObject({ type: 'benefit_create', status: 'complete' });
      expect(await db.query(`SELECT count(*)::int AS n FROM sandbox_benefits WHERE entity_id = $1 AND description = $2`, [fresh.entityId, plan.description])).toEqual([
        { n: 1 },
      ]);
      const again = await create({ type: plan.type, description: plan.description, frequency: plan.frequency }, fresh.token);
      expect(again.body).toEqual(res.body);
    });

    it('tries a failed creation again under the same benefit_id when it is asked for again', async () => {
      const worker = service.app.get(JobWorker);
      await worker.stop();
      let first;
      try {
        first = await create({ type: '457_roth', description: 'Failed once' });
        // The creation ended in error (e.g. retries ran out while the provider was down).
        await endJobs(db, 'id = $1', [first.body.job_id], 'error');
        expect((await get(`/employer/benefits/${first.body.benefit_id}`)).status).toBe(404);
      } finally {
        worker.start();
      }
      const again = await create({ type: '457_roth', description: 'Failed once' });
      expect(again.status).toBe(200);
      expect(again.body.benefit_id).toBe(first.body.benefit_id);
      expect(again.body.job_id).not.toBe(first.body.job_id);
      await jobCompletes(again.body.job_id);
      expect(await atSandbox(employer.entityId, first.body.benefit_id)).toHaveLength(1);
      expect((await get(`/employer/benefits/${first.body.benefit_id}`)).status).toBe(200);
    });

    it('never opens Assisted work on an Automated connection', async () => {
      const open = jest.spyOn(service.app.get(AssistedProvider), 'openBenefitWork');
      try {
        const res = await create({ type: 'fsa_medical', description: 'FSA medical' });
        expect(res.status).toBe(200);
        await jobCompletes(res.body.job_id);
        const update = await post(`/employer/benefits/${res.body.benefit_id}`, { description: 'FSA (medical)' });
        await jobCompletes(update.body.job_id);
        expect(open).not.toHaveBeenCalled();
      } finally {
        open.mockRestore();
      }
    });

    const LONG = 'x'.repeat(256);
    const valid = { type: '401k', description: 'Bad input probe' };
    it.each<[string, unknown, RegExp]>([
      ['missing type', { description: 'x' }, /type/],
      ['null type', { type: null, description: 'x' }, /type/],
      ['unknown type', { type: '401K', description: 'x' }, /type must be one of/],
      ['numeric type', { type: 401, description: 'x' }, /type must be one of/],
      ['missing description', { type: '401k' }, /description/],
      ['null description', { type: '401k', description: null }, /description/],
      ['empty description', { ...valid, description: '' }, /description must be 1 to 255 characters/],
      ['256-character description', { ...valid, description: LONG }, /description must be 1 to 255 characters/],
      ['numeric description', { ...valid, description: 42 }, /description must be a string/],
      ['NUL in description', { ...valid, description: 'a\u0000b' }, /description/],
      ['unknown frequency', { ...valid, frequency: 'weekly' }, /frequency must be one of/],
      ['numeric frequency', { ...valid, frequency: 1 }, /frequency/],
      ['contribution not an object', { ...valid, company_contribution: 'match' }, /company_contribution/],
      ['contribution type other than match', { ...valid, company_contribution: { type: 'fixed', tiers: [{ match: 1, threshold: 1 }] } }, /company_contribution.type/],
      ['no tiers', { ...valid, company_contribution: { type: 'match', tiers: [] } }, /company_contribution.tiers: tiers must hold 1 to 3/],
      ['tiers missing', { ...valid, company_contribution: { type: 'match' } }, /company_contribution.tiers/],
      [
        'four tiers',
        { ...valid, company_contribution: { type: 'match', tiers: [1, 2, 3, 4].map((n) => ({ match: 100, threshold: n * 100 })) } },
        /tiers must hold 1 to 3/,
      ],
      ['negative match', { ...valid, company_contribution: { type: 'match', tiers: [{ match: -1, threshold: 300 }] } }, /company_contribution.tiers\[0\].match/],
      ['match over 10,000', { ...valid, company_contribution: { type: 'match', tiers: [{ match: 10_001, threshold: 300 }] } }, /tiers\[0\].match/],
      ['fractional match', { ...valid, company_contribution: { type: 'match', tiers: [{ match: 50.5, threshold: 300 }] } }, /tiers\[0\].match/],
      ['string threshold', { ...valid, company_contribution: { type: 'match', tiers: [{ match: 50, threshold: '300' }] } }, /tiers\[0\].threshold/],
      ['zero threshold', { ...valid, company_contribution: { type: 'match', tiers: [{ match: 50, threshold: 0 }] } }, /tiers\[0\].threshold/],
      ['threshold over 10,000', { ...valid, company_contribution: { type: 'match', tiers: [{ match: 50, threshold: 10_001 }] } }, /tiers\[0\].threshold/],
      [
        'thresholds not rising',
        { ...valid, company_contribution: { type: 'match', tiers: [{ match: 100, threshold: 500 }, { match: 50, threshold: 300 }] } },
        /tiers\[1\].threshold: thresholds must increase/,
      ],
      ['tier not an object', { ...valid, company_contribution: { type: 'match', tiers: [5] } }, /tiers/],
      ['unknown tier field', { ...valid, company_contribution: { type: 'match', tiers: [{ match: 1, threshold: 1, cap: 1 }] } }, /tiers\[0\].cap: unknown field/],
      ['unknown field', { ...valid, name: 'x' }, /name: unknown field/],
    ])('refuses %s with 400 invalid_request, naming the field, and writes nothing', async (_label, body, message) => {
      const before = await db.query(`SELECT (SELECT count(*) FROM benefits)::int AS b, (SELECT count(*) FROM jobs)::int AS j`);
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 400, name: 'invalid_request_error', service_code: 'invalid_request', message: expect.stringMatching(message) });
      expect(await db.query(`SELECT (SELECT count(*) FROM benefits)::int AS b, (SELECT count(*) FROM jobs)::int AS j`)).toEqual(before);
    });

    it.each([
      ['not JSON', '{"type": "401k",'],
      ['empty', ''],
    ])('refuses a body that is %s with 400 malformed_request', async (_label, body) => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ name: 'bad_request_error', service_code: 'malformed_request' });
    });

    it('refuses a type the provider does not support with 422 unsupported_paramters', async () => {
      const gusto = await sandbox('gusto');
      const res = await create({ type: '457', description: 'Governmental 457' }, gusto.token);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        code: 422,
        name: 'unprocessable_request_error',
        service_code: 'unsupported_paramters',
        message: expect.stringMatching(/457/),
      });
      expect(await benefitRows(gusto.entityId)).toEqual([]);
      // A type it supports goes through.
      const ok = await create({ type: '401k', description: 'Gusto 401k', company_contribution: MATCH }, gusto.token);
      expect(ok.status).toBe(200);
      await jobCompletes(ok.body.job_id, gusto.token);
    });

    it('refuses a match, or a frequency, the provider does not take with 422', async () => {
      const quickbooks = await sandbox('quickbooks_payroll');
      const match = await create({ type: '401k', description: 'QB 401k', company_contribution: MATCH }, quickbooks.token);
      expect(match.status).toBe(422);
      expect(match.body).toMatchObject({ service_code: 'unsupported_paramters', message: expect.stringMatching(/match/) });
      const justworks = await sandbox('justworks');
      const monthly = await create({ type: '401k', description: 'JW 401k', frequency: 'monthly' }, justworks.token);
      expect(monthly.status).toBe(422);
      expect(monthly.body).toMatchObject({ service_code: 'unsupported_paramters', message: expect.stringMatching(/frequency monthly/) });
    });
  });

  describe('POST /employer/benefits/register', () => {
    it('is refused on an Automated provider with 400 invalid_request_error and no service_code', async () => {
      const res = await post('/employer/benefits/register', { type: '401k', description: 'Existing plan', frequency: 'every_paycheck' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 400, name: 'invalid_request_error', message: expect.stringMatching(/Assisted/) });
      expect(await db.query(`SELECT id FROM benefits WHERE description = 'Existing plan'`)).toEqual([]);
    });

    it.each<[string, unknown, RegExp]>([
      ['missing frequency', { type: '401k', description: 'x' }, /frequency/],
      ['null frequency', { type: '401k', description: 'x', frequency: null }, /frequency/],
      ['missing type', { description: 'x', frequency: 'monthly' }, /type/],
      ['missing description', { type: '401k', frequency: 'monthly' }, /description/],
      ['company_contribution', { type: '401k', description: 'x', frequency: 'monthly', company_contribution: MATCH }, /company_contribution: unknown field/],
    ])('validates its body first: %s → 400 naming the field', async (_label, body, message) => {
      const res = await post('/employer/benefits/register', body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_request', message: expect.stringMatching(message) });
    });
  });

  describe('GET /employer/benefits and /employer/benefits/{id}', () => {
    it('lists the provider’s plans live and records them, so they can be named', async () => {
      const fresh = await sandbox();
      const res = await get('/employer/benefits', fresh.token);
      expect(res.status).toBe(200);
      const plans = await db.query(`SELECT id FROM sandbox_benefits WHERE entity_id = $1`, [fresh.entityId]);
      expect(res.body.map((b: { benefit_id: string }) => b.benefit_id).sort()).toEqual(plans.map((p: { id: string }) => p.id).sort());
      for (const b of res.body) expect(Object.keys(b).sort()).toEqual(['benefit_id', 'company_contribution', 'description', 'frequency', 'type']);
      const recorded = await benefitRows(fresh.entityId);
      expect(recorded.map((r: { origin: string }) => r.origin)).toEqual(plans.map(() => 'provider'));
      if (res.body.length > 0) {
        const one = await get(`/employer/benefits/${res.body[0].benefit_id}`, fresh.token);
        expect(one.body).toEqual(res.body[0]);
      }
    });

    it('includes creations not yet at the provider, then shows them as the provider has them', async () => {
      const worker = service.app.get(JobWorker);
      await worker.stop();
      let res;
      try {
        res = await create({ type: 'custom_post_tax', description: 'Union dues', frequency: 'monthly' });
        expect(res.status).toBe(200);
        expect(await atSandbox(employer.entityId, res.body.benefit_id)).toEqual([]);
        const view = { benefit_id: res.body.benefit_id, type: 'custom_post_tax', description: 'Union dues', frequency: 'monthly', company_contribution: null };
        expect((await get('/employer/benefits')).body).toContainEqual(view);
        expect((await get(`/employer/benefits/${res.body.benefit_id}`)).body).toEqual(view);
        expect((await get(`/jobs/automated/${res.body.job_id}`)).body.status).toBe('pending');
      } finally {
        worker.start();
      }
      await jobCompletes(res.body.job_id);
      expect(await atSandbox(employer.entityId, res.body.benefit_id)).toHaveLength(1);
    });

    it('answers 404 benefit_not_found for unknown, malformed and other connections’ ids', async () => {
      const other = await sandbox();
      const theirs = await create({ type: '401k', description: 'Theirs' }, other.token);
      await jobCompletes(theirs.body.job_id, other.token);
      for (const id of [randomUUID(), 'not-a-uuid', theirs.body.benefit_id]) {
        const res = await get(`/employer/benefits/${id}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ code: 404, name: 'not_found_error', service_code: 'benefit_not_found', message: expect.any(String) });
        const update = await post(`/employer/benefits/${id}`, { description: 'Mine now' });
        expect(update.status).toBe(404);
        expect(update.body.service_code).toBe('benefit_not_found');
      }
      expect((await get('/employer/benefits')).body.map((b: { benefit_id: string }) => b.benefit_id)).not.toContain(theirs.body.benefit_id);
    });
  });

  describe('POST /employer/benefits/{id}', () => {
    it('changes the description at the provider by a job, then in the service, with its event', async () => {
      const created = await create({ type: '403b', description: 'Old name', frequency: 'every_paycheck' });
      await jobCompletes(created.body.job_id);
      const benefitId = created.body.benefit_id;
      const res = await post(`/employer/benefits/${benefitId}`, { description: 'New name' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ benefit_id: benefitId, job_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      expect(res.body.job_id).not.toBe(created.body.job_id);
      const job = await jobCompletes(res.body.job_id);
      expect(job).toMatchObject({ type: 'benefit_update', params: { benefit_id: benefitId, description: 'New name' } });
      expect((await atSandbox(employer.entityId, benefitId))[0].description).toBe('New name');
      expect((await get(`/employer/benefits/${benefitId}`)).body.description).toBe('New name');
      expect((await db.query(`SELECT description FROM benefits WHERE id = $1`, [benefitId]))[0].description).toBe('New name');
      const [event] = await eventsOf('BenefitUpdated.v1', benefitId);
      expect(event.payload.data).toEqual({ benefit_id: benefitId, description: 'New name', previous_description: 'Old name', job_id: res.body.job_id });
      // The old key is free again; the new one dedupes.
      const renamed = await create({ type: '403b', description: 'New name', frequency: 'every_paycheck' });
      expect(renamed.body.benefit_id).toBe(benefitId);
    });

    it('updates a plan found at the provider', async () => {
      const fresh = await sandbox();
      const [plan] = (await get('/employer/benefits', fresh.token)).body;
      const res = await post(`/employer/benefits/${plan.benefit_id}`, { description: 'Renamed plan' }, fresh.token);
      expect(res.status).toBe(200);
      await jobCompletes(res.body.job_id, fresh.token);
      expect((await get(`/employer/benefits/${plan.benefit_id}`, fresh.token)).body.description).toBe('Renamed plan');
    });

    it('refuses a description another benefit of the same type and frequency holds with 409', async () => {
      const a = await create({ type: 'fsa_dependent_care', description: 'Care A' });
      await create({ type: 'fsa_dependent_care', description: 'Care B' });
      const res = await post(`/employer/benefits/${a.body.benefit_id}`, { description: 'Care B' });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ name: 'conflict_error', service_code: 'benefit_already_exists' });
    });

    it.each<[string, unknown, RegExp]>([
      ['missing description', {}, /description/],
      ['null description', { description: null }, /description/],
      ['empty description', { description: '' }, /description must be 1 to 255/],
      ['256 characters', { description: 'y'.repeat(256) }, /description must be 1 to 255/],
      ['numeric description', { description: 7 }, /description must be a string/],
      ['unknown field', { description: 'ok', type: '401k' }, /type: unknown field/],
    ])('refuses %s with 400 invalid_request', async (_label, body, message) => {
      const created = await create({ type: 's125_vision', description: 'Vision' });
      const res = await post(`/employer/benefits/${created.body.benefit_id}`, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_request', message: expect.stringMatching(message) });
    });
  });

  describe('GET /employer/benefits/meta', () => {
    it('answers, for each benefit type the connection’s provider supports, its features (the public BenefitFeature) and operations', async () => {
      const res = await get('/employer/benefits/meta');
      expect(res.status).toBe(200);
      const providers = await service.request('/providers');
      const support = providers.body.find((p: { id: string }) => p.id === 'sandbox_automated').authentication_methods[0].benefits_support;
      const supported = Object.keys(support).filter((type) => support[type] !== null);
      expect(res.body.map((entry: { type: string }) => entry.type)).toEqual(supported);
      for (const entry of res.body) {
        const { supported_features: features, supported_operations: operations } = support[entry.type];
        // The public name of the match a benefit is created with is `tiered`.
        const contribution = features.company_contribution?.map((c: string) => (c === 'match' ? 'tiered' : c)) ?? null;
        expect(entry).toEqual({ type: entry.type, ...features, company_contribution: contribution, supported_operations: operations });
      }
      const k401 = res.body.find((entry: { type: string }) => entry.type === '401k');
      expect(k401.company_contribution).toContain('tiered');
      expect(k401.company_contribution).not.toContain('match');
      expect(k401.supported_operations.company_benefits.create).toBe('supported');

      const gusto = await sandbox('gusto');
      const meta = await get('/employer/benefits/meta', gusto.token);
      const types = meta.body.map((entry: { type: string }) => entry.type);
      expect(types).not.toContain('457');
      expect(types).toContain('401k');
    });
  });

  describe('access', () => {
    // Every row has three cells: jest passes a `done` callback to a test taking more parameters than its row.
    const ROUTES: [string, string, unknown][] = [
      ['GET', '/employer/benefits', null],
      ['GET', '/employer/benefits/meta', null],
      ['GET', `/employer/benefits/${randomUUID()}`, null],
      ['POST', '/employer/benefits', { type: '401k', description: 'x' }],
      ['POST', '/employer/benefits/register', { type: '401k', description: 'x', frequency: 'monthly' }],
      ['POST', `/employer/benefits/${randomUUID()}`, { description: 'x' }],
    ];
    const call = (method: string, path: string, body: unknown, headers: Record<string, string>) =>
      service.request(path, method === 'GET' ? { headers } : json(body, headers));

    it.each(ROUTES)('%s %s needs a token, the version header and the benefits product', async (method, path, body) => {
      const none = await call(method, path, body, { 'service-api-version': '2020-09-17' });
      expect(none.status).toBe(401);
      expect(none.body.name).toBe('authentication_error');

      const noVersion = await call(method, path, body, { authorization: `Bearer ${employer.token}` });
      expect(noVersion.status).toBe(400);
      expect(noVersion.body.service_code).toBe('missing_version_header');

      const withoutBenefits = await sandbox('sandbox_automated', ['company', 'directory']);
      const forbidden = await call(method, path, body, bearer(withoutBenefits.token));
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toMatchObject({ name: 'forbidden_error', service_code: 'product_not_granted' });
    });

    it('refuses an entity outside the connection', async () => {
      const other = await sandbox();
      const res = await get(`/employer/benefits?entity_ids=${other.entityId}`);
      expect(res.status).toBe(403);
      expect(res.body.service_code).toBe('entity_not_authorized');
    });
  });

  describe('provider failures', () => {
    it('answers 502 to a create while the provider fails, and writes nothing', async () => {
      config.PROVIDER_FAILURE_RATE = 1;
      const before = await benefitRows(employer.entityId);
      const res = await create({ type: 'simple_ira', description: 'During the outage' });
      expect(res.status).toBe(502);
      expect(res.body.name).toBe('provider_error');
      expect((await get('/employer/benefits')).status).toBe(502);
      expect(await benefitRows(employer.entityId)).toHaveLength(before.length);
    });

    it('retries the create job through provider failures and completes once the provider recovers', async () => {
      const worker = service.app.get(JobWorker);
      await worker.stop();
      let res;
      try {
        res = await create({ type: 'simple', description: 'Retried plan' });
        expect(res.status).toBe(200);
        config.PROVIDER_FAILURE_RATE = 1;
      } finally {
        worker.start();
      }
      await expectEventually(async () => {
        const [row] = await db.query(`SELECT attempts, status FROM jobs WHERE id = $1`, [res.body.job_id]);
        expect(row.attempts).toBeGreaterThanOrEqual(1);
        expect(row.status).toBe('pending');
      });
      expect((await get(`/jobs/automated/${res.body.job_id}`)).body.status).toBe('pending');
      config.PROVIDER_FAILURE_RATE = 0;
      await jobCompletes(res.body.job_id);
      expect(await atSandbox(employer.entityId, res.body.benefit_id)).toHaveLength(1);
    });
  });
});
