import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { employerRefOf } from '../../src/domain/providers/provider-port';
import { DISCREPANCY_KINDS } from '../../src/domain/reconciliation/reconciliation.types';
import { ManualClock } from '../../src/domain/shared/clock';
import { ConnectionsRepository } from '../../src/infrastructure/database/repositories/connections.repository';
import { SandboxEmployerStore } from '../../src/infrastructure/providers/sandbox/sandbox-employer.store';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { discrepancyJson, insertDiscrepancy, insertResult, resolveDiscrepancy, resultJson } from '../utils/discrepancy-fixtures';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';

const basicOf = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const OPS = basicOf('ops', 'ops-password-for-tests');
const T0 = '2026-07-02T15:00:00Z';
const TODAY = T0.slice(0, 10);

interface Person {
  id: string;
  first_name: string;
  last_name: string;
}

interface SandboxEmployer {
  token: string;
  connectionId: string;
  entityId: string;
  people: Person[];
}

/**
 * The ops API's deduction discrepancies over HTTP (/ops/api/discrepancies): listing across
 * connections with filters and paging, one with the statements that fed it, acknowledging with
 * a note, re-applying the service's configuration through a real enrollment job on the sandbox
 * provider (enroll and unenroll), the overview's counts, the audit trail, credentials and bad
 * input. Discrepancies and results are rows as the reconciliation job writes them, on sandbox
 * connections, people and benefits made through the API.
 */
