import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { newHireSchedule } from '../../src/domain/policies/auto-enrollment-policy';
import { ManualClock } from '../../src/domain/shared/clock';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { PoliciesRepository } from '../../src/modules/policies/policies.repository';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const basicOf = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const OPS = basicOf('ops', 'ops-password-for-tests');
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }, { match: 5_000, threshold: 500 }] };
const percent = (amount: number) => ({ type: 'percent', amount });
const fixed = (amount: number) => ({ type: 'fixed', amount });

interface Employer {
  token: string;
  connectionId: string;
  entityId: string;
}

interface AuditRow {
  actor: string;
  action: string;
  target_type: string;
  target_id: string;
  detail: Record<string, unknown> | null;
  at: Date;
}

/**
 * The ops API of auto-enrollment policies over HTTP: create, list, read, update and deactivate,
 * each write audited; and every way a request can be wrong.
 */
describeWithPostgres('auto-enrollment policies (/ops/api/policies)', () => {
  const clock = new ManualClock('2026-07-01T10:00:00Z');
  let service: TestService;
  let app: IssuedCredentials;
  let employer: Employer;
  let other: Employer;

  beforeAll(async () => {
    service = await startTestService({
      clock,
      // Wrong credentials are tried on every route here; the limit on failed sign-ins has its own suite.
      env: { OPS_SIGN_IN_MAX_FAILURES: '1000' },
    });
    app = await createApplication(service);
    employer = await sandboxEmployer();
    other = await sandboxEmployer();
  });
  afterAll(() => service?.close());
  beforeEach(() => clock.set('2026-07-01T10:00:00Z'));

  async function sandboxEmployer(): Promise<Employer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5 }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  /** A benefit made through the employer API, as a client would. */
  async function createBenefit(of: Employer, body: Record<string, unknown>): Promise<string> {
    const benefit = { description: `Plan ${randomUUID().slice(0, 8)}`, frequency: 'every_paycheck', ...body };
    const res = await service.request('/employer/benefits', json(benefit, bearer(of.token)));
    if (res.status !== 200) throw new Error(`create benefit failed: ${res.text}`);
    return res.body.benefit_id;
  }

  const ops = (path: string, body?: unknown, headers: Record<string, string> = OPS) =>
    body === undefined ? service.request(path, { headers }) : service.request(path, json(body, headers));
  const remove = (path: string, headers: Record<string, string> = OPS) => service.request(path, { method: 'DELETE', headers });
  const db = () => service.app.get(DataSource);
  const auditOf = (policyId: string): Promise<AuditRow[]> =>
    db().query(`SELECT actor, action, target_type, target_id, detail, at FROM ops_audit WHERE target_id = $1 ORDER BY id`, [policyId]);
  const counts = async () => {
    const [row] = await db().query(`SELECT (SELECT count(*) FROM enrollment_policies)::int AS policies, (SELECT count(*) FROM ops_audit)::int AS audit`);
    return row as { policies: number; audit: number };
  };

  function expectError(res: TestResponse, status: number, name: string, serviceCode?: string) {
    expect({ status: res.status, body: res.body }).toMatchObject({
      status,
      body: { code: status, name, ...(serviceCode ? { service_code: serviceCode } : {}), message: expect.any(String) },
    });
  }

  const body401k = (benefitId: string, of: Employer = employer) => ({
    connection_id: of.connectionId,
    entity_id: of.entityId,
    benefit_id: benefitId,
    configuration: { employee_deduction: percent(300) },
    waiting_period_days: 90,
    escalation: { increase: 100, cap: 600 },
  });

  async function createPolicy(body: Record<string, unknown>) {
    const res = await ops('/ops/api/policies', body);
    if (res.status !== 200) throw new Error(`create policy failed: ${res.text}`);
    return res.body;
  }

  describe('happy path', () => {
    it('POST creates the policy (401(k) 3 % with the company match, 90 days, +1 point a year to 6 %), audited; GET reads it', async () => {
      const benefitId = await createBenefit(employer, { type: '401k', company_contribution: MATCH });
      const created = await ops('/ops/api/policies', body401k(benefitId));
      expect(created.status).toBe(200);
      const expected = {
        policy_id: expect.stringMatching(UUID_V4),
        connection_id: employer.connectionId,
        entity_id: employer.entityId,
        benefit_id: benefitId,
        benefit_type: '401k',
        configuration: { employee_deduction: percent(300), company_contribution: null, catch_up: false, annual_maximum: null },
        waiting_period_days: 90,
        escalation: { increase: 100, cap: 600 },
        active: true,
        created_by: 'ops',
        created_at: '2026-07-01T10:00:00.000Z',
        updated_at: '2026-07-01T10:00:00.000Z',
      };
      expect(created.body).toEqual(expected);
      const id = created.body.policy_id;

      const read = await ops(`/ops/api/policies/${id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);

      expect(await auditOf(id)).toEqual([
        {
          actor: 'ops',
          action: 'policy.create',
          target_type: 'policy',
          target_id: id,
          at: new Date('2026-07-01T10:00:00Z'),
          detail: {
            policy: {
              connection_id: employer.connectionId,
              entity_id: employer.entityId,
              benefit_id: benefitId,
              configuration: { employee_deduction: percent(300), company_contribution: null, annual_maximum: null, catch_up: false, hsa_contribution_limit: null },
              waiting_period_days: 90,
              escalation: { increase: 100, cap: 600 },
              active: true,
            },
          },
        },
      ]);

      // What the new-hire saga reads: the entity's active policies, and the schedule of a hire.
      const [active] = (await service.app.get(PoliciesRepository).activeForEntities([{ connectionId: employer.connectionId, entityId: employer.entityId }])).get(employer.entityId)!;
      expect(active).toMatchObject({ id, benefitId, waitingPeriodDays: 90, escalation: { increase: 100, cap: 600 }, active: true });
      expect(newHireSchedule(active, '2026-07-15', '2026-07-01').map((s) => [s.effectiveDate, s.configuration.employee_deduction?.amount])).toEqual([
        ['2026-10-13', 300],
        ['2027-10-13', 400],
        ['2028-10-13', 500],
        ['2029-10-13', 600],
      ]);
    });

    it('shows the configuration in the enroll body’s terms for the benefit’s type, so it can be sent back as it is', async () => {
      const hsa = await createBenefit(employer, { type: 'hsa_pre' });
      const medical = await createBenefit(employer, { type: 's125_medical' });
      const hsaPolicy = await createPolicy({
        connection_id: employer.connectionId,
        entity_id: employer.entityId,
        benefit_id: hsa,
        configuration: { employee_deduction: fixed(10_000), company_contribution: fixed(5_000), annual_contribution_limit: 'family', catch_up: true },
        waiting_period_days: 0,
      });
      expect(hsaPolicy).toMatchObject({
        benefit_type: 'hsa_pre',
        configuration: {
          employee_deduction: fixed(10_000),
          company_contribution: fixed(5_000),
          catch_up: true,
          annual_maximum: null,
          annual_contribution_limit: 'family',
        },
        escalation: null,
      });
      const medicalPolicy = await createPolicy({
        connection_id: employer.connectionId,
        entity_id: employer.entityId,
        benefit_id: medical,
        configuration: { employee_deduction: fixed(2_500) },
        waiting_period_days: 30,
        escalation: null,
      });
      expect(medicalPolicy.configuration).toEqual({ employee_deduction: fixed(2_500), company_contribution: null });

      clock.set('2026-07-02T08:00:00Z');
      const resent = await ops(`/ops/api/policies/${hsaPolicy.policy_id}`, { configuration: hsaPolicy.configuration });
      expect(resent.status).toBe(200);
      expect(resent.body).toEqual({ ...hsaPolicy, updated_at: '2026-07-02T08:00:00.000Z' });
      // Audited, and the audit says nothing changed.
      const audit = await auditOf(hsaPolicy.policy_id);
      expect(audit.map((a) => [a.action, a.detail])).toEqual([
        ['policy.create', expect.any(Object)],
        ['policy.update', { changes: {} }],
      ]);
    });

    it('POST /{id} changes what is given and audits each change from → to', async () => {
      const benefitId = await createBenefit(employer, { type: '403b' });
      const policy = await createPolicy(body401k(benefitId));

      clock.set('2026-07-03T09:00:00Z');
      const longer = await ops(`/ops/api/policies/${policy.policy_id}`, { waiting_period_days: 60 });
      expect(longer.status).toBe(200);
      expect(longer.body).toEqual({ ...policy, waiting_period_days: 60, updated_at: '2026-07-03T09:00:00.000Z' });

      clock.set('2026-07-04T09:00:00Z');
      const raised = await ops(`/ops/api/policies/${policy.policy_id}`, {
        configuration: { employee_deduction: percent(400), catch_up: true },
        escalation: { increase: 50, cap: 800 },
      });
      expect(raised.status).toBe(200);
      expect(raised.body).toMatchObject({
        configuration: { employee_deduction: percent(400), company_contribution: null, catch_up: true, annual_maximum: null },
        escalation: { increase: 50, cap: 800 },
        waiting_period_days: 60,
        active: true,
        created_at: policy.created_at,
        updated_at: '2026-07-04T09:00:00.000Z',
      });

      const noEscalation = await ops(`/ops/api/policies/${policy.policy_id}`, { escalation: null });
      expect(noEscalation.status).toBe(200);
      expect(noEscalation.body).toMatchObject({ escalation: null, configuration: { employee_deduction: percent(400) } });
      expect((await ops(`/ops/api/policies/${policy.policy_id}`)).body).toEqual(noEscalation.body);

      const audit = await auditOf(policy.policy_id);
      expect(audit.map((a) => [a.actor, a.action, a.at.toISOString()])).toEqual([
        ['ops', 'policy.create', '2026-07-01T10:00:00.000Z'],
        ['ops', 'policy.update', '2026-07-03T09:00:00.000Z'],
        ['ops', 'policy.update', '2026-07-04T09:00:00.000Z'],
        ['ops', 'policy.update', '2026-07-04T09:00:00.000Z'],
      ]);
      expect(audit[1].detail).toEqual({ changes: { waiting_period_days: { from: 90, to: 60 } } });
      expect(audit[2].detail).toEqual({
        changes: {
          configuration: {
            from: expect.objectContaining({ employee_deduction: percent(300), catch_up: false }),
            to: expect.objectContaining({ employee_deduction: percent(400), catch_up: true }),
          },
          escalation: { from: { increase: 100, cap: 600 }, to: { increase: 50, cap: 800 } },
        },
      });
      expect(audit[3].detail).toEqual({ changes: { escalation: { from: { increase: 50, cap: 800 }, to: null } } });
    });

    it('DELETE deactivates (the saga no longer sees it), audited; POST {active: true} brings it back', async () => {
      const benefitId = await createBenefit(other, { type: '401k' });
      const policy = await createPolicy(body401k(benefitId, other));
      const repository = service.app.get(PoliciesRepository);
      expect((await repository.activeForEntities([{ connectionId: other.connectionId, entityId: other.entityId }])).get(other.entityId)!.map((p) => p.id)).toContain(policy.policy_id);

      clock.set('2026-07-05T12:00:00Z');
      const deleted = await remove(`/ops/api/policies/${policy.policy_id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ ...policy, active: false, updated_at: '2026-07-05T12:00:00.000Z' });
      expect((await ops(`/ops/api/policies/${policy.policy_id}`)).body.active).toBe(false);
      expect((await repository.activeForEntities([{ connectionId: other.connectionId, entityId: other.entityId }])).get(other.entityId)!.map((p) => p.id)).not.toContain(policy.policy_id);

      const back = await ops(`/ops/api/policies/${policy.policy_id}`, { active: true });
      expect(back.status).toBe(200);
      expect(back.body.active).toBe(true);
      expect((await repository.activeForEntities([{ connectionId: other.connectionId, entityId: other.entityId }])).get(other.entityId)!.map((p) => p.id)).toContain(policy.policy_id);

      const audit = await auditOf(policy.policy_id);
      expect(audit.slice(1).map((a) => [a.action, a.detail, a.at.toISOString()])).toEqual([
        ['policy.deactivate', { changes: { active: { from: true, to: false } } }, '2026-07-05T12:00:00.000Z'],
        ['policy.update', { changes: { active: { from: false, to: true } } }, '2026-07-05T12:00:00.000Z'],
      ]);
    });

    it('GET lists with filters and paging; refuses bad filters', async () => {
      const listed = await Promise.all(['401k_roth', '457', 'simple_ira'].map((type) => createBenefit(other, { type })));
      const policies = [];
      for (const benefitId of listed) policies.push(await createPolicy(body401k(benefitId, other)));
      expect((await remove(`/ops/api/policies/${policies[1].policy_id}`)).status).toBe(200);

      const all = await ops(`/ops/api/policies?connection_id=${other.connectionId}`);
      expect(all.status).toBe(200);
      expect(all.body.paging).toEqual({ count: all.body.data.length, offset: 0 });
      expect(all.body.data.map((p: { policy_id: string }) => p.policy_id)).toEqual(expect.arrayContaining(policies.map((p) => p.policy_id)));
      expect(all.body.data.every((p: { connection_id: string }) => p.connection_id === other.connectionId)).toBe(true);
      const created = all.body.data.map((p: { created_at: string }) => p.created_at);
      expect(created).toEqual([...created].sort());

      const page = await ops(`/ops/api/policies?connection_id=${other.connectionId}&limit=2&offset=1`);
      expect(page.body.paging).toEqual({ count: all.body.paging.count, offset: 1 });
      expect(page.body.data).toEqual(all.body.data.slice(1, 3));

      const inactive = await ops(`/ops/api/policies?entity_id=${other.entityId}&active=false`);
      expect(inactive.body.data.map((p: { policy_id: string }) => p.policy_id)).toContain(policies[1].policy_id);
      expect(inactive.body.data.every((p: { active: boolean }) => !p.active)).toBe(true);
      const active = await ops(`/ops/api/policies?entity_id=${other.entityId}&active=true`);
      expect(active.body.data.map((p: { policy_id: string }) => p.policy_id)).toEqual(
        expect.arrayContaining([policies[0].policy_id, policies[2].policy_id]),
      );
      expect(active.body.data.every((p: { active: boolean }) => p.active)).toBe(true);
      expect(active.body.paging.count + inactive.body.paging.count).toBe(all.body.paging.count);

      const none = await ops(`/ops/api/policies?connection_id=${randomUUID()}`);
      expect(none.body).toEqual({ paging: { count: 0, offset: 0 }, data: [] });

      for (const query of ['connection_id=abc', 'entity_id=1', 'active=yes', 'limit=0', 'limit=101', 'offset=-1', 'sort=created']) {
        const res = await ops(`/ops/api/policies?${query}`);
        expectError(res, 400, 'invalid_request_error', 'invalid_request');
        expect(res.body.message).toContain(query.split('=')[0]);
      }
    });

    it('two concurrent creates for one benefit: exactly one wins, the other is 409', async () => {
      const benefitId = await createBenefit(employer, { type: '457_roth' });
      const results = await Promise.all([ops('/ops/api/policies', body401k(benefitId)), ops('/ops/api/policies', body401k(benefitId))]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const [{ n }] = await db().query(`SELECT count(*)::int AS n FROM enrollment_policies WHERE benefit_id = $1`, [benefitId]);
      expect(n).toBe(1);
    });
  });

  describe('bad requests change nothing', () => {
    let benefitId: string;
    let loan: string;
    let medical: string;
    beforeAll(async () => {
      benefitId = await createBenefit(employer, { type: '401k' });
      loan = await createBenefit(employer, { type: '401k_loan' });
      medical = await createBenefit(employer, { type: 's125_medical' });
    });

    it('needs the ops credentials: none, wrong ones, an employer token and application credentials are 401', async () => {
      const policy = await createPolicy({ ...body401k(await createBenefit(employer, { type: '403b_roth' })) });
      const before = await counts();
      const attempts: [string, Record<string, string>][] = [
        ['none', {}],
        ['wrong password', basicOf('ops', 'wrong-password-123')],
        ['wrong user', basicOf('root', 'ops-password-for-tests')],
        ['employer token', bearer(employer.token)],
        ['application credentials', basic(app)],
      ];
      for (const [name, headers] of attempts) {
        for (const res of [
          await ops('/ops/api/policies', body401k(benefitId), headers),
          await ops('/ops/api/policies', undefined, headers),
          await ops(`/ops/api/policies/${policy.policy_id}`, undefined, headers),
          await ops(`/ops/api/policies/${policy.policy_id}`, { waiting_period_days: 1 }, headers),
          await remove(`/ops/api/policies/${policy.policy_id}`, headers),
        ]) {
          expect({ name, status: res.status }).toEqual({ name, status: 401 });
          expect(res.body).toMatchObject({ code: 401, name: 'authentication_error', message: expect.any(String) });
          expect(res.headers.get('www-authenticate')).toBe('Basic realm="ops", charset="UTF-8"');
        }
      }
      expect(await counts()).toEqual(before);
      expect((await ops(`/ops/api/policies/${policy.policy_id}`)).body).toEqual(policy);
    });

    it('unknown or foreign connection, entity and benefit: 404 with what was not found', async () => {
      const before = await counts();
      const otherBenefit = await createBenefit(other, { type: '401k' });
      const cases: [string, Record<string, unknown>, string][] = [
        ['unknown connection', { connection_id: randomUUID() }, 'connection_not_found'],
        ['unknown entity', { entity_id: randomUUID() }, 'entity_not_found'],
        ["another connection's entity", { entity_id: other.entityId }, 'entity_not_found'],
        ['unknown benefit', { benefit_id: randomUUID() }, 'benefit_not_found'],
        ["another entity's benefit", { benefit_id: otherBenefit }, 'benefit_not_found'],
      ];
      for (const [name, change, serviceCode] of cases) {
        const res = await ops('/ops/api/policies', { ...body401k(benefitId), ...change });
        expect({ name, status: res.status, service_code: res.body.service_code }).toEqual({ name, status: 404, service_code: serviceCode });
        expectError(res, 404, 'not_found_error', serviceCode);
        expect(res.body.message).toContain(String(Object.values(change)[0]));
      }
      expect(await counts()).toEqual(before);
    });

    it.each<[string, (b: Record<string, unknown>) => unknown, RegExp]>([
      ['a percent over 10,000 basis points', (b) => ({ ...b, configuration: { employee_deduction: percent(10_001) } }), /configuration\.employee_deduction\.amount: a percent amount must be .* basis points from 0 to 10000/],
      ['an effective_date', (b) => ({ ...b, configuration: { employee_deduction: percent(300), effective_date: '2026-08-01' } }), /configuration\.effective_date: not accepted in a policy/],
      ['an unknown configuration field', (b) => ({ ...b, configuration: { employee_deduction: percent(300), bonus: 1 } }), /configuration\.bonus: unknown field/],
      ['a configuration that is not an object', (b) => ({ ...b, configuration: 'all of it' }), /configuration: configuration must be an object/],
      ['no configuration', ({ configuration: _omitted, ...b }) => b, /configuration: configuration is required/],
      ['a negative waiting period', (b) => ({ ...b, waiting_period_days: -1 }), /waiting_period_days: .* whole number of days from 0 to 3650/],
      ['a fractional waiting period', (b) => ({ ...b, waiting_period_days: 1.5 }), /waiting_period_days: waiting_period_days must be a whole number/],
      ['a waiting period over ten years', (b) => ({ ...b, waiting_period_days: 3_651 }), /waiting_period_days: .* whole number of days from 0 to 3650/],
      ['no waiting period', ({ waiting_period_days: _omitted, ...b }) => b, /waiting_period_days: waiting_period_days is required/],
      ['an escalation cap below the initial amount', (b) => ({ ...b, escalation: { increase: 100, cap: 200 } }), /escalation\.cap: must be above .* \(300 basis points\)/],
      ['an escalation cap over 100 %', (b) => ({ ...b, escalation: { increase: 100, cap: 10_001 } }), /escalation\.cap: must be a whole number of basis points up to 10000/],
      ['an escalation increase of 0', (b) => ({ ...b, escalation: { increase: 0, cap: 600 } }), /escalation\.increase: must be a whole number of basis points from 1 to 10000/],
      ['an escalation without an employee deduction', (b) => ({ ...b, configuration: { company_contribution: percent(300) } }), /escalation: escalation raises the employee deduction/],
      ['an escalation field unknown', (b) => ({ ...b, escalation: { increase: 100, cap: 600, every: 'year' } }), /escalation\.every: unknown field/],
      ['an escalation that is not an object', (b) => ({ ...b, escalation: 100 }), /escalation: escalation must be an object or null/],
      ['an unknown field', (b) => ({ ...b, starts: 'now' }), /starts: unknown field/],
      ['a malformed connection_id', (b) => ({ ...b, connection_id: 'acme' }), /connection_id: connection_id must be a UUID/],
      ['a malformed benefit_id', (b) => ({ ...b, benefit_id: 42 }), /benefit_id: benefit_id must be a UUID/],
    ])('400 for %s', async (_name, mutate, message) => {
      const before = await counts();
      const res = await ops('/ops/api/policies', mutate(body401k(benefitId)));
      expectError(res, 400, 'invalid_request_error', 'invalid_request');
      expect(res.body.message).toMatch(message);
      expect(await counts()).toEqual(before);
    });

    it('400 for a field the benefit’s type does not take; 422 for what the provider does not support', async () => {
      const before = await counts();
      const base = { connection_id: employer.connectionId, entity_id: employer.entityId, waiting_period_days: 0 };
      const catchUp = await ops('/ops/api/policies', { ...base, benefit_id: medical, configuration: { employee_deduction: fixed(100), catch_up: true } });
      expectError(catchUp, 400, 'invalid_request_error', 'invalid_request');
      expect(catchUp.body.message).toMatch(/configuration\.catch_up: not accepted for a Section 125/);

      // The sandbox runs 401(k) loan repayments as fixed amounts only.
      const percentLoan = await ops('/ops/api/policies', { ...base, benefit_id: loan, configuration: { employee_deduction: percent(300) } });
      expectError(percentLoan, 422, 'unprocessable_request_error', 'unprocessable_parameters');
      expect(percentLoan.body.message).toContain('does not support percent employee deductions for 401k_loan');
      expect(await counts()).toEqual(before);
      expect((await ops('/ops/api/policies', { ...base, benefit_id: loan, configuration: { employee_deduction: fixed(5_000) } })).status).toBe(200);
    });

    it('409 policy_already_exists for a second policy of the same benefit, naming the first', async () => {
      const benefit = await createBenefit(employer, { type: 'simple' });
      const first = await createPolicy(body401k(benefit));
      const before = await counts();
      const second = await ops('/ops/api/policies', { ...body401k(benefit), waiting_period_days: 0 });
      expectError(second, 409, 'conflict_error', 'policy_already_exists');
      expect(second.body.message).toContain(first.policy_id);
      expect(second.body.context).toEqual({ policy_id: first.policy_id });
      expect(await counts()).toEqual(before);
      expect((await ops(`/ops/api/policies/${first.policy_id}`)).body).toEqual(first);
    });

    it('malformed JSON and a non-object body are 400', async () => {
      const before = await counts();
      expectError(await ops('/ops/api/policies', '{'), 400, 'bad_request_error', 'malformed_request');
      expectError(await ops('/ops/api/policies', '[]'), 400, 'invalid_request_error');
      expect(await counts()).toEqual(before);
    });

    it('unknown and malformed policy ids are 404 on every route', async () => {
      for (const id of [randomUUID(), 'not-a-uuid', '1']) {
        for (const res of [
          await ops(`/ops/api/policies/${id}`),
          await ops(`/ops/api/policies/${id}`, { waiting_period_days: 1 }),
          await remove(`/ops/api/policies/${id}`),
        ]) {
          expectError(res, 404, 'not_found_error', 'policy_not_found');
          expect(res.body.message).toContain(id);
        }
      }
    });

    it('updates are checked like creates, whole: the result must stay valid', async () => {
      const benefit = await createBenefit(employer, { type: '403b' });
      const policy = await createPolicy(body401k(benefit));
      const before = await counts();
      const cases: [string, unknown, number, string, RegExp][] = [
        ['an empty body', {}, 400, 'invalid_request', /give at least one of configuration, waiting_period_days, escalation, active/],
        ['a new configuration above the kept cap', { configuration: { employee_deduction: percent(700) } }, 400, 'invalid_request', /escalation\.cap: must be above .* \(700 basis points\)/],
        ['a new configuration without the deduction the escalation raises', { configuration: { company_contribution: percent(100) } }, 400, 'invalid_request', /escalation: escalation raises the employee deduction/],
        ['an escalation cap below the kept amount', { escalation: { increase: 100, cap: 300 } }, 400, 'invalid_request', /escalation\.cap: must be above/],
        ['an effective_date', { configuration: { employee_deduction: percent(300), effective_date: '2026-08-01' } }, 400, 'invalid_request', /configuration\.effective_date: not accepted/],
        ['a percent over 10,000', { configuration: { employee_deduction: percent(20_000) }, escalation: null }, 400, 'invalid_request', /employee_deduction\.amount/],
        ['a negative waiting period', { waiting_period_days: -5 }, 400, 'invalid_request', /waiting_period_days: waiting_period_days must be a whole number/],
        ['a null configuration', { configuration: null }, 400, 'invalid_request', /configuration: configuration must be an object/],
        ['a null waiting period', { waiting_period_days: null }, 400, 'invalid_request', /waiting_period_days/],
        ['active as a string', { active: 'yes' }, 400, 'invalid_request', /active: active must be true or false/],
        ['an unknown field', { benefit_id: benefit }, 400, 'invalid_request', /benefit_id: unknown field/],
      ];
      for (const [name, body, status, serviceCode, message] of cases) {
        const res = await ops(`/ops/api/policies/${policy.policy_id}`, body);
        expect({ name, status: res.status, service_code: res.body.service_code }).toEqual({ name, status, service_code: serviceCode });
        expect(res.body.message).toMatch(message);
      }
      expect(await counts()).toEqual(before);
      expect((await ops(`/ops/api/policies/${policy.policy_id}`)).body).toEqual(policy);
    });
  });
});
