import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/infrastructure/database/data-source';
import { describeWithPostgres } from '../setup/test-env';
import { bearer } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { ServiceProcess, startServiceProcess } from '../utils/service-process';
import { json } from '../utils/test-app';
import { createTestDatabase, TestDatabase } from '../utils/test-database';
import { queueJobs } from '../utils/job-queue';

const EMPLOYEES = 1_000;
/** People whose statement is written without the deduction: each a `missing` discrepancy. */
const WRONG = 25;
const PLAN = 'Kill-proof 401(k)';

/**
 * The service as a real process, SIGKILLed while the reconciliation of a 1,000-statement pay run
 * is under way, and started again on the same database: the statements are reconciled once,
 * every discrepancy is opened once with one event, and running the job again (a redelivery)
 * or syncing the same data again changes nothing.
 */
describeWithPostgres('reconciliation across a SIGKILL of the service', () => {
  let database: TestDatabase;
  let db: DataSource;
  const processes: ServiceProcess[] = [];
  const clientId = randomUUID();
  const clientSecret = `secret-${randomBytes(16).toString('hex')}`;
  const appAuth = { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` };

  const start = async () => {
    const service = await startServiceProcess({
      name: 'reconciliation-kill',
      databaseUrl: database.url,
      env: {
        APP_CLIENT_ID: clientId,
        APP_CLIENT_SECRET: clientSecret,
        // The restart is this instance's successor: it frees what the killed one held as it starts.
        INSTANCE_ID: 'reconciliation-1',
        INSTANCE_HEARTBEAT_MS: '250',
        INSTANCE_DEAD_AFTER_MS: '2000',
      },
    });
    processes.push(service);
    return service;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = new DataSource(dataSourceOptions({ url: database.url, poolSize: 2 }));
    await db.initialize();
  }, 60_000);
  afterAll(async () => {
    for (const p of processes) await p.kill('SIGKILL').catch(() => undefined);
    await db?.destroy();
    await database?.drop();
  });

  it('reconciles every statement once and opens every discrepancy once', async () => {
    let service = await start();
    const connection = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: EMPLOYEES }, appAuth));
    expect(connection.status).toBe(200);
    const token: string = connection.body.access_token;
    const entityId: string = connection.body.entity_id;
    const api = (path: string, body?: unknown) => (body === undefined ? service.request(path, { headers: bearer(token) }) : service.request(path, json(body, bearer(token))));
    const complete = (jobId: string) =>
      expectEventually(async () => expect((await api(`/jobs/automated/${jobId}`)).body.status).toBe('complete'), { timeoutMs: 60_000 });

    const sync = await api('/jobs/automated', { type: 'data_sync_all' });
    await complete(sync.body.job_id);
    const benefit = await api('/employer/benefits', { type: '401k', description: PLAN, frequency: 'every_paycheck' });
    await complete(benefit.body.job_id);
    const planId: string = benefit.body.benefit_id;
    // The plan is reconciled from the day it was made (UTC). When that day is a regular pay date,
    // the employer's history already holds that day's run, paid before the plan existed: each of
    // its statements of an enrolled person is reconciled too, opens a `missing` discrepancy, and
    // the pay run below resolves it where it deducts.
    const [{ from }] = await db.query(`SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS from FROM benefits WHERE id = $1`, [planId]);
    const paidBefore: { individual_id: string }[] = await db.query(
      `SELECT sort_key AS individual_id FROM employer_data
       WHERE entity_id = $1 AND kind = 'pay_statement' AND pay_date >= $2::date AND generation = (SELECT generation FROM employer_syncs WHERE entity_id = $1)`,
      [entityId, from],
    );
    const paid: string[] = (
      await db.query(
        `SELECT record_id FROM employer_data WHERE entity_id = $1 AND kind = 'employment' AND body->'employment'->>'type' = 'employee'
           AND (body->>'is_active')::boolean AND body->>'end_date' IS NULL AND generation = (SELECT generation FROM employer_syncs WHERE entity_id = $1)
         ORDER BY record_id`,
        [entityId],
      )
    ).map((r: { record_id: string }) => r.record_id);
    const enroll = await api(
      `/employer/benefits/${planId}/individuals`,
      paid.map((individual_id) => ({ individual_id, configuration: { employee_deduction: { type: 'percent', amount: 400 } } })),
    );
    expect(enroll.status).toBe(200);
    await complete(enroll.body.job_id);

    // The pay run: most statements computed (deducted as enrolled), WRONG written without the deduction.
    const wrong = paid.slice(0, WRONG);
    const statements = wrong.map((individual_id) => ({
      individual_id,
      type: 'regular_payroll',
      gross_pay: 300_000,
      net_pay: 220_000,
      earnings: [{ type: 'salary', name: 'Salary', amount: 300_000, hours: 80 }],
      taxes: [{ type: 'federal', name: 'Federal Income Tax', employer: false, amount: 80_000 }],
      employee_deductions: [],
      employer_contributions: [],
    }));
    const today = new Date().toISOString().slice(0, 10);
    const start14 = new Date(Date.now() - 13 * 86_400_000).toISOString().slice(0, 10);
    // Paid tomorrow: after any run of the history, so each person's statements are reconciled in one order.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    // It may still be waiting for its sync when the kill lands: its failure is expected then.
    const payment = api('/sandbox/payment', { start_date: start14, end_date: today, pay_date: tomorrow, pay_statements: statements }).catch(() => undefined);

    // Killed while the reconciliation job holds its lease, before it committed.
    await expectEventually(
      async () => {
        const [job] = await db.query(`SELECT status FROM jobs WHERE type = 'deduction_reconciliation' AND entity_id = $1`, [entityId]);
        expect(job?.status).toBe('in_progress');
      },
      { timeoutMs: 60_000, intervalMs: 2 },
    );
    await service.kill('SIGKILL');
    await payment;
    const [{ runs }] = await db.query(`SELECT count(*)::int AS runs FROM reconciliation_runs`);
    expect(runs).toBe(0);

    service = await start();
    const [run] = await expectEventually(
      async () => {
        const rows = await db.query(`SELECT statements, sync_job_id FROM reconciliation_runs WHERE entity_id = $1`, [entityId]);
        expect(rows).toHaveLength(1);
        return rows;
      },
      { timeoutMs: 60_000 },
    );
    const counts = async () => {
      const [row] = await db.query(
        `SELECT (SELECT count(*)::int FROM reconciliation_results WHERE benefit_id = $1) AS results,
                (SELECT count(*)::int FROM reconciliation_results WHERE benefit_id = $1 AND result = 'matched') AS matched,
                (SELECT count(*)::int FROM deduction_discrepancies WHERE benefit_id = $1) AS discrepancies,
                (SELECT count(DISTINCT individual_id)::int FROM deduction_discrepancies WHERE benefit_id = $1 AND kind = 'missing' AND status = 'open') AS missing,
                (SELECT count(*)::int FROM outbox_messages WHERE type = 'DeductionDiscrepancyOpened.v1') AS opened_events,
                (SELECT count(*)::int FROM reconciled_statements WHERE entity_id = $2) AS statements`,
        [planId, entityId],
      );
      return row;
    };
    const after = await counts();
    const enrolled = new Set(paid);
    const alreadyPaid = paidBefore.filter((s) => enrolled.has(s.individual_id));
    const opened = new Set([...wrong, ...alreadyPaid.map((s) => s.individual_id)]).size;
    expect(after).toMatchObject({ results: paid.length + alreadyPaid.length, matched: paid.length - WRONG, discrepancies: opened, missing: WRONG, opened_events: opened });
    expect(after.statements).toBeGreaterThanOrEqual(paid.length);

    // The job again, as a redelivery would run it, and the same data synced again: nothing changes.
    const [job] = await db.query(`SELECT connection_id FROM jobs WHERE type = 'deduction_reconciliation' AND entity_id = $1 LIMIT 1`, [entityId]);
    const again = randomUUID();
    await db.query(
      `INSERT INTO jobs (id, connection_id, entity_id, kind, type, status, params, created_at, scheduled_at, weight)
       VALUES ($1, $2, $3, 'internal', 'deduction_reconciliation', 'pending', $4, now(), now(), 1)`,
      [again, job.connection_id, entityId, JSON.stringify({ sync_job_id: run.sync_job_id })],
    );
    await queueJobs(db, [again]);
    const resync = await api('/jobs/automated', { type: 'data_sync_all' });
    await complete(resync.body.job_id);
    await expectEventually(async () => {
      const [pending] = await db.query(
        `SELECT count(*)::int AS n FROM jobs WHERE type = 'deduction_reconciliation' AND entity_id = $1 AND status <> 'complete'`,
        [entityId],
      );
      expect(pending.n).toBe(0);
      const [last] = await db.query(`SELECT sync_job_id FROM reconciliation_runs WHERE entity_id = $1`, [entityId]);
      expect(last.sync_job_id).toBe(resync.body.job_id);
    }, { timeoutMs: 60_000 });
    expect(await counts()).toEqual(after);
  }, 300_000);
});