describeWithPostgres('Ops API: deduction discrepancies', () => {
  const clock = new ManualClock(T0);
  let service: TestService;
  let db: DataSource;
  let app: IssuedCredentials;
  /** Holds the discrepancies the listing tests read, and the benefit the re-apply tests enroll in. */
  let acme: SandboxEmployer;
  /** A second connection: the listing is across connections. */
  let globex: SandboxEmployer;

  beforeAll(async () => {
    service = await startTestService({ clock, env: { OPS_SIGN_IN_MAX_FAILURES: '1000' } });
    db = service.app.get(DataSource);
    app = await createApplication(service);
    [acme, globex] = await Promise.all([sandboxEmployer(), sandboxEmployer()]);
  });
  afterAll(() => service?.close());
  afterEach(() => clock.set(T0));

  async function sandboxEmployer(): Promise<SandboxEmployer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 6 }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    const directory = await service.request('/employer/directory', { headers: bearer(res.body.access_token) });
    if (directory.status !== 200) throw new Error(`directory failed: ${directory.text}`);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id, people: directory.body.individuals };
  }

  const ops = (path: string, body?: unknown, headers: Record<string, string> = OPS) =>
    body === undefined ? service.request(path, { headers }) : service.request(path, json(body, headers));
  const employerApi = (employer: SandboxEmployer, path: string, init: { method?: string; body?: unknown } = {}) =>
    service.request(path, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { ...bearer(employer.token), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });

  function expectError(res: TestResponse, status: number, name: string, serviceCode?: string) {
    expect({ status: res.status, body: res.body }).toMatchObject({
      status,
      body: { code: status, name, ...(serviceCode ? { service_code: serviceCode } : {}), message: expect.any(String) },
    });
  }

  const minutesBefore = (minutes: number, from = T0) => new Date(new Date(from).getTime() - minutes * 60_000);

  /** The audit trail of one discrepancy, oldest first. */
  async function auditOf(id: string) {
    const res = await ops(`/ops/api/audit?target_type=discrepancy&target_id=${id}`);
    expect(res.status).toBe(200);
    return [...res.body.data].reverse();
  }

  /** The ids a listing answers, in order, of those among `ids`. */
  async function listed(query: string, ids: string[]): Promise<string[]> {
    const res = await ops(`/ops/api/discrepancies${query}`);
    expect(res.status).toBe(200);
    const mine = new Set(ids);
    return res.body.data.map((d: { discrepancy_id: string }) => d.discrepancy_id).filter((id: string) => mine.has(id));
  }

  const jobsOf = async (connectionId: string) => (await db.query(`SELECT count(*)::int AS n FROM jobs WHERE connection_id = $1`, [connectionId]))[0].n as number;

  describe('credentials', () => {
    it('refuses every route without the ops credentials, with wrong ones and with an employer token (401), changing nothing', async () => {
      const d = await insertDiscrepancy(db, { connectionId: acme.connectionId, entityId: acme.entityId, individualId: acme.people[0].id, kind: 'missing', openedAt: minutesBefore(5) });
      const routes: [string, unknown][] = [
        ['/ops/api/discrepancies', undefined],
        [`/ops/api/discrepancies/${d.id}`, undefined],
        [`/ops/api/discrepancies/${d.id}/acknowledge`, { note: 'seen' }],
        [`/ops/api/discrepancies/${d.id}/reapply`, {}],
      ];
      const cases: [Record<string, string>, string][] = [
        [{}, 'missing_ops_credentials'],
        [basicOf('ops', 'not-the-password'), 'invalid_ops_credentials'],
        [basicOf('someone', 'ops-password-for-tests'), 'invalid_ops_credentials'],
        [bearer(acme.token), 'missing_ops_credentials'],
        [basic(app), 'invalid_ops_credentials'],
      ];
      for (const [path, body] of routes) {
        for (const [headers, serviceCode] of cases) {
          const res = await ops(path, body, headers);
          expectError(res, 401, 'authentication_error', serviceCode);
          expect(res.headers.get('www-authenticate')).toContain('Basic');
        }
      }
      const after = await ops(`/ops/api/discrepancies/${d.id}`);
      expect(after.body).toMatchObject({ status: 'open', note: null, reapply_job_id: null });
      expect(await auditOf(d.id)).toEqual([]);
    });
  });

  describe('listing', () => {
    let rows: Awaited<ReturnType<typeof insertDiscrepancy>>[];
    let ids: { missing: string; mismatch: string; overLimit: string; unexpected: string; drift: string };

    beforeAll(async () => {
      const [ann, bob] = acme.people;
      const benefit = randomUUID();
      rows = [
        await insertDiscrepancy(db, {
          connectionId: acme.connectionId,
          entityId: acme.entityId,
          benefitId: benefit,
          individualId: ann.id,
          kind: 'missing',
          openedAt: minutesBefore(300),
          updatedAt: minutesBefore(100),
          firstPayDate: '2026-06-15',
          lastPayDate: '2026-06-30',
          occurrences: 2,
          expected: { employee: 4_615, employer: 2_308, limit_room: 1_200_000 },
          observed: { employee: 0, employer: 0 },
        }),
        await insertDiscrepancy(db, {
          connectionId: acme.connectionId,
          entityId: acme.entityId,
          benefitId: benefit,
          individualId: bob.id,
          kind: 'amount_mismatch',
          status: 'acknowledged',
          openedAt: minutesBefore(200),
          acknowledgedAt: minutesBefore(150),
          acknowledgedBy: 'ada',
          note: 'Payroll rounds down; asked the provider',
        }),
        await insertDiscrepancy(db, { connectionId: acme.connectionId, entityId: acme.entityId, individualId: ann.id, kind: 'over_limit', status: 'resolved', openedAt: minutesBefore(100), resolution: 'agreed' }),
        await insertDiscrepancy(db, { connectionId: globex.connectionId, entityId: globex.entityId, individualId: globex.people[0].id, kind: 'unexpected', openedAt: minutesBefore(250), firstPaymentId: null, firstPayDate: null, lastPaymentId: null, lastPayDate: null, expected: null }),
        await insertDiscrepancy(db, { connectionId: globex.connectionId, entityId: globex.entityId, individualId: globex.people[1].id, kind: 'configuration_drift', openedAt: minutesBefore(50) }),
      ];
      ids = { missing: rows[0].id, mismatch: rows[1].id, overLimit: rows[2].id, unexpected: rows[3].id, drift: rows[4].id };
    });

    const all = () => Object.values(ids);

    it('lists the live ones (open, acknowledged) newest opened first, every column in snake_case, with paging', async () => {
      const res = await ops(`/ops/api/discrepancies?connection_id=${acme.connectionId}`);
      expect(res.status).toBe(200);
      expect(res.body.paging).toEqual({ count: expect.any(Number), offset: 0 });
      const mismatch = res.body.data.find((d: { discrepancy_id: string }) => d.discrepancy_id === ids.mismatch);
      expect(mismatch).toEqual(discrepancyJson(rows[1]));
      expect(res.body.data.find((d: { discrepancy_id: string }) => d.discrepancy_id === ids.missing)).toEqual(discrepancyJson(rows[0]));
      expect(await listed(`?connection_id=${acme.connectionId}`, all())).toEqual([ids.mismatch, ids.missing]);
      // Across connections: every live one, newest opened first.
      expect(await listed('?limit=100', all())).toEqual([ids.drift, ids.mismatch, ids.unexpected, ids.missing]);

      const count = (await ops('/ops/api/discrepancies')).body.paging.count;
      expect(count).toBeGreaterThanOrEqual(4);
      const whole = (await ops('/ops/api/discrepancies?limit=100')).body.data.map((d: { discrepancy_id: string }) => d.discrepancy_id);
      const page = await ops('/ops/api/discrepancies?limit=2&offset=1');
      expect(page.body.paging).toEqual({ count, offset: 1 });
      expect(page.body.data.map((d: { discrepancy_id: string }) => d.discrepancy_id)).toEqual(whole.slice(1, 3));
    });

    it('filters by status and kind (comma lists or repeated), connection, entity, benefit and individual', async () => {
      expect(await listed('?status=resolved', all())).toEqual([ids.overLimit]);
      expect(await listed('?status=open', all())).toEqual([ids.drift, ids.unexpected, ids.missing]);
      expect(await listed('?status=open,acknowledged,resolved', all())).toEqual([ids.drift, ids.overLimit, ids.mismatch, ids.unexpected, ids.missing]);
      expect(await listed('?status=acknowledged&status=resolved', all())).toEqual([ids.overLimit, ids.mismatch]);
      expect(await listed('?kind=missing,unexpected', all())).toEqual([ids.unexpected, ids.missing]);
      expect(await listed('?kind=over_limit', all())).toEqual([]);
      expect(await listed('?kind=over_limit&status=resolved,open', all())).toEqual([ids.overLimit]);
      expect(await listed('?kind=missing&kind=configuration_drift', all())).toEqual([ids.drift, ids.missing]);
      expect(await listed(`?entity_id=${globex.entityId}`, all())).toEqual([ids.drift, ids.unexpected]);
      expect(await listed(`?benefit_id=${rows[0].benefitId}`, all())).toEqual([ids.mismatch, ids.missing]);
      expect(await listed(`?benefit_id=${rows[0].benefitId}&kind=missing`, all())).toEqual([ids.missing]);
      expect(await listed(`?individual_id=${acme.people[0].id.toUpperCase()}&status=open,resolved`, all())).toEqual([ids.overLimit, ids.missing]);
      expect(await listed(`?connection_id=${globex.connectionId}&individual_id=${acme.people[0].id}`, all())).toEqual([]);
      const filtered = await ops(`/ops/api/discrepancies?connection_id=${globex.connectionId}&kind=unexpected`);
      expect(filtered.body).toEqual({ paging: { count: 1, offset: 0 }, data: [discrepancyJson(rows[3])] });
    });

    it('names the individuals with include=individual_names, from the sandbox payroll', async () => {
      const res = await ops(`/ops/api/discrepancies?connection_id=${acme.connectionId}&include=individual_names`);
      expect(res.status).toBe(200);
      const [ann, bob] = acme.people;
      const byId = new Map(res.body.data.map((d: { discrepancy_id: string }) => [d.discrepancy_id, d]));
      expect(byId.get(ids.missing)).toEqual({ ...discrepancyJson(rows[0]), individual_names: { [ann.id]: `${ann.first_name} ${ann.last_name}` } });
      expect(byId.get(ids.mismatch)).toMatchObject({ individual_names: { [bob.id]: `${bob.first_name} ${bob.last_name}` } });
      const detail = await ops(`/ops/api/discrepancies/${ids.unexpected}?include=individual_names`);
      const someone = globex.people[0];
      expect(detail.body.individual_names).toEqual({ [someone.id]: `${someone.first_name} ${someone.last_name}` });
      // Without it, no names and no lookup.
      expect((await ops(`/ops/api/discrepancies/${ids.unexpected}`)).body.individual_names).toBeUndefined();
    });

    it('shows one with the statements that fed it, newest pay date first, at most 20', async () => {
      const d = rows[0];
      const configuration = { employee_deduction: { type: 'percent', amount: 600 }, company_contribution: null, annual_maximum: null, catch_up: false, hsa_contribution_limit: null };
      const results = [];
      // 22 pay dates, inserted out of order; one of another discrepancy and one matched without any.
      for (const day of [3, 1, 22, 10, 2, 15, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 16, 17, 18, 19, 20, 21]) {
        results.push(
          await insertResult(db, {
            discrepancy: d,
            payDate: `2026-05-${String(day).padStart(2, '0')}`,
            result: 'missing',
            expectedEmployee: 4_615 + day,
            observedEmployee: 0,
            expectedEmployer: 2_308,
            limitRoom: day === 22 ? null : 9_007_199_254_740 + day,
            taxTreatment: 'roth',
            configuration,
            jobId: randomUUID(),
            regular: day !== 15,
            reconciledAt: minutesBefore(day),
          }),
        );
      }
      await insertResult(db, { discrepancy: rows[1], payDate: '2026-05-30', result: 'amount_mismatch', expectedEmployee: 100, observedEmployee: 99, reconciledAt: minutesBefore(1) });
      await insertResult(db, { discrepancy: null, scope: d, payDate: '2026-05-31', result: 'matched', expectedEmployee: 100, observedEmployee: 100, reconciledAt: minutesBefore(1) });

      const res = await ops(`/ops/api/discrepancies/${d.id}`);
      expect(res.status).toBe(200);
      const newestFirst = [...results].sort((a, b) => b.payDate.localeCompare(a.payDate)).slice(0, 20);
      expect(res.body).toEqual({ ...discrepancyJson(d), recent_results: newestFirst.map(resultJson) });
      expect(res.body.recent_results[0]).toMatchObject({ pay_date: '2026-05-22', limit_room: null, expected_employee: 4_637 });
      expect(res.body.recent_results.at(-1).pay_date).toBe('2026-05-03');

      const none = await ops(`/ops/api/discrepancies/${ids.drift}`);
      expect(none.body).toEqual({ ...discrepancyJson(rows[4]), recent_results: [] });
    });

    it('answers 404 for an unknown discrepancy and 400 for a malformed id, on every route', async () => {
      const unknown = randomUUID();
      expectError(await ops(`/ops/api/discrepancies/${unknown}`), 404, 'not_found_error', 'discrepancy_not_found');
      expectError(await ops(`/ops/api/discrepancies/${unknown}/acknowledge`, { note: 'x' }), 404, 'not_found_error', 'discrepancy_not_found');
      expectError(await ops(`/ops/api/discrepancies/${unknown}/reapply`, {}), 404, 'not_found_error', 'discrepancy_not_found');
      for (const bad of ['123', 'not-a-uuid', `${unknown}x`]) {
        for (const res of [
          await ops(`/ops/api/discrepancies/${bad}`),
          await ops(`/ops/api/discrepancies/${bad}/acknowledge`, { note: 'x' }),
          await ops(`/ops/api/discrepancies/${bad}/reapply`, {}),
        ]) {
          expectError(res, 400, 'invalid_request_error');
          expect(res.body.message).toContain('discrepancy_id must be a UUID');
        }
      }
    });

    it('refuses bad filters with 400, naming the parameter and the allowed values', async () => {
      const cases: [string, string][] = [
        ['kind=bogus', `kind must be one or more of: ${DISCREPANCY_KINDS.join(', ')}`],
        ['kind=missing,bogus', 'kind must be one or more of'],
        ['kind=', 'kind must name at least one of'],
        ['status=closed', 'status must be one or more of: open, acknowledged, resolved'],
        ['status=open,', 'status'],
        ['status=,', 'status must name at least one of'],
        ['connection_id=nope', 'connection_id must be a UUID'],
        ['entity_id=nope', 'entity_id must be a UUID'],
        ['benefit_id=1', 'benefit_id must be a UUID'],
        ['individual_id=ann', 'individual_id must be a UUID'],
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['limit=ten', 'limit'],
        ['offset=-1', 'offset'],
        ['offset=1e20', 'offset'],
        ['include=names', 'include must be individual_names'],
        ['sort=opened_at', 'sort: unknown field'],
        ['kind[]=missing', 'unknown field'],
      ];
      for (const [query, message] of cases) {
        const res = await ops(`/ops/api/discrepancies?${query}`);
        if (query === 'status=open,') {
          // A trailing comma is only an empty item: the list is open.
          expect(res.status).toBe(200);
          continue;
        }
        expectError(res, 400, 'invalid_request_error');
        expect({ query, message: res.body.message }).toEqual({ query, message: expect.stringContaining(message) });
      }
    });
  });

  describe('acknowledge', () => {
    it('acknowledges an open one with a note (who, when), stays live, and replaces the note when acknowledged again; audited', async () => {
      const d = await insertDiscrepancy(db, { connectionId: acme.connectionId, entityId: acme.entityId, individualId: acme.people[2].id, kind: 'missing', openedAt: minutesBefore(60) });
      const res = await ops(`/ops/api/discrepancies/${d.id}/acknowledge`, { note: '  Payroll missed the first check; fixed from the next run  ' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...discrepancyJson(d),
        status: 'acknowledged',
        acknowledged_at: new Date(T0).toISOString(),
        acknowledged_by: 'ops',
        note: 'Payroll missed the first check; fixed from the next run',
        updated_at: new Date(T0).toISOString(),
        recent_results: [],
      });
      expect(await listed(`?connection_id=${acme.connectionId}`, [d.id])).toEqual([d.id]);
      expect(await listed(`?connection_id=${acme.connectionId}&status=open`, [d.id])).toEqual([]);
      expect(await listed(`?connection_id=${acme.connectionId}&status=acknowledged`, [d.id])).toEqual([d.id]);

      clock.set('2026-07-02T15:05:00Z');
      const again = await ops(`/ops/api/discrepancies/${d.id}/acknowledge`, { note: 'Provider confirmed the fix' });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({
        status: 'acknowledged',
        acknowledged_at: new Date(T0).toISOString(),
        acknowledged_by: 'ops',
        note: 'Provider confirmed the fix',
        updated_at: '2026-07-02T15:05:00.000Z',
      });
      expect(await auditOf(d.id)).toEqual([
        {
          audit_id: expect.any(String),
          actor: 'ops',
          action: 'discrepancy.acknowledge',
          target_type: 'discrepancy',
          target_id: d.id,
          detail: { note: 'Payroll missed the first check; fixed from the next run', previous_status: 'open', kind: 'missing', benefit_id: d.benefitId, individual_id: d.individualId },
          at: new Date(T0).toISOString(),
        },
        {
          audit_id: expect.any(String),
          actor: 'ops',
          action: 'discrepancy.acknowledge',
          target_type: 'discrepancy',
          target_id: d.id,
          detail: {
            note: 'Provider confirmed the fix',
            previous_status: 'acknowledged',
            previous_note: 'Payroll missed the first check; fixed from the next run',
            kind: 'missing',
            benefit_id: d.benefitId,
            individual_id: d.individualId,
          },
          at: '2026-07-02T15:05:00.000Z',
        },
      ]);
    });

    it('refuses a resolved one with 409 and the error object; nothing changes, nothing is audited', async () => {
      const d = await insertDiscrepancy(db, { connectionId: acme.connectionId, entityId: acme.entityId, individualId: acme.people[3].id, kind: 'amount_mismatch', openedAt: minutesBefore(90) });
      await resolveDiscrepancy(db, d.id, minutesBefore(10), 'became_missing');
      const res = await ops(`/ops/api/discrepancies/${d.id}/acknowledge`, { note: 'too late' });
      expectError(res, 409, 'conflict_error', 'discrepancy_resolved');
      expect(res.body.message).toContain('became_missing');
      expect((await ops(`/ops/api/discrepancies/${d.id}`)).body).toMatchObject({ status: 'resolved', note: null, acknowledged_at: null, acknowledged_by: null });
      expect(await auditOf(d.id)).toEqual([]);
    });

    it('refuses a missing, empty, oversized or non-string note and unknown fields with 400; nothing changes', async () => {
      const d = await insertDiscrepancy(db, { connectionId: acme.connectionId, entityId: acme.entityId, individualId: acme.people[4].id, kind: 'match_mismatch', openedAt: minutesBefore(30) });
      const bodies: [unknown, string][] = [
        [{}, 'note is required to acknowledge a discrepancy'],
        [{ note: '' }, 'note is required'],
        [{ note: '   ' }, 'note is required'],
        [{ note: 7 }, 'note must be a string'],
        [{ note: null }, 'note'],
        [{ note: ['seen'] }, 'note must be a string'],
        [{ note: 'x'.repeat(2_001) }, 'note must be at most 2000 characters'],
        [{ note: 'seen', status: 'resolved' }, 'status: unknown field'],
      ];
      for (const [body, message] of bodies) {
        const res = await ops(`/ops/api/discrepancies/${d.id}/acknowledge`, body);
        expectError(res, 400, 'invalid_request_error');
        expect({ body, message: res.body.message }).toEqual({ body, message: expect.stringContaining(message) });
      }
      expectError(await ops(`/ops/api/discrepancies/${d.id}/acknowledge`, '{'), 400, 'bad_request_error', 'malformed_request');
      expectError(await ops(`/ops/api/discrepancies/${d.id}/acknowledge`, '[]'), 400, 'invalid_request_error');
      expect((await ops(`/ops/api/discrepancies/${d.id}`)).body).toMatchObject({ status: 'open', note: null });
      expect(await auditOf(d.id)).toEqual([]);
      // 2,000 characters is the limit, not past it.
      const longest = 'y'.repeat(2_000);
      expect((await ops(`/ops/api/discrepancies/${d.id}/acknowledge`, { note: longest })).body).toMatchObject({ status: 'acknowledged', note: longest });
    });
  });

  describe('re-apply', () => {
    let benefitId: string;
    const store = () => service.app.get(SandboxEmployerStore);
    const refOf = async (employer: SandboxEmployer) => {
      const connection = (await service.app.get(ConnectionsRepository).find(employer.connectionId))!;
      return employerRefOf(connection, connection.entities.find((e) => e.id === employer.entityId)!);
    };
    const full = (percent: number) => ({
      employee_deduction: { type: 'percent' as const, amount: percent },
      company_contribution: null,
      annual_maximum: null,
      catch_up: false,
      hsa_contribution_limit: null,
    });
    /** What the provider holds for the individual today, as the Unified API reads it (live from the sandbox). */
    const atProvider = async (individualId: string) => {
      const res = await employerApi(acme, `/employer/benefits/${benefitId}/individuals?individual_ids=${individualId}`);
      expect(res.status).toBe(200);
      return res.body[0];
    };
    const jobDone = (jobId: string) =>
      expectEventually(async () => {
        const res = await employerApi(acme, `/jobs/automated/${jobId}`);
        expect(res.body.status).toBe('complete');
        return res.body;
      });

    beforeAll(async () => {
      const created = await employerApi(acme, '/employer/benefits', { body: { type: '401k', description: 'Retirement plan', frequency: 'every_paycheck' } });
      expect(created.status).toBe(200);
      benefitId = created.body.benefit_id;
      await jobDone(created.body.job_id);
    });

    it('enrolls again, from today, the configuration the service applied, when payroll changed it; the job runs through the lifecycle; audited', async () => {
      const person = acme.people[0].id;
      const enrolled = await employerApi(acme, `/employer/benefits/${benefitId}/individuals`, {
        body: [{ individual_id: person, configuration: { employee_deduction: { type: 'percent', amount: 300 } } }],
      });
      expect(enrolled.status).toBe(200);
      await jobDone(enrolled.body.job_id);
      // A payroll admin edits the enrollment in the provider's own system, behind the service's back.
      await store().enrollKnown(await refOf(acme), benefitId, [{ individual_id: person, effective_date: TODAY, configuration: full(700) }]);
      expect(await atProvider(person)).toMatchObject({ code: 200, body: { employee_deduction: { type: 'percent', amount: 700 } } });
      const d = await insertDiscrepancy(db, {
        connectionId: acme.connectionId,
        entityId: acme.entityId,
        benefitId,
        individualId: person,
        kind: 'amount_mismatch',
        openedAt: minutesBefore(20),
        expected: { employee: 3_000, employer: 0, limit_room: null },
        observed: { employee: 7_000, employer: 0 },
      });

      clock.set('2026-07-02T15:10:00Z');
      const res = await ops(`/ops/api/discrepancies/${d.id}/reapply`, {});
      expect(res.status).toBe(200);
      const jobId = res.body.job_id;
      expect(jobId).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
      expect(jobId).not.toBe(enrolled.body.job_id);
      // Still open: only a later statement or read that agrees resolves it.
      expect(res.body.discrepancy).toEqual({ ...discrepancyJson(d), reapply_job_id: jobId, updated_at: '2026-07-02T15:10:00.000Z', recent_results: [] });

      // An ordinary enrollment job, of the configuration the service applied, from today.
      const job = await ops(`/ops/api/jobs/${jobId}`);
      expect(job.body).toMatchObject({
        job_id: jobId,
        kind: 'automated',
        type: 'benefit_enroll',
        connection_id: acme.connectionId,
        entity_id: acme.entityId,
        params: { benefit_id: benefitId, groups: [{ effective_date: TODAY, items: [{ individual_id: person, configuration: full(300) }] }] },
      });
      const done = await jobDone(jobId);
      expect(done).toMatchObject({ job_id: jobId, type: 'benefit_enroll', status: 'complete' });
      expect((await ops(`/ops/api/jobs/${jobId}`)).body).toMatchObject({ status: 'complete', body: [{ individual_id: person, code: 200 }], individual_errors: [] });
      expect(await atProvider(person)).toMatchObject({ code: 200, body: { employee_deduction: { type: 'percent', amount: 300 } } });
      // The lifecycle started its enrollment saga, which followed the job to the end.
      const sagas = await ops(`/ops/api/sagas?connection_id=${acme.connectionId}&type=enrollment&limit=100`);
      const withJob: { saga_id: string }[] = [];
      for (const s of sagas.body.data) {
        const detail = await ops(`/ops/api/sagas/${s.saga_id}`);
        if (detail.body.jobs.some((j: { job_id: string }) => j.job_id === jobId)) withJob.push(detail.body);
      }
      expect(withJob).toHaveLength(1);
      await expectEventually(async () => expect((await ops(`/ops/api/sagas/${withJob[0].saga_id}`)).body.state).toBe('completed'));

      expect(await auditOf(d.id)).toEqual([
        {
          audit_id: expect.any(String),
          actor: 'ops',
          action: 'discrepancy.reapply',
          target_type: 'discrepancy',
          target_id: d.id,
          detail: {
            operation: 'enroll',
            job_id: jobId,
            effective_date: TODAY,
            configuration: { employee_deduction: { type: 'percent', amount: 300 }, company_contribution: null, catch_up: false, annual_maximum: null, effective_date: TODAY },
            kind: 'amount_mismatch',
            status: 'open',
            benefit_id: benefitId,
            individual_id: person,
            previous_reapply_job_id: null,
          },
          at: '2026-07-02T15:10:00.000Z',
        },
      ]);
    });

    it('unenrolls from today an individual payroll deducts for with nothing the service applied in force (unexpected); acknowledged stays acknowledged', async () => {
      const person = acme.people[1].id;
      await store().enrollKnown(await refOf(acme), benefitId, [{ individual_id: person, effective_date: '2026-06-01', configuration: full(500) }]);
      expect(await atProvider(person)).toMatchObject({ code: 200, body: { employee_deduction: { type: 'percent', amount: 500 } } });
      const d = await insertDiscrepancy(db, {
        connectionId: acme.connectionId,
        entityId: acme.entityId,
        benefitId,
        individualId: person,
        kind: 'unexpected',
        status: 'acknowledged',
        note: 'Not ours: asking payroll',
        openedAt: minutesBefore(40),
      });
      const jobsBefore = await jobsOf(acme.connectionId);

      const res = await ops(`/ops/api/discrepancies/${d.id}/reapply`, {});
      expect(res.status).toBe(200);
      const jobId = res.body.job_id;
      expect(res.body.discrepancy).toMatchObject({ discrepancy_id: d.id, status: 'acknowledged', note: 'Not ours: asking payroll', reapply_job_id: jobId });
      expect(await jobsOf(acme.connectionId)).toBeGreaterThan(jobsBefore);
      expect((await ops(`/ops/api/jobs/${jobId}`)).body).toMatchObject({
        type: 'benefit_unenroll',
        kind: 'automated',
        params: { benefit_id: benefitId, effective_date: TODAY, individual_ids: [person] },
      });
      await jobDone(jobId);
      expect((await ops(`/ops/api/jobs/${jobId}`)).body).toMatchObject({ status: 'complete', body: [{ individual_id: person, code: 200 }] });
      expect(await atProvider(person)).toMatchObject({ code: 404, body: { service_code: 'enrollment_not_found' } });
      expect(await auditOf(d.id)).toMatchObject([
        { actor: 'ops', action: 'discrepancy.reapply', detail: { operation: 'unenroll', job_id: jobId, effective_date: TODAY, kind: 'unexpected', status: 'acknowledged', individual_id: person } },
      ]);
      expect((await auditOf(d.id))[0].detail.configuration).toBeUndefined();

      // Again: another job, and the audit names the one before.
      const second = await ops(`/ops/api/discrepancies/${d.id}/reapply`, {});
      expect(second.status).toBe(200);
      expect(second.body.job_id).not.toBe(jobId);
      expect(second.body.discrepancy.reapply_job_id).toBe(second.body.job_id);
      expect((await auditOf(d.id))[1].detail).toMatchObject({ job_id: second.body.job_id, previous_reapply_job_id: jobId });
      await jobDone(second.body.job_id);
    });

    it('refuses with 409 a resolved discrepancy, a connection disconnected or in reauth, a disconnected entity and a benefit that is gone; no job, no audit', async () => {
      const resolvedOne = await insertDiscrepancy(db, { connectionId: acme.connectionId, entityId: acme.entityId, benefitId, individualId: acme.people[2].id, kind: 'over_limit', openedAt: minutesBefore(70) });
      await resolveDiscrepancy(db, resolvedOne.id, minutesBefore(5));
      const goneBenefit = await insertDiscrepancy(db, { connectionId: acme.connectionId, entityId: acme.entityId, individualId: acme.people[2].id, kind: 'missing', openedAt: minutesBefore(70) });
      const leaving = await sandboxEmployer();
      const onLeaving = await insertDiscrepancy(db, { connectionId: leaving.connectionId, entityId: leaving.entityId, individualId: leaving.people[0].id, kind: 'missing', openedAt: minutesBefore(70) });
      expect((await employerApi(leaving, '/disconnect', { body: {} })).status).toBe(200);
      // A connection the employer must reauthenticate (as a sync ending in reauth_error leaves it).
      const stale = await sandboxEmployer();
      const onStale = await insertDiscrepancy(db, { connectionId: stale.connectionId, entityId: stale.entityId, individualId: stale.people[0].id, kind: 'missing', openedAt: minutesBefore(70) });
      await db.query(`UPDATE connections SET status = 'reauth' WHERE id = $1`, [stale.connectionId]);
      // An entity disconnected alone (its connection stays).
      const split = await sandboxEmployer();
      const onSplit = await insertDiscrepancy(db, { connectionId: split.connectionId, entityId: split.entityId, individualId: split.people[0].id, kind: 'missing', openedAt: minutesBefore(70) });
      await db.query(`UPDATE connection_entities SET status = 'disconnected' WHERE id = $1`, [split.entityId]);

      const jobsBefore = {
        acme: await jobsOf(acme.connectionId),
        leaving: await jobsOf(leaving.connectionId),
        stale: await jobsOf(stale.connectionId),
        split: await jobsOf(split.connectionId),
      };
      const cases: [string, string, string][] = [
        [resolvedOne.id, 'discrepancy_resolved', 'resolved'],
        [goneBenefit.id, 'benefit_gone', goneBenefit.benefitId],
        [onLeaving.id, 'connection_disconnected', `connection ${leaving.connectionId} is disconnected`],
        [onStale.id, 'connection_needs_reauth', 'reauthenticate'],
        [onSplit.id, 'entity_disconnected', `entity ${split.entityId} is disconnected`],
      ];
      for (const [id, serviceCode, text] of cases) {
        const res = await ops(`/ops/api/discrepancies/${id}/reapply`, {});
        expectError(res, 409, 'conflict_error', serviceCode);
        expect(res.body.message).toContain(text);
        expect((await ops(`/ops/api/discrepancies/${id}`)).body.reapply_job_id).toBeNull();
        expect(await auditOf(id)).toEqual([]);
      }
      expect({
        acme: await jobsOf(acme.connectionId),
        leaving: await jobsOf(leaving.connectionId),
        stale: await jobsOf(stale.connectionId),
        split: await jobsOf(split.connectionId),
      }).toEqual(jobsBefore);
    });
  });

  describe('overview', () => {
    it('counts live discrepancies by status and by kind, every kind present', async () => {
      const before = (await ops('/ops/api/overview')).body.discrepancies;
      expect(Object.keys(before.by_kind).sort()).toEqual([...DISCREPANCY_KINDS].sort());
      const person = globex.people[2].id;
      const base = { connectionId: globex.connectionId, entityId: globex.entityId, individualId: person, openedAt: minutesBefore(15) };
      const missing = await insertDiscrepancy(db, { ...base, kind: 'missing' });
      await insertDiscrepancy(db, { ...base, kind: 'missing' });
      await insertDiscrepancy(db, { ...base, kind: 'over_limit', status: 'acknowledged' });
      await insertDiscrepancy(db, { ...base, kind: 'unexpected', status: 'resolved' });

      const delta = async () => {
        const now = (await ops('/ops/api/overview')).body.discrepancies;
        return {
          open: now.open - before.open,
          acknowledged: now.acknowledged - before.acknowledged,
          by_kind: Object.fromEntries(DISCREPANCY_KINDS.map((k) => [k, now.by_kind[k] - before.by_kind[k]])),
        };
      };
      const zero = Object.fromEntries(DISCREPANCY_KINDS.map((k) => [k, 0]));
      expect(await delta()).toEqual({ open: 2, acknowledged: 1, by_kind: { ...zero, missing: 2, over_limit: 1 } });
      expect((await ops(`/ops/api/discrepancies/${missing.id}/acknowledge`, { note: 'known' })).status).toBe(200);
      expect(await delta()).toEqual({ open: 1, acknowledged: 2, by_kind: { ...zero, missing: 2, over_limit: 1 } });
      await resolveDiscrepancy(db, missing.id, new Date(T0));
      expect(await delta()).toEqual({ open: 1, acknowledged: 1, by_kind: { ...zero, missing: 1, over_limit: 1 } });
      // The counts agree with the listing.
      const now = (await ops('/ops/api/overview')).body.discrepancies;
      expect((await ops('/ops/api/discrepancies?status=open')).body.paging.count).toBe(now.open);
      expect((await ops('/ops/api/discrepancies?status=acknowledged')).body.paging.count).toBe(now.acknowledged);
      expect((await ops('/ops/api/discrepancies?kind=missing')).body.paging.count).toBe(now.by_kind.missing);
    });
  });
});
