import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { ManualClock } from '../../src/domain/shared/clock';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { JobSignal } from '../../src/modules/jobs/job-signal';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';
import { WebhookReceiver } from '../utils/webhook-receiver';

const MATCH = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }] };
const PLAN = 'Faulty Payroll 401(k)';
const RECONCILIATION_WEBHOOKS = ['deduction.discrepancy.opened', 'deduction.discrepancy.resolved', 'payment.contributions.ready'];

/**
 * Payroll made wrong with the sandbox's own calls, as a platform would demo it: a payroll admin's
 * edit in the provider (configuration drift, and the deduction it changes), pay-run adjustments
 * (skip → missing, change → amount_mismatch), a termination whose deduction keeps running
 * (keep → unexpected), the next clean run resolving what payroll fixed; the API reads, and the
 * signed opt-in webhooks.
 */
describeWithPostgres('reconciliation of payroll made wrong in the sandbox', () => {
  const clock = new ManualClock('2026-07-01T15:00:00Z');
  let service: TestService;
  let app: IssuedCredentials;
  let receiver: WebhookReceiver;
  let secret: string;
  let token: string;
  let planId: string;
  let people: string[];

  const db = () => service.app.get(DataSource);
  const api = (path: string, body?: unknown, method?: string): Promise<TestResponse> =>
    body === undefined && method === undefined
      ? service.request(path, { headers: bearer(token) })
      : service.request(path, { ...json(body ?? {}, bearer(token)), ...(method ? { method } : {}) });
  const sandbox = (path: string, body: unknown, method = 'POST') => service.request(path, { ...json(body, { authorization: `Bearer ${token}` }), method });
  const complete = (jobId: string) =>
    expectEventually(async () => expect((await api(`/jobs/automated/${jobId}`)).body.status).toBe('complete'));
  const reconciledAfter = (syncJobId: string) =>
    expectEventually(async () => {
      const [run] = await db().query(`SELECT 1 FROM reconciliation_runs WHERE sync_job_id = $1`, [syncJobId]);
      expect(run).toBeDefined();
    });
  const payRun = async (payDate: string): Promise<string> => {
    clock.set(`${payDate}T15:00:00Z`);
    const res = await sandbox('/sandbox/payment', { pay_date: payDate });
    expect([res.status, res.body.sync_status]).toEqual([200, 'complete']);
    await reconciledAfter(res.body.sync_job_id);
    return res.body.payment_id;
  };
  const discrepancies = async (individualId: string) => {
    const res = await api(`/reconciliation/discrepancies?individual_id=${individualId}&benefit_id=${planId}`);
    expect(res.status).toBe(200);
    return res.body.discrepancies as { id: string; kind: string; status: string; expected: Record<string, unknown>; observed: Record<string, unknown> }[];
  };

  beforeAll(async () => {
    service = await startTestService({ clock });
    app = await createApplication(service);
    receiver = await new WebhookReceiver().start();
    const endpoint = await service.request('/webhooks/endpoints', json({ url: receiver.url, event_types: RECONCILIATION_WEBHOOKS }, basic(app)));
    expect(endpoint.status).toBe(201);
    secret = endpoint.body.secret;

    const connection = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 16 }, basic(app)));
    token = connection.body.access_token;
    const sync = await api('/jobs/automated', { type: 'data_sync_all' });
    await complete(sync.body.job_id);
    const ids: string[] = (await api('/employer/directory')).body.individuals.map((i: { id: string }) => i.id);
    const employments = await api('/employer/employment', { requests: ids.map((individual_id) => ({ individual_id })) });
    people = employments.body.responses
      .filter((r: { body: { employment: { type: string }; is_active: boolean; start_date: string } }) => r.body.employment.type === 'employee' && r.body.is_active && r.body.start_date < '2026-06-01')
      .map((r: { individual_id: string }) => r.individual_id)
      .slice(0, 5);
    expect(people).toHaveLength(5);

    const benefit = await api('/employer/benefits', { type: '401k', description: PLAN, frequency: 'every_paycheck', company_contribution: MATCH });
    await complete(benefit.body.job_id);
    planId = benefit.body.benefit_id;
    const enroll = await api(`/employer/benefits/${planId}/individuals`, people.map((individual_id) => ({ individual_id, configuration: { employee_deduction: { type: 'percent', amount: 500 } } })));
    await complete(enroll.body.job_id);
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.stop();
  });

  it('finds what payroll got wrong, and resolves what a later run fixes', async () => {
    const [skipped, changed, edited, terminated, steady] = people;
    // A clean run first: everything matches.
    await payRun('2026-07-10');
    for (const id of people) expect(await discrepancies(id)).toEqual([]);

    // The next run: one skipped, one changed, one edited by a payroll admin in the provider.
    const adjustments = await sandbox('/sandbox/payroll/adjustments', {
      adjustments: [
        { individual_id: skipped, benefit_id: planId, action: 'skip' },
        { individual_id: changed, benefit_id: planId, action: 'change', employee_amount: 1_234 },
      ],
    });
    expect(adjustments.status).toBe(200);
    const admin = await sandbox(`/sandbox/benefits/${planId}/individuals/${edited}`, { configuration: { employee_deduction: { type: 'percent', amount: 800 } } }, 'PUT');
    expect(admin.status).toBe(200);
    const wrongRun = await payRun('2026-07-24');

    expect(await discrepancies(skipped)).toEqual([expect.objectContaining({ kind: 'missing', status: 'open' })]);
    expect(await discrepancies(changed)).toEqual([expect.objectContaining({ kind: 'amount_mismatch', status: 'open', observed: expect.objectContaining({ employee: 1_234 }) })]);
    const editedKinds = (await discrepancies(edited)).map((d) => d.kind).sort();
    expect(editedKinds).toEqual(['amount_mismatch', 'configuration_drift']);
    const drift = (await discrepancies(edited)).find((d) => d.kind === 'configuration_drift')!;
    expect(drift.expected).toEqual({ configuration: expect.objectContaining({ employee_deduction: { type: 'percent', amount: 500 } }) });
    expect(drift.observed).toEqual({ configuration: expect.objectContaining({ employee_deduction: { type: 'percent', amount: 800 } }) });
    expect(await discrepancies(steady)).toEqual([]);
    const byPayment = await api(`/reconciliation/discrepancies?payment_id=${wrongRun}`);
    expect(byPayment.body.discrepancies.map((d: { individual_id: string }) => d.individual_id).sort()).toEqual([skipped, changed, edited].sort());

    // A termination: the service ends the enrollment from the last day; payroll keeps deducting.
    const end = await sandbox(`/sandbox/employment/${terminated}`, { end_date: '2026-07-29', is_active: false }, 'PUT');
    expect(end.status).toBe(200);
    // The unenroll is dated the last day: processed once that day comes.
    clock.set('2026-07-30T15:00:00Z');
    await expectEventually(async () => {
      service.app.get(JobSignal).nudge();
      const [row] = await db().query(`SELECT ended_on FROM enrollments WHERE benefit_id = $1 AND individual_id = $2`, [planId, terminated]);
      expect(row.ended_on).not.toBeNull();
    });
    expect((await sandbox('/sandbox/payroll/adjustments', { adjustments: [{ individual_id: terminated, benefit_id: planId, action: 'keep' }] })).status).toBe(200);
    await payRun('2026-08-07');
    expect(await discrepancies(terminated)).toEqual([expect.objectContaining({ kind: 'unexpected', status: 'open' })]);
    // What payroll fixed (no adjustments this run) is resolved; the admin's edit still runs.
    expect(await discrepancies(skipped)).toEqual([expect.objectContaining({ kind: 'missing', status: 'resolved', resolution: 'agreed' })]);
    expect(await discrepancies(changed)).toEqual([expect.objectContaining({ kind: 'amount_mismatch', status: 'resolved' })]);
    expect((await discrepancies(edited)).map((d) => [d.kind, d.status]).sort()).toEqual([
      ['amount_mismatch', 'open'],
      ['configuration_drift', 'open'],
    ]);

    // The signed opt-in webhooks: one opened per discrepancy, one resolved per resolution, contributions per run.
    await expectEventually(() => {
      const types = receiver.received.map((r) => (JSON.parse(r.body) as { event_type: string }).event_type);
      expect(types.filter((t) => t === 'deduction.discrepancy.opened')).toHaveLength(5);
      expect(types.filter((t) => t === 'deduction.discrepancy.resolved')).toHaveLength(2);
      // One per pay run reconciled against the benefit (the payments of the year before it are only counted for the limits).
      expect(types.filter((t) => t === 'payment.contributions.ready')).toHaveLength(3);
    });
    for (const webhook of receiver.received) new Webhook(secret).verify(webhook.body, webhook.headers);
    const opened = receiver.received.map((r) => JSON.parse(r.body)).filter((b) => b.event_type === 'deduction.discrepancy.opened');
    expect(opened.map((b) => b.data.kind).sort()).toEqual(['amount_mismatch', 'amount_mismatch', 'configuration_drift', 'missing', 'unexpected']);
  });
});
