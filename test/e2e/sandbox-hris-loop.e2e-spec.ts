import { DataSource } from 'typeorm';
import { hrisEventId } from '../../src/domain/hris-events/employer-changes';
import { ManualClock } from '../../src/domain/shared/clock';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { JobSignal } from '../../src/modules/jobs/job-signal';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { OPS_BASIC } from '../utils/service-process';
import { json, startTestService, TestService } from '../utils/test-app';

const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }] };
const percent = (amount: number) => ({ type: 'percent', amount });
const DEFERRAL_BP = 500;

interface PayStatement {
  individual_id: string;
  gross_pay: { amount: number };
  employee_deductions: { name: string; type: string; amount: number }[];
  employer_contributions: { name: string; type: string; amount: number }[];
}

/**
 * The sandbox loop end to end, on the in-process transport: a sandbox employer with a 401(k)
 * and a new-hire policy is synced (the baseline), hires someone in its own payroll, and the next
 * sync publishes EmployeeHired; the new-hire saga enrolls the employee from the start date plus
 * the waiting period, and the first pay run after that date takes the deduction and the match.
 */
describeWithPostgres('sandbox hire → sync → EmployeeHired → new-hire saga → pay statement', () => {
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  let service: TestService;
  let app: IssuedCredentials;

  beforeAll(async () => {
    service = await startTestService({ clock });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  const db = () => service.app.get(DataSource);
  /** Sandbox edits take the token alone, without a version header. */
  const sandboxAuth = (token: string) => ({ authorization: `Bearer ${token}` });

  async function waitForJob(token: string, jobId: string): Promise<void> {
    await expectEventually(async () => expect((await service.request(`/jobs/automated/${jobId}`, { headers: bearer(token) })).body.status).toBe('complete'));
  }

  async function syncNow(token: string): Promise<void> {
    const started = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
    expect(started.status).toBe(201);
    await waitForJob(token, started.body.job_id);
  }

  /** Runs payroll on the pay date and reads the individual's statement of that run. */
  async function payStatementOf(token: string, payDate: string, individualId: string): Promise<PayStatement> {
    const payment = await service.request('/sandbox/payment', json({ pay_date: payDate }, sandboxAuth(token)));
    expect(payment.status).toBe(200);
    expect(payment.body.pay_date).toBe(payDate);
    // Reads answer from the synced data: the payment's answer waited for the sync it started.
    expect(payment.body.sync_status).toBe('complete');
    const statements = await service.request('/employer/pay-statement', json({ requests: [{ payment_id: payment.body.payment_id }] }, bearer(token)));
    expect(statements.status).toBe(200);
    const statement = statements.body.responses[0].body.pay_statements.find((s: PayStatement) => s.individual_id === individualId);
    expect(statement).toBeDefined();
    return statement;
  }

  it('enrolls the new hire by the policy and the 401(k) deduction shows on the first pay statement after the effective date', async () => {
    const connection = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 10 }, basic(app)));
    expect(connection.status).toBe(200);
    const { access_token: token, connection_id: connectionId, entity_id: entityId } = connection.body;

    const created = await service.request(
      '/employer/benefits',
      json({ type: '401k', description: 'Retirement', frequency: 'every_paycheck', company_contribution: MATCH }, bearer(token)),
    );
    expect(created.status).toBe(200);
    const benefitId: string = created.body.benefit_id;
    await waitForJob(token, created.body.job_id);
    const policy = await service.request(
      '/ops/api/policies',
      json(
        { connection_id: connectionId, entity_id: entityId, benefit_id: benefitId, configuration: { employee_deduction: percent(DEFERRAL_BP) }, waiting_period_days: 30 },
        OPS_BASIC,
      ),
    );
    expect(policy.status).toBe(200);

    // The first sync is the baseline: everyone already there is not a new hire.
    await syncNow(token);
    const hrisSagas = () => db().query(`SELECT id, source_event_id, type, state FROM sagas WHERE connection_id = $1 AND source_event_id IS NOT NULL`, [connectionId]);
    expect(await hrisSagas()).toEqual([]);

    const added = await service.request(
      '/sandbox/directory',
      json(
        [{ first_name: 'Grace', last_name: 'Hopper', dob: '1986-12-09', title: 'Engineer', income: { unit: 'yearly', amount: 12_000_000 }, start_date: '2026-06-01' }],
        sandboxAuth(token),
      ),
    );
    expect(added.status).toBe(200);
    const hired: string = added.body[0].id;

    clock.set('2026-06-02T09:00:00Z');
    await syncNow(token);
    const eventId = hrisEventId({ connectionId, entityId, individualId: hired, type: 'EmployeeHired', date: '2026-06-01' });
    const saga = await expectEventually(async () => {
      const sagas = await hrisSagas();
      expect(sagas).toEqual([{ id: expect.any(String), source_event_id: eventId, type: 'new_hire', state: 'waiting' }]);
      return sagas[0];
    });
    const [group] = await db().query(
      `SELECT to_char(g.effective_date, 'YYYY-MM-DD') AS effective_date, g.state,
              (SELECT jsonb_agg(jsonb_build_object('individual_id', i.individual_id, 'configuration', i.configuration)) FROM enrollment_items i WHERE i.group_id = g.id) AS items
       FROM saga_jobs sj JOIN enrollment_groups g ON g.job_id = sj.job_id WHERE sj.saga_id = $1`,
      [saga.id],
    );
    // Start date + 30 days; the employee is enrolled once, with the policy's deduction.
    expect(group).toEqual({
      effective_date: '2026-07-01',
      items: [{ individual_id: hired, configuration: expect.objectContaining({ employee_deduction: percent(DEFERRAL_BP) }) }],
      state: 'waiting',
    });

    // A sync that finds nothing new starts nothing more.
    clock.set('2026-06-02T10:00:00Z');
    await syncNow(token);
    expect(await hrisSagas()).toHaveLength(1);

    const inForce = () => service.request(`/employer/benefits/${benefitId}/individuals?individual_ids=${hired}`, { headers: bearer(token) });
    expect((await inForce()).body[0].code).toBe(404);
    // Paid before the effective date: no deduction yet.
    const before = await payStatementOf(token, '2026-06-19', hired);
    expect(before.gross_pay.amount).toBeGreaterThan(0);
    expect(before.employee_deductions.filter((d) => d.name === 'Retirement')).toEqual([]);

    clock.set('2026-07-01T00:00:00Z');
    service.app.get(JobSignal).nudge();
    await expectEventually(async () => expect((await inForce()).body[0]).toMatchObject({ code: 200, body: { employee_deduction: percent(DEFERRAL_BP) } }));
    await expectEventually(async () => expect((await db().query(`SELECT state, outcome FROM sagas WHERE id = $1`, [saga.id]))[0]).toEqual({ state: 'completed', outcome: 'jobs_complete' }));

    clock.set('2026-07-03T12:00:00Z');
    const after = await payStatementOf(token, '2026-07-03', hired);
    const gross = BigInt(after.gross_pay.amount);
    expect(gross).toBeGreaterThan(0n);
    const deferral = roundHalfUp(gross * BigInt(DEFERRAL_BP), 10_000n);
    // 100 % matched up to 3 % of pay (amounts in cents × basis points).
    const matched = BigInt(deferral) * 10_000n < gross * 300n ? BigInt(deferral) * 10_000n : gross * 300n;
    const match = roundHalfUp(matched * 10_000n, 100_000_000n);
    expect(after.employee_deductions.filter((d) => d.name === 'Retirement').map((d) => [d.type, d.amount])).toEqual([['401k', deferral]]);
    expect(after.employer_contributions.filter((c) => c.name === 'Retirement').map((c) => [c.type, c.amount])).toEqual([['401k', match]]);
  });
});

function roundHalfUp(numerator: bigint, denominator: bigint): number {
  return Number((numerator * 2n + denominator) / (denominator * 2n));
}
