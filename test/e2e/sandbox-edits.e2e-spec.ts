import Finch from '@tryfinch/finch-api';
import { randomUUID } from 'node:crypto';
import { PayStatementRecord } from '../../src/domain/employer/unified-records';
import { employerRefOf, EmployerRef } from '../../src/domain/providers/provider-port';
import { ManualClock } from '../../src/domain/shared/clock';
import { ConnectionsRepository } from '../../src/infrastructure/database/repositories/connections.repository';
import { SandboxEmployerStore } from '../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { addDays, payPeriodOf } from '../../src/infrastructure/providers/sandbox/sandbox-pay-calendar';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, connectEmployer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TODAY = '2026-06-01';

interface SandboxEmployer {
  token: string;
  connectionId: string;
  entityId: string;
}

const newPerson = (extra: Record<string, unknown> = {}) => ({
  first_name: 'Ada',
  last_name: 'Lovelace',
  dob: '1985-12-10',
  title: 'Analyst',
  income: { unit: 'yearly', amount: 9_000_000 },
  ...extra,
});

describeWithPostgres('sandbox edits', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let employer: SandboxEmployer;
  const clock = new ManualClock(`${TODAY}T12:00:00Z`);

  beforeAll(async () => {
    service = await startTestService({ clock });
    app = await createApplication(service);
    employer = await sandboxEmployer();
  });
  afterAll(() => service?.close());

  async function sandboxEmployer(employeeSize = 12): Promise<SandboxEmployer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: employeeSize }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  /** Sandbox operations document no version header: these calls send only the token. */
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const put = (path: string, body: unknown, token = employer.token) =>
    service.request(path, { ...json(body, auth(token)), method: 'PUT' });
  const post = (path: string, body: unknown, token = employer.token) => service.request(path, json(body, auth(token)));
  const read = (path: string, token = employer.token, body?: unknown) =>
    body === undefined ? service.request(path, { headers: bearer(token) }) : service.request(path, json(body, bearer(token)));

  async function refOf(connectionId: string, entityId: string): Promise<EmployerRef> {
    const connection = (await service.app.get(ConnectionsRepository).find(connectionId))!;
    return employerRefOf(connection, connection.entities.find((e) => e.id === entityId)!);
  }

  async function directoryIds(token = employer.token): Promise<string[]> {
    const res = await read('/employer/directory?limit=10000', token);
    expect(res.status).toBe(200);
    return res.body.individuals.map((i: { id: string }) => i.id);
  }

  async function employmentOf(id: string, token = employer.token) {
    const res = await read('/employer/employment', token, { requests: [{ individual_id: id }] });
    expect(res.status).toBe(200);
    return res.body.responses[0];
  }

  /** Employees paid by payroll in the period: each gets a statement in its payment. */
  async function paidIn(fresh: SandboxEmployer, period: { start_date: string; end_date: string }) {
    const store = service.app.get(SandboxEmployerStore);
    const ref = await refOf(fresh.connectionId, fresh.entityId);
    return (await store.employments(ref, await directoryIds(fresh.token)))
      .filter((e) => e.employment.type === 'employee' && e.start_date <= period.end_date)
      .filter((e) => (e.end_date === null ? e.is_active : e.end_date >= period.start_date));
  }

  function expectInvalid(res: TestResponse, ...fragments: string[]) {
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error', service_code: 'invalid_request' });
    for (const fragment of fragments) expect(res.body.message).toContain(fragment);
  }

  describe('every edit', () => {
    const edits = (): [string, (token: string) => Promise<TestResponse>][] => [
      ['PUT /sandbox/company', (token) => put('/sandbox/company', { legal_name: 'X' }, token)],
      ['POST /sandbox/directory', (token) => post('/sandbox/directory', [newPerson()], token)],
      ['PUT /sandbox/individual/{id}', (token) => put(`/sandbox/individual/${randomUUID()}`, { first_name: 'X' }, token)],
      ['PUT /sandbox/employment/{id}', (token) => put(`/sandbox/employment/${randomUUID()}`, { title: 'X' }, token)],
      ['POST /sandbox/payment', (token) => post('/sandbox/payment', {}, token)],
    ];

    it('needs an access token', async () => {
      for (const [, edit] of edits()) {
        const res = await edit('not-a-token');
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ name: 'authentication_error', service_code: 'invalid_access_token' });
      }
      const anonymous = await service.request('/sandbox/company', { ...json({ legal_name: 'X' }), method: 'PUT' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.service_code).toBe('missing_access_token');
    });

    it('works only on sandbox connections: 403 sandbox_connection_required, nothing changed', async () => {
      const productionApp = await createApplication(service, { sandbox: false });
      const production = await connectEmployer(service, productionApp, { providerId: 'gusto' });
      const before = await read('/employer/company', production.accessToken);
      for (const [name, edit] of edits()) {
        const res = await edit(production.accessToken);
        expect({ name, status: res.status }).toEqual({ name, status: 403 });
        expect(res.body).toMatchObject({ code: 403, name: 'forbidden_error', service_code: 'sandbox_connection_required' });
        expect(res.body.message).toMatch(/sandbox connection/);
      }
      expect((await read('/employer/company', production.accessToken)).body).toEqual(before.body);
    });
  });

  describe('PUT /sandbox/company', () => {
    it('changes the given fields, keeps the others, and returns the whole company; a live read shows it at once', async () => {
      const before = (await read('/employer/company')).body;
      const res = await put('/sandbox/company', {
        legal_name: 'Globex Payroll Test Inc.',
        ein: '12-3456789',
        primary_phone_number: '+14155550123 x101',
        entity: { type: 'llc', subtype: 'c_corporation' },
        departments: [
          { name: 'Engineering', parent: null },
          { name: 'Platform', parent: { name: 'Engineering' } },
          { name: 'Sales' },
        ],
        locations: [{ line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' }],
        accounts: [
          { routing_number: '021000021', account_name: 'Payroll', institution_name: 'Chase', account_type: 'checking', account_number: '000123456789' },
        ],
      });
      expect(res.status).toBe(200);
      const expected = {
        ...before,
        legal_name: 'Globex Payroll Test Inc.',
        ein: '12-3456789',
        primary_phone_number: '+14155550123 x101',
        entity: { type: 'llc', subtype: 'c_corporation' },
        departments: [
          { name: 'Engineering', parent: null },
          { name: 'Platform', parent: { name: 'Engineering' } },
          { name: 'Sales', parent: null },
        ],
        locations: [{ line1: '1 Market St', line2: null, city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' }],
        accounts: [
          { routing_number: '021000021', account_name: 'Payroll', institution_name: 'Chase', account_type: 'checking', account_number: '000123456789' },
        ],
      };
      expect(res.body).toEqual(expected);
      expect(res.body.id).toBe(before.id);
      expect((await read('/employer/company')).body).toEqual(expected);
    });

    it('refuses unknown fields and invalid values, naming each, and changes nothing', async () => {
      const before = (await read('/employer/company')).body;
      expectInvalid(await put('/sandbox/company', { nam: 'Typo Inc.' }), 'nam: unknown field');
      expectInvalid(await put('/sandbox/company', { id: randomUUID() }), 'id: unknown field');
      expectInvalid(
        await put('/sandbox/company', { legal_name: 'Fine', ein: '123456789', primary_email: 'nope', primary_phone_number: '415-555-0123' }),
        'ein must be NN-NNNNNNN',
        'primary_email must be an email address',
        'primary_phone_number must be E.164',
      );
      expectInvalid(await put('/sandbox/company', { entity: { type: 'guild' } }), 'entity.type');
      expectInvalid(await put('/sandbox/company', { legal_name: null }), 'legal_name');
      expectInvalid(await put('/sandbox/company', { departments: [{ name: '' }] }), 'departments[0].name');
      expectInvalid(await put('/sandbox/company', { locations: [{ line1: 'x', city: 'y', state: 'California', postal_code: '1', country: 'USA' }] }),
        'locations[0].state', 'locations[0].postal_code', 'locations[0].country');
      expectInvalid(
        await put('/sandbox/company', {
          accounts: [{ routing_number: '12', account_name: 'a', institution_name: 'b', account_type: 'cash', account_number: 'x' }],
        }),
        'accounts[0].routing_number',
        'accounts[0].account_type',
        'accounts[0].account_number',
      );
      expect((await read('/employer/company')).body).toEqual(before);
    });

    it('refuses a department tree that does not hold together', async () => {
      expectInvalid(await put('/sandbox/company', { departments: [{ name: 'A', parent: { name: 'Nowhere' } }] }), 'departments[0].parent.name');
      expectInvalid(await put('/sandbox/company', { departments: [{ name: 'A' }, { name: 'A' }] }), 'listed twice');
      expectInvalid(
        await put('/sandbox/company', { departments: [{ name: 'A', parent: { name: 'B' } }, { name: 'B', parent: { name: 'A' } }] }),
        'its own ancestor',
      );
    });

    it('refuses an empty update, a body that is not an object, and unparsable JSON', async () => {
      expectInvalid(await put('/sandbox/company', {}), 'sets no field');
      const list = await put('/sandbox/company', [{ legal_name: 'X' }]);
      expect(list.status).toBe(400);
      expect(list.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_request' });
      const broken = await put('/sandbox/company', '{"legal_name": ');
      expect(broken.status).toBe(400);
      expect(broken.body).toMatchObject({ name: 'bad_request_error', service_code: 'malformed_request' });
    });
  });

  describe('POST /sandbox/directory', () => {
    it('adds individuals with their employment, mints UUID v4 ids, and a live read shows them', async () => {
      const before = await directoryIds();
      const manager = (await employmentOf(before[0])).body;
      const res = await post('/sandbox/directory', [
        newPerson({
          middle_name: 'King',
          emails: [{ data: 'ada@globex.example', type: 'work' }],
          phone_numbers: [{ data: '+14155550199', type: 'personal' }],
          gender: 'female',
          ethnicity: 'white',
          marital_status: 'married',
          ssn: '123-45-6789',
          residence: { line1: '2 Elm St', city: 'Austin', state: 'TX', postal_code: '78701', country: 'US' },
          department: { name: 'Engineering' },
          manager: { id: manager.id },
          employment: { type: 'employee', subtype: 'part_time' },
          start_date: '2026-05-18',
          class_code: 'A1',
          location: { line1: '1 Market St', line2: 'Floor 3', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' },
        }),
        newPerson({ first_name: 'Grace', last_name: 'Hopper', income: { unit: 'hourly', amount: 4_500, currency: 'USD' } }),
      ]);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(2);
      const [ada, grace] = res.body;
      expect(ada.id).toMatch(UUID_V4);
      expect(grace.id).toMatch(UUID_V4);
      expect(ada).toMatchObject({
        first_name: 'Ada',
        middle_name: 'King',
        last_name: 'Lovelace',
        dob: '1985-12-10',
        ssn: '123-45-6789',
        residence: { city: 'Austin', state: 'TX', line2: null },
        title: 'Analyst',
        department: { name: 'Engineering' },
        manager: { id: manager.id },
        employment: { type: 'employee', subtype: 'part_time' },
        start_date: '2026-05-18',
        end_date: null,
        is_active: true,
        class_code: 'A1',
        income: { unit: 'yearly', amount: 9_000_000, currency: 'usd', effective_date: '2026-05-18' },
        work_email: 'ada@globex.example',
      });
      // Defaults: today's start, a full-time employee, living and working at the first company location.
      expect(grace).toMatchObject({
        middle_name: null,
        preferred_name: null,
        emails: [],
        gender: 'decline_to_specify',
        start_date: TODAY,
        employment: { type: 'employee', subtype: 'full_time' },
        is_active: true,
        manager: null,
        department: null,
        income: { unit: 'hourly', amount: 4_500, currency: 'usd', effective_date: TODAY },
      });
      expect(grace.residence).toEqual(grace.location);
      expect(grace.pay_group_ids).toHaveLength(1);
      expect(grace.pay_group_ids).not.toEqual(ada.pay_group_ids);

      expect(await directoryIds()).toEqual([...before, ada.id, grace.id]);
      const individuals = await read('/employer/individual', employer.token, {
        requests: [{ individual_id: ada.id }, { individual_id: grace.id }],
        options: { include: ['ssn'] },
      });
      expect(individuals.body.responses.map((r: { code: number; body: { first_name: string } }) => [r.code, r.body.first_name])).toEqual([
        [200, 'Ada'],
        [200, 'Grace'],
      ]);
      expect(individuals.body.responses[0].body.ssn).toBe('123-45-6789');
      expect((await employmentOf(ada.id)).body).toMatchObject({ title: 'Analyst', manager: { id: manager.id } });
    });

    it('refuses an object body with the enrollment rule’s malformed_request', async () => {
      const res = await post('/sandbox/directory', { individuals: [newPerson()] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 400,
        name: 'bad_request_error',
        service_code: 'malformed_request',
        message: 'Expected array but received object',
      });
    });

    it('takes 1 to 1,000 individuals', async () => {
      expectInvalid(await post('/sandbox/directory', []), '1 to 1000 elements');
      expectInvalid(await post('/sandbox/directory', Array.from({ length: 1001 }, () => newPerson())), '1 to 1000 elements');
      const small = await sandboxEmployer(1);
      const thousand = await post('/sandbox/directory', Array.from({ length: 1000 }, (_, n) => newPerson({ first_name: `Bulk${n}` })), small.token);
      expect(thousand.status).toBe(200);
      expect(thousand.body).toHaveLength(1000);
      expect(new Set(thousand.body.map((p: { id: string }) => p.id)).size).toBe(1000);
      expect(await directoryIds(small.token)).toHaveLength(1001);
    });

    it('names every invalid field by element, and adds nobody', async () => {
      const before = await directoryIds();
      const res = await post('/sandbox/directory', [
        { last_name: 'Nameless', dob: '1990-01-01', title: 'X', income: { unit: 'yearly', amount: 1 } },
        newPerson({ nickname: 'x', gender: 'robot', income: { unit: 'monthly', amount: -1 } }),
        newPerson({ dob: '1990-02-30', emails: [{ data: 'not-an-email', type: 'work' }], currency: 'eur' }),
        'not an object',
      ]);
      expectInvalid(
        res,
        '[0].first_name',
        '[1].nickname: unknown field',
        '[1].gender',
        '[1].income.unit',
        '[1].income.amount',
        '[2].dob: dob must be a date YYYY-MM-DD',
        '[2].emails[0].data',
        '[2].currency: unknown field',
        '[3]: must be an object',
      );
      expect(await directoryIds()).toEqual(before);
    });

    it('refuses unknown managers and departments, impossible dates and non-usd pay, and adds nobody', async () => {
      const before = await directoryIds();
      const unknownManager = randomUUID();
      expectInvalid(
        await post('/sandbox/directory', [
          newPerson(),
          newPerson({ manager: { id: unknownManager } }),
          newPerson({ department: { name: 'Alchemy' } }),
          newPerson({ dob: '2030-01-01' }),
          newPerson({ start_date: '2026-01-10', end_date: '2025-12-31' }),
        ]),
        `[1].manager.id: no individual ${unknownManager}`,
        '[2].department.name: no department "Alchemy"',
        '[3].dob: must be in the past',
        '[4].end_date: must not be before start_date',
      );
      expectInvalid(
        await post('/sandbox/directory', [newPerson({ income: { unit: 'yearly', amount: 1, currency: 'eur' } })]),
        '[0].income.currency: currency must be usd',
      );
      expect(await directoryIds()).toEqual(before);
    });

    it('refuses income that is not an object, and adds nobody', async () => {
      const before = await directoryIds();
      expectInvalid(
        await post('/sandbox/directory', [newPerson({ income: [] }), newPerson({ income: null }), newPerson({ income: 42 })]),
        '[0].income: income must be an object',
        '[1].income: income must be an object',
        '[2].income: income must be an object',
      );
      expect(await directoryIds()).toEqual(before);
    });

    it('takes the SDK’s sandbox.directory.create with names alone', async () => {
      const finch = new Finch({ accessToken: employer.token, baseURL: service.url, maxRetries: 0 });
      const created = await finch.sandbox.directory.create({ body: [{ first_name: 'Sdk', last_name: 'Person' }] });
      expect(created).toHaveLength(1);
      expect((await employmentOf((created as { id: string }[])[0].id)).code).toBe(200);
    });

    it('adds a person given only names, with a date of birth, title and salary as the generator draws them', async () => {
      const res = await post('/sandbox/directory', [{ first_name: 'Only', last_name: 'Names' }, { first_name: 'Also', last_name: 'Named', department: { name: 'Engineering' } }]);
      expect(res.status).toBe(200);
      const [only, also] = res.body as { id: string }[];
      for (const id of [only.id, also.id]) {
        const employment = (await employmentOf(id)).body;
        expect(employment.title).toEqual(expect.any(String));
        expect(employment.title.length).toBeGreaterThan(0);
        expect(employment.income).toMatchObject({ unit: 'yearly', currency: 'usd', effective_date: TODAY });
        expect(employment.income.amount).toBeGreaterThanOrEqual(5_200_000);
        expect(employment.start_date).toBe(TODAY);
      }
      const individuals = await read('/employer/individual', employer.token, { requests: [{ individual_id: only.id }, { individual_id: also.id }] });
      for (const { body } of individuals.body.responses as { body: { dob: string } }[]) {
        const age = Number(TODAY.slice(0, 4)) - Number(body.dob.slice(0, 4));
        expect(age).toBeGreaterThanOrEqual(20);
        expect(age).toBeLessThanOrEqual(71);
      }
    });
  });

  describe('PUT /sandbox/individual/{individual_id}', () => {
    it('changes the given fields, copies name changes to the employment, and a live read shows them', async () => {
      const [id] = await directoryIds();
      const res = await put(`/sandbox/individual/${id}`, {
        first_name: 'Renamed',
        middle_name: null,
        emails: [{ data: 'renamed@example.com', type: 'personal' }],
        marital_status: 'divorced',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id,
        first_name: 'Renamed',
        middle_name: null,
        emails: [{ data: 'renamed@example.com', type: 'personal' }],
        marital_status: 'divorced',
      });
      const individual = await read('/employer/individual', employer.token, { requests: [{ individual_id: id }] });
      expect(individual.body.responses[0].body).toMatchObject({ first_name: 'Renamed', middle_name: null, marital_status: 'divorced' });
      expect((await employmentOf(id)).body).toMatchObject({ first_name: 'Renamed', middle_name: null });
    });

    it('answers 404 for an unknown individual and 400 for an id that is not a UUID', async () => {
      const unknown = randomUUID();
      const res = await put(`/sandbox/individual/${unknown}`, { first_name: 'Nobody' });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 404, name: 'not_found_error', service_code: 'individual_not_found' });
      expect(res.body.message).toContain(unknown);
      expectInvalid(await put('/sandbox/individual/not-a-uuid', { first_name: 'Nobody' }), 'individual_id must be a UUID');
    });

    it('refuses null where the record has no null, unknown fields, bad values and an empty update', async () => {
      const [id] = await directoryIds();
      expectInvalid(await put(`/sandbox/individual/${id}`, { first_name: null, emails: null }), 'first_name', 'emails');
      expectInvalid(await put(`/sandbox/individual/${id}`, { id: randomUUID() }), 'id: unknown field');
      expectInvalid(await put(`/sandbox/individual/${id}`, { ssn: '123456789', dob: '2999-01-01' }), 'ssn must be NNN-NN-NNNN');
      expectInvalid(await put(`/sandbox/individual/${id}`, { dob: '2027-01-01' }), 'dob: must be in the past');
      expectInvalid(await put(`/sandbox/individual/${id}`, {}), 'sets no field');
    });
  });

  describe('PUT /sandbox/employment/{individual_id}', () => {
    it('terminates with end_date and is_active: false, and a live read shows it', async () => {
      const ids = await directoryIds();
      const id = ids[ids.length - 3];
      const res = await put(`/sandbox/employment/${id}`, { end_date: TODAY, is_active: false });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id, end_date: TODAY, is_active: false });
      expect((await employmentOf(id)).body).toMatchObject({ end_date: TODAY, is_active: false });
      const directory = await read('/employer/directory?limit=10000');
      expect(directory.body.individuals.find((i: { id: string }) => i.id === id).is_active).toBe(false);
    });

    it('keeps an income history: a raise is added, the current income follows it', async () => {
      const [id] = await directoryIds();
      const before = (await employmentOf(id)).body;
      const raise = { unit: before.income.unit, amount: before.income.amount + 100_000 };
      const res = await put(`/sandbox/employment/${id}`, { income: raise, title: 'Chief Everything' });
      expect(res.status).toBe(200);
      expect(res.body.title).toBe('Chief Everything');
      expect(res.body.income).toEqual({ unit: before.income.unit, amount: before.income.amount + 100_000, currency: 'usd', effective_date: TODAY });
      expect(res.body.income_history).toEqual([...before.income_history, res.body.income]);
    });

    it('answers 404 for an unknown individual', async () => {
      const res = await put(`/sandbox/employment/${randomUUID()}`, { title: 'Ghost' });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ name: 'not_found_error', service_code: 'individual_not_found' });
    });

    it('refuses impossible changes, naming each, and changes nothing', async () => {
      const ids = await directoryIds();
      const id = ids[1];
      const before = (await employmentOf(id)).body;
      expectInvalid(await put(`/sandbox/employment/${id}`, { end_date: '1999-01-01' }), 'end_date: must not be before start_date');
      expectInvalid(await put(`/sandbox/employment/${id}`, { manager: { id } }), 'cannot be their own manager');
      expectInvalid(await put(`/sandbox/employment/${id}`, { manager: { id: randomUUID() } }), 'manager.id: no individual');
      expectInvalid(await put(`/sandbox/employment/${id}`, { department: { name: 'Alchemy' } }), 'no department "Alchemy"');
      const futureRaise = { income: { unit: 'yearly', amount: 1, effective_date: '2027-01-01' } };
      expectInvalid(await put(`/sandbox/employment/${id}`, futureRaise), 'must not be in the future');
      const badValues = { employment: { type: 'employee', subtype: 'forever' }, is_active: 'yes' };
      expectInvalid(await put(`/sandbox/employment/${id}`, badValues), 'employment.subtype', 'is_active');
      expectInvalid(await put(`/sandbox/employment/${id}`, { first_name: 'Names live on the individual' }), 'first_name: unknown field');
      expectInvalid(await put(`/sandbox/employment/${id}`, {}), 'sets no field');
      expect((await employmentOf(id)).body).toEqual(before);
    });
  });

  describe('POST /sandbox/payment', () => {
    it('runs one pay period for exactly the employees paid in it, and the store holds the payment and its statements', async () => {
      const fresh = await sandboxEmployer(15);
      const ref = await refOf(fresh.connectionId, fresh.entityId);
      const store = service.app.get(SandboxEmployerStore);
      const ids = await directoryIds(fresh.token);
      const [leaver, joiner] = (await store.employments(ref, ids))
        .filter((e) => e.employment.type === 'employee' && e.end_date === null && e.start_date < '2026-05-01')
        .map((e) => e.id);
      // Someone who left before the run's period, and someone hired for the next one: neither is paid.
      expect((await put(`/sandbox/employment/${leaver}`, { end_date: '2026-05-01', is_active: false }, fresh.token)).status).toBe(200);
      expect((await put(`/sandbox/employment/${joiner}`, { start_date: '2026-06-30' }, fresh.token)).status).toBe(200);

      const res = await post('/sandbox/payment', { pay_date: '2026-06-12' }, fresh.token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ payment_id: expect.stringMatching(UUID_V4), pay_date: '2026-06-12' });

      const payment = await store.payment(ref, res.body.payment_id);
      expect(payment).toMatchObject({ id: res.body.payment_id, pay_date: '2026-06-12', pay_period: payPeriodOf('2026-06-12') });
      const period = payPeriodOf('2026-06-12');
      const expected = (await store.employments(ref, ids))
        .filter((e) => e.employment.type === 'employee' && e.start_date <= period.end_date)
        .filter((e) => (e.end_date === null ? e.is_active : e.end_date >= period.start_date))
        .map((e) => e.id)
        .sort();
      expect(expected).not.toContain(leaver);
      expect(expected).not.toContain(joiner);
      expect(expected.length).toBeGreaterThan(0);
      const statements = (await store.payStatements(ref, res.body.payment_id, { limit: 1000, offset: 0 }))!;
      expect(statements.items.map((s) => s.individual_id).sort()).toEqual(expected);
      expect([...payment!.individual_ids].sort()).toEqual(expected);
      for (const statement of statements.items) {
        expect(statement.type).toBe('regular_payroll');
        expect(statement.gross_pay.amount).toBe(statement.earnings.reduce((sum, e) => sum + e.amount, 0));
      }
    });

    it('without a pay date runs the next regular pay date, and the live payments read shows it', async () => {
      const res = await post('/sandbox/payment', {});
      expect(res.status).toBe(200);
      const next = await post('/sandbox/payment', {});
      expect(next.status).toBe(200);
      expect(next.body.payment_id).not.toBe(res.body.payment_id);
      // Bi-weekly: the next regular run is two weeks after the one before.
      const days = (Date.parse(next.body.pay_date) - Date.parse(res.body.pay_date)) / 86_400_000;
      expect(days).toBe(14);
      const payments = await read(`/employer/payment?start_date=${res.body.pay_date}&end_date=${next.body.pay_date}`);
      expect(payments.status).toBe(200);
      expect(payments.body.map((p: { id: string }) => p.id)).toEqual([res.body.payment_id, next.body.payment_id]);
    });

    it('also runs without any body', async () => {
      const fresh = await sandboxEmployer(3);
      const res = await service.request('/sandbox/payment', { method: 'POST', headers: auth(fresh.token) });
      expect(res.status).toBe(200);
      expect(res.body.payment_id).toMatch(UUID_V4);
    });

    it('refuses bad pay dates and unknown fields, and runs nothing', async () => {
      const fresh = await sandboxEmployer(3);
      const ref = await refOf(fresh.connectionId, fresh.entityId);
      const store = service.app.get(SandboxEmployerStore);
      const before = await store.payments(ref, '0001-01-01', '9999-12-31');
      const latest = before[before.length - 1].pay_date;
      expectInvalid(await post('/sandbox/payment', { pay_date: '12/06/2026' }, fresh.token), 'pay_date must be a date YYYY-MM-DD');
      expectInvalid(await post('/sandbox/payment', { pay_date: '2026-02-30' }, fresh.token), 'pay_date must be a date YYYY-MM-DD');
      expectInvalid(await post('/sandbox/payment', { pay_date: '2027-06-03' }, fresh.token), 'at most 365 days ahead');
      expectInvalid(await post('/sandbox/payment', { pay_date: '2025-01-03' }, fresh.token), `must not be before the latest pay run (${latest})`);
      expectInvalid(await post('/sandbox/payment', { payday: '2026-06-12' }, fresh.token), 'payday: unknown field');
      expect(await store.payments(ref, '0001-01-01', '9999-12-31')).toEqual(before);
    });

    describe('the public body {start_date, end_date, pay_statements}', () => {
      const money = (amount: number) => ({ amount, currency: 'usd' });

      async function statementsOf(paymentId: string, token: string) {
        const res = await read('/employer/pay-statement', token, { requests: [{ payment_id: paymentId, limit: 1000 }] });
        expect(res.status).toBe(200);
        expect(res.body.responses[0].code).toBe(200);
        return res.body.responses[0].body.pay_statements as PayStatementRecord[];
      }

      it('stores the given statements exactly as written, computes one for everyone else, and pays the period on its end date', async () => {
        const fresh = await sandboxEmployer(12);
        const period = { start_date: '2026-06-01', end_date: '2026-06-14' };
        const paid = await paidIn(fresh, period);
        expect(paid.length).toBeGreaterThanOrEqual(3);
        const [full, minimal] = paid.map((e) => e.id);
        const written = {
          individual_id: full,
          type: 'off_cycle_payroll',
          payment_method: 'check',
          total_hours: 80,
          gross_pay: 400_000,
          net_pay: 290_000,
          earnings: [
            { type: 'salary', name: 'Salary', amount: 380_000, hours: 80 },
            { type: 'tips', name: 'Tips', amount: 20_000, hours: 0 },
          ],
          taxes: [
            { type: 'federal', name: 'Federal Income Tax', employer: false, amount: 60_000 },
            { type: 'fica', name: 'Social Security', employer: false, amount: 24_800 },
            { type: 'fica', name: 'Social Security (Employer)', employer: true, amount: 24_800 },
          ],
          employee_deductions: [{ type: '401k', name: '401(k)', amount: 25_200, pre_tax: true }],
          employer_contributions: [{ type: '401k', name: '401(k) Match', amount: 12_600 }],
        };
        // Only what the public document requires, with a bonus: the rest defaults or adds up.
        const sparse = { individual_id: minimal.toUpperCase(), earnings: [{ type: 'bonus', name: 'Spot Bonus', amount: 50_000 }] };

        const res = await post('/sandbox/payment', { ...period, pay_statements: [written, sparse] }, fresh.token);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ payment_id: expect.stringMatching(UUID_V4), pay_date: '2026-06-14' });

        const payments = await read('/employer/payment?start_date=2026-06-14&end_date=2026-06-14', fresh.token);
        expect(payments.status).toBe(200);
        expect(payments.body).toHaveLength(1);
        const payment = payments.body[0];
        expect(payment).toMatchObject({ id: res.body.payment_id, pay_date: '2026-06-14', pay_period: period, pay_frequencies: ['bi_weekly'] });
        expect(payment.individual_ids).toEqual(paid.map((e) => e.id).sort());

        const statements = await statementsOf(res.body.payment_id, fresh.token);
        expect(statements.map((s) => s.individual_id).sort()).toEqual(paid.map((e) => e.id).sort());
        const byId = new Map(statements.map((s) => [s.individual_id, s]));
        expect(byId.get(full)).toEqual({
          ...written,
          gross_pay: money(400_000),
          net_pay: money(290_000),
          earnings: written.earnings.map((e) => ({ ...e, currency: 'usd' })),
          taxes: written.taxes.map((t) => ({ ...t, currency: 'usd' })),
          employee_deductions: written.employee_deductions.map((d) => ({ ...d, currency: 'usd' })),
          employer_contributions: written.employer_contributions.map((c) => ({ ...c, currency: 'usd' })),
        });
        expect(byId.get(minimal)).toEqual({
          individual_id: minimal,
          type: 'regular_payroll',
          payment_method: 'direct_deposit',
          total_hours: 0,
          gross_pay: money(50_000),
          net_pay: money(50_000),
          earnings: [{ type: 'bonus', name: 'Spot Bonus', amount: 50_000, currency: 'usd', hours: null }],
          taxes: [],
          employee_deductions: [],
          employer_contributions: [],
        });
        const computed = statements.filter((s) => s.individual_id !== full && s.individual_id !== minimal);
        expect(computed.length).toBe(paid.length - 2);
        for (const statement of computed) {
          expect(statement.type).toBe('regular_payroll');
          expect(['salary', 'wage']).toContain(statement.earnings[0].type);
          expect(statement.gross_pay.amount).toBe(statement.earnings.reduce((sum, e) => sum + e.amount, 0));
          expect(statement.taxes.length).toBeGreaterThan(0);
        }
        // The payment adds up its statements, the given ones as written.
        const sum = (pick: (s: PayStatementRecord) => number) => statements.reduce((total, s) => total + pick(s), 0);
        expect(payment.gross_pay).toEqual(money(sum((s) => s.gross_pay.amount)));
        expect(payment.net_pay).toEqual(money(sum((s) => s.net_pay.amount)));
      });

      it('takes pay_date with the dates, completes two weeks from one date, and pays other periods at their frequency', async () => {
        const fresh = await sandboxEmployer(6);
        const hired = await post('/sandbox/directory', [newPerson({ income: { unit: 'yearly', amount: 9_000_000 } })], fresh.token);
        expect(hired.status).toBe(200);
        const lone = await post('/sandbox/payment', { end_date: '2026-06-14' }, fresh.token);
        expect(lone.status).toBe(200);
        expect(lone.body.pay_date).toBe('2026-06-14');
        const two = await read('/employer/payment?start_date=2026-06-14&end_date=2026-06-14', fresh.token);
        expect(two.body[0].pay_period).toEqual({ start_date: '2026-06-01', end_date: '2026-06-14' });

        const month = { start_date: '2026-07-01', end_date: '2026-07-31' };
        const monthly = await post('/sandbox/payment', { ...month, pay_date: '2026-08-03', pay_statements: [] }, fresh.token);
        expect(monthly.status).toBe(200);
        expect(monthly.body.pay_date).toBe('2026-08-03');
        const payment = (await read('/employer/payment?start_date=2026-08-03&end_date=2026-08-03', fresh.token)).body[0];
        expect(payment).toMatchObject({ pay_period: month, pay_frequencies: ['monthly'] });
        // A month's salary is a twelfth of the year's: $90,000.00 → $7,500.00.
        const statement = (await statementsOf(payment.id, fresh.token)).find((s) => s.individual_id === hired.body[0].id)!;
        expect(statement.earnings).toEqual([expect.objectContaining({ type: 'salary', amount: 750_000 })]);

        // pay_date alone with statements: the calendar's bi-weekly period before it.
        const someone = hired.body[0].id;
        const onCalendar = await post(
          '/sandbox/payment',
          { pay_date: '2026-08-14', pay_statements: [{ individual_id: someone, gross_pay: 1_000, earnings: [] }] },
          fresh.token,
        );
        expect(onCalendar.status).toBe(200);
        const calendar = (await read('/employer/payment?start_date=2026-08-14&end_date=2026-08-14', fresh.token)).body[0];
        expect(calendar).toMatchObject({ pay_period: payPeriodOf('2026-08-14'), pay_frequencies: ['bi_weekly'] });
        const given = (await statementsOf(calendar.id, fresh.token)).find((s) => s.individual_id === someone)!;
        expect(given).toMatchObject({ gross_pay: { amount: 1_000 }, net_pay: { amount: 1_000 }, earnings: [] });

        // Statements only: the next regular run, with the given one in it.
        const next = await post('/sandbox/payment', { pay_statements: [{ individual_id: someone, gross_pay: 2_000 }] }, fresh.token);
        expect(next.status).toBe(200);
        expect(next.body.pay_date).toBe(addDays(calendar.pay_date, 14));
      });

      it('pays any period: a short or odd one for its days at the pay schedule’s frequency, one day included (the SDK’s call)', async () => {
        const fresh = await sandboxEmployer(6);
        const hired = await post(
          '/sandbox/directory',
          [
            newPerson({ income: { unit: 'yearly', amount: 9_125_000 } }),
            newPerson({ first_name: 'Hour', income: { unit: 'hourly', amount: 3_000 }, employment: { type: 'employee', subtype: 'full_time' } }),
          ],
          fresh.token,
        );
        expect(hired.status).toBe(200);
        const [salaried, hourly] = hired.body.map((p: { id: string }) => p.id);

        // Ten days: $91,250.00 a year is $250.00 a day.
        const ten = { start_date: '2026-06-15', end_date: '2026-06-24' };
        const res = await post('/sandbox/payment', ten, fresh.token);
        expect(res.status).toBe(200);
        expect(res.body.pay_date).toBe('2026-06-24');
        const payment = (await read('/employer/payment?start_date=2026-06-24&end_date=2026-06-24', fresh.token)).body[0];
        expect(payment).toMatchObject({ pay_period: ten, pay_frequencies: ['bi_weekly'] });
        const statements = await statementsOf(payment.id, fresh.token);
        expect(statements.find((s) => s.individual_id === salaried)!.earnings).toEqual([expect.objectContaining({ type: 'salary', amount: 250_000 })]);
        // Full time, 80 hours in two weeks: 57.14 hours in ten days.
        const wages = statements.find((s) => s.individual_id === hourly)!.earnings as { type: string; hours: number }[];
        expect(wages.find((line) => line.type === 'wage')!.hours).toBe(57.14);

        // One day, as the SDK sends it (start_date = end_date = today): a day's pay.
        const finch = new Finch({ accessToken: fresh.token, baseURL: service.url, maxRetries: 0 });
        const oneDay = await finch.sandbox.payment.create({ start_date: '2026-06-25', end_date: '2026-06-25' });
        const day = (await read(`/employer/payment?start_date=2026-06-25&end_date=2026-06-25`, fresh.token)).body.find((p: { id: string }) => p.id === oneDay.payment_id);
        expect(day.pay_period).toEqual({ start_date: '2026-06-25', end_date: '2026-06-25' });
        const daily = (await statementsOf(day.id, fresh.token)).find((s) => s.individual_id === salaried)!;
        expect(daily.earnings).toEqual([expect.objectContaining({ type: 'salary', amount: 25_000 })]);
      });

      it('refuses each bad field, naming it, and writes nothing', async () => {
        const fresh = await sandboxEmployer(8);
        const ref = await refOf(fresh.connectionId, fresh.entityId);
        const store = service.app.get(SandboxEmployerStore);
        const period = { start_date: '2026-06-01', end_date: '2026-06-14' };
        const [active, leaver] = (await paidIn(fresh, period)).map((e) => e.id);
        expect((await put(`/sandbox/employment/${leaver}`, { end_date: '2026-05-01', is_active: false }, fresh.token)).status).toBe(200);
        const hired = await post('/sandbox/directory', [newPerson({ employment: { type: 'contractor', subtype: 'individual_contractor' } })], fresh.token);
        expect(hired.status).toBe(200);
        const contractor = hired.body[0].id;
        const before = await store.payments(ref, '0001-01-01', '9999-12-31');
        const latest = before[before.length - 1].pay_date;
        const ok = { individual_id: active, gross_pay: 100_000 };
        const pay = (body: Record<string, unknown>) => post('/sandbox/payment', body, fresh.token);
        const statement = (fields: Record<string, unknown>) => pay({ ...period, pay_statements: [{ ...ok, ...fields }] });
        const line = (list: string, fields: Record<string, unknown>) => {
          const base: Record<string, Record<string, unknown>> = {
            earnings: { type: 'salary', name: 'Salary', amount: 100_000 },
            taxes: { type: 'federal', name: 'Federal', amount: 100 },
            employee_deductions: { type: '401k', name: '401(k)', amount: 100 },
            employer_contributions: { type: '401k', name: 'Match', amount: 100 },
          };
          return statement({ [list]: [{ ...base[list], ...fields }] });
        };
        const unknownId = randomUUID();

        expectInvalid(await pay({ start_date: '2026-6-1', end_date: '2026-06-14' }), 'start_date: start_date must be a date YYYY-MM-DD');
        expectInvalid(await pay({ start_date: null, end_date: '2026-06-14' }), 'start_date: start_date must be a date YYYY-MM-DD');
        expectInvalid(await pay({ start_date: '2026-06-01', end_date: '2026-02-30' }), 'end_date: end_date must be a date YYYY-MM-DD');
        expectInvalid(await pay({ start_date: '2026-06-14', end_date: '2026-06-01' }), 'end_date: must not be before start_date (2026-06-14)');
        expectInvalid(await pay({ start_date: '2026-06-01', end_date: '2027-06-02' }), 'end_date: a pay period is at most 366 days', '367 days');
        expectInvalid(await pay({ ...period, pay_date: '2026-05-31' }), 'pay_date: must be from start_date (2026-06-01) to 31 days after end_date (2026-07-15)');
        expectInvalid(await pay({ ...period, pay_date: '2026-07-16' }), 'pay_date: must be from start_date');
        expectInvalid(await pay({ start_date: '2027-06-01', end_date: '2027-06-14' }), 'end_date: must be at most 365 days ahead', 'paid on its end date');
        expectInvalid(await pay({ start_date: '2025-01-01', end_date: '2025-01-14' }), `end_date: must not be before the latest pay run (${latest})`);
        expectInvalid(await pay({ ...period, pay_statements: {} }), 'pay_statements: pay_statements must be an array');
        expectInvalid(await pay({ ...period, pay_statements: [null] }), 'pay_statements: each value in pay_statements must be an object');
        expectInvalid(await pay({ ...period, pay_statements: [[ok]] }), 'pay_statements: each value in pay_statements must be an object');
        expectInvalid(
          await pay({ ...period, pay_statements: Array.from({ length: 10_001 }, () => ok) }),
          'pay_statements: pay_statements must contain no more than 10000 elements',
        );
        expectInvalid(await statement({ individual_id: 'not-a-uuid' }), 'pay_statements[0].individual_id: individual_id must be a UUID');
        expectInvalid(await statement({ individual_id: unknownId }), `pay_statements[0].individual_id: no individual ${unknownId} at this employer`);
        expectInvalid(await statement({ individual_id: contractor }), `pay_statements[0].individual_id: ${contractor} is a contractor`);
        expectInvalid(await statement({ individual_id: leaver }), `pay_statements[0].individual_id: ${leaver} is not an active employee in the pay period 2026-06-01 to 2026-06-14`);
        expectInvalid(await pay({ ...period, pay_statements: [ok, ok] }), `pay_statements[1].individual_id: ${active} already has a statement in this payment (pay_statements[0])`);
        expectInvalid(await statement({ type: 'bonus' }), 'pay_statements[0].type: type must be one of: regular_payroll, off_cycle_payroll, one_time_payment');
        expectInvalid(await statement({ payment_method: 'other' }), 'pay_statements[0].payment_method: payment_method must be one of: check, direct_deposit');
        expectInvalid(await statement({ total_hours: 0 }), 'pay_statements[0].total_hours: total_hours must be a positive number');
        expectInvalid(await statement({ total_hours: 745 }), 'pay_statements[0].total_hours: total_hours must not be greater than 744');
        expectInvalid(await statement({ gross_pay: 12.5 }), 'pay_statements[0].gross_pay: gross_pay must be an integer number of cents');
        expectInvalid(await statement({ gross_pay: { amount: 100, currency: 'usd' } }), 'pay_statements[0].gross_pay: gross_pay must be an integer number of cents');
        expectInvalid(await statement({ gross_pay: 0 }), 'pay_statements[0].gross_pay: gross_pay must not be less than 1');
        expectInvalid(await statement({ gross_pay: 100_000_000_001 }), 'pay_statements[0].gross_pay: gross_pay must not be greater than 100000000000');
        expectInvalid(await statement({ net_pay: -1 }), 'pay_statements[0].net_pay: net_pay must not be less than 0');
        expectInvalid(await statement({ net_pay: null }), 'pay_statements[0].net_pay: net_pay must be an integer number of cents');
        expectInvalid(await statement({ currency: 'usd' }), 'pay_statements[0].currency: unknown field');
        expectInvalid(await statement({ earnings: 'salary' }), 'pay_statements[0].earnings: earnings must be an array');
        expectInvalid(await statement({ earnings: [[]] }), 'pay_statements[0].earnings: each value in earnings must be an object');
        expectInvalid(await line('earnings', { type: 'salaryy' }), 'pay_statements[0].earnings[0].type: type must be one of: salary, wage');
        expectInvalid(await line('earnings', { name: '' }), 'pay_statements[0].earnings[0].name: name must be longer than or equal to 1 characters');
        expectInvalid(await line('earnings', { amount: '100' }), 'pay_statements[0].earnings[0].amount: amount must be an integer number of cents');
        expectInvalid(await line('earnings', { hours: -1 }), 'pay_statements[0].earnings[0].hours: hours must not be less than 0');
        expectInvalid(await line('earnings', { currency: 'eur' }), 'pay_statements[0].earnings[0].currency: currency must be usd');
        expectInvalid(await line('taxes', { type: 'city' }), 'pay_statements[0].taxes[0].type: type must be one of: federal, fica, local, state');
        expectInvalid(await line('taxes', { employer: 'yes' }), 'pay_statements[0].taxes[0].employer: employer must be a boolean value');
        expectInvalid(await line('employee_deductions', { type: '401K' }), 'pay_statements[0].employee_deductions[0].type: type must be one of: 457, 401k');
        expectInvalid(await line('employee_deductions', { pre_tax: 'true' }), 'pay_statements[0].employee_deductions[0].pre_tax: pre_tax must be a boolean value');
        expectInvalid(await line('employer_contributions', { amount: -5 }), 'pay_statements[0].employer_contributions[0].amount: amount must not be less than 0');
        expectInvalid(await line('employer_contributions', { plan: 'x' }), 'pay_statements[0].employer_contributions[0].plan: unknown field');
        expectInvalid(await pay({ ...period, pay_statements: [{ individual_id: active }] }), 'pay_statements[0].gross_pay: required when the earnings do not add up to more than 0');
        expectInvalid(
          await statement({ gross_pay: undefined, earnings: [{ type: 'wage', name: 'Wage', amount: 100 }], taxes: [{ type: 'federal', name: 'Federal', amount: 300 }] }),
          'pay_statements[0].net_pay: required when employee taxes and deductions are more than gross pay (-200 cents left)',
        );
        expectInvalid(
          await statement({ earnings: Array.from({ length: 2 }, () => ({ type: 'bonus', name: 'Bonus', amount: 100_000_000_000 })) }),
          'pay_statements[0].earnings: amounts add up to more than 100000000000 cents',
        );
        expect(await store.payments(ref, '0001-01-01', '9999-12-31')).toEqual(before);
      });
    });
  });

  describe('after a sync', () => {
    async function syncNow(token: string): Promise<void> {
      const started = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
      expect(started.status).toBe(201);
      await expectEventually(async () => {
        const job = await read(`/jobs/automated/${started.body.job_id}`, token);
        expect(job.body.status).toBe('complete');
      });
    }

    it('edits show in employer reads as soon as they answer: each waits for the sync it starts, outside the refresh quota', async () => {
      const fresh = await sandboxEmployer(6);
      await syncNow(fresh.token);
      const paymentsBefore = (await read('/employer/payment?start_date=2000-01-01&end_date=2100-01-01', fresh.token)).body;
      const quota = async () => (await read('/jobs/automated', fresh.token)).body.meta.quotas.data_sync_all;
      const quotaBefore = await quota();

      const renamed = await put('/sandbox/company', { legal_name: 'Renamed After Sync LLC' }, fresh.token);
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ legal_name: 'Renamed After Sync LLC', sync_job_id: expect.stringMatching(UUID_V4), sync_status: 'complete' });
      expect((await read('/employer/company', fresh.token)).body.legal_name).toBe('Renamed After Sync LLC');

      const added = await post('/sandbox/directory', [newPerson({ first_name: 'Grace', last_name: 'Hopper' })], fresh.token);
      expect(added.status).toBe(200);
      // The body stays the bare array of created records; the sync comes in headers.
      expect(added.body).toEqual([expect.objectContaining({ id: expect.stringMatching(UUID_V4), first_name: 'Grace' })]);
      expect(added.headers.get('sync-job-id')).toMatch(UUID_V4);
      expect(added.headers.get('sync-status')).toBe('complete');
      expect(await directoryIds(fresh.token)).toContain(added.body[0].id);

      const paid = await post('/sandbox/payment', {}, fresh.token);
      expect(paid.status).toBe(200);
      expect(paid.body).toEqual({
        payment_id: expect.stringMatching(UUID_V4),
        pay_date: expect.any(String),
        sync_job_id: expect.stringMatching(UUID_V4),
        sync_status: 'complete',
      });
      const paymentsAfter = (await read('/employer/payment?start_date=2000-01-01&end_date=2100-01-01', fresh.token)).body;
      expect(paymentsAfter).toHaveLength(paymentsBefore.length + 1);
      expect(paymentsAfter.map((p: { id: string }) => p.id)).toContain(paid.body.payment_id);
      expect(await quota()).toEqual(quotaBefore);
    });

    it('a public-body payment answers after its sync, and synced reads show its given statement as written', async () => {
      const fresh = await sandboxEmployer(5);
      await syncNow(fresh.token);
      const period = { start_date: '2026-06-01', end_date: '2026-06-14' };
      const [someone] = (await paidIn(fresh, period)).map((e) => e.id);
      const given = {
        individual_id: someone,
        gross_pay: 123_456,
        net_pay: 100_000,
        earnings: [{ type: 'commission', name: 'Commission', amount: 123_456, hours: null }],
        taxes: [{ type: 'state', name: 'State', employer: false, amount: 23_456 }],
      };
      const paid = await post('/sandbox/payment', { ...period, pay_statements: [given] }, fresh.token);
      expect(paid.status).toBe(200);
      expect(paid.body).toEqual({
        payment_id: expect.stringMatching(UUID_V4),
        pay_date: '2026-06-14',
        sync_job_id: expect.stringMatching(UUID_V4),
        sync_status: 'complete',
      });
      const payments = (await read('/employer/payment?start_date=2026-06-14&end_date=2026-06-14', fresh.token)).body;
      expect(payments).toEqual([expect.objectContaining({ id: paid.body.payment_id, pay_period: period })]);
      const statements = await read('/employer/pay-statement', fresh.token, { requests: [{ payment_id: paid.body.payment_id }] });
      const statement = statements.body.responses[0].body.pay_statements.find((s: { individual_id: string }) => s.individual_id === someone);
      expect(statement).toEqual({
        individual_id: someone,
        type: 'regular_payroll',
        payment_method: 'direct_deposit',
        total_hours: 0,
        gross_pay: { amount: 123_456, currency: 'usd' },
        net_pay: { amount: 100_000, currency: 'usd' },
        earnings: [{ type: 'commission', name: 'Commission', amount: 123_456, currency: 'usd', hours: null }],
        taxes: [{ type: 'state', name: 'State', employer: false, amount: 23_456, currency: 'usd' }],
        employee_deductions: [],
        employer_contributions: [],
      });
    });
  });

  describe('entity scoping', () => {
    it('edits the entity named by entity_ids and no other; with two entities, entity_ids is required', async () => {
      const employerAB = await connectEmployer(service, app, { entityNames: ['Alpha Co', 'Beta Co'] });
      const [alpha, beta] = employerAB.entityIds;
      const companyOf = async (entityId: string) => (await read(`/employer/company?entity_ids=${entityId}`, employerAB.accessToken)).body;
      const betaBefore = await companyOf(beta);

      const res = await put(`/sandbox/company?entity_ids=${alpha}`, { legal_name: 'Alpha Edited' }, employerAB.accessToken);
      expect(res.status).toBe(200);
      expect((await companyOf(alpha)).legal_name).toBe('Alpha Edited');
      expect(await companyOf(beta)).toEqual(betaBefore);

      const added = await post(`/sandbox/directory?entity_ids[]=${beta}`, [newPerson({ first_name: 'Bea' })], employerAB.accessToken);
      expect(added.status).toBe(200);
      const idsOf = async (entityId: string): Promise<string[]> =>
        (await read(`/employer/directory?limit=10000&entity_ids=${entityId}`, employerAB.accessToken)).body.individuals.map(
          (i: { id: string }) => i.id,
        );
      const [betaIds, alphaIds] = [await idsOf(beta), await idsOf(alpha)];
      expect(betaIds).toContain(added.body[0].id);
      expect(alphaIds).not.toContain(added.body[0].id);
      // Beta's individual is unknown to Alpha.
      const crossed = await put(`/sandbox/individual/${added.body[0].id}?entity_ids=${alpha}`, { first_name: 'X' }, employerAB.accessToken);
      expect(crossed.status).toBe(404);

      const unscoped = await put('/sandbox/company', { legal_name: 'Which one?' }, employerAB.accessToken);
      expectInvalid(unscoped, 'entity_ids is required');
      const foreign = await put(`/sandbox/company?entity_ids=${employer.entityId}`, { legal_name: 'Not mine' }, employerAB.accessToken);
      expect(foreign.status).toBe(403);
      expect(foreign.body).toMatchObject({ name: 'forbidden_error', service_code: 'entity_not_authorized' });
    });
  });
});
